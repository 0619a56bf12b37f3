#!/usr/bin/env python3
"""scripts/sustain_ab.py (the `dash-attn bench --sustain` A/B table) on made-up rows: rounds given as
comma-separated files average per round, the ratios are the means of the per-round ratios (speed, per
cycle, per joule), a row missing from one round is left out of that round only, rows without a sustained
window are skipped, and unequal round counts fall back to the ratio of the means."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "sustain_ab.py")


def row(seqlen, tf, mhz, w, schedule="auto", calls=100):
    return {"hdim": 128, "causal": False, "seqlen": seqlen, "schedule": schedule, "sustain_calls": calls,
            "sustain_tflops": tf, "sustain_mhz": mhz, "sustain_watts": w, "sustain_tflop_per_j": tf / w}


def table(d, files, args):
    for name, rows in files.items():
        with open(os.path.join(d, name), "w") as f:
            json.dump(rows, f)
    p = subprocess.run([sys.executable, SCRIPT] + [",".join(os.path.join(d, n) for n in a.split(",")) for a in args],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return {tuple(l.split(" | ")[0].split()): l.split(" | ") for l in p.stdout.splitlines()[1:]}


def main():
    with tempfile.TemporaryDirectory() as d:
        files = {
            # base: 500 / 520 TFLOP/s at 1500 / 1560 MHz; other: +10% and +6% speed, clock +5% / +2%
            "b1.json": [row(8192, 500.0, 1500, 700), row(16384, 400.0, 1500, 700), row(4096, 1.0, 1, 1, calls=0)],
            "b2.json": [row(8192, 520.0, 1560, 650), row(16384, 400.0, 1500, 700)],
            "o1.json": [row(8192, 550.0, 1575, 700), row(16384, 440.0, 1500, 700)],
            "o2.json": [row(8192, 551.2, 1591.2, 650)],  # 16k missing from round 2
        }
        t = table(d, files, ["b1.json,b2.json", "o1.json,o2.json"])
        assert set(t) == {("128", "full", "8192", "auto"), ("128", "full", "16384", "auto")}, t.keys()
        r8 = t[("128", "full", "8192", "auto")]
        assert r8[1].split() == ["510.0", "675", "1530", "0.7571"], r8  # means of the two base rounds
        speed, cycle, joule = (float(x) for x in r8[3].split())
        assert abs(speed - (1.10 + 1.06) / 2) < 1e-3 and abs(joule - speed) < 1e-3, r8  # per-round ratio means
        assert abs(cycle - (1.10 / 1.05 + 1.06 / 1.02) / 2) < 1e-3, r8
        r16 = t[("128", "full", "16384", "auto")]
        assert r16[3].split()[0] == "1.100", r16  # round 1 only (round 2 lacks the row)
        # unequal round counts: the ratio of the means
        t = table(d, files, ["b1.json,b2.json", "o1.json"])
        assert t[("128", "full", "8192", "auto")][3].split()[0] == f"{550.0 / 510.0:.3f}", t
    print("sustain_ab: rounds, per-round ratio means, missing rows, unequal rounds: ok")


if __name__ == "__main__":
    main()
