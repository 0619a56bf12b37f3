#!/usr/bin/env python3
"""scripts/bwd_trace.py (the DASH_BWD_TRACE timeline summary) on a made-up trace: two CTAs, three sides
with known stamps (ns); the medians, shares and spreads it prints must be these. Sides whose epilogue
stamp is 0 (not reached) are left out; the header line is echoed."""
import gzip
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "bwd_trace.py")

TRACE = """# grid 2 block_m 80 block_n 128
cta,side,t0,t1,t2,t3,t4,j,steps,head
0,0,1000,3000,0,50000,52000,0,13,0
0,1,53000,55000,0,100000,101000,1,13,0
1,0,1100,2500,0,49000,51000,2,13,0
1,1,52000,53000,0,60000,0,3,13,0
"""


def run(text, gz=False):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.csv" + (".gz" if gz else ""))
        if gz:
            with gzip.open(path, "wt") as f:
                f.write(text)
        else:
            with open(path, "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def main():
    rc, out = run(TRACE)
    assert rc == 0, out
    # side (cta 1, side 1) has no epilogue stamp: 3 complete sides
    assert "grid 2 block_m 80 block_n 128" in out, out
    assert "3 sides on 2 CTAs, kernel span 100.0 us" in out, out
    # K/V waits 2.0, 2.0, 1.4 us; loops 47.0, 45.0, 46.5 us; epilogues 2.0, 1.0, 2.0; one gap of 1.0
    assert "K/V wait 2.00" in out and "step loop 46.50" in out and "epilogue 2.00" in out, out
    assert "gap to next side 1.00" in out, out
    assert "per step 3.577" in out, out  # 46.5 / 13
    # CTA 0 ends at 101 us, CTA 1 at 51 us (after 1 us): end spread 50 us
    assert "end spread 50.0 us" in out, out
    rc, out_gz = run(TRACE, gz=True)
    assert rc == 0 and "3 sides on 2 CTAs" in out_gz, out_gz
    print("bwd_trace.py: made-up trace summarised as expected (plain and gzipped)")


if __name__ == "__main__":
    main()
