"""bench/power_probe.py's self-test: --dry-run (CPU, tiny shapes, no NVML; math SDPA stands in for
dash:*, as peers.py's --fake-dash) writes one row per implementation, shape and pass with a positive
speed, and bad arguments name the argument."""
import json
import pathlib
import subprocess
import sys

import pytest

PROBE = pathlib.Path(__file__).resolve().parents[2] / "bench" / "power_probe.py"


def run(*args):
    return subprocess.run([sys.executable, str(PROBE), "--dry-run", *args], capture_output=True, text=True, timeout=300)


def test_dry_run_rows(tmp_path):
    out = tmp_path / "probe.json"
    r = run("--hdim", "32", "--tokens", "128", "--hidden", "64", "--shapes", "full:64,causal:32", "--impls", "dash:auto",
            "--seconds", "0.05", "--passes", "2", "--json", str(out))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    rows = data["rows"]
    assert len(rows) == 2 * 2  # shapes x passes (one implementation)
    assert {(x["mask"], x["seqlen"]) for x in rows} == {("full", 64), ("causal", 32)}
    for x in rows:
        assert "error" not in x, x
        assert x["iters"] >= 3 and x["tflops"] > 0 and x["ms"] > 0
        assert x["batch"] == 128 // x["seqlen"] and x["heads"] == 2
    assert len(data["summary"]) == 2


@pytest.mark.parametrize("args, needle", [
    (["--impls", "nosuch"], "--impls"),
    (["--impls", "dash:"], "--impls"),
    (["--shapes", "diag:64"], "--shapes"),
    (["--hdim", "48", "--hidden", "100"], "--hidden"),
])
def test_bad_arguments_are_named(args, needle):
    r = run("--tokens", "64", "--seconds", "0.01", *args)
    assert r.returncode != 0
    assert needle in r.stderr
