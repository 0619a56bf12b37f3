"""CPU smoke tests of the example scripts (no GPU, no compiled extension needed)."""
import os
import sys

import pytest

torch = pytest.importorskip("torch")

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def import_step_time_ab():
    sys.path.insert(0, EXAMPLES)
    try:
        import step_time_ab
    finally:
        sys.path.remove(EXAMPLES)
    return step_time_ab


def test_step_time_ab_interleaves_and_reports_every_attention(tmp_path):
    step_time_ab = import_step_time_ab()
    out = tmp_path / "ab.json"
    r = step_time_ab.main(["--device", "cpu", "--preset", "tiny", "--attns", "sdpa,sdpa_detmode", "--seqlen", "32",
                           "--batch", "2", "--blocks", "3", "--steps-per-block", "2", "--warmup-steps", "1",
                           "--json", str(out)])
    assert out.exists()
    assert list(r["results"]) == ["sdpa", "sdpa_detmode"]
    for name, res in r["results"].items():
        assert res["steps"] == 3 * 2, name
        assert len(res["block_median_ms"]) == 3
        assert 0 < res["min_ms"] <= res["median_ms"] <= res["max_ms"]
    assert r["results"]["sdpa"]["time_vs_first"] == 1.0
    assert step_time_ab.block_order(["a", "b"], 0) == ["a", "b"]
    assert step_time_ab.block_order(["a", "b"], 1) == ["b", "a"]


def test_step_time_ab_rejects_unknown_attention():
    step_time_ab = import_step_time_ab()
    with pytest.raises(SystemExit):
        step_time_ab.parse_args(["--attns", "dash,nonsense"])


def test_step_time_ab_under_ddp_one_process(tmp_path, monkeypatch):
    # --dist ddp without torchrun: a world of one (gloo on the CPU); the copies are wrapped in DDP
    # and the report says so. The 2-GPU run is `torchrun --nproc_per_node 2 examples/step_time_ab.py`.
    # set (not deleted) so that monkeypatch restores them afterwards
    for k, v in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"), ("MASTER_ADDR", "127.0.0.1"),
                 ("MASTER_PORT", "29561")):
        monkeypatch.setenv(k, v)
    step_time_ab = import_step_time_ab()
    out = tmp_path / "ab.json"
    r = step_time_ab.main(["--device", "cpu", "--preset", "tiny", "--attns", "sdpa,sdpa_detmode", "--seqlen", "32",
                           "--batch", "2", "--blocks", "2", "--steps-per-block", "2", "--warmup-steps", "1",
                           "--dist", "ddp", "--json", str(out)])
    assert out.exists()
    assert r["dist"] == "ddp" and r["world"] == 1
    for name, res in r["results"].items():
        assert res["steps"] == 2 * 2, name
