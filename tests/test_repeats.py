"""Independent repeats and the calibrated projection (issue: projected speedups a user can
reproduce): every timed figure is the median of n interleaved runs with its range, work is
exact and the same in every run, the uncalibrated estimator stays beside the calibrated one, and
a run ends with its stability summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import Cli

from superlinear.experiments.agreement import agreement, agreement_lines
from superlinear.experiments.repeats import aggregate, interleaved_rounds, relative_range, stability, stability_lines


def _row(k: int, projected: float, work: float = 8.0) -> dict[str, object]:
    return {"panel": "a", "algo": "mtf", "dispatch": "hash", "warmup": "included", "k": k,
            "speedup_projected": projected, "speedup_work": work, "speedup_measured": None,
            "projected_ns": 1_000_000 / projected}


def test_a_row_is_the_median_of_its_rounds_with_their_range() -> None:
    row = aggregate([_row(8, 10.0), _row(8, 30.0), _row(8, 12.0)])
    assert row["repeats"] == 3
    assert (row["speedup_projected"], row["speedup_projected_lo"], row["speedup_projected_hi"]) == (12.0, 10.0, 30.0)
    assert row["speedup_projected_runs"] == [10.0, 30.0, 12.0]
    assert row["speedup_work"] == 8.0 and row["speedup_measured"] is None
    assert "speedup_measured_lo" not in row and "speedup_measured_runs" not in row
    measured = aggregate([{**_row(2, 2.0), "speedup_measured": m} for m in (1.5, 2.5, 1.9)])
    assert measured["speedup_measured"] == 1.9 and measured["speedup_measured_runs"] == [1.5, 2.5, 1.9]
    assert relative_range(row, "speedup_projected") == (30.0 - 10.0) / 12.0
    # One round: no range to speak of.
    assert relative_range(aggregate([_row(8, 10.0)]), "speedup_projected") is None


def test_stability_names_the_widest_row_and_ignores_k1() -> None:
    rows = [aggregate([_row(1, 1.0), _row(1, 1.0)]),
            aggregate([_row(8, 10.0), _row(8, 11.0)]),
            aggregate([_row(48, 200.0), _row(48, 100.0)])]
    s = stability(rows)
    assert s["repeats"] == 2
    assert s["speedup_projected"]["row"] == "panel a, mtf + hash, k = 48"
    assert s["speedup_projected"]["widest_relative_range"] == 100.0 / 150.0
    assert s["speedup_measured"] is None
    lines = stability_lines(s)
    assert len(lines) == 1 and "66.7% of its median" in lines[0] and "k = 48" in lines[0]
    assert "no range" in stability_lines(stability([aggregate([_row(8, 10.0)])]))[0]


def test_agreement_counts_cells_with_both_kinds_and_names_the_largest_gap() -> None:
    def measured(k: int, projected: float, measured: float | None) -> dict[str, object]:
        return {**_row(k, projected), "speedup_measured": measured}

    rows = [aggregate([measured(1, 1.0, 1.0)] * 2),  # k = 1: 1 by definition, left out
            aggregate([measured(2, 2.0, 1.9), measured(2, 2.2, 2.0)]),  # 1.95 / 2.1: −7 %
            aggregate([measured(4, 4.0, 3.0), measured(4, 4.0, 3.2)]),  # −22 %
            aggregate([measured(8, 8.0, None)] * 2)]  # above the cores: projected only
    a = agreement(rows)
    assert a is not None
    assert (a["cells"], a["within"], a["below"], a["ks"]) == (2, 1, 2, [2, 4])
    assert a["largest"]["row"] == "panel a, mtf + hash, k = 4" and a["largest"]["gap"] == 3.1 / 4.0 - 1
    assert (a["largest"]["measured"]["lo"], a["largest"]["measured"]["hi"]) == (3.0, 3.2)
    (line,) = agreement_lines(a)
    assert "1 of 2 within 15%" in line and "largest gap -22% at panel a, mtf + hash, k = 4" in line
    assert "measured 3.1× [3–3.2] against projected 4× [4–4]" in line
    # Nothing measured (--no-measure, or one core): no comparison and no line.
    assert agreement([aggregate([_row(4, 4.0)])]) is None and agreement_lines(None) == []


def test_rows_keep_the_probe_walk_of_every_round_and_the_summaries_show_it() -> None:
    def probed(k: int, projected: float, measured: float, walk: float, base: float) -> dict[str, object]:
        return {**_row(k, projected), "speedup_measured": measured, "probe_walk_ns": walk,
                "probe_walk_ns_baseline": base}

    row = aggregate([probed(2, 2.0, 1.5, 6.0, 6.5), probed(2, 2.1, 2.0, 60.0, 6.1), probed(2, 2.0, 2.1, 7.0, 6.2)])
    assert row["probe_walk_ns_runs"] == [6.0, 60.0, 7.0] and row["probe_walk_ns"] == 7.0
    assert row["probe_walk_ns_baseline_runs"] == [6.5, 6.1, 6.2]
    s = stability([row])
    assert s["speedup_measured"]["rounds"] == [1.5, 2.0, 2.1]
    assert s["speedup_measured"]["probe_walk_ns"] == [6.0, 60.0, 7.0]
    measured_line = stability_lines(s)[1]
    assert measured_line.endswith("; rounds 1.5, 2, 2.1× with the probe's walk before each point 6, 60, 7 ns and "
                                  "before its baseline 6.5, 6.1, 6.2 ns"), measured_line
    a = agreement([row])
    assert a is not None
    (line,) = agreement_lines(a)
    assert line.endswith("; measured rounds 1.5, 2, 2.1×, projected 2, 2.1, 2× with the probe's walk before each "
                         "point 6, 60, 7 ns and before its baseline 6.5, 6.1, 6.2 ns)"), line
    # Rows of a result written before the probe, or a round that lacks it: no walk to show.
    old = aggregate([_row(8, 10.0), _row(8, 20.0)])
    assert "probe_walk_ns_runs" not in old
    assert stability_lines(stability([old]))[0].endswith("k = 8; rounds 10, 20×")


def _record(projected_ns: int, wall_ns: int | None = None, cores: int = 2) -> dict[str, object]:
    """A run's record as the runner gives it, with the fields a speedup row reads."""
    acc = {"requests": 1000, "projected_ns": projected_ns, "projected_max_cpu_ns": projected_ns, "work_span": 100,
           "work_total": 100, "dispatcher_cpu_ns": 10, "worker_cpu_ns": [projected_ns], "worker_estimate_ns":
           [projected_ns], "cost_per_work_ns": 1.0, "workers_rerun": 0, "worker_runs": [1], "hit_rate": None,
           "load_imbalance": 1.0, "work_imbalance": 1.0, "entries_moved_total": None, "work_with_moves_span": None}
    measured = None if wall_ns is None else {
        "requests": 1000, "wall_ns": wall_ns, "dispatcher_shares_core": True, "worker_serve_wall_ns": [wall_ns],
        "worker_cpu_ns": [wall_ns], "dispatcher_blocked_ns": 0, "worker_runs": [1]}
    return {"items": 10, "cores": cores, "projected": acc, "measured": measured, "single_core": None}


