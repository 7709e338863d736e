"""``superlinear reproduce FIGURE``: the paper's figures, run by the shared driver (engine and
packet experiments) or by the cache-tier driver (experiments on real memcached and PostgreSQL).

Both are :class:`~superlinear.common.study.Study` objects, and so is a TOML sweep
(``superlinear sweep``, which reuses :class:`EngineExperiment`).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from superlinear.common.args import add_repeats_option, add_timed_window_option, timed_window
from superlinear.common.errors import SuperlinearError, note
from superlinear.common.listing import known
from superlinear.common.rows import Row
from superlinear.common.study import Outcome, Progress, Study, console, run_study
from superlinear.experiments.spec import Experiment
from superlinear.output.tables import summary_table


@dataclass
class ExperimentRun:
    """One declared experiment to run: which panels, whether to run real threads, where to write."""

    experiment: Experiment
    panels: list[str] | None
    quick: bool
    measure: bool
    out: Path
    #: Independent repeats of every point (None: each panel's own, 3 unless declared).
    repeats: int | None = None


class EngineExperiment(Study[ExperimentRun]):
    """A declared experiment run by the shared driver; rows are saved after every panel."""

    def __init__(self, run: ExperimentRun) -> None:
        self._run = run
        self.experiment = run.experiment.name

    def config_from(self, args: argparse.Namespace) -> ExperimentRun:
        run = self._run
        names = [p.name for p in run.experiment.panels]
        bad = [p for p in run.panels or [] if p not in names]
        if bad:
            raise SuperlinearError(
                f"unknown panel(s) {', '.join(bad)} for {run.experiment.name} (known: {', '.join(names)})"
            )
        return run

    def run(self, config: ExperimentRun, progress: Progress | None) -> Outcome:
        from superlinear.experiments.agreement import agreement
        from superlinear.experiments.driver import Driver, experiment_config
        from superlinear.experiments.repeats import stability
        from superlinear.output.results import write_progress

        driver = Driver(measure=config.measure, show_progress=progress is not None, repeats=config.repeats)
        experiment = config.experiment
        if config.repeats is not None:
            # --repeats overrides every panel's own (a sweep file's 'repeats'): the recorded
            # config says what ran.
            experiment = dataclasses.replace(experiment, panels=tuple(
                dataclasses.replace(p, repeats=config.repeats) for p in experiment.panels))
        recorded = experiment_config(experiment, config.panels, config.quick)
        if config.repeats is not None:
            recorded["repeats"] = config.repeats

        def summary(rows: list[Row], findings: list[str]) -> dict[str, Any]:
            return {"stability": stability(rows), "agreement": agreement(rows),
                    "machine_noise": driver.noise.summary(), "findings": findings}

        # Every finished point is written with the summary of the rows so far: a stopped run keeps both.
        rows = driver.run(config.experiment, config.panels, on_panel=lambda done: write_progress(
            config.out, config.experiment.name, recorded, done, summary(done, [])))
        findings = config.experiment.summary(rows) if config.experiment.summary else []
        if findings:
            recorded["findings"] = findings
        return Outcome(rows, recorded, summary=summary(rows, findings))

    def plot(self, out: Path, config: ExperimentRun, outcome: Outcome) -> list[Path]:
        from superlinear.output.plots import plot_experiment

        return plot_experiment(out, config.experiment, outcome.rows)

    def table(self, config: ExperimentRun, outcome: Outcome) -> None:
        from superlinear.experiments.agreement import agreement_lines
        from superlinear.experiments.machine_noise import machine_noise_lines
        from superlinear.experiments.repeats import stability_lines

        console.print(summary_table(outcome.rows, config.experiment.description))
        assert outcome.summary is not None
        summary = outcome.summary
        for line in (stability_lines(summary["stability"]) + agreement_lines(summary["agreement"])
                     + machine_noise_lines(summary["machine_noise"])):
            console.print(line, markup=False, highlight=False)
        for line in summary.get("findings", []):
            console.print("• " + line, markup=False, highlight=False)

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"results: {path} and {out / 'result.csv'}", f"plots:   {out}/{self.experiment}*.png (and .svg)"]


class CacheTierFigure(Study[argparse.Namespace]):
    """``reproduce fig11|cache-skew``: the cache-tier driver on real servers; exit 1 on a wrong value."""

    def __init__(self, name: str) -> None:
        self.experiment = name

    def config_from(self, args: argparse.Namespace) -> argparse.Namespace:
        from superlinear.experiments.cachetier_driver import SERVICE_EXPERIMENTS

        study = SERVICE_EXPERIMENTS[self.experiment](args.quick)
        names = [p.name for p in study.panels]
        bad = [p for p in args.panel or [] if p not in names]
        if bad:
            raise SuperlinearError(f"unknown panel(s) {', '.join(bad)} for {self.experiment} "
                                   f"(known: {', '.join(names)})")
        return args

    def run(self, config: argparse.Namespace, progress: Progress | None) -> Outcome:
        from superlinear.experiments.agreement import agreement
        from superlinear.experiments.cachetier_driver import SERVICE_EXPERIMENTS, findings, run_study
        from superlinear.output.results import write_progress

        study = SERVICE_EXPERIMENTS[self.experiment](config.quick)
        if getattr(config, "repeats", None):
            study = dataclasses.replace(study, repeats=config.repeats)
        panels = config.panel
        started = time.monotonic()
        recorded = {"quick": config.quick, "description": study.description, "rows": study.rows,
                    "memory_mb": study.memory_mb, "replicas": study.replicas, "notes": list(study.notes),
                    "panels": [p.__dict__ for p in study.panels if not panels or p.name in panels],
                    "repeats": study.repeats}

        def keep(done: list[Row]) -> None:
            # Each finished round is written as it finishes: Ctrl-C (or a crash) keeps them.
            rounds = max((r.get("repeats", 1) for r in done), default=0)
            write_progress(Path(config.out), self.experiment, {**recorded, "rounds_finished": rounds}, done)

        rows = run_study(study, panels, Path(config.out), show_progress=progress is not None, on_round=keep)
        recorded["findings"] = findings(study, rows)
        if study.sensitivity:
            from superlinear.experiments.cache_sensitivity import sensitivity_rows, summary_lines

            srows = sensitivity_rows(study, rows)
            recorded["sensitivity"] = srows
            recorded["sensitivity_summary"] = summary_lines(srows)
        recorded["seconds"] = round(time.monotonic() - started, 1)
        return Outcome(rows, recorded, extra=study, summary={"agreement": agreement(rows)})

    def plot(self, out: Path, config: argparse.Namespace, outcome: Outcome) -> list[Path]:
        from superlinear.experiments.cachetier_driver import _plot

        paths = _plot(out, outcome.extra, outcome.rows)
        if "sensitivity" in outcome.config:
            from superlinear.experiments.cache_sensitivity import plot_sensitivity

            paths += plot_sensitivity(out, outcome.config["sensitivity"])
        return paths

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        from superlinear.experiments.agreement import agreement_lines
        from superlinear.experiments.cachetier_driver import _summary, findings

        wide = Console(width=160)
        wide.print(_summary(outcome.extra, outcome.rows))
        for line in findings(outcome.extra, outcome.rows):
            wide.print("• " + line, markup=False, highlight=False)
        for line in outcome.config.get("sensitivity_summary", []):
            wide.print("◦ " + line, markup=False, highlight=False)
        assert outcome.summary is not None
        for line in agreement_lines(outcome.summary["agreement"]):
            wide.print(line, markup=False, highlight=False)

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"results: {path} and {out / 'result.csv'}",
                "plots:   " + ", ".join(str(p) for p in plots if p.suffix == ".png")]

    def exit_code(self, outcome: Outcome) -> int:
        wrong = sum(r["wrong_values"] + r.get("stale_values", 0) + r.get("calibration_wrong_values", 0)
                    for r in outcome.rows)
        return 0 if wrong == 0 and not any(math.isnan(r["hit_rate"]) for r in outcome.rows) else 1


def run_experiment(experiment: Experiment, args: argparse.Namespace, panels: list[str] | None, quick: bool,
                   measure: bool) -> int:
    """Runs a declared experiment for a command whose ``args`` carry ``out``, ``json`` and
    ``repeats``."""
    from superlinear.experiments.driver import with_timed_window

    # The window is part of the panels, so the runs and result.json's config both carry it.
    experiment = with_timed_window(experiment, timed_window(args))
    run = ExperimentRun(experiment, panels, quick, measure, Path(args.out), args.repeats)
    return run_study(EngineExperiment(run), args)


def figures() -> list[str]:
    """Every figure ``reproduce`` knows, in registry order."""
    from superlinear.experiments import REGISTRY
    from superlinear.experiments.cachetier_driver import SERVICE_EXPERIMENTS

    return list(dict.fromkeys([*REGISTRY, *SERVICE_EXPERIMENTS]))


def _refuse_data_panels(figure: str, quick: bool, experiment: Experiment, panels: list[str]) -> None:
    """Without ClassBench data, a ClassBench panel asked for by name is refused as such, naming
    the panels that do run without the data."""
    from superlinear.experiments import DATA_REGISTRY

    here = [p.name for p in experiment.panels]
    # The builders only name the files; any folder shows which panels the data would add.
    with_data = {p.name for p in DATA_REGISTRY[figure](quick, Path(".")).panels} - set(here)
    unknown = [p for p in panels if p not in here and p not in with_data]
    if unknown:
        raise SuperlinearError(f"unknown panel(s) {', '.join(unknown)} for {figure} (known: {', '.join(here)}; "
                               f"with --data also {', '.join(sorted(with_data))})")
    wanted = [p for p in panels if p in with_data]
    if wanted:
        raise SuperlinearError(f"panel(s) {', '.join(wanted)} of {figure} run on ClassBench data: give --data DIR "
                               f"(no ClassBench data found; without it: {', '.join(here)})")


def _without_real_thread_panels(experiment: Experiment, figure: str, panels: list[str]) -> Experiment:
    """``--no-measure``: the panels made only of real-thread runs (Fig. 5c's single-core
    goodput) are refused when named and otherwise left out, with a note."""
    threaded = [p.name for p in experiment.panels if p.metric == "goodput"]
    named = [p for p in panels if p in threaded]
    if named:
        raise SuperlinearError(f"--no-measure: panel {', '.join(named)} of {figure} is made of real-thread runs only "
                               "(all k workers on one core); leave --no-measure out to run it")
    if not threaded or (panels and not named):
        return experiment
    note(f"--no-measure leaves out panel {', '.join(threaded)} of {figure} (real-thread runs only)")
    return dataclasses.replace(experiment, panels=tuple(p for p in experiment.panels if p.name not in threaded))


def cmd_reproduce(args: argparse.Namespace) -> int:
    from superlinear.experiments import DATA_REGISTRY, REGISTRY
    from superlinear.experiments.cachetier_driver import SERVICE_EXPERIMENTS

    twice = sorted({p for p in args.panel or [] if args.panel.count(p) > 1})
    if twice:
        # As a list option refuses a name given twice (common.args.comma_list): a panel runs once.
        raise SuperlinearError(f"--panel: {', '.join(twice)} given more than once")
    if args.data and args.figure not in DATA_REGISTRY:
        # Ignoring it would run the figure's own inputs while the user believes theirs were used.
        raise SuperlinearError(f"--data: {args.figure} does not read ClassBench data (only "
                               f"{', '.join(sorted(DATA_REGISTRY))} do); leave --data out")
    if args.figure in SERVICE_EXPERIMENTS:
        # Experiments on real servers (memcached, PostgreSQL) have a driver of their own, which
        # always measures and has no timed passes or warm-up split of the engine's kind.
        for flag, given in (("--no-measure", args.no_measure), ("--exclude-warmup", args.exclude_warmup),
                            ("--timed-window", args.timed_window is not None)):
            if given:
                raise SuperlinearError(f"{flag} has no effect with reproduce {args.figure} (its figures are wall-clock "
                                       "measurements of real memcached and PostgreSQL servers)")
        if args.out is None:
            args.out = str(Path("results") / (args.figure + ("-quick" if args.quick else "")))
        return run_study(CacheTierFigure(args.figure), args)
    if args.figure not in REGISTRY:
        raise SuperlinearError(f"unknown figure '{args.figure}' (available: {', '.join(sorted(figures()))})")
    if args.figure in DATA_REGISTRY:
        data = Path(args.data) if args.data else None
        if data is not None and not data.is_dir():
            raise SuperlinearError(f"{data}: --data must be a folder (the ClassBench rule sets and traces)")
        from superlinear.experiments.packets import find_data

        # Looked up once (a default folder is named in a note): the builder gets the folder found.
        root = find_data(data)
        experiment = DATA_REGISTRY[args.figure](args.quick, root)
        if root is None:
            _refuse_data_panels(args.figure, args.quick, experiment, args.panel or [])
            note("no ClassBench data found (give --data DIR); ClassBench panels skipped")
    else:
        experiment = REGISTRY[args.figure](args.quick)
    if args.exclude_warmup:
        experiment = experiment.steady_state()
    if args.no_measure:
        experiment = _without_real_thread_panels(experiment, args.figure, args.panel or [])
    suffix = ("-quick" if args.quick else "") + ("-steady" if args.exclude_warmup else "")
    if args.out is None:
        args.out = str(Path("results") / (args.figure + suffix))
    return run_experiment(experiment, args, args.panel, args.quick, not args.no_measure)


def _figures_help() -> str:
    """Every figure with its panels (full sizes; --quick's where they differ), and what the
    service-backed figures start, for ``reproduce --help``."""
    from superlinear.experiments import DATA_REGISTRY, REGISTRY
    from superlinear.experiments.cachetier_driver import SERVICE_EXPERIMENTS

    def panels(name: str, quick: bool) -> list[str]:
        if name in SERVICE_EXPERIMENTS:
            return [p.name for p in SERVICE_EXPERIMENTS[name](quick).panels]
        # Any folder: the builders only name the ClassBench files, so every panel shows.
        study = DATA_REGISTRY[name](quick, Path(".")) if name in DATA_REGISTRY else REGISTRY[name](quick)
        return [p.name for p in study.panels]

    names = figures()
    width = max(len(n) for n in names) + 2
    lines = ["figures and their panels (--panel):"]
    for name in names:
        full, quick = panels(name, False), panels(name, True)
        differs = "" if quick == full else f" (--quick: {', '.join(quick)})"
        lines.append(f"  {name:<{width}}{', '.join(full)}{differs}")
    service = [n for n in names if n in SERVICE_EXPERIMENTS]
    rows = max(SERVICE_EXPERIMENTS[n](False).rows for n in service)
    replicas = max(SERVICE_EXPERIMENTS[n](q).replicas for n in service for q in (False, True))
    lines += ["", f"{', '.join(service)} run on real servers, --quick too: each starts its own",
              f"memcached replicas (up to {replicas}) and a PostgreSQL cluster in a new /tmp folder, loads",
              f"{rows:,} rows with COPY, and at the end stops the servers and deletes the folder",
              "(memcached and PostgreSQL must be installed)."]
    return "\n".join(lines)


def register(sub: Any) -> None:
    """Adds ``reproduce``."""
    from superlinear.experiments import DATA_REGISTRY

    names = known(figures())
    r = sub.add_parser("reproduce", help=f"reproduce a figure of the paper ({names})",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Reproduce a figure of the paper; writes result.json, result.csv and plots.",
                       epilog=_figures_help())
    r.add_argument("figure", help=f"figure to reproduce: {names}")
    r.add_argument("--panel", action="append", metavar="P",
                   help="only this panel (repeatable), e.g. a; each figure's panels are listed below")
    r.add_argument("--quick", action="store_true",
                   help="reduced sizes: minutes on two cores, same shape (fig11, cache-skew and cache-sensitivity "
                   "still start real memcached and PostgreSQL servers and load 1,000,000 rows: see below)")
    r.add_argument("--out", metavar="DIR", help="output folder (default results/FIGURE[-quick][-steady])")
    r.add_argument("--no-measure", action="store_true", help="skip the real-thread runs (projected and work only)")
    r.add_argument("--exclude-warmup", action="store_true",
                   help="steady state: serve each panel's warm-up first and leave it out of every figure")
    add_repeats_option(r)
    add_timed_window_option(r)
    r.add_argument("--json", action="store_true", help="print result.json instead of the table")
    r.add_argument("--data", metavar="DIR",
                   help=f"{', '.join(sorted(DATA_REGISTRY))} only: folder with the ClassBench rule sets and traces "
                        "(acl1_5k, acl1_5k_trace, ...)")
    r.set_defaults(func=cmd_reproduce)
