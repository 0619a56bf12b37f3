#!/usr/bin/env python3
"""scripts/ab_bits.py (the bits check of the GPU A/Bs) on made-up A/B output: equal hashes pass,
a differing deterministic row or a build missing a row fails, atomic rows are ignored."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "ab_bits.py")


def row(schedule, h, seqlen=1024):
    return {"hdim": 128, "causal": False, "seqlen": seqlen, "schedule": schedule, "grad_hash": h}


def run(files, nbuilds):
    with tempfile.TemporaryDirectory() as d:
        for name, rows in files.items():
            with open(os.path.join(d, name), "w") as f:
                json.dump(rows, f)
        p = subprocess.run([sys.executable, SCRIPT, d, str(nbuilds)], capture_output=True, text=True)
        return p.returncode, p.stdout


def main():
    same = {f"ab-r{r}-{b}-hdim128.json": [row("descending", "aa"), row("atomic", f"{r}{b}")]
            for r in (1, 2) for b in ("base", "new")}
    rc, out = run(same, 2)
    assert rc == 0 and "1 deterministic rows equal" in out and "0 differ" in out, (rc, out)
    differ = dict(same)
    differ["ab-r2-new-hdim128.json"] = [row("descending", "bb"), row("atomic", "x")]
    rc, out = run(differ, 2)
    assert rc == 1 and "DIFFERS" in out and "1 differ" in out, (rc, out)
    missing = {k: v for k, v in same.items() if "-new-" not in k}
    rc, out = run(missing, 2)
    assert rc == 1 and "1 differ" in out, (rc, out)
    print("ab_bits: equal, differing and missing rows handled")


if __name__ == "__main__":
    main()
