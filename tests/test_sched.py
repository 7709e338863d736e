"""``superlinear attack``: SurgeProtector and the HFFS queue through the CLI, as a user runs them.

Assertions are on simulated / work-clocked displacement factors with wide margins (deterministic
for the seed) and on queue checksums; never on timings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from superlinear import _native

Cli = Callable[..., CompletedProcess[str]]


def test_attack_is_listed_and_policies_are_known(cli: Cli) -> None:
    assert "attack" in cli("--help").stdout
    r = cli("attack", "policies", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [p["name"] for p in doc["policies"]] == ["fcfs", "fq", "sjf", "wsjf", "wsjf-inorder"]
    assert {a["name"] for a in doc["adversaries"]} == {"deep", "rotate", "absent"}


def test_sim_fcfs_is_displaced_wsjf_is_bounded(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "sim"
    r = cli("attack", "sim", "--policies", "fcfs,sjf,wsjf", "--packets", "6000", "--jmax-sweep", "5,40",
            "--attack-rates", "0.003,0.01,0.03,0.1,0.3,1,3", "--buffer", "256", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    s = doc["summary"]["policies"]
    assert s["fcfs"]["displacement_factor"] > 20
    assert s["fcfs"]["bound_kind"] == "lower"
    assert 1 < s["sjf"]["displacement_factor"] <= s["sjf"]["bound"]
    assert s["wsjf"]["displacement_factor"] <= 1.0
    assert s["wsjf"]["bound"] <= 1.0 and s["wsjf"]["bound_kind"] == "upper"
    growth = {(g["policy"], g["job_max_us"]): g["displacement_factor"] for g in doc["rows"]
              if g["panel"] == "growth-summary"}
    assert growth[("fcfs", 40.0)] > 3 * growth[("fcfs", 5.0)]
    assert growth[("wsjf", 40.0)] <= 1.0
    assert all(row["kind"] == "simulated" for row in doc["rows"])
    assert (out / "result.csv").stat().st_size > 0
    for name in ("attack-sim.png", "attack-sim.svg", "attack-growth.png", "attack-growth.svg"):
        assert (out / name).stat().st_size > 1000


def test_sim_reads_a_job_trace(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "jobs.txt"
    lines = ["# bytes job_us"] + [f"{200 + (i * 97) % 1300} {0.2 + (i % 9) * 0.3:.2f}" for i in range(400)]
    trace.write_text("\n".join(lines) + "\n")
    r = cli("attack", "sim", "--trace", str(trace), "--pmin", "64", "--jmax", "20", "--policies", "fcfs,wsjf",
            "--packets", "4000", "--no-growth", "--attack-rates", "0.01,0.1,1", "--out", str(tmp_path / "o"),
            "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["summary"]["policies"]["wsjf"]["displacement_factor"] <= 1.0
    assert doc["summary"]["policies"]["fcfs"]["displacement_factor"] > 5


def test_worker_attack_on_mtf_with_and_without_surgeprotector(cli: Cli, tmp_path: Path) -> None:
    r = cli("attack", "worker", "--algo", "mtf", "--m", "1000", "--requests", "8000", "--adversary", "rotate,absent",
            "--attack-rates", "0.003,0.01,0.05", "--us-per-work", "0.001", "--buffer", "256",
            "--out", str(tmp_path / "w"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    for adversary in ("rotate", "absent"):
        df = doc["summary"]["adversaries"][adversary]["displacement_factor"]
        assert df["fcfs"] > 5, (adversary, df)
        assert df["wsjf"] < 1.0, (adversary, df)
    rows = doc["rows"]
    assert all(row["kind"] == "work-clocked" for row in rows)
    # Real work: attack packets cost more than innocent ones under the unprotected worker.
    attacked = [x for x in rows if x["policy"] == "fcfs" and x["attack_fraction"] == 0.05]
    assert all(x["attack_work_per_packet"] > x["innocent_work_per_packet"] for x in attacked)
    assert (tmp_path / "w" / "attack-worker-mtf.png").stat().st_size > 1000


def test_queue_bench_queues_agree(cli: Cli, tmp_path: Path) -> None:
    r = cli("attack", "bench-queue", "--sizes", "1000", "--pairs", "20000", "--patterns", "random,descending,drop-max",
            "--out", str(tmp_path / "q"), "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    for pattern in ("random", "descending", "drop-max"):
        sums = {row["queue"]: row["checksum"] for row in rows if row["pattern"] == pattern}
        # Same popped priorities whatever the queue (timings are not checked).
        assert len(set(sums.values())) == 1, (pattern, sums)
    assert not any(row["queue"] == "binary-heap" and row["pattern"] == "drop-max" for row in rows)
    assert all(row["kind"] == "measured" for row in rows)
    # Three rounds by default: each rate is their median, with their range; the same operations
    # in every round.
    for row in rows:
        assert row["repeats"] == 3 and len(row["pairs_per_s_runs"]) == 3 and row["checksum_equal"]
        assert row["pairs_per_s_lo"] <= row["pairs_per_s"] <= row["pairs_per_s_hi"]
        if row["vs_binary_heap"] is not None:
            assert row["vs_binary_heap_lo"] <= row["vs_binary_heap"] <= row["vs_binary_heap_hi"]


def test_bench_binding_directly() -> None:
    a = _native.sched_bench_queue("hffs", "constant", 100, 1000, 4, 3)
    b = _native.sched_bench_queue("minmax-heap", "constant", 100, 1000, 4, 3)
    assert a is not None and b is not None and a["checksum"] == b["checksum"]


def test_user_mistakes_are_one_line_errors(tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    check = one_line_mistake

    out = str(tmp_path / "o")
    check(["attack", "sim", "--job-size", "zipf:2", "--out", out], "--job-size", "unknown distribution")
    check(["attack", "sim", "--policies", "fifo", "--out", out], "--policies", "fifo")
    check(["attack", "sim", "--attack-rates", "0.1,x", "--out", out], "--attack-rates", "'x'")
    bad = tmp_path / "bad.txt"
    bad.write_text("100 1.0\n200 oops\n")
    check(["attack", "sim", "--trace", str(bad), "--out", out], f"{bad}:2:", "oops")
    bad.write_text("100 1.0\n40 2.0\n")
    check(["attack", "sim", "--trace", str(bad), "--out", out], f"{bad}:2: a packet of 40 bytes is below --pmin 64",
          "give --pmin 40 or less")
    check(["attack", "worker", "--us-per-work", "1e300", "--out", out], "--us-per-work 1e+300: at most 1,000,000")
    check(["attack", "worker", "--adversary", "rotate:0", "--requests", "100", "--out", out], "rotate:N")
    check(["attack", "worker", "--algo", "quicksort", "--out", out], "unknown algorithm")
    check(["attack", "bench-queue", "--width", "65", "--sizes", "10", "--out", out], "between 2 and 64")
