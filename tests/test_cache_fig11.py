"""Fig. 11 as the paper shows it, at tiny sizes: hot-set key distributions, the LRU simulation
and the cache advisor without servers; then the real tier (memcached + PostgreSQL started by the
project's own services code), skipped only where the binaries are not installed."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_cli import assert_clean_error

from superlinear import _native
from superlinear.cache.advise import UNIT_COSTS_US, eq3_hits, items_for, peak_of, predict
from superlinear.cache.services import binaries_available
from superlinear.experiments.fig11 import HOT_ROWS, ITEMS_PER_4MB, CachePanel, CacheStudy, fig11, workload_of

HAVE, WHY = binaries_available()


def _rate(pairs: list[tuple[int, int]]) -> float:
    return sum(h for h, _ in pairs) / max(sum(r for _, r in pairs), 1)


def test_lru_simulation_hit_rate_grows_with_key_hash_only_and_repeats() -> None:
    hash_rates = [_rate(_native.cache_lru_sim("hash", k, "hot:8000", 50_000, 1_000, 20_000, 8_000, 3))
                  for k in range(1, 11)]
    assert all(b >= a - 0.01 for a, b in itertools.pairwise(hash_rates)), hash_rates
    assert abs(hash_rates[0] - 0.125) < 0.02 and hash_rates[-1] > 0.95, hash_rates
    rand = [_rate(_native.cache_lru_sim("random", k, "hot:8000", 50_000, 1_000, 20_000, 8_000, 3)) for k in (1, 8)]
    assert all(abs(r - 0.125) < 0.02 for r in rand), rand
    again = _native.cache_lru_sim("hash", 4, "hot:8000:zipf:0.9", 50_000, 1_000, 5_000, 1_000, 3)
    assert again == _native.cache_lru_sim("hash", 4, "hot:8000:zipf:0.9", 50_000, 1_000, 5_000, 1_000, 3)


def test_advisor_finds_the_peak_where_the_replicas_hold_the_hot_set() -> None:
    # 8 replicas of 1,000 items hold the 8,000 hot rows: the superlinearity peaks there.
    a = predict("hot:8000", 50_000, 1_000, 2.2, range(1, 13), ("hash", "random"), requests=20_000)
    h = a.curve("hash")
    assert h.peak_k in (7, 8, 9) and h.linear_from is not None and h.linear_from >= h.peak_k
    assert 1.8 < h.peak_ratio < 2.2
    # The work kind (simulated counts × unit costs): superlinear, peaking where the hot set fits.
    assert h.work_speedups is not None and h.work_peak_k in (7, 8, 9)
    # Below what k = 1 takes per read (the longer of the replica's get and 1 − δ fills, δ = 1/8, and
    # the path over 4 threads) over what a replica takes per read past the peak (a get, at least).
    u = UNIT_COSTS_US
    one_read = max(u.memcached + 7 / 8 * u.memcached_fill,
                   (u.client_hit + u.memcached + 7 / 8 * (u.client_miss + u.postgresql + u.memcached_fill)) / 4)
    assert 1.5 < max(w / k for w, k in zip(h.work_speedups, h.ks, strict=True)) < one_read / u.memcached
    r = a.curve("random")
    assert max(abs(x - 1) for x in r.ratios) < 0.05
    assert a.rows_out()[0]["speedup_model"] == pytest.approx(1.0)
    assert peak_of([1, 2, 3], [1.0, 2.5, 3.6]) == 2


def test_fig11_default_is_the_papers_setup() -> None:
    for quick in (False, True):
        s = fig11(quick)
        assert (s.rows, s.memory_mb, max(s.panels[0].ks), s.repeats) == (1_000_000, 4, 15, 3)
        joint = next(p for p in s.panels if p.name == "joint")
        assert joint.dist == f"hot:{HOT_ROWS}" and joint.threads_per_replica == 4 and joint.db_per_replica == 4
        assert any(p.name == "all-rows" and p.dist == "uniform" for p in s.panels)
    # 14 replicas of 4 MB hold the hot set, 13 do not.
    assert 13 * ITEMS_PER_4MB < HOT_ROWS <= 14 * ITEMS_PER_4MB
    assert items_for(4) == ITEMS_PER_4MB
    assert workload_of(f"hot:{HOT_ROWS}:zipf:0.99", 10**6).m == HOT_ROWS


def test_fig11_goes_past_the_papers_15_replicas_and_says_where_growth_is_linear_again() -> None:
    from superlinear.experiments.cachetier_driver import linear_growth

    for quick in (False, True):
        beyond = next(p for p in fig11(quick).panels if p.name == "beyond")
        assert beyond.ks[0] == 1 and 14 in beyond.ks and max(beyond.ks) == 20 and beyond.routers == ("hash",)
        assert fig11(quick).replicas == 20
    # Superlinear up to the peak at 14, then every added replica adds about the average.
    flat = [{"k": k, "speedup_work": s} for k, s in ((1, 1.0), (8, 12.0), (14, 29.0), (16, 33.1), (18, 37.4))]
    line = linear_growth(flat)
    assert line is not None and "peaks at k=14" in line and "from k=14 on" in line and "16→18: 2.15" in line
    rising = [{"k": k, "speedup_work": s} for k, s in ((1, 1.0), (8, 12.0), (14, 29.0), (15, 33.0))]
    assert "still growing faster than linear at k=15" in (linear_growth(rising) or "")
    assert linear_growth([{"k": 1, "speedup_work": 1.0}, {"k": 2, "speedup_work": None}, {"k": 3}]) is None
    assert linear_growth([{"k": k, "speedup_work": 0.99 * k} for k in (1, 2, 4, 8)]) is None


def test_calibration_runs_pin_the_replica_and_the_client_apart() -> None:
    from superlinear.experiments.cachetier_driver import participants_apart

    replica = subprocess.Popen(["sleep", "30"])
    try:
        mine = os.sched_getaffinity(0)
        with participants_apart(replica.pid) as where:
            if len(mine) >= 2:
                cpus = sorted(mine)
                assert where == f"memcached CPU {cpus[0]}, client CPU {cpus[1]}"
                assert os.sched_getaffinity(replica.pid) == {cpus[0]} and os.sched_getaffinity(0) == {cpus[1]}
            else:
                assert where is None
        assert os.sched_getaffinity(0) == mine and os.sched_getaffinity(replica.pid) == mine
    finally:
        replica.kill()
        replica.wait()
    with participants_apart(2**22 + 7) as where:  # no such process
        assert where is None


def test_the_unit_costs_come_from_the_calibration_runs_and_their_reads_are_checked() -> None:
    from superlinear.experiments.cachetier_driver import (
        add_speedups,
        aggregate_rounds,
        calibration_finding,
        fold_calibration,
    )

    def run(k: int, memcached_cpu: int, **extra: Any) -> dict[str, Any]:
        return {"panel": "joint", "dispatch": "hash", "k": k, "round": 0, "replica_requests": [10] * k,
                "replica_fills": [6] * k, "replica_cpu_sum_ns": memcached_cpu * k, "db_backend_cpu_sum_ns": 600,
                "db_reads": 6, "client_cpu_ns": 1000, "client_miss_cpu_ns": 600, "requests": 10, "reads_past_cache": 6,
                "threads": 4, "db_connections": 4, "hit_rate": 0.4, "workload": "uniform", "backend": "joint",
                "throughput_rps_measured": 1.0, "throughput_rps_projected": 1.0, "wrong_values": 0, **extra}

    where = "memcached CPU 0, client CPU 1"
    rows = [run(1, 320), run(2, 320), run(1, 160, calibration=where, calibration_part="mixed", wrong_values=2),
            run(1, 40, calibration=where, calibration_part="hits", replica_fills=[0]),
            run(1, 100, calibration=where, calibration_part="check", replica_fills=[2], hit_rate=0.8)]
    add_speedups(rows)
    fold_calibration(rows)
    # The hit run: 40 ns over 10 gets, 4 a get; the mixed run: 160 ns = 10 gets + 6 fills, 20 a fill.
    # Not the k = 1 row's 20 per operation.
    assert rows[0]["unit_costs_ns"]["memcached"] == pytest.approx(4.0)
    assert rows[0]["unit_costs_ns"]["memcached_fill"] == pytest.approx(20.0)
    assert rows[1]["unit_costs_from"] == f"3 calibration runs per round at k = 1 ({where})"
    # The estimator before the split (one cost per memcached operation, 10 ns) stays beside it: the
    # client path binds at both k, (1000 + 160 + 600) / 4 ns against (1000 + 320 + 600) / 4.
    assert rows[1]["speedup_work_one_memcached_cost"] == pytest.approx(440 / 480)
    # The check run (10 gets, 2 fills, 100 ns): 10 ns per read measured, 8 by get and fill, 12 by one cost.
    assert rows[1]["memcached_cpu_check_ns"] == (0.8, pytest.approx(10.0), pytest.approx(8.0), pytest.approx(12.0))
    line = calibration_finding("joint", rows[0])
    assert "check at hit rate 0.80" in line and "(-20%)" in line and "(+20%)" in line, line
    (k1, _) = aggregate_rounds([r for r in rows if not r.get("calibration")])
    assert (k1["calibration_requests"], k1["calibration_wrong_values"]) == (30, 2)


def test_a_measured_speedup_only_where_the_replicas_fit_the_cores() -> None:
    from superlinear.experiments.cachetier_driver import add_speedups

    def run(k: int, rps: float) -> dict[str, Any]:
        return {"panel": "joint", "dispatch": "hash", "k": k, "round": 0, "cores": 2, "replica_requests": [10] * k,
                "replica_fills": [0] * k, "replica_cpu_sum_ns": 10 * k, "db_backend_cpu_sum_ns": 0, "db_reads": 0,
                "client_cpu_ns": 100, "client_miss_cpu_ns": 0, "requests": 10, "reads_past_cache": 0, "threads": 1,
                "db_connections": 1, "hit_rate": 1.0, "workload": "uniform", "backend": "joint",
                "throughput_rps_measured": rps, "throughput_rps_projected": rps, "wrong_values": 0}

    rows = [run(1, 100.0), run(2, 180.0), run(3, 200.0)]
    add_speedups(rows)
    assert [r["speedup_measured"] for r in rows] == [1.0, 1.8, None]
    # Above the cores the raw measured throughput stays, and the projection is still given.
    assert rows[2]["throughput_rps_measured"] == 200.0 and rows[2]["speedup_projected"] == 2.0


def test_cache_advise_cli_and_its_errors(cli: Any, tmp_path: Path) -> None:
    r = cli("cache", "advise", "--dist", "hot:8000", "--rows", "50000", "--items", "1000", "--k", "1,4,8,10",
            "--rho", "2.2", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    assert '"peak_k": 8' in r.stdout
    assert_clean_error(cli("cache", "advise", "--dist", "hot:x", "--out", str(tmp_path)), "--dist")
    assert_clean_error(cli("cache", "advise", "--routers", "nonesuch", "--out", str(tmp_path)), "--routers")
    assert_clean_error(cli("cache", "advise", "--rho", "1.2", "--out", str(tmp_path)), "--rho 1.2")


@pytest.mark.skipif(not HAVE, reason=f"cache tier tests need real servers: {WHY}")
def test_real_tier_hot_set_hit_rate_rises_to_one_with_key_hash(tmp_path: Path) -> None:
    from superlinear.experiments.cachetier_driver import run_study

    # 2 MB replicas hold 13,796 items: 3 of them hold the 40,000 hot rows.
    ks = (1, 2, 3, 4)
    study = CacheStudy(name="tiny-fig11", description="tiny", rows=60_000, memory_mb=2, replicas=4,
                       panels=(CachePanel("joint", "tiny", ("hash", "random"), ks, dist="hot:40000", requests=3_000,
                                          threads_per_replica=1, db_per_replica=1),))
    rows = run_study(study, None, tmp_path, False)
    assert sum(r["wrong_values"] + r["errors"] + r["missing"] for r in rows) == 0
    hits = [r["hit_rate"] for r in sorted((r for r in rows if r["dispatch"] == "hash"), key=lambda r: r["k"])]
    assert all(b >= a - 0.02 for a, b in itertools.pairwise(hits)), hits
    assert 0.25 < hits[0] < 0.45 and hits[-1] > 0.95, hits
    rand = [r["hit_rate"] for r in rows if r["dispatch"] == "random"]
    assert all(0.2 < h < 0.45 for h in rand), rand
    # The unit costs come from three pinned k = 1 runs (the panel's reads, reads that all hit, a
    # check at about 80 % hits), whose reads are counted with the k = 1 row's.
    k1 = next(r for r in rows if r["k"] == 1 and r["dispatch"] == "hash")
    assert k1["unit_costs_from"].startswith("3 calibration runs per round at k = 1"), k1["unit_costs_from"]
    assert k1["calibration_requests"] == 3 * 3_000
    check_hit_rate, *cpu_per_read = k1["memcached_cpu_check_ns"]
    assert 0.7 < check_hit_rate < 0.9 and all(c > 0 for c in cpu_per_read), k1["memcached_cpu_check_ns"]
    # The advisor's peak is in the grid and where the measured hit rates put it (Eq. 3 on counts).
    predicted = predict("hot:40000", 60_000, items_for(2), 2.2, ks, ("hash",), requests=20_000).curve("hash").peak_k
    measured = peak_of(list(ks), [eq3_hits(k, hits[0], h, 2.2) for k, h in zip(ks, hits, strict=True)])
    assert predicted in (3, 4) and abs(predicted - measured) <= 1, (predicted, measured, hits)


def test_rounds_aggregate_to_median_and_range() -> None:
    from superlinear.experiments.cachetier_driver import aggregate_rounds

    rows = [{"panel": "joint", "dispatch": "hash", "k": 2, "round": i, "speedup_work": w, "hit_rate": 0.5,
             "requests": 100, "wrong_values": 0} for i, w in enumerate((2.4, 2.0, 2.2))]
    (row,) = aggregate_rounds(rows)
    assert (row["speedup_work"], row["speedup_work_lo"], row["speedup_work_hi"]) == (2.2, 2.0, 2.4)
    assert row["speedup_work_runs"] == [2.4, 2.0, 2.2] and row["repeats"] == 3 and "round" not in row
    assert row["requests"] == 300 and row["wrong_values"] == 0


def test_work_kind_bounds_and_the_split_client_costs() -> None:
    """The work kind (superlinear.cache.work): the client's CPU is split into what every read pays
    and what a read past the cache adds; the completion time is the longer of the busiest server
    and the closed-loop client path; where the path binds at both ends, key hash's speedup over
    linear is exactly δ + (1 − δ)·ρ (Eq. 3 with s = 0)."""
    from superlinear.cache.work import Counts, UnitCosts, work_span

    row = {"replica_requests": [10], "replica_fills": [6], "replica_cpu_sum_ns": 160, "db_backend_cpu_sum_ns": 600,
           "db_reads": 6, "client_cpu_ns": 1000, "client_miss_cpu_ns": 600, "requests": 10, "reads_past_cache": 6,
           "threads": 4, "db_connections": 4}
    u = UnitCosts.from_row(row)
    assert (u.memcached, u.postgresql, u.client_hit, u.client_miss, u.memcached_fill) == (10, 100, 40, 100, 10)
    assert u.rho == pytest.approx((40 + 100 + 20 + 100) / (40 + 10))
    span, who = work_span(Counts.from_row(row), u)
    assert who == "client path" and span == pytest.approx((400 + 600 + 160 + 600) / 4)
    # One busy replica, every read a hit, many threads: the replica binds.
    hot = Counts(replica_gets=[1000], replica_fills=[0], requests=1000, past_cache=0, db_reads=0, threads=64,
                 db_connections=4)
    assert work_span(hot, u) == (10_000, "memcached")
    # Two runs tell a get from a fill: 10 gets and 1 fill for 60 ns, 10 gets and 6 fills for 160.
    split = UnitCosts.from_calibration({**row, "replica_fills": [1], "replica_cpu_sum_ns": 60}, row)
    assert split is not None and (split.memcached, split.memcached_fill) == (pytest.approx(4.0), pytest.approx(20.0))
    assert split.client_hit == u.client_hit and split.rho == pytest.approx((40 + 100 + 4 + 20 + 100) / (40 + 4))
    assert work_span(hot, split) == (pytest.approx(4_000), "memcached")
    # Runs that fill alike cannot tell them apart, nor can runs whose solution costs less than nothing.
    assert UnitCosts.from_calibration(row, row) is None
    assert UnitCosts.from_calibration({**row, "replica_fills": [1], "replica_cpu_sum_ns": 500}, row) is None
    # k = 1 at hit rate δ against k = 10 at hit rate 1, with replicas so cheap the path binds.
    cheap = UnitCosts(memcached=1e-3, postgresql=100, client_hit=40, client_miss=100, memcached_fill=1e-3)
    n, delta = 10_000, 0.25
    miss = int(n * (1 - delta))
    one = Counts([n], [miss], n, miss, miss, 4, 4)
    ten = Counts([n // 10] * 10, [0] * 10, n, 0, 0, 40, 40)
    over_linear = work_span(one, cheap)[0] / work_span(ten, cheap)[0] / 10
    assert over_linear == pytest.approx(delta + (1 - delta) * cheap.rho, rel=1e-6)
    # The sensitivity study's ρ axis scales the database side of a miss to reach a given ρ.
    scaled = u.with_rho(8.0)
    assert scaled is not None and scaled.rho == pytest.approx(8.0) and scaled.memcached == u.memcached
    assert u.with_rho(1.1) is None  # below what a free database leaves: client + get + fill


def test_cache_advise_from_a_key_trace(cli: Any, tmp_path: Path) -> None:
    """`cache advise --trace`: a key trace instead of a distribution. 2,000 keys read in a fixed
    shuffled order, 250 items per replica: one LRU replica never holds a key until it returns (the
    loop is longer than the cache), 16 key-hashed replicas hold about all of them."""
    import json
    import random

    rnd = random.Random(3)
    order = [f"user:{i}" for i in range(2000)]
    rnd.shuffle(order)
    trace = tmp_path / "keys.txt"
    trace.write_text("\n".join(order * 5) + "\n")
    r = cli("cache", "advise", "--trace", str(trace), "--items", "250", "--k", "1,8,16", "--out", str(tmp_path / "o"),
            "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["config"]["rows"] == 2000 and out["config"]["trace"] == str(trace)
    hit = {(row["dispatch"], row["k"]): row["hit_rate_predicted"] for row in out["rows"]}
    assert hit[("hash", 1)] == 0.0 and hit[("random", 16)] < 0.2
    # At 8 replicas the average share is exactly 250 keys: the replicas that draw more thrash.
    assert hit[("hash", 16)] > 0.95 and 0.3 < hit[("hash", 8)] < 0.9
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1\nb\n")
    assert_clean_error(cli("cache", "advise", "--trace", str(bad), "--out", str(tmp_path)), f"{bad}:2")
    assert_clean_error(cli("cache", "advise", "--trace", str(trace), "--verify", "--out", str(tmp_path)), "--verify")


def test_the_advisors_peak_sentence_never_contradicts_itself() -> None:
    from superlinear.cache.advise import CacheCurve
    from superlinear.cache.advise_cli import peak_sentence

    # S(k)/k: 1, 1.5, 1.8, 2.0, 2.03: the peak is k = 4 (within 2 % of the largest, at k = 5, the last).
    rising = CacheCurve("hash", (1, 2, 3, 4, 5), (0.1,) * 5, (1.0, 3.0, 5.4, 8.0, 10.15))
    line = peak_sentence(rising)
    assert "peaks at k = 4 (2.00× linear, model; 2.03× at k = 5, within 2 %); still rising at the largest k" in line
    flat = CacheCurve("random", (1, 2, 4), (0.1,) * 3, (1.0, 2.0, 3.9), work_speedups=(1.0, 1.98, 3.9))
    assert peak_sentence(flat) == ("random: never above linear (S(k)/k at most 1.00, model); work kind (simulated "
                                   "counts × unit costs) never above linear")
