"""``superlinear latency-sim`` and ``superlinear.latency.sim``: caching with delayed hits (thesis ch. 2).

Every trace is generated here; assertions are on exact simulated latencies, on the bound chain
LP ≤ exhaustive optimum ≤ rounded schedule, and on wide-margin ratios; never on timings.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from superlinear import _native
from superlinear.latency import sim as latency
from superlinear.latency.sim import Trace, TraceSpec

Cli = Callable[..., CompletedProcess[str]]
ALL = ["lru", "lfu", "arc", "lru-mad", "lfu-mad", "arc-mad", "belady", "belady-ad"]


def test_policies_are_listed(cli: Cli) -> None:
    r = cli("latency-sim", "policies", "--json")
    assert r.returncode == 0, r.stderr
    assert [p["name"] for p in json.loads(r.stdout)] == ALL
    assert latency.policy_names() == ALL


def test_worked_example_z10() -> None:
    # §2.1: Z = 10, a miss at T = 3; requests at T = 5 and 11 cost 8 and 2. Other steps: new objects.
    objects = [100 + t if t not in (3, 5, 11) else 7 for t in range(12)]
    trace = Trace.from_objects(objects)
    for policy in latency.policy_names():
        r = latency.simulate(trace, policy, 10, 16)
        assert (r.hits, r.delayed_hits, r.misses) == (0, 2, 10)
        assert r.latency == 9 * 10 + 10 + 8 + 2
        # The classical model sees two hits: AMAT underestimates the true latency (Eq. 2.1).
        assert r.amat_latency == pytest.approx(100 / 12)
        assert r.row()["amat_error"] < 0


def test_z_one_latency_is_the_miss_count() -> None:
    rng = random.Random(3)
    for _ in range(10):
        trace = Trace.from_objects([rng.randrange(9) for _ in range(rng.randint(1, 300))])
        for policy in latency.policy_names():
            r = latency.simulate(trace, policy, 1, rng.randint(1, 5), amat=False)
            assert r.delayed_hits == 0 and r.latency == r.misses


def _lp_chain(trace: Trace, z: int, c: int, rounds: int = 4) -> tuple[latency.BelatedlyResult, dict[str, int]]:
    b = latency.belatedly(trace, z, c, rounds=rounds)
    policies = {p: latency.simulate(trace, p, z, c, amat=False).latency for p in latency.policy_names()}
    return b, policies


def test_belatedly_bound_and_rounding_on_random_small_traces() -> None:
    """LP bound ≤ rounded schedule, LP bound ≤ every policy, rounded ≤ every online policy."""
    rng = random.Random(11)
    for _ in range(25):
        m = rng.randint(2, 10)
        objects: list[int] = []
        while len(objects) < rng.randint(30, 250):
            o = rng.randrange(m)
            objects += [o] * (rng.randint(1, 4) if o % 2 else 1)  # some objects come in bursts
        trace = Trace.from_objects(objects)
        z, c = rng.choice([2, 3, 5, 8, 13]), rng.randint(1, max(1, m // 2))
        b, policies = _lp_chain(trace, z, c)
        assert b.lower_bound <= b.rounded_latency + 1e-6
        for name, lat in policies.items():
            assert b.lower_bound <= lat + 1e-6, name
            if name not in ("belady", "belady-ad"):
                assert b.rounded_latency <= lat, (name, objects, z, c)


def _milp(trace: Trace, z: int, c: int) -> float:
    lp = _native.LatencyLp(trace.native, z, c)
    a = lp.arrays()
    if not a["cost"]:
        return float(a["constant"])
    matrix = sp.csr_matrix((a["values"], a["indices"], a["indptr"]), shape=(len(a["rhs"]), len(a["cost"])))
    res = milp(np.asarray(a["cost"]), constraints=LinearConstraint(matrix, a["rhs"], a["rhs"]),
               bounds=Bounds(a["lower"], a["upper"]), integrality=np.ones(len(a["cost"])))
    assert res.status == 0, res.message
    return float(res.fun) + a["constant"]


def test_exhaustive_search_confirms_the_bound_on_tiny_instances() -> None:
    """LP ≤ integral optimum of the flow (HiGHS MIP) = exhaustive optimum of the thesis' model
    (Theorem 1) ≤ the optimum with evictions only at fills ≤ every policy; rounding ≥ optimum."""
    rng = random.Random(5)
    for _ in range(40):
        trace = Trace.from_objects([rng.randrange(rng.randint(1, 4)) for _ in range(rng.randint(3, 12))])
        z, c = rng.randint(1, 6), rng.randint(1, 2)
        any_time = latency.optimal(trace, z, c, any_time=True)
        at_fills = latency.optimal(trace, z, c)
        assert _milp(trace, z, c) == pytest.approx(any_time)
        b, policies = _lp_chain(trace, z, c)
        assert b.lower_bound <= any_time + 1e-6 <= at_fills + 1e-6
        assert any_time <= b.rounded_latency
        assert all(at_fills <= lat for lat in policies.values())


def test_belatedly_at_ci_size() -> None:
    """20,000 requests over 300 objects: bound ≤ rounded ≤ every policy; Bélády-AD close to
    the bound and Bélády well above it (wide margins)."""
    trace = Trace.generate(TraceSpec(requests=20_000, objects=300, seed=3))
    b, policies = _lp_chain(trace, 100, 20)
    assert b.variables > 50_000
    assert b.lower_bound <= b.rounded_latency <= min(policies.values())
    assert b.gap < 0.05
    assert policies["belady-ad"] < 1.10 * b.lower_bound
    assert policies["belady"] > 1.10 * b.lower_bound
    assert policies["lru-mad"] < policies["lru"]


def test_run_writes_results_and_plots(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = cli("latency-sim", "run", "--requests", "3000", "--objects", "100", "--z", "10,300", "--sizes", "5%,20%",
            "--policies", "lru,lru-mad,belady-ad", "--belatedly", "--rounds", "1", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["experiment"] == "latency-sim" and doc["machine"]["cores"] >= 1
    rows = doc["rows"]
    assert len(rows) == 3 * 2 * 2 + 2 * 2 * 2
    assert all(row["kind"] == "simulated" for row in rows)
    for z in (10, 300):
        for c in (5, 20):
            at = {row["policy"]: row for row in rows if row["z"] == z and row["capacity"] == c}
            assert at["belatedly-lp"]["mean_latency"] <= at["belatedly"]["mean_latency"] + 1e-9
            assert at["belatedly-lp"]["mean_latency"] <= at["belady-ad"]["mean_latency"] + 1e-9
            if (z, c) == (300, 20):  # many delayed hits: the classical estimate is far too low
                assert at["lru"]["amat_latency"] < 0.9 * at["lru"]["mean_latency"]
    assert (out / "result.csv").stat().st_size > 0
    for name in ("latency-vs-z", "latency-vs-size", "amat-vs-true"):
        assert (out / f"{name}.png").stat().st_size > 1000
        assert (out / f"{name}.svg").stat().st_size > 1000


def test_gen_and_traces_with_latency_columns(cli: Cli, tmp_path: Path) -> None:
    text, binary = tmp_path / "t.txt", tmp_path / "t.bin"
    r = cli("latency-sim", "gen", "--requests", "3000", "--objects", "50", "--latencies", "5,50", "--out", str(text))
    assert r.returncode == 0, r.stderr
    assert cli("latency-sim", "gen", "--requests", "3000", "--objects", "50", "--binary", "--out",
               str(binary)).returncode == 0
    t = Trace.read(text)
    assert (len(t), t.objects, t.has_latencies, t.mean_interval) == (3000, 50, True, 1.0)
    assert set(t.miss_latencies(None)) == {5, 50}
    b = Trace.read(binary)
    assert b.requests() == t.requests() and not b.has_latencies
    # Per-object Z from the column, and Z = L / R from a latency in time units.
    r = cli("latency-sim", "run", "--trace", str(text), "--z", "trace", "--sizes", "5", "--policies", "lru,lru-mad",
            "--out", str(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    assert {row["z"] for row in json.loads(r.stdout)["rows"]} == {"trace"}
    assert t.z_from_latency(20.4) == 20


def test_bench_reports_measured_speed(cli: Cli, tmp_path: Path) -> None:
    r = cli("latency-sim", "bench", "--requests", "50000", "--objects", "1000", "--out", str(tmp_path / "b"), "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert [row["policy"] for row in rows] == ["lru", "lru-mad"]
    assert all(row["kind"] == "measured" and row["requests_per_s"] > 0 for row in rows)
    # Three interleaved rounds by default: the rate is their median with the range; the simulated
    # latency is the same in every round.
    for row in rows:
        assert row["repeats"] == 3 and len(row["requests_per_s_runs"]) == 3 and row["mean_latency_equal"]
        assert row["requests_per_s_lo"] <= row["requests_per_s"] <= row["requests_per_s_hi"]


def test_engine_lru_mad_worker(cli: Cli) -> None:
    """`--algo lru-mad:C` runs in the engine; with ρ = 0 (Z = 1) it makes LRU's decisions."""
    r = cli("algorithms", "--json")
    names = [a["name"] for a in json.loads(r.stdout)["algorithms"]]
    assert "lru-mad" in names and "lru-dh" in names
    hits = {}
    for algo in ("lru:200", "lru-mad:200", "lru-dh:200"):
        r = cli("run", "--algo", algo, "--k", "2", "--workload", "zipf", "--m", "2000", "--requests", "20000", "--json")
        assert r.returncode == 0, r.stderr
        hits[algo] = json.loads(r.stdout)["projected"]["hit_rate"]
    assert hits["lru:200"] == hits["lru-mad:200"] == hits["lru-dh:200"]


