"""End-to-end properties of the engine through the Python API: exact work counts, determinism,
and the central claim of the paper in work units (seeded, machine-independent)."""

from __future__ import annotations

import pytest

from superlinear.engine.runs import RunResult, RunSpec, SuperlinearError, Workload, run

UNIFORM = Workload("uniform", 2_000)


def projected(spec: RunSpec) -> RunResult:
    r = run(spec)
    assert r["projected"] is not None
    return r


def work_per_request(spec: RunSpec) -> float:
    p = projected(spec)["projected"]
    assert p is not None
    return p["work_total"] / p["requests"]


def test_mtf_with_hash_cuts_per_request_work_k_fold_round_robin_does_not() -> None:
    # Steady state (warm-up excluded): on uniform input a single MTF list costs about m/2 per
    # lookup; each of k hash-dispatched workers sees m/k items, so about m/(2k).
    common = dict(workload=UNIFORM, requests=40_000, warmup=40_000, exclude_warmup=True)
    one = work_per_request(RunSpec("mtf", "hash", 1, **common))  # type: ignore[arg-type]
    assert 0.4 * 2_000 < one < 0.6 * 2_000
    for k in (4, 8, 16):
        hashed = work_per_request(RunSpec("mtf", "hash", k, **common))  # type: ignore[arg-type]
        rr = work_per_request(RunSpec("mtf", "rr", k, **common))  # type: ignore[arg-type]
        assert 0.7 * k < one / hashed < 1.4 * k, (k, one / hashed)
        assert 0.9 < one / rr < 1.1, (k, one / rr)


def test_superlinear_work_speedup_only_for_the_combination() -> None:
    k = 8
    common = dict(workload=UNIFORM, requests=40_000, warmup=40_000, exclude_warmup=True)

    def speedup(algo: str, dispatch: str) -> float:
        base = projected(RunSpec(algo, dispatch, 1, **common))["projected"]  # type: ignore[arg-type]
        run_k = projected(RunSpec(algo, dispatch, k, **common))["projected"]  # type: ignore[arg-type]
        assert base is not None and run_k is not None
        return base["work_span"] / run_k["work_span"]

    assert speedup("mtf", "hash") > 3 * k
    others = (("mtf", "rr"), ("mtf", "random"), ("static", "rr"), ("static", "hash"), ("static", "random"))
    for algo, dispatch in others:
        assert speedup(algo, dispatch) <= 1.1 * k, (algo, dispatch)


@pytest.mark.parametrize("algo", ["static", "tree", "nocache", "hashmap"])
@pytest.mark.parametrize("dispatch", ["rr", "random", "hash"])
def test_static_structures_stay_sublinear_in_work(algo: str, dispatch: str) -> None:
    common = dict(workload=Workload("uniform", 500), requests=20_000)
    base = projected(RunSpec(algo, dispatch, 1, **common))["projected"]  # type: ignore[arg-type]
    for k in (2, 8, 16):
        p = projected(RunSpec(algo, dispatch, k, **common))["projected"]  # type: ignore[arg-type]
        assert base is not None and p is not None
        assert base["work_span"] / p["work_span"] <= 1.1 * k


def test_lru_hit_rate_grows_with_k_under_hash_only() -> None:
    common = dict(workload=Workload("uniform", 2_000), requests=60_000, capacity=100)
    rates = {}
    for dispatch in ("hash", "rr"):
        for k in (1, 4, 20):
            p = projected(RunSpec("lru:100", dispatch, k, **common))["projected"]  # type: ignore[arg-type]
            assert p is not None and p["hit_rate"] is not None
            rates[dispatch, k] = p["hit_rate"]
    assert abs(rates["hash", 1] - 0.05) < 0.01
    assert rates["hash", 4] > 3 * rates["hash", 1]
    assert rates["hash", 20] > 0.9
    assert rates["rr", 20] < 0.07


def test_splay_with_hash_beats_balanced_tree_in_work() -> None:
    common = dict(workload=Workload("uniform", 500), requests=30_000)
    span = {}
    for algo in ("splay", "tree"):
        for k in (1, 32):
            p = projected(RunSpec(algo, "hash", k, **common))["projected"]  # type: ignore[arg-type]
            assert p is not None
            span[algo, k] = p["work_span"]
    assert span["splay", 1] / span["splay", 32] > 1.5 * span["tree", 1] / span["tree", 32]


def test_runs_are_deterministic_for_a_seed() -> None:
    for dispatch in ("rr", "random", "hash"):
        a = projected(RunSpec("mtf", dispatch, 4, workload=UNIFORM, requests=5_000, seed=7))["projected"]
        b = projected(RunSpec("mtf", dispatch, 4, workload=UNIFORM, requests=5_000, seed=7))["projected"]
        c = projected(RunSpec("mtf", dispatch, 4, workload=UNIFORM, requests=5_000, seed=8))["projected"]
        assert a is not None and b is not None and c is not None
        assert (a["worker_work"], a["worker_requests"]) == (b["worker_work"], b["worker_requests"])
        assert a["worker_work"] != c["worker_work"]


def test_threaded_runs_do_exactly_the_projected_work() -> None:
    # The real-thread runner must deliver every request, in order, to the same worker as the
    # projected runner: identical work counts prove it.
    for exclude in (False, True):
        spec = RunSpec("mtf", "hash", 2, workload=UNIFORM, requests=20_000, warmup=5_000, exclude_warmup=exclude,
                       modes=("projected", "measured", "single_core"))
        r = run(spec)
        assert r["projected"] is not None and r["measured"] is not None and r["single_core"] is not None
        for other in (r["measured"], r["single_core"]):
            assert other["worker_work"] == r["projected"]["worker_work"]
            assert other["worker_requests"] == r["projected"]["worker_requests"]
            assert other["wall_ns"] is not None and other["wall_ns"] > 0


def test_measured_is_skipped_above_the_core_count() -> None:
    r = run(RunSpec("static", "rr", 64, workload=UNIFORM, requests=1_000, modes=("projected", "measured")))
    assert r["measured"] is None and r["projected"] is not None and r["cores"] < 64


def test_sharded_state_holds_partitions_and_needs_key_affinity() -> None:
    r = projected(RunSpec("static", "hash", 4, workload=UNIFORM, requests=8_000, sharded=True))["projected"]
    assert r is not None
    # Each worker scans only its own ~m/4 items: about m/8 per lookup instead of m/2.
    assert r["work_total"] / r["requests"] < 0.2 * 2_000
    with pytest.raises(SuperlinearError, match="key-affine"):
        run(RunSpec("static", "rr", 4, workload=UNIFORM, requests=100, sharded=True))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (RunSpec("nope", "hash", 2), "unknown algorithm 'nope'"),
        (RunSpec("lru", "hash", 2), "needs a capacity"),
        (RunSpec("mtf", "nope", 2), "unknown dispatcher 'nope'"),
        (RunSpec("mtf", "hash", 0), "k must be at least 1"),
        (RunSpec("mtf", "hash", 2, workload=Workload("zipf", 100, alpha=-1.0)), "alpha"),
        (RunSpec("mtf", "hash", 2, workload=Workload("uniform", 0)), "m >= 1"),
        (RunSpec("mtf", "hash", 2, workload=Workload("trace", path="/nonexistent/keys.txt")), "/nonexistent/keys.txt"),
    ],
)
def test_bad_configs_raise_one_clear_error(spec: RunSpec, message: str) -> None:
    with pytest.raises(SuperlinearError, match=message):
        run(spec)
