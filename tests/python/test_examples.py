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
    for name, res in r["results"].items():  # per-block host records and every step's time
        assert len(res["step_ms"]) == 3 * 2, name
        assert [b["round"] for b in res["blocks"]] == [0, 1, 2], name
        assert all(b["wall_s"] >= b["enqueue_s"] >= 0 and b["gpu_ms_sum"] > 0 for b in res["blocks"]), name
        assert res["min_ms"] <= res["p10_ms"] <= res["median_ms"], name
    starts = sorted((b["t_start"], n) for n, res in r["results"].items() for b in res["blocks"])
    assert [n for _, n in starts] == ["sdpa", "sdpa_detmode", "sdpa_detmode", "sdpa", "sdpa", "sdpa_detmode"]
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


BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")


def test_peers_rounds_interleave_and_keep_every_iteration(tmp_path):
    """bench/peers.py --rounds: every implementation timed in each round (CPU dry run with the
    math-SDPA stand-in for ours), medians over all rounds, determinism over every run."""
    sys.path.insert(0, BENCH)
    try:
        import peers
    finally:
        sys.path.remove(BENCH)
    out = tmp_path / "peers.json"
    rc = peers.main(["--device", "cpu", "--fake-dash", "--hdims", "64", "--masks", "causal", "--seqlens", "128",
                     "--tokens", "256", "--hidden", "128", "--impls", "dash:descending,dash:atomic",
                     "--warmup", "1", "--reps", "2", "--rounds", "3", "--fwd-rounds", "2", "--fwd-reps", "2",
                     "--json", str(out)])
    assert rc in (0, None)
    import json
    d = json.load(open(out))
    impls = d["results"][0]["impls"]
    for name in ("dash:descending", "dash:atomic"):
        r = impls[name]
        assert "error" not in r, r
        assert len(r["bwd_ms_rounds"]) == 3 and len(r["bwd_ms_all"]) == 3 * 2
        assert r["det_runs"] == 3 * (1 + 2) + 1 and r["det"]
        assert min(r["bwd_ms_all"]) <= r["bwd_ms"] <= max(r["bwd_ms_all"])
    # the forward-only phase: one turn per round for the dash forward (the first dash column stands
    # for all of them without dash:auto), none for the other dash columns
    assert len(impls["dash:descending"]["fwd_phase_ms_all"]) == 2 * 2
    assert impls["dash:descending"]["fwd_phase_tflops"] > 0
    assert "fwd_phase_ms" not in impls["dash:atomic"]
    ratios = d["results"][0]["ratios"]
    assert ratios["fwd_ratio_from"] == "fwd phase (dash:descending)"
    assert ratios["dash_fwd_tflops"] == impls["dash:descending"]["fwd_phase_tflops"]


def test_peers_paired_forward_phase(tmp_path, monkeypatch):
    """bench/peers.py --fwd-pairs: after the forward-only phase every forward kernel runs one timed
    forward per pair, in turn; fwd_vs_<peer>_fwd_paired is the median over the pairs of the peer's
    time / ours. CPU dry run: the math-SDPA stand-in plays both ours and cuDNN."""
    sys.path.insert(0, BENCH)
    try:
        import peers
    finally:
        sys.path.remove(BENCH)
    orig = peers.make_impl

    def fake(name, causal, s, device, state):
        return orig("dash:stand-in" if name == "cudnn" else name, causal, s, device, state)

    monkeypatch.setattr(peers, "make_impl", fake)
    out = tmp_path / "peers.json"
    rc = peers.main(["--device", "cpu", "--fake-dash", "--hdims", "64", "--masks", "full", "--seqlens", "128",
                     "--tokens", "256", "--hidden", "128", "--impls", "cudnn,dash:descending,dash:atomic",
                     "--warmup", "1", "--reps", "2", "--rounds", "1", "--fwd-rounds", "1", "--fwd-reps", "2",
                     "--fwd-pairs", "5", "--json", str(out)])
    assert rc in (0, None)
    import json
    d = json.load(open(out))
    impls, ratios = d["results"][0]["impls"], d["results"][0]["ratios"]
    for name in ("cudnn", "dash:descending"):
        assert "error" not in impls[name], impls[name]
        assert len(impls[name]["fwd_pair_ms_all"]) == 5 and min(impls[name]["fwd_pair_ms_all"]) > 0
    assert "fwd_pair_ms_all" not in impls["dash:atomic"]  # dash:descending stands for the dash forward
    c, o = impls["cudnn"]["fwd_pair_ms_all"], impls["dash:descending"]["fwd_pair_ms_all"]
    assert ratios["fwd_vs_cudnn_fwd_paired"] == peers.paired_ratio(c, o)
    assert sorted(a / b for a, b in zip(c, o))[2] == ratios["fwd_vs_cudnn_fwd_paired"]
    assert "fwd_vs_flex_fwd_paired" not in ratios
    # the helper: peer / ours per pair, median; None unless both ran every pair
    assert peers.paired_ratio([2.0, 3.0, 4.0], [1.0, 3.0, 1.0]) == 2.0
    assert peers.paired_ratio([2.0, 3.0], [1.0]) is None and peers.paired_ratio(None, [1.0]) is None
    # --fwd-pairs 0: no paired phase
    rc = peers.main(["--device", "cpu", "--fake-dash", "--hdims", "64", "--masks", "full", "--seqlens", "128",
                     "--tokens", "256", "--hidden", "128", "--impls", "cudnn,dash:descending",
                     "--warmup", "1", "--reps", "2", "--fwd-rounds", "1", "--fwd-reps", "2", "--fwd-pairs", "0",
                     "--json", str(out)])
    d = json.load(open(out))
    assert "fwd_pair_ms_all" not in d["results"][0]["impls"]["cudnn"]
    assert "fwd_vs_cudnn_fwd_paired" not in d["results"][0]["ratios"]