def test_a_baseline_is_timed_at_both_ends_of_a_round_and_the_faster_half_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from superlinear.engine.runs import Workload
    from superlinear.experiments import driver
    from superlinear.experiments.spec import Panel, Series

    # Projected: the first half is slow (a slow spell) and the second fast; measured the other way.
    baseline_halves = iter([_record(9_000, wall_ns=5_000), _record(6_000, wall_ns=7_000)] * 2)
    calls: list[tuple[int, int | None]] = []

    def fake_run(panel: Panel, series: Series, k: int, modes: tuple[str, ...],
                 timed_ms: int | None = None) -> dict[str, object]:
        calls.append((k, timed_ms))
        return next(baseline_halves) if k == 1 else _record(1_000, wall_ns=2_500)

    monkeypatch.setattr(driver, "_run", fake_run)
    panel = Panel("a", "t", Workload(kind="uniform", m=10), (Series("mtf", "hash"),), (1, 2), requests=1000,
                  repeats=2)
    walks = iter(float(w) for w in range(100))
    monkeypatch.setattr(driver.MachineNoise, "sample", lambda self: next(walks))
    rows = driver.Driver(show_progress=False).run_panel(panel)
    # Each round: the baseline's first half (half the window), the point, the second half.
    assert calls == [(1, 1500), (2, None), (1, 1500)] * 2 and panel.runs() == 3
    one, two = sorted(rows, key=lambda r: r["k"])
    assert two["speedup_projected_runs"] == [6.0, 6.0]  # 6,000 ns (second half) / 1,000 ns
    assert two["speedup_measured_runs"] == [2.0, 2.0]  # 5,000 ns (first half) / 2,500 ns
    assert one["speedup_projected"] == 1.0 and one["speedup_measured"] == 1.0
    # The walk before the kept projected half (probes 2 and 5), and before the point (1 and 4).
    assert two["probe_walk_ns_baseline_runs"] == [2.0, 5.0] and two["probe_walk_ns_runs"] == [1.0, 4.0]
    assert one["probe_walk_ns_runs"] == [2.0, 5.0]


