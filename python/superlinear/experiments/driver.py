"""The one driver that runs every experiment: grid, k = 1 baselines, the three kinds of speedup,
independent repeats (median and range, :mod:`superlinear.experiments.repeats`), progress, result
files, plots and the summary table.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from superlinear.classify.workload import PacketWorkloadSpec
from superlinear.common.errors import SuperlinearError
from superlinear.common.progress import progress_bar
from superlinear.common.rows import Row
from superlinear.engine.runs import RunSpec, Workload, run
from superlinear.experiments.machine_noise import MachineNoise
from superlinear.experiments.repeats import aggregate
from superlinear.experiments.spec import Experiment, Panel, Series
from superlinear.output.results import record_plots, write_results

if TYPE_CHECKING:
    from superlinear._native import Accounting, RunRecord


#: A k = 1 baseline's timed window, in points' windows (``--timed-window S`` gives it 3·S).
BASELINE_WINDOWS = 3


def _timed_ms(panel: Panel, k: int) -> int:
    """The least timed window of a run: the baseline's or a point's."""
    return panel.baseline_timed_ms if k == 1 else panel.point_timed_ms


def with_timed_window(experiment: Experiment, seconds: float | None) -> Experiment:
    """The experiment with every point's timed window set to ``seconds`` and its baselines' to
    ``BASELINE_WINDOWS`` times that (None: the panels' own windows)."""
    if seconds is None:
        return experiment
    ms = round(seconds * 1000)
    panels = tuple(replace(p, point_timed_ms=ms, baseline_timed_ms=BASELINE_WINDOWS * ms) for p in experiment.panels)
    return replace(experiment, panels=panels)


def _spec(panel: Panel, series: Series, k: int, modes: tuple[str, ...], timed_ms: int) -> RunSpec:
    assert isinstance(panel.workload, Workload), "packet workloads run through superlinear.classify.workload"
    return RunSpec(
        algo=series.algo if series.algo != "lru" else f"lru:{panel.capacity}",
        dispatch=series.dispatch,
        k=k,
        workload=panel.workload,
        requests=panel.requests,
        warmup=panel.warmup if series.exclude_warmup else 0,
        exclude_warmup=series.exclude_warmup,
        seed=panel.seed,
        sharded=panel.sharded,
        compare_cycles=panel.compare_cycles,
        miss_cycles=panel.miss_cycles,
        capacity=panel.capacity,
        modes=modes,
        repeats=1,  # one pass per run: repeats are the driver's, each an independent run
        min_timed_ms=timed_ms,
    )


def _packets(panel: Panel, series: Series) -> PacketWorkloadSpec:
    """The packet workload of a series: the panel's, with its warm-up in front when excluded."""
    assert isinstance(panel.workload, PacketWorkloadSpec)
    return replace(panel.workload, warmup=panel.warmup if series.exclude_warmup else 0)


def _run(panel: Panel, series: Series, k: int, modes: tuple[str, ...], timed_ms: int | None = None) -> RunRecord:
    """One grid point: the key engine, or the packet classifier for packet workloads; timed over
    ``timed_ms`` (default: the panel's window for a point or a baseline)."""
    window = _timed_ms(panel, k) if timed_ms is None else timed_ms
    if isinstance(panel.workload, PacketWorkloadSpec):
        from superlinear.classify.workload import run_point

        return run_point(_packets(panel, series), series.algo, series.dispatch, k, modes, 1, panel.seed, window)
    result = run(_spec(panel, series, k, modes, window))
    _refuse_a_short_trace(panel, series, result)
    return result


def _refuse_a_short_trace(panel: Panel, series: Series, result: RunRecord) -> None:
    """A key trace that holds fewer keys than the panel's requests: the engine serves the keys it
    has, and the rows would count fewer requests than the config asks for. Judged on the first
    run (a k = 1 baseline), before any figure is shown, as ``run --trace`` does."""
    w = panel.workload
    if not (isinstance(w, Workload) and w.kind == "trace"):
        return
    served = _requests(result)
    if served < panel.requests:
        warmup = panel.warmup if series.exclude_warmup else 0
        raise SuperlinearError(
            f"requests = {panel.requests:,}" + (f" after warmup = {warmup:,}" if warmup else "")
            + f": the trace {w.path} holds only {served + warmup:,} keys (set requests = {served:,} or fewer)")


def _packet_extras(panel: Panel, series: Series, k: int) -> Row:
    """Packet panels: the dispatcher as resolved at k (the rule-aware one names its fields)."""
    if not isinstance(panel.workload, PacketWorkloadSpec):
        return {}
    from superlinear.classify.workload import load

    w = load(_packets(panel, series))
    row: Row = {"dispatch_resolved": w.describe_dispatch(series.dispatch, k), "rules": w.rules}
    if panel.footprint:
        from superlinear.classify.footprint import footprint_row

        row |= footprint_row(w, series.algo, series.dispatch, k, panel.seed)
    return row


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def _throughput(acc: Accounting | None, time_ns: int | None) -> float | None:
    if acc is None or not time_ns:
        return None
    return acc["requests"] * 1e9 / time_ns


def _requests(result: RunRecord) -> int:
    """The requests a run counted (every mode of one run counts the same)."""
    return next((a["requests"] for a in (result["projected"], result["measured"], result["single_core"]) if a), 0)


def faster_baseline(a: tuple[RunRecord, float], b: tuple[RunRecord, float]) -> tuple[RunRecord, float]:
    """Of a baseline's two timed halves (each with the probe's walk before it), each mode's faster:
    the projected accounting of smaller projected time, the measured one of smaller wall-clock
    time (exact counts are the same in both); the walk before the projected half kept."""
    (ra, wa), (rb, wb) = a, b
    pa, pb = ra["projected"], rb["projected"]
    assert pa is not None and pb is not None
    kept, walk = (copy.copy(ra), wa) if pa["projected_ns"] <= pb["projected_ns"] else (copy.copy(rb), wb)
    ma, mb = ra["measured"], rb["measured"]
    if ma is not None and mb is not None and ma["wall_ns"] is not None and mb["wall_ns"] is not None:
        kept["measured"] = ma if ma["wall_ns"] <= mb["wall_ns"] else mb
    return kept, walk


def baseline_dispatch(panel: Panel) -> str:
    """Dispatcher of the k = 1 baselines: round-robin, or key hash for sharded state (which
    needs a key-affine dispatcher to define the partitions)."""
    return "hash" if panel.sharded else "rr"


def _base_row(panel: Panel, series: Series, k: int, result: RunRecord) -> Row:
    return {
        "panel": panel.name,
        "algo": series.algo,
        "dispatch": series.dispatch,
        "workload": panel.workload.label(),
        "m": result["items"],
        "k": k,
        "requests": _requests(result),
        "warmup": "excluded" if series.exclude_warmup else "included",
        "warmup_requests": panel.warmup if series.exclude_warmup else 0,
        "state": "sharded" if panel.sharded else "replicated",
        "compare_cycles": panel.compare_cycles,
        "miss_cycles": panel.miss_cycles,
        "capacity": int(series.algo.split(":", 1)[1]) if ":" in series.algo else panel.capacity,
        "cores": result["cores"],
        # Every k = 1 baseline runs the same algorithm with one worker; the dispatcher is then
        # trivial whatever its kind, so one baseline serves every series of that algorithm.
        "baseline": f"{series.algo}, k = 1, {baseline_dispatch(panel)} dispatch",
    }


def speedup_row(panel: Panel, series: Series, k: int, result: RunRecord, base: RunRecord) -> Row:
    """A row with the three speedups of ``result`` against the k = 1 ``base``."""
    p, bp = result["projected"], base["projected"]
    assert p is not None and bp is not None
    m, bm = result["measured"], base["measured"]
    row = _base_row(panel, series, k, result)
    row.update(
        speedup_measured=_ratio(bm["wall_ns"], m["wall_ns"]) if m and bm else None,
        # As the runner placed its threads: with k = cores worker 0's thread routes.
        dispatcher_shares_core=m["dispatcher_shares_core"] if m else None,
        speedup_projected=_ratio(bp["projected_ns"], p["projected_ns"]),
        # The uncalibrated estimator (largest measured worker CPU time), kept for comparison.
        speedup_projected_max_cpu=_ratio(bp["projected_max_cpu_ns"], p["projected_max_cpu_ns"]),
        speedup_work=_ratio(bp["work_span"], p["work_span"]),
        throughput_rps_projected=_throughput(p, p["projected_ns"]),
        throughput_rps_measured=_throughput(m, m["wall_ns"]) if m else None,
        projected_ns=p["projected_ns"],
        projected_max_cpu_ns=p["projected_max_cpu_ns"],
        wall_ns=m["wall_ns"] if m else None,
        # Where a measured run's wall clock went (issue 18): the slowest worker's time inside its
        # batches (against its projected CPU time: does it compute slower beside the others?)
        # and the dispatcher's time blocked on full rings (did it wait for the workers?).
        measured_max_worker_serve_ns=max(m["worker_serve_wall_ns"] or [0]) if m else None,
        measured_max_worker_cpu_ns=max(m["worker_cpu_ns"]) if m else None,
        measured_dispatcher_blocked_ns=m["dispatcher_blocked_ns"] if m else None,
        dispatcher_cpu_ns=p["dispatcher_cpu_ns"],
        dispatcher_ns_per_request=p["dispatcher_cpu_ns"] / max(p["requests"], 1),
        max_worker_cpu_ns=max(p["worker_cpu_ns"]),
        max_worker_estimate_ns=max(p["worker_estimate_ns"]),
        cost_per_work_ns=p["cost_per_work_ns"],
        workers_rerun=p["workers_rerun"],
        # Timed runs behind each figure (the timed window's passes; docs/design.md): the fewest
        # runs of any worker's stream in projected mode, and the threaded runs in measured mode.
        runs_projected=min(p["worker_runs"]),
        runs_measured=m["worker_runs"][0] if m else None,
        work_span=p["work_span"],
        work_total=p["work_total"],
        work_per_request=p["work_total"] / max(p["requests"], 1),
        # Mean worker CPU time per request: the mean per-packet latency of Fig. 9a (projected).
        mean_service_ns_projected=sum(p["worker_cpu_ns"]) / max(p["requests"], 1),
        hit_rate=p["hit_rate"],
        # The busiest worker over the mean, in packets (requests) and in work: the busiest
        # worker sets the projected and the work speedup.
        load_imbalance=p["load_imbalance"],
        work_imbalance=p["work_imbalance"],
        # The second work counter of self-adjusting classifiers (MRF: list entries moved and
        # dependency-list entries walked; docs/classification.md); None where not counted.
        entries_moved=p["entries_moved_total"],
        entries_moved_per_request=(p["entries_moved_total"] / max(p["requests"], 1)
                                   if p["entries_moved_total"] is not None else None),
        work_with_moves_span=p["work_with_moves_span"],
        speedup_work_with_moves=_ratio(bp["work_with_moves_span"], p["work_with_moves_span"]),
    )
    return row


def goodput_row(panel: Panel, series: Series, k: int, result: RunRecord, base: RunRecord) -> Row:
    """A row of the single-core panel: measured goodput with every worker on one core."""
    s, bs = result["single_core"], base["single_core"]
    assert s is not None and bs is not None and s["wall_ns"] and bs["wall_ns"]
    row = _base_row(panel, series, k, result)
    goodput = s["requests"] * 1e3 / s["wall_ns"]  # million requests per second
    row.update(
        goodput_mrps=goodput,
        goodput_ratio=_ratio(goodput, bs["requests"] * 1e3 / bs["wall_ns"]),
        speedup_measured=None,
        speedup_projected=None,
        speedup_work=_ratio(bs["work_total"], s["work_total"]),
        wall_ns=s["wall_ns"],
        throughput_rps_measured=goodput * 1e6,
        work_total=s["work_total"],
        work_per_request=s["work_total"] / max(s["requests"], 1),
    )
    return row


class Driver:
    """Runs experiments; ``measure`` adds real-thread runs for every k ≤ cores; ``repeats``
    independent rounds of every panel give each timed figure as a median with its range."""

    def __init__(self, measure: bool = True, show_progress: bool = True, repeats: int | None = None) -> None:
        self.measure = measure
        self.show_progress = show_progress
        self.repeats = repeats
        self.noise = MachineNoise()

    def repeats_of(self, panel: Panel) -> int:
        """Independent rounds of a panel: the driver's (``--repeats``) or the panel's own."""
        return max(1, self.repeats if self.repeats is not None else panel.repeats)

    def run_panel(self, panel: Panel, progress: Any = None, task: Any = None,
                  into: list[Row] | None = None, on_row: Callable[[], object] | None = None) -> list[Row]:
        """The panel's rows, appended to ``into`` (when given) as each point of the first round
        finishes and updated in place by later rounds, with ``on_row`` called after each, so an
        interrupted run keeps them.

        Each round runs every k = 1 baseline, then every point once; a round's speedups are
        against that round's baselines, so all figures of a round share its conditions."""
        rows: list[Row] = [] if into is None else into
        rounds: dict[tuple[Series, int], list[Row]] = {}
        where: dict[tuple[Series, int], int] = {}

        def record(series: Series, k: int, row: Row, replace: bool = False, notify: bool = True) -> None:
            """Records a round's row of a point (``replace``: instead of the round's last one);
            ``notify``: calls ``on_row`` after it."""
            key = (series, k)
            if replace:
                rounds[key][-1] = row
            else:
                rounds.setdefault(key, []).append(row)
            if key not in where:
                where[key] = len(rows)
                rows.append({})
            rows[where[key]] = aggregate(rounds[key])
            if on_row is not None and notify:
                on_row()

        repeats = self.repeats_of(panel)
        for r in range(repeats):
            def step(desc: str, r: int = r) -> float:
                """Announces a point just before it runs; the probe's walk, taken now, for its row."""
                walk = self.noise.sample()
                if progress is not None:
                    tail = f" (repeat {r + 1}/{repeats})" if repeats > 1 else ""
                    progress.update(task, description=f"[{panel.name}] {desc}{tail}")  # plain text: see run()
                return walk

            def advance() -> None:
                if progress is not None:
                    progress.advance(task)

            if panel.metric == "goodput":
                for series in panel.series:
                    base: RunRecord | None = None
                    for k in panel.ks:
                        walk = step(f"{series.label()} k={k} (single core)")
                        result = _run(panel, series, k, ("single_core",))
                        base = base or result
                        record(series, k, goodput_row(panel, series, k, result, base) | {"probe_walk_ns": walk})
                        advance()
                continue
            self._speedup_round(panel, step, advance, record)
        return rows

    def _speedup_round(self, panel: Panel, step: Callable[[str], float], advance: Callable[[], None],
                       record: Callable[..., None]) -> None:
        """One round of a speedup panel: the first half of its baselines' windows, every point,
        then the second half. A baseline's time is in every figure of its series in the round, so
        it is timed at both ends of the round and the faster half kept (:func:`faster_baseline`):
        one slow spell of the machine then moves a round's whole series only if it lasts the
        round. Rows are recorded against the first half as their points finish (an interrupted
        round keeps them) and again against the kept baseline at the round's end. Each row keeps
        the probe's walk before its point and before its kept baseline half."""
        wanted = list(dict.fromkeys((s.algo, s.exclude_warmup) for s in panel.series))
        if panel.static_baseline and (panel.static_baseline, False) not in wanted:
            wanted.append((panel.static_baseline, False))
        modes = ("projected", "measured") if self.measure else ("projected",)
        half_ms = panel.baseline_timed_ms // 2

        def time_baselines(what: str) -> dict[tuple[str, bool], tuple[RunRecord, float]]:
            timed = {}
            for algo, exclude_warmup in wanted:
                walk = step(f"{algo} k=1 baseline ({what})")
                timed[(algo, exclude_warmup)] = (_run(panel, Series(algo, baseline_dispatch(panel), exclude_warmup),
                                                      1, modes, half_ms), walk)
                advance()
            return timed

        first = time_baselines("first half")
        points: dict[tuple[Series, int], tuple[RunRecord, float]] = {}  # k ≥ 2, with the walk before it
        extras: dict[tuple[Series, int], Row] = {}

        def row_of(series: Series, k: int, baselines: dict[tuple[str, bool], tuple[RunRecord, float]]) -> Row:
            base, base_walk = baselines[(series.algo, series.exclude_warmup)]
            result, walk = points[(series, k)] if k != 1 else (base, base_walk)
            row = (speedup_row(panel, series, k, result, base) | extras[(series, k)]
                   | {"probe_walk_ns": walk, "probe_walk_ns_baseline": base_walk})
            if panel.static_baseline:
                static = baselines[(panel.static_baseline, False)][0]["projected"]
                assert static is not None
                row["throughput_vs_static_k1"] = _ratio(row["throughput_rps_projected"],
                                                        _throughput(static, static["projected_ns"]))
            return row

        for series in panel.series:
            cores = first[(series.algo, series.exclude_warmup)][0]["cores"]
            for k in panel.ks:
                if k != 1:
                    walk = step(f"{series.label()} k={k}")
                    points[(series, k)] = (_run(panel, series, k, modes if k <= cores else ("projected",)), walk)
                    advance()
                extras[(series, k)] = _packet_extras(panel, series, k)
                record(series, k, row_of(series, k, first))
        second = time_baselines("second half")
        kept = {key: faster_baseline(first[key], second[key]) for key in wanted}
        last = (panel.series[-1], panel.ks[-1])
        for series in panel.series:
            for k in panel.ks:
                record(series, k, row_of(series, k, kept), replace=True, notify=(series, k) == last)

    def run(self, experiment: Experiment, panels: Iterable[str] | None = None,
            on_panel: Callable[[list[Row]], object] | None = None) -> list[Row]:
        """Runs the chosen panels; ``on_panel`` receives all rows so far after every point, so a
        long reproduction keeps every point it finished if it is interrupted."""
        wanted = set(panels) if panels else None
        chosen = [p for p in experiment.panels if wanted is None or p.name in wanted]
        total = sum(p.runs() * self.repeats_of(p) for p in chosen)
        rows: list[Row] = []
        with progress_bar(self.show_progress) as progress:
            task = progress.add_task(experiment.name, total=total)
            for panel in chosen:
                # Every finished point is written as it finishes: Ctrl-C (or a crash) keeps them.
                self.run_panel(panel, progress, task, into=rows,
                               on_row=None if on_panel is None else lambda: on_panel(rows))
                if on_panel is not None:
                    on_panel(rows)
        return rows


def experiment_config(experiment: Experiment, panels: Iterable[str] | None, quick: bool) -> dict[str, Any]:
    """The configuration block of result.json: every panel's parameters."""
    wanted = set(panels) if panels else None
    return {
        "quick": quick,
        "description": experiment.description,
        "panels": [asdict(p) for p in experiment.panels if wanted is None or p.name in wanted],
    }


def save(out_dir: Path, experiment: Experiment, config: dict[str, Any], rows: list[Row]) -> Path:
    """Writes result.json / result.csv and every panel's plots."""
    from superlinear.output.plots import plot_experiment

    path = write_results(out_dir, experiment.name, config, rows)
    record_plots(path, plot_experiment(out_dir, experiment, rows))
    return path
