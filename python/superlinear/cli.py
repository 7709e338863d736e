"""The ``superlinear`` command line: one entry point for every experiment and tool."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from superlinear import _native
from superlinear.common.args import non_negative_int, positive_int
from superlinear.engine.runs import RunSpec, SuperlinearError, Workload, run

console = Console(width=max(120, Console().width))
HONESTY = (
    "measured = wall clock with real threads (only k ≤ cores); projected = serial dispatcher CPU time + slowest "
    "worker's own CPU time (ideal cores, no contention); work = exact operation counts."
)


def _fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if abs(v) >= 1e6:
            return f"{v:.3g}"
        return f"{v:,.{digits}f}"
    return str(v)


def summary_table(rows: list[dict[str, Any]], title: str) -> Table:
    """k = 1, 2 and the largest k of every series, with all three speedup kinds and throughput."""
    caption = HONESTY + " Mreq/s: projected throughput (measured goodput for single-core rows)."
    table = Table(title=title, caption=caption, caption_justify="left", show_lines=False)
    cols = ("panel", "series", "k", "measured ×", "projected ×", "work ×", "Mreq/s", "vs static k=1", "hit rate")
    for col in cols:
        table.add_column(col, justify="right" if col not in ("panel", "series") else "left")
    by_series: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by_series.setdefault((r["panel"], r["algo"], r["dispatch"], r["warmup"]), []).append(r)
    for (panel, algo, dispatch, warmup), rs in by_series.items():
        ks = sorted(r["k"] for r in rs)
        show = {ks[0], ks[-1]} | ({2} if 2 in ks else set())
        for r in sorted(rs, key=lambda r: r["k"]):
            if r["k"] not in show:
                continue
            goodput = r.get("goodput_mrps")
            mreqs = goodput if goodput is not None else (r.get("throughput_rps_projected") or 0) / 1e6
            table.add_row(
                panel,
                f"{algo} + {dispatch}" + (" steady" if warmup == "excluded" else "")
                + (" (1 core: measured goodput)" if goodput is not None else ""),
                str(r["k"]),
                _fmt(r.get("speedup_measured") if goodput is None else r.get("goodput_ratio"), 2),
                _fmt(r.get("speedup_projected")),
                _fmt(r.get("speedup_work")),
                _fmt(mreqs, 3),
                _fmt(r.get("throughput_vs_static_k1"), 2),
                _fmt(r.get("hit_rate"), 3),
            )
    return table


def _run_experiment(experiment: Any, out: Path, panels: list[str] | None, quick: bool, measure: bool,
                    as_json: bool) -> int:
    from superlinear.experiments.driver import Driver, experiment_config, save
    from superlinear.output.results import write_results

    known = [p.name for p in experiment.panels]
    if panels:
        bad = [p for p in panels if p not in known]
        if bad:
            raise SuperlinearError(
                f"unknown panel(s) {', '.join(bad)} for {experiment.name} (known: {', '.join(known)})"
            )
    driver = Driver(measure=measure, show_progress=not as_json and sys.stderr.isatty())
    config = experiment_config(experiment, panels, quick)
    rows = driver.run(experiment, panels, on_panel=lambda done: write_results(out, experiment.name, config, done))
    path = save(out, experiment, config, rows)
    if as_json:
        print(path.read_text(encoding="utf-8"))
    else:
        console.print(summary_table(rows, experiment.description))
        console.print(f"results: {path} and {out / 'result.csv'}")
        console.print(f"plots:   {out}/{experiment.name}*.png (and .svg)")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from superlinear.experiments import DATA_REGISTRY, REGISTRY
    from superlinear.experiments.cachetier_driver import SERVICE_EXPERIMENTS, reproduce_service_experiment

    if args.figure in SERVICE_EXPERIMENTS:
        # Experiments on real servers (memcached, PostgreSQL) have a driver of their own.
        out = Path(args.out) if args.out else Path("results") / (args.figure + ("-quick" if args.quick else ""))
        return reproduce_service_experiment(args.figure, out, args.panel, args.quick, args.json)
    if args.figure not in REGISTRY:
        known = sorted([*REGISTRY, *SERVICE_EXPERIMENTS])
        raise SuperlinearError(f"unknown figure '{args.figure}' (available: {', '.join(known)})")
    if args.figure in DATA_REGISTRY:
        data = Path(args.data) if args.data else None
        if data is not None and not data.is_dir():
            raise SuperlinearError(f"{data}: --data must be a folder (the ClassBench rule sets and traces)")
        experiment = DATA_REGISTRY[args.figure](args.quick, data)
        from superlinear.experiments.packets import find_data

        if find_data(data) is None:
            print("superlinear: note: no ClassBench data found (give --data DIR); ClassBench panels skipped",
                  file=sys.stderr)
    else:
        experiment = REGISTRY[args.figure](args.quick)
    if args.exclude_warmup:
        experiment = experiment.steady_state()
    suffix = ("-quick" if args.quick else "") + ("-steady" if args.exclude_warmup else "")
    out = Path(args.out) if args.out else Path("results") / (args.figure + suffix)
    return _run_experiment(experiment, out, args.panel, args.quick, not args.no_measure, args.json)


def cmd_report(args: argparse.Namespace) -> int:
    from superlinear.output.report import write_report

    path, experiments = write_report(Path(args.results), Path(args.out) if args.out else None)
    console.print(f"report: {path} ({experiments} experiments)")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from superlinear.engine.sweep import load_sweep

    experiment, measure = load_sweep(Path(args.config))
    out = Path(args.out) if args.out else Path("results") / experiment.name
    return _run_experiment(experiment, out, None, False, measure and not args.no_measure, args.json)


def cmd_run(args: argparse.Namespace) -> int:
    if args.exclude_warmup and not args.warmup:
        raise SuperlinearError("--exclude-warmup needs --warmup N (the requests served before counting starts)")
    workload = Workload(args.workload, args.m, args.alpha, args.trace)
    if args.trace:
        workload = Workload("trace", 0, args.alpha, args.trace)
    modes = ["projected"]
    if args.measure:
        modes.append("measured")
    if args.single_core:
        modes.append("single_core")
    spec = RunSpec(algo=args.algo, dispatch=args.dispatch, k=args.k, workload=workload, requests=args.requests,
                   warmup=args.warmup, exclude_warmup=args.exclude_warmup, seed=args.seed, sharded=args.sharded,
                   compare_cycles=args.w, miss_cycles=args.rho, modes=tuple(modes))
    result = run(spec)
    doc = {"spec": spec.to_native(), "items": result.items, "cores": result.cores,
           "projected": result.projected.__dict__ if result.projected else None,
           "measured": result.measured.__dict__ if result.measured else None,
           "single_core": result.single_core.__dict__ if result.single_core else None}
    if args.json:
        print(json.dumps(doc, indent=1))
        return 0
    p = result.projected
    assert p is not None
    console.print(f"{args.algo} + {args.dispatch}, k = {args.k}, {workload.label()} over {result.items:,} items, "
                  f"{p.requests:,} requests ({'warm-up excluded' if args.exclude_warmup else 'warm-up included'})")
    console.print(f"  projected time {p.projected_ns / 1e6:,.2f} ms (dispatcher {p.dispatcher_cpu_ns / 1e6:,.2f} ms + "
                  f"slowest worker {max(p.worker_cpu_ns) / 1e6:,.2f} ms), "
                  f"{p.requests * 1e3 / max(p.projected_ns, 1):,.3f} Mreq/s projected")
    console.print(f"  work: span {p.work_span:,}, total {p.work_total:,} ({p.work_total / p.requests:,.1f} per request)"
                  + (f", hit rate {p.hit_rate:.3f}" if p.hit_rate is not None else ""))
    for name, acc in (("measured", result.measured), ("single core", result.single_core)):
        if acc is not None and acc.wall_ns:
            console.print(f"  {name}: wall {acc.wall_ns / 1e6:,.2f} ms, {acc.requests * 1e3 / acc.wall_ns:,.3f} Mreq/s")
    if args.measure and result.measured is None:
        console.print(f"  measured: skipped, k = {args.k} > {result.cores} cores (projected only)")
    return 0


def cmd_law(args: argparse.Namespace) -> int:
    from superlinear.analysis.law import law_table, plot_laws

    ks = [int(x) for x in args.k.split(",")] if args.k else [1, 2, 4, 8, 16, 32, 48, 64]
    rows = law_table(ks, args.s, args.s_cache, args.delta, args.rho)
    out = Path(args.out)
    paths = plot_laws(out, args.s, args.s_cache, args.delta, args.rho, max(ks))
    if args.json:
        print(json.dumps({"s": args.s, "s_cache": args.s_cache, "delta": args.delta, "rho": args.rho, "rows": rows},
                         indent=1))
        return 0
    table = Table(title="Analytic scaling laws (speedup)")
    for col in rows[0]:
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(*(f"{v:,.2f}" if isinstance(v, float) else str(v) for v in r.values()))
    console.print(table)
    console.print(f"amdahl, mtf_uniform_k2: s = {args.s}; cache laws: s = {args.s_cache}, δ = {args.delta}, "
                  f"ρ = {args.rho}")
    console.print("plots: " + ", ".join(str(p) for p in paths))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from superlinear.engine.bench import run_bench

    return run_bench(args, console)


def cmd_algorithms(args: argparse.Namespace) -> int:
    algos, disp = _native.algorithms(), _native.dispatchers()
    if args.json:
        print(json.dumps({"algorithms": algos, "dispatchers": disp}, indent=1))
        return 0
    t = Table(title="workers (--algo)")
    t.add_column("name")
    t.add_column("self-adjusting")
    t.add_column("what")
    for a in algos:
        name = a["name"] + (":C" if a["takes_capacity"] else "")
        t.add_row(name, "yes" if a["self_adjusting"] else "no", a["summary"])
    console.print(t)
    t = Table(title="dispatchers (--dispatch)")
    t.add_column("name")
    t.add_column("key-affine")
    t.add_column("what")
    for d in disp:
        t.add_row(d["name"], "yes" if d["key_affine"] else "no", d["summary"])
    console.print(t)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="superlinear",
        description="Distributed self-adjusting systems that scale faster than linearly, measured honestly. "
        + HONESTY,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser("reproduce", help="reproduce a figure of the paper (fig5, fig8, fig9, fig11, ...)",
                       description="Reproduce a figure of the paper; writes result.json, result.csv and plots.")
    r.add_argument("figure", help="figure to reproduce: fig5, fig8, fig9, fig11, cache-skew")
    r.add_argument("--panel", action="append", metavar="P", help="only this panel (repeatable), e.g. a")
    r.add_argument("--quick", action="store_true", help="reduced sizes: about a minute on two cores, same shape")
    r.add_argument("--out", metavar="DIR", help="output folder (default results/FIGURE[-quick][-steady])")
    r.add_argument("--no-measure", action="store_true", help="skip the real-thread runs (projected and work only)")
    r.add_argument("--exclude-warmup", action="store_true",
                   help="steady state: serve each panel's warm-up first and leave it out of every figure")
    r.add_argument("--json", action="store_true", help="print result.json instead of the table")
    r.add_argument("--data", metavar="DIR",
                   help="fig8/fig9: folder with the ClassBench rule sets and traces (acl1_5k, acl1_5k_trace, ...)")
    r.set_defaults(func=cmd_reproduce)

    s = sub.add_parser("sweep", help="run a grid declared in a TOML file",
                       description="Run algorithm × dispatcher × workload × k declared in a TOML file "
                       "(see `python -c 'import superlinear.engine.sweep; help(superlinear.engine.sweep)'`).")
    s.add_argument("config", help="sweep file (TOML)")
    s.add_argument("--out", metavar="DIR", help="output folder (default results/NAME)")
    s.add_argument("--no-measure", action="store_true", help="skip the real-thread runs")
    s.add_argument("--json", action="store_true", help="print result.json instead of the table")
    s.set_defaults(func=cmd_sweep)

    u = sub.add_parser("run", help="one run: algorithm, dispatcher, workload, k",
                       description="Run one configuration and print its accounting.")
    u.add_argument("--algo", default="mtf",
                   help="worker: static, mtf, tree, splay, lru:C, lru-mad:C, lru-dh:C, nocache, hashmap")
    u.add_argument("--dispatch", default="hash", help="dispatcher: rr, random, hash")
    u.add_argument("--k", type=positive_int, default=4, help="workers (default 4)")
    u.add_argument("--workload", choices=["uniform", "zipf"], default="uniform")
    u.add_argument("--m", type=positive_int, default=10_000, help="items (default 10000)")
    u.add_argument("--alpha", type=float, default=1.01, help="zipf exponent (default 1.01)")
    u.add_argument("--trace", metavar="FILE", help="key trace (text: one key per line, or binary)")
    u.add_argument("--requests", type=positive_int, default=100_000)
    u.add_argument("--warmup", type=non_negative_int, default=0, help="warm-up requests (with --exclude-warmup)")
    u.add_argument("--exclude-warmup", action="store_true", help="leave the warm-up out of every figure")
    u.add_argument("--w", type=non_negative_int, default=0, help="cycles per tree comparison")
    u.add_argument("--rho", type=non_negative_int, default=0, help="cycles per cache miss")
    u.add_argument("--seed", type=non_negative_int, default=1)
    u.add_argument("--sharded", action="store_true", help="sharded state (each worker holds its partition only)")
    u.add_argument("--measure", action="store_true", help="also run with real threads (k ≤ cores)")
    u.add_argument("--single-core", action="store_true", help="also run all k threads on one core")
    u.add_argument("--json", action="store_true")
    u.set_defaults(func=cmd_run)

    law = sub.add_parser("law", help="analytic laws: Amdahl (Eq. 1), k² (Eq. 2), distributed cache (Eq. 3)",
                         description="Print and plot the paper's analytic scaling laws (Fig. 1 and Fig. 10).")
    law.add_argument("--s", type=float, default=0.01, help="serial fraction for Eqs. 1-2 (default 0.01, Fig. 1)")
    law.add_argument("--s-cache", type=float, default=0.1, help="serial fraction for Eq. 3 (default 0.1, Fig. 10)")
    law.add_argument("--delta", type=float, default=0.1, help="single-cache hit rate δ (default 0.1)")
    law.add_argument("--rho", type=float, default=10.0, help="miss cost relative to a hit ρ (default 10)")
    law.add_argument("--k", help="comma-separated k values for the table (default 1,2,4,...,64)")
    law.add_argument("--out", default="results/law", help="folder for the plots (default results/law)")
    law.add_argument("--json", action="store_true")
    law.set_defaults(func=cmd_law)

    b = sub.add_parser("bench", help="single-thread lookups/s per structure and dispatcher ns/request",
                       description="Micro-benchmarks (release build, thread CPU time).")
    b.add_argument("--quick", action="store_true", help="fewer lookups")
    b.add_argument("--out", default="results/bench", help="output folder (default results/bench)")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_bench)

    from superlinear.analysis.usl_cli import add_parser as add_usl_parser

    add_usl_parser(sub)
    from superlinear.attack.cli import add_parser as add_attack_parser

    add_attack_parser(sub)

    from superlinear.analysis.predict_cli import add_parser as add_predict_parser

    add_predict_parser(sub)

    from superlinear.cache.cli import add_parser as add_cache_parser

    add_cache_parser(sub)

    from superlinear.latency.cli import add_parser as add_latency_parser

    add_latency_parser(sub)

    from superlinear.classify.cli import add_parser as add_classify_parser

    add_classify_parser(sub)

    from superlinear.nft.cli import add_parser as add_nft_parser

    add_nft_parser(sub)

    rep = sub.add_parser("report", help="one HTML page with every plot and table under a results folder",
                         description="Collect every result.json under RESULTS_DIR (with its PNG plots) into one "
                         "self-contained HTML page.")
    rep.add_argument("results", nargs="?", default="results", help="results folder (default results)")
    rep.add_argument("--out", metavar="FILE", help="page to write (default RESULTS_DIR/index.html)")
    rep.set_defaults(func=cmd_report)

    a = sub.add_parser("algorithms", help="list workers and dispatchers")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=cmd_algorithms)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except SuperlinearError as e:
        print(f"superlinear: error: {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"superlinear: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("superlinear: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