def test_user_mistakes_are_one_line_errors(tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    check = one_line_mistake

    out = str(tmp_path / "o")
    bad = tmp_path / "bad.txt"
    bad.write_text("a 0\nb 1\nc x\n")
    check(["latency-sim", "run", "--trace", str(bad), "--z", "5", "--out", out], f"{bad}:3:", "timestamp 'x'")
    bad.write_text("a 0 3\nb 1\n")
    check(["latency-sim", "run", "--trace", str(bad), "--out", out], f"{bad}:2:", "expected 3 columns")
    check(["latency-sim", "run", "--requests", "100", "--z", "0", "--out", out], "--z", "at least 1")
    check(["latency-sim", "run", "--requests", "100", "--sizes", "0", "--out", out], "--sizes", "'0'")
    check(["latency-sim", "run", "--requests", "100", "--sizes", "x", "--out", out], "--sizes", "'x'")
    check(["latency-sim", "run", "--requests", "100", "--policies", "fifo", "--out", out], "unknown policy fifo")
    check(["latency-sim", "run", "--trace", str(tmp_path / "none.txt"), "--out", out], "no such file")
    check(["latency-sim", "run", "--requests", "100", "--z", "trace", "--out", out], "--z trace needs")
    check(["latency-sim", "run", "--requests", "100", "--bursty", "2", "--out", out], "bursty fraction")
    check(["latency-sim", "belatedly", "--requests", "100", "--z", "10,20", "--out", out], "one Z")
    check(["latency-sim", "gen", "--out", str(tmp_path / "g"), "--binary", "--latencies", "5"], "text trace")
    # Requests 10 time units apart: --latency 1,2,3 ran three columns of Z = 1, and 15 became Z = 2.
    spaced = tmp_path / "spaced.txt"
    spaced.write_text("".join(f"{i % 7} {10 * i}\n" for i in range(100)))
    check(["latency-sim", "run", "--trace", str(spaced), "--latency", "1,20", "--out", out],
          "--latency 1: Z = 0.1 request-times (mean interval 10); the shortest miss is Z = 1, a latency of 10")
    check(["latency-sim", "run", "--trace", str(spaced), "--latency", "20,24", "--out", out],
          "--latency 20 and 24 both round to Z = 2 request-times (mean interval 10)")
    with pytest.raises(latency.SuperlinearError, match="at least 1"):
        latency.simulate(Trace.from_objects([1, 2]), "lru", 5, 0)
    with pytest.raises(latency.SuperlinearError, match="at least 1"):
        latency.belatedly(Trace.from_objects([1, 2]), 0, 1)