def test_reproduce_repeats_give_medians_ranges_and_a_stability_summary(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "e"
    r = cli("reproduce", "fig5", "--quick", "--panel", "e", "--no-measure", "--repeats", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "stability (2 independent repeats)" in r.stdout
    assert "median [range] of 2 independent runs" in " ".join(r.stdout.split())
    doc = json.loads((out / "result.json").read_text())
    assert doc["config"]["repeats"] == 2
    assert doc["summary"]["stability"]["speedup_projected"]["row"].startswith("panel e, ")
    assert doc["summary"]["agreement"] is None  # --no-measure: nothing to compare
    # One memory probe before every run the driver made, summarised and printed.
    from superlinear.experiments.fig5 import experiment

    noise = doc["summary"]["machine_noise"]
    (panel,) = [p for p in experiment(quick=True).panels if p.name == "e"]
    assert noise["samples"] == 2 * panel.runs()
    for figure in ("walk_ns", "alu_ns", "cpu_share"):
        f = noise[figure]
        assert 0 < f["lo"] <= f["median"] <= f["p90"] <= f["hi"]
    assert noise["walk_bytes"] > 0 and noise["walk_bytes"] % 64 == 0
    assert f"machine noise ({noise['samples']} probes of 10 ms" in " ".join(r.stdout.split())
    for row in doc["rows"]:
        assert row["repeats"] == 2 and len(row["speedup_projected_runs"]) == 2
        # The probe's walk before each round's point and its baseline, round by round.
        assert len(row["probe_walk_ns_runs"]) == len(row["probe_walk_ns_baseline_runs"]) == 2
        assert all(w > 0 for w in row["probe_walk_ns_runs"])
        if row["k"] == 1:  # the baseline is the k = 1 point
            assert row["probe_walk_ns_runs"] == row["probe_walk_ns_baseline_runs"]
        assert row["speedup_projected_lo"] <= row["speedup_projected"] <= row["speedup_projected_hi"]
        # The uncalibrated estimator is kept beside the calibrated one; calibration never makes a
        # worker slower than measured.
        assert row["speedup_projected_max_cpu"] > 0
        assert row["max_worker_estimate_ns"] <= row["max_worker_cpu_ns"]
        if row["k"] >= 4:
            assert row["cost_per_work_ns"] > 0
        if row["k"] == 1:
            assert row["speedup_projected"] == row["speedup_projected_lo"] == 1.0
    # Work is exact: the same in every round, so its figure carries no range.
    assert all("speedup_work_lo" not in row for row in doc["rows"])


def test_sweep_file_sets_repeats_and_the_flag_overrides(cli: Cli, tmp_path: Path) -> None:
    cfg = tmp_path / "grid.toml"
    cfg.write_text('algos = ["mtf"]\ndispatch = ["hash"]\nk = [1, 4]\nrequests = 4000\nrepeats = 2\n'
                   'measure = false\n[workload]\nkind = "uniform"\nm = 500\n')
    r = cli("sweep", str(cfg), "--out", str(tmp_path / "a"), "--json")
    assert r.returncode == 0, r.stderr
    assert {row["repeats"] for row in json.loads(r.stdout)["rows"]} == {2}
    r = cli("sweep", str(cfg), "--out", str(tmp_path / "b"), "--json", "--repeats", "1")
    assert r.returncode == 0, r.stderr
    assert {row["repeats"] for row in json.loads(r.stdout)["rows"]} == {1}


def test_the_timed_window_spans_the_runs_of_every_point(cli: Cli, tmp_path: Path) -> None:
    cfg = tmp_path / "grid.toml"
    cfg.write_text('algos = ["mtf"]\ndispatch = ["hash"]\nk = [1, 2]\nrequests = 2000\nrepeats = 1\n'
                   '[workload]\nkind = "uniform"\nm = 200\n')
    # The tests' own default (conftest): no window, one threaded run per point.
    r = cli("sweep", str(cfg), "--out", str(tmp_path / "a"), "--json")
    assert r.returncode == 0, r.stderr
    assert {row["runs_measured"] for row in json.loads(r.stdout)["rows"]} == {1}
    r = cli("sweep", str(cfg), "--out", str(tmp_path / "b"), "--json", "--timed-window", "0.2")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    panel = doc["config"]["panels"][0]
    assert (panel["point_timed_ms"], panel["baseline_timed_ms"]) == (200, 600)
    # These runs take microseconds, so passes and threaded runs are added up to the cap of 16.
    for row in doc["rows"]:
        assert row["runs_projected"] >= 16 and row["runs_measured"] == 16, row


def test_a_bad_timed_window_is_one_line(cli: Cli) -> None:
    for bad in ("-1", "abc", "nan", ""):
        r = cli("reproduce", "fig5", "--quick", "--timed-window", bad)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert "argument --timed-window:" in r.stderr.strip().splitlines()[-1]
    env = {**os.environ, "SUPERLINEAR_TIMED_WINDOW": "soon"}
    r = subprocess.run([sys.executable, "-m", "superlinear", "reproduce", "fig5", "--quick", "--panel", "e"],
                       capture_output=True, text=True, env=env, timeout=120, check=False)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].endswith(
        "$SUPERLINEAR_TIMED_WINDOW: expected a number of seconds, got 'soon'")


def test_repeats_must_be_a_positive_whole_number(cli: Cli) -> None:
    for command in (["reproduce", "fig5", "--quick"], ["sweep", "x.toml"]):
        for bad in ("0", "-1", "abc", ""):
            r = cli(*command, "--repeats", bad)
            assert r.returncode == 2 and "Traceback" not in r.stderr
            assert "argument --repeats: expected a positive integer" in r.stderr.strip().splitlines()[-1]


def test_scaling_findings_say_where_the_measured_time_went() -> None:
    """`reproduce scaling` prints, per measured point, measured against projected and the threaded
    run's instrumentation: the slowest worker's serving time over the projected worker time (slower
    side by side) and the dispatcher's blocked share of the wall clock."""
    from superlinear.experiments.scaling import where_measured_time_went

    row = {"panel": "lists", "algo": "mtf", "dispatch": "hash", "k": 4, "speedup_measured": 3.0,
           "speedup_projected": 4.0, "measured_max_worker_serve_ns": 150, "measured_max_worker_cpu_ns": 100,
           "max_worker_estimate_ns": 80, "wall_ns": 200, "measured_dispatcher_blocked_ns": 50}
    (line,) = where_measured_time_went([row, {**row, "k": 1}, {**row, "speedup_measured": None}])
    assert line == ("lists mtf + hash k=4: measured 3× vs projected 4× (-25%); slowest worker serving 1.88× the "
                    "projected worker time; dispatcher blocked 25% of the wall clock")


def test_interleaved_rounds_alternate_points_and_keep_what_a_stop_left() -> None:
    order: list[str] = []

    def measure(point: str) -> int:
        if len(order) == 4:
            raise KeyboardInterrupt
        order.append(point)
        return len(order)

    kept: dict[str, list[int]] = {}
    with pytest.raises(KeyboardInterrupt):
        interleaved_rounds(["a", "b", "c"], 3, measure, into=kept)
    # a, b, c, then a: interleaved, not back to back; the point the stop cut short has no entry.
    assert order == ["a", "b", "c", "a"]
    assert kept == {"a": [1, 4], "b": [2], "c": [3]}
    assert interleaved_rounds(["x", "y"], 2, lambda p: p * 2) == {"x": ["xx", "xx"], "y": ["yy", "yy"]}


NOISE = {"walk_bytes": 786_432, "walk_sized_by_l2": True, "window_ms": 10.0, "samples": 40,
         "walk_ns": {"lo": 8.0, "median": 12.0, "p90": 40.0, "hi": 1280.4},
         "alu_ns": {"lo": 1.2, "median": 1.26, "p90": 1.3, "hi": 1.6},
         "cpu_share": {"lo": 0.5, "median": 0.99, "p90": 1.0, "hi": 1.0}}


def test_machine_noise_line_reads_the_probe_spread() -> None:
    from superlinear.experiments.machine_noise import machine_noise_lines

    (line,) = machine_noise_lines(NOISE)
    assert "40 probes of 10 ms" in line and "768 KiB (¾ of this CPU's L2)" in line
    assert "took median 1.50× its least (8–1,280 ns per step; slowest tenth ≥ 5.00×)" in line
    assert "multiply chain median 1.05× its least (1.2–1.6 ns)" in line
    assert "had a CPU for 50%–100% of the windows (median 99%)" in line
    assert machine_noise_lines(None) == []
    assert "L2" not in machine_noise_lines(NOISE | {"walk_sized_by_l2": False})[0]
