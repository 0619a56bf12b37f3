#!/usr/bin/env python3
"""scripts/ncu_per_flop.py (ncu counters per backward TFLOP, ours against cuDNN's) on made-up ncu --csv files:
sums are divided by the shape's backward TFLOP (FlashAttention's convention, causal half), rates are not,
thousands separators are read, only the last profiled kernel of a file counts, and each of our rows gets its
ratio over cuDNN's row of the same shape."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "ncu_per_flop.py")
HEAD = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",' \
       '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'


def line(kid, name, unit, value):
    return (f'"{kid}","1","x","h","k(int, float)","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","{name}","{unit}","{value}"\n')


def main():
    # causal 16k, hdim 128, 16 heads, batch 1: forward 4 * 16 * 16384^2 * 128 / 2, backward 2.5x
    tf = 2.5 * 4.0 * 16 * 16384 ** 2 * 128 * 0.5 / 1e12
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "ncu-cudnn-c1-s16384.csv"), "w") as f:
            f.write("==PROF== noise\n" + HEAD)
            f.write(line(0, "dram__bytes_read.sum", "byte", "999"))  # an earlier kernel: ignored
            f.write(line(1, "dram__bytes_read.sum", "byte", f"{int(tf * 1e9):,}"))
            f.write(line(1, "lts__t_sector_hit_rate.pct", "%", "90.00"))
            f.write(line(1, "gpu__time_duration.sum", "ns", "5,000,000"))
        with open(os.path.join(d, "ncu-dash-c1-s16384-auto.csv"), "w") as f:
            f.write(HEAD)
            f.write(line(0, "dram__bytes_read.sum", "byte", f"{int(2 * tf * 1e9):,}"))
            f.write(line(0, "lts__t_sector_hit_rate.pct", "%", "45.00"))
            f.write(line(0, "gpu__time_duration.sum", "ns", "4,000,000"))
        with open(os.path.join(d, "ncu-dash-c0-s8192-auto.csv"), "w") as f:
            f.write("==ERROR== the profile failed\n")
        p = subprocess.run([sys.executable, SCRIPT] + [os.path.join(d, n) for n in sorted(os.listdir(d))],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        out = p.stdout
        assert "ncu-dash-c0-s8192-auto.csv: no metrics" in out, out
        rows = {l.split(" | ")[0].strip("| "): l.strip("| ").split(" | ") for l in out.splitlines() if l.startswith("| ")}
        r = rows["dram__bytes_read.sum / TFLOP"]
        assert abs(float(r[1]) - 1e9) / 1e9 < 1e-6 and abs(float(r[2]) - 2e9) / 2e9 < 1e-6, r  # cuDNN, ours
        assert r[3] == "2.000", r  # ours / cuDNN
        h = rows["lts__t_sector_hit_rate.pct"]
        assert h[1:] == ["90", "45", "0.500"], h  # a rate: not divided by the TFLOP
        assert f"dash auto: {tf / 4e-3:.0f} TFLOP/s" in out, out
        assert f"cudnn bprop: {tf / 5e-3:.0f} TFLOP/s" in out, out
    print("ncu_per_flop: per TFLOP, rates, separators, last kernel, ratios, failed files: ok")


if __name__ == "__main__":
    main()
