"""``superlinear run|sweep|bench|algorithms``: one engine run, a TOML grid of runs, the
micro-benchmarks, and the engine's registries (workers and dispatchers)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from superlinear import _native
from superlinear.common.args import (
    add_repeats_option,
    add_timed_window_option,
    non_negative_finite,
    non_negative_int,
    non_negative_int_at_most,
    positive_int,
    repeat_count,
)
from superlinear.common.bounds import beyond_trace
from superlinear.common.defaults import config_defaults
from superlinear.common.errors import SuperlinearError
from superlinear.common.listing import Listing, add_listing_options, known, name_table
from superlinear.common.rows import slowest_worker_text
from superlinear.common.scope import OptionScope, generator_scope, needs_option
from superlinear.common.study import add_study_options, console
from superlinear.engine.bench import Bench
from superlinear.engine.runs import MAX_WORKER_CYCLES, WORKER_PARAMETERS, RunSpec, Workload, check_run_size, run
from superlinear.experiments.repeats import median_run, spread


def worker_names() -> list[str]:
    """Worker names as ``--algo`` takes them (``lru:C`` where a capacity is needed)."""
    return [a["name"] + (":C" if a["takes_capacity"] else "") for a in _native.algorithms()]


def _engine_doc() -> dict[str, Any]:
    return {"algorithms": _native.algorithms(), "dispatchers": _native.dispatchers()}


def _show_engine(doc: dict[str, Any]) -> None:
    workers = [{**a, "name": a["name"] + (":C" if a["takes_capacity"] else "")} for a in doc["algorithms"]]
    console.print(name_table("workers (--algo)", workers, [("self-adjusting", "self_adjusting")]))
    console.print(name_table("dispatchers (--dispatch)", doc["dispatchers"], [("key-affine", "key_affine")]))


LISTING = Listing("engine", "workers and dispatchers of run, sweep and reproduce", _engine_doc, _show_engine)


#: ``--w`` and ``--rho``: cycles from 0 to :data:`MAX_WORKER_CYCLES`.
worker_cycles = non_negative_int_at_most(MAX_WORKER_CYCLES, "cycles")

#: Options of a generated key workload: refused with --trace, which they would not change.
GENERATOR_OPTIONS = ("workload", "m", "alpha")



def _users(dest: str) -> str:
    """The workers that use the parameter ``dest``, as --algo takes them."""
    users = WORKER_PARAMETERS[dest][1]
    return ", ".join(name for name in worker_names() if name.split(":", 1)[0] in users)


#: Options whose use depends on the others (by dest): their defaults are held back until
#: :func:`_check_scope` has seen which of them the user gave.
SCOPED_OPTIONS = ("algo", "workload", "alpha", "requests", "w", "rho", "seed")

def seeded_dispatchers() -> list[str]:
    """Engine dispatchers that draw on the run's seed (the key hash's salt, the random choice), as
    the registry says; tests/test_option_scope.py checks it against their assignments."""
    return sorted(d["name"] for d in _native.dispatchers() if d["seeded"])


def refuse_unused_seed(trace: str | None, dispatch: str, seed_given: bool) -> None:
    """Refuses --seed with a key trace behind a dispatcher that draws nothing: then nothing the
    run does depends on it (``run --trace T --dispatch rr --seed 5`` ran as with any seed)."""
    seeded = seeded_dispatchers()
    if seed_given and trace and dispatch in {d["name"] for d in _native.dispatchers()} and dispatch not in seeded:
        raise SuperlinearError(f"--seed has no effect with --trace and --dispatch {dispatch} (it seeds the keys "
                               f"generated without --trace and the {' and '.join(seeded)} dispatchers)")


def _check_scope(args: argparse.Namespace, scope: OptionScope) -> set[str]:
    """Refuses --alpha without the zipf workload and --w or --rho beside a worker that does not
    use it (``run --algo mtf --rho 100000`` would run and drop --rho); --trace has refused the
    generated workload's options already (generator_scope). Returns the options given, and puts
    the defaults back."""
    given = {dest for dest in scope.flags if OptionScope.given(args, dest)}
    value = {dest: getattr(args, dest) if dest in given else scope.defaults[dest] for dest in ("algo", "workload")}
    algo = _native.check_algo(value["algo"]).split(":", 1)[0]

    def mode(dest: str) -> str:
        return f"with {scope.flags[dest]} {value[dest]}" + ("" if dest in given else ", the default")

    if not args.trace and value["workload"] != "zipf":
        scope.check(args, set(scope.flags) - {"alpha"}, mode("workload"),
                    {"alpha": "it is the exponent of --workload zipf"})
    for dest, (what, users) in WORKER_PARAMETERS.items():
        if algo not in users:
            scope.check(args, set(scope.flags) - {dest}, mode("algo"),
                        {dest: f"it is the cycles {what}, used by --algo {_users(dest)}"})
    refuse_unused_seed(args.trace, args.dispatch, "seed" in given)
    scope.fill(args)
    return given


def _check_trace_length(args: argparse.Namespace, given: set[str], counted: int) -> None:
    """Refuses --requests beyond a trace: the engine serves the trace's first keys, and all of
    them when it holds fewer, so ``run --trace T --requests 50000`` on 20,000 keys ran 20,000.
    Judged on the first run's count (``counted``), before any figure is shown: the engine reads
    the trace, which counting its keys here would read a second time."""
    if args.trace and "requests" in given and counted < args.requests:
        raise beyond_trace(args.requests, args.trace, counted, args.warmup if args.exclude_warmup else 0)


def cmd_run(args: argparse.Namespace, scope: OptionScope) -> int:
    given = _check_scope(args, scope)
    if args.exclude_warmup and not args.warmup:
        raise SuperlinearError("--exclude-warmup needs --warmup N (the requests served before counting starts)")
    workload = Workload("trace", 0, args.alpha, args.trace) if args.trace else \
        Workload(args.workload, args.m, args.alpha)
    modes = ["projected"]
    if args.measure:
        modes.append("measured")
    if args.single_core:
        modes.append("single_core")
    spec = RunSpec(algo=args.algo, dispatch=args.dispatch, k=args.k, workload=workload, requests=args.requests,
                   warmup=args.warmup, exclude_warmup=args.exclude_warmup, seed=args.seed, sharded=args.sharded,
                   compare_cycles=args.w, miss_cycles=args.rho, modes=tuple(modes))
    check_run_size(spec, f"--algo {args.algo} --k {args.k:,}" + ("" if args.trace else f" --m {args.m:,}")
                   + f" --requests {args.requests:,}" + (f" --warmup {args.warmup:,}" if args.warmup else ""))
    first = run(spec)
    assert first["projected"] is not None
    _check_trace_length(args, given, first["projected"]["requests"])
    records = [first] + [run(spec) for _ in range(args.repeats - 1)]
    result, times = median_run(records)
    walls = [r["measured"]["wall_ns"] for r in records if r["measured"] and r["measured"]["wall_ns"]]
    native = spec.to_native()
    # The native spec's ``repeats`` are passes over the workers inside one run; ``repeats`` below
    # are the independent runs whose median is printed.
    native["passes_per_run"] = native.pop("repeats")
    doc = {"spec": native, "items": result["items"], "cores": result["cores"], "repeats": args.repeats,
           "projected_ns_runs": times, "wall_ns_runs": walls,
           "projected": result["projected"], "measured": result["measured"], "single_core": result["single_core"]}
    if args.json:
        print(json.dumps(doc, indent=1))
        return 0
    p = result["projected"]
    assert p is not None
    console.print(f"{args.algo} + {args.dispatch}, k = {args.k}, {workload.label()} over {result['items']:,} items, "
                  f"{p['requests']:,} requests ({'warm-up excluded' if args.exclude_warmup else 'warm-up included'})")
    runs = f"median \\[range] of {args.repeats} runs" if args.repeats > 1 else "one run"
    console.print(f"  projected time {spread([t / 1e6 for t in times])} ms, "
                  f"{spread([p['requests'] * 1e3 / max(t, 1) for t in times], ',.3f')} Mreq/s projected ({runs}; "
                  f"median run: dispatcher {p['dispatcher_cpu_ns'] / 1e6:,.2f} ms + {slowest_worker_text(p)})")
    console.print(f"  work: span {p['work_span']:,}, total {p['work_total']:,} "
                  f"({p['work_total'] / p['requests']:,.1f} per request)"
                  + (f", hit rate {p['hit_rate']:.3f}" if p["hit_rate"] is not None else ""))
    if walls:
        m = result["measured"]
        shared = (f" (k = {args.k} on {result['cores']} cores: the dispatcher shared worker 0's core)"
                  if m and m.get("dispatcher_shares_core") else "")
        console.print(f"  measured: wall {spread([w / 1e6 for w in walls])} ms, "
                      f"{spread([p['requests'] * 1e3 / w for w in walls], ',.3f')} Mreq/s{shared}")
    singles = [r["single_core"]["wall_ns"] for r in records if r["single_core"] and r["single_core"]["wall_ns"]]
    if singles:
        console.print(f"  single core: wall {spread([w / 1e6 for w in singles])} ms, "
                      f"{spread([p['requests'] * 1e3 / w for w in singles], ',.3f')} Mreq/s")
    if args.measure and result["measured"] is None:
        console.print(f"  measured: skipped, k = {args.k} > {result['cores']} cores (projected only)")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from superlinear.engine.sweep import load_sweep
    from superlinear.experiments.cli import run_experiment

    experiment, measure = load_sweep(Path(args.config))
    if args.out is None:
        args.out = str(Path("results") / experiment.name)
    return run_experiment(experiment, args, None, False, measure and not args.no_measure)


def _sweep_epilog() -> str:
    """The keys of a sweep file (:func:`superlinear.engine.sweep.load_sweep`), for ``sweep --help``."""
    d = config_defaults("run")
    w = d["workload"]
    return (
        "sweep file keys (example: examples/lists.toml; guide: docs/engine-and-fig5.md):\n"
        '  algos = ["mtf", "lru:1000"]  workers, as run --algo (caches as lru:CAPACITY)\n'
        '  dispatch = ["hash", "rr"]    dispatchers, as run --dispatch\n'
        "  k = [1, 2, 4, 8]             worker counts\n"
        "  [workload]                   one table, or several [[workload]] (a panel each):\n"
        f'    kind = "zipf"              uniform | zipf | trace (default {w["kind"]})\n'
        "    m = 100000                 items (needed by uniform and zipf)\n"
        f'    alpha = 1.01               Zipf exponent (zipf only; default {w["alpha"]:g})\n'
        '    path = "keys.bin"          key trace, relative to this file (trace only)\n'
        "Each algos × dispatch pair is a series, run at every k. Optional keys:\n"
        "  name            output folder results/NAME (default: the file's stem)\n"
        f"  requests        requests per run (default {d['requests']:,})\n"
        f"  seed            seed of generated keys and seeded dispatchers (default {d['seed']})\n"
        "  warmup          requests served first; needs exclude_warmup = true\n"
        "  exclude_warmup  true: leave the warm-up out of every figure\n"
        "  sharded         true: each worker holds its partition only\n"
        f"  compare_cycles  cycles per tree comparison (w; {_users('w')})\n"
        f"  miss_cycles     cycles per cache miss (ρ; {_users('rho')})\n"
        "  measure         false: projected only, as --no-measure (default true)\n"
        "  repeats         runs of every point, 1 to 1,000 (default 3; --repeats overrides)\n"
        "A key left out takes the default `superlinear run --help` shows.")


def register(sub: Any) -> None:
    """Adds ``run``, ``sweep``, ``bench`` and ``algorithms`` (an alias of ``list engine``)."""
    s = sub.add_parser("sweep", help="run a grid declared in a TOML file",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Run algorithm × dispatcher × workload × k declared in a TOML file (keys below).",
                       epilog=_sweep_epilog())
    s.add_argument("config", help="sweep file (TOML)")
    s.add_argument("--out", metavar="DIR", help="output folder (default results/NAME)")
    s.add_argument("--no-measure", action="store_true", help="skip the real-thread runs")
    add_repeats_option(s, default="3, or the sweep file's 'repeats'")
    add_timed_window_option(s)
    s.add_argument("--json", action="store_true", help="print result.json instead of the table")
    s.set_defaults(func=cmd_sweep)

    # The flags that stand for run config fields take the Rust defaults; --k and --m keep the
    # command's own defaults (4 workers over 10,000 items), which differ from the config's.
    run_defaults = config_defaults("run")
    u = sub.add_parser("run", help="one run: algorithm, dispatcher, workload, k",
                       description="Run one configuration and print its accounting.")
    u.add_argument("--algo", default=run_defaults["algo"],
                   help=f"worker (default {run_defaults['algo']}): " + known(worker_names()))
    u.add_argument("--dispatch", default=run_defaults["dispatch"],
                   help=f"dispatcher (default {run_defaults['dispatch']}): "
                   + known(d["name"] for d in _native.dispatchers()))
    u.add_argument("--k", "-k", type=positive_int, default=4, help="workers (default 4)")
    u.add_argument("--workload", choices=["uniform", "zipf"], default=run_defaults["workload"]["kind"],
                   help=f"generated keys (default {run_defaults['workload']['kind']})")
    u.add_argument("--m", type=positive_int, default=10_000, help="items (default 10000)")
    u.add_argument("--alpha", type=non_negative_finite, default=run_defaults["workload"]["alpha"],
                   help=f"zipf exponent, for --workload zipf (default {run_defaults['workload']['alpha']:g})")
    u.add_argument("--trace", metavar="FILE", help="key trace (text: one unsigned integer key per line, # comments; "
                   "or binary SLKT)")
    u.add_argument("--requests", type=positive_int, default=run_defaults["requests"],
                   help=f"requests (default {run_defaults['requests']}; with --trace, its first N keys, by default "
                   "all of a shorter trace)")
    u.add_argument("--warmup", type=non_negative_int, default=run_defaults["warmup"],
                   help="warm-up requests, served first and left out of every figure; needs --exclude-warmup "
                   f"(default {run_defaults['warmup']})")
    u.add_argument("--exclude-warmup", action="store_true", help="leave the warm-up out of every figure")
    u.add_argument("--w", type=worker_cycles, default=run_defaults["compare_cycles"],
                   help=f"cycles per tree comparison (--algo {_users('w')}; "
                   f"default {run_defaults['compare_cycles']:,})")
    u.add_argument("--rho", type=worker_cycles, default=run_defaults["miss_cycles"],
                   help=f"cycles per cache miss (--algo {_users('rho')}; default {run_defaults['miss_cycles']:,})")
    u.add_argument("--seed", type=non_negative_int, default=run_defaults["seed"],
                   help="seed of the generated keys and of the hash and random dispatchers "
                   f"(default {run_defaults['seed']})")
    u.add_argument("--sharded", action="store_true", help="sharded state (each worker holds its partition only)")
    u.add_argument("--measure", action="store_true", help="also run with real threads (k ≤ cores)")
    u.add_argument("--single-core", action="store_true", help="also run all k threads on one core")
    u.add_argument("--repeats", type=repeat_count, default=3, metavar="N",
                   help="independent runs: times are their median [range] (default 3)")
    u.add_argument("--json", action="store_true", help="print the run's accounting as JSON")
    # Made before generator_scope, so that this scope holds back the defaults of --workload and
    # --alpha too (generator_scope then leaves them unfilled for cmd_run to judge).
    scope = OptionScope(u, only=SCOPED_OPTIONS)
    u.set_defaults(func=lambda args: cmd_run(args, scope))
    generator_scope(u, GENERATOR_OPTIONS)
    needs_option(u, ("warmup",), "exclude_warmup",
                 "without it no warm-up is served: the run counts every request, from a cold start")

    b = sub.add_parser("bench", help="single-thread lookups/s per structure and dispatcher ns/request",
                       description="Micro-benchmarks (release build, thread CPU time).")
    b.add_argument("--quick", action="store_true", help="fewer lookups")
    b.add_argument("--repeats", type=repeat_count, default=3, metavar="N",
                   help="rounds over every benchmark, interleaved: figures are their median [range] (default 3)")
    add_study_options(b, Bench(), "results/bench")

    a = sub.add_parser("algorithms", help="list workers and dispatchers (the same as `list engine`)")
    add_listing_options(a, LISTING)
