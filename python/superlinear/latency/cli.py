"""``superlinear latency-sim run|gen|belatedly|bench|policies``: caching with delayed hits
(thesis ch. 2).

Every latency printed is *simulated* (the discrete-time delayed-hits model, in request-times);
the AMAT estimate is Eq. 2.1 with the miss rate of a classical (zero-delay) simulation of the
same policy; solver and simulator times are *measured* on this machine.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from superlinear.common.args import (
    EMPTY_OK,
    comma_list,
    int_list,
    non_negative_int,
    non_negative_whole,
    number,
    positive_finite,
    positive_whole,
    repeat_count,
)
from superlinear.common.bounds import check_at_most, check_memory
from superlinear.common.defaults import field_default, with_default
from superlinear.common.errors import SuperlinearError, note
from superlinear.common.listing import Listing, add_listing_options, known, name_table
from superlinear.common.rows import Row, ranged, row_spread
from superlinear.common.scope import conditional_scope, generator_scope, hidden_alias, needs_option, spelled
from superlinear.common.study import Outcome, Study, add_study_options, console, keeping
from superlinear.common.study import Progress as ProgressLine
from superlinear.latency import sim as latency
from superlinear.latency.sim import MAX_Z, Trace, TraceSpec
from superlinear.output.paths import output_file, written_atomically

#: Default cache sizes of run, belatedly and bench (objects, or % of the trace's objects).
RUN_SIZES = "1%,5%,10%"
BELATEDLY_SIZE = "5%"
BENCH_SIZE = "1%"
KIND_NOTE = ("latency: simulated, mean per request in request-times (Z = a full miss); AMAT: Eq. 2.1 from the "
             "miss rate of a classical simulation of the same policy")


#: Memory per generated request and per object, through generation and simulation (measured on
#: this machine, about 33 and 68 bytes, rounded up): checked before a trace is generated.
BYTES_PER_REQUEST = 48
BYTES_PER_OBJECT = 128


def check_trace_size(args: argparse.Namespace) -> None:
    """Refuses a generated trace this machine cannot hold, and bursts that outlast the trace (a
    mean burst or gap beyond the trace's length is one train that never ends; such traces made
    Belatedly's LP run for minutes)."""
    check_generator(args)
    per_request, per_object = BYTES_PER_REQUEST * args.requests, BYTES_PER_OBJECT * args.objects
    # The error names the flag that asks for most of it.
    what = f"--requests {args.requests:,}" if per_request >= per_object else f"--objects {args.objects:,}"
    check_memory(what, per_request + per_object)
    for flag, value in (("--burst-length", args.burst_length), ("--burst-gap", args.burst_gap)):
        check_at_most(flag, value, args.requests, f"--requests {args.requests:,}: a burst longer than the trace "
                      "never ends")


def _generate(args: argparse.Namespace) -> Trace:
    check_trace_size(args)
    return Trace.generate(_spec(args))


def _trace(args: argparse.Namespace) -> Trace:
    if args.trace:
        return Trace.read(args.trace)
    return _generate(args)


def _spec(args: argparse.Namespace) -> TraceSpec:
    return TraceSpec(requests=args.requests, objects=args.objects, bursty_fraction=args.bursty,
                     burst_length=args.burst_length, burst_gap=args.burst_gap, alpha=args.alpha, jitter=args.jitter,
                     seed=args.seed)


def _zs(args: argparse.Namespace, trace: Trace) -> list[int | None]:
    """Z values: --z list (or 'trace' for the latency column), or --latency in time units."""
    if args.latency and args.z != args.z_default:
        raise SuperlinearError("--z and --latency both set the miss latency: give one of them")
    if args.latency:
        values = []
        for part in (p.strip() for p in args.latency.split(",") if p.strip()):
            try:
                values.append(float(part))
            except ValueError:
                raise SuperlinearError(f"--latency: '{part}' is not a number") from None
        if not values or any(not (0 < v < math.inf) for v in values):
            raise SuperlinearError("--latency: give positive, finite numbers")
        zs = []
        for v in values:
            try:
                zs.append(trace.z_from_latency(v))
            except SuperlinearError as e:
                raise SuperlinearError(f"--latency {v:g}: {e}") from None
        r = trace.mean_interval
        seen: dict[int, float] = {}
        for v, z in zip(values, zs, strict=True):
            if z > MAX_Z:
                raise SuperlinearError(f"--latency {v:g}: Z = {z:.3g} request-times, at most {MAX_Z:.3g}")
            # Z is whole request-times: two latencies that round alike ran one column twice.
            if z in seen:
                raise SuperlinearError(f"--latency {seen[z]:g} and {v:g} both round to Z = {z} request-times (mean "
                                       f"interval {r:g}): give latencies at least {r:g} apart")
            seen[z] = v
        return list(zs)
    if args.z.strip() == "trace":
        if not trace.has_latencies:
            raise SuperlinearError("--z trace needs a trace with TIMESTAMP and LATENCY columns")
        trace.check_latency_column()  # before the run: its Z per object, refused as --latency is
        return [None]
    return list(int_list("--z", args.z, maximum=MAX_Z))


def _source(args: argparse.Namespace) -> dict[str, Any]:
    if args.trace:
        return {"trace": args.trace}
    return {"generated": asdict(_spec(args))}


def _progress(enabled: bool, total: int, what: str) -> Any:
    # A bar on a terminal only: elsewhere rich leaves an empty line where it was.
    if not enabled or not sys.stderr.isatty():
        return nullcontext(None)
    p = Progress(console=Console(stderr=True), transient=True)
    p.add_task(what, total=total)
    return p


def _advance(p: Any) -> None:
    if p is not None:
        p.advance(p.task_ids[0])


def _fmt_z(z: Any) -> str:
    return "trace" if z is None or z == "trace" else f"{z:,}"


@dataclass
class RunConfig:
    """``latency-sim run``: the trace, the policies, the Z values and the cache sizes."""

    args: argparse.Namespace
    trace: Trace
    names: list[str]
    zs: list[int | None]
    sizes: list[int]
    size_flag: str = "--cache-size"


class Run(Study[RunConfig]):
    """``latency-sim run``: every policy at every Z and cache size, optionally Belatedly's bound."""

    experiment = "latency-sim"

    def config_from(self, args: argparse.Namespace) -> RunConfig:
        return _run_config(args)

    def run(self, config: RunConfig, progress: ProgressLine | None) -> Outcome:
        # Said once the run goes ahead: a note never precedes a refusal (of --out, say).
        _run_notes(config.trace, config.sizes, config.size_flag)
        return _run_grid(config, progress is not None)

    def plot(self, out: Path, config: RunConfig, outcome: Outcome) -> list[Path]:
        from superlinear.latency.plots import plot_all

        return plot_all(out, outcome.rows)

    def table(self, config: RunConfig, outcome: Outcome) -> None:
        _run_tables(config, outcome.rows)


def _sizes(text: str | None, trace: Any, default: str, option: str, one: str | None = None) -> list[int]:
    """The cache sizes of ``option``; with ``one``, the error for more than one. The note for a
    size that holds every object is said by :func:`_run_notes`, once every check passed."""
    sizes = latency.parse_sizes(text, trace.objects, default, option)
    if one is not None and len(sizes) != 1:
        raise SuperlinearError(one)
    return sizes


def _run_notes(trace: Trace, sizes: Sequence[int], option: str) -> None:
    """The notes of a run that goes ahead, said after every check that can refuse it (a note
    followed by an error is two lines for one mistake): a cache size that holds every object of
    the trace (taken as asked: such a cache shows the compulsory misses alone, the same for every
    policy)."""
    over = [c for c in sizes if c > trace.objects]
    if over:
        note(f"{option} {', '.join(f'{c:,}' for c in over)}: more than the trace's "
             f"{trace.objects:,} objects, so every object fits and only the compulsory misses are left")


def _run_config(args: argparse.Namespace) -> RunConfig:
    trace = _trace(args)
    names = latency.policy_names() if args.policies is None else comma_list("--policies", args.policies)
    _check_policies("--policies", names)
    zs = _zs(args, trace)
    flag = spelled(args, "sizes", "--cache-size")
    sizes = _sizes(args.sizes, trace, RUN_SIZES, flag)
    if args.belatedly and len(trace) > args.belatedly_max:
        raise SuperlinearError(f"--belatedly: the trace has {len(trace):,} requests, more than --belatedly-max "
                               f"{args.belatedly_max:,} (Belatedly's LP grows with the trace; see the README's limits)")
    if args.belatedly:
        latency.check_rounds(args.rounds)  # before the grid, not after it
    return RunConfig(args, trace, names, zs, sizes, flag)


def _check_policies(option: str, names: list[str]) -> None:
    """``names`` known, else one line naming ``option``."""
    try:
        latency.check_policies(names)
    except SuperlinearError as e:
        raise SuperlinearError(f"{option}: {e}") from None


def _run_grid(config: RunConfig, show: bool) -> Outcome:
    args, trace, names, zs, sizes = config.args, config.trace, config.names, config.zs, config.sizes
    total = len(names) * len(zs) * len(sizes) + (len(zs) * len(sizes) if args.belatedly else 0)
    recorded = {"source": _source(args), "requests": len(trace), "objects": trace.objects, "policies": names,
                "z": [_fmt_z(z) for z in zs], "sizes": sizes, "belatedly": args.belatedly}
    rows: list[Row] = []
    with _progress(show, total, "simulating") as bar, keeping(lambda: Outcome(_vs_lru(rows), recorded)):
        def done(result: latency.SimResult) -> None:
            rows.append(result.row())
            _advance(bar)
        latency.grid(trace, names, zs, sizes, on_point=done)
        if args.belatedly:
            for c in sizes:
                for z in zs:
                    b = latency.belatedly(trace, z, c, rounds=args.rounds, seed=args.seed)
                    rows += b.rows_out()
                    _advance(bar)
    return Outcome(_vs_lru(rows), recorded)


def _vs_lru(rows: list[Row]) -> list[Row]:
    """``rows`` with each one's mean latency against LRU's at the same Z and cache size."""
    for r in rows:
        lru = next((x for x in rows if x["policy"] == "lru" and x["z"] == r["z"] and x["capacity"] == r["capacity"]),
                   None)
        r["vs_lru"] = r["mean_latency"] / lru["mean_latency"] - 1 if lru and lru["mean_latency"] else None
    return rows


def _run_tables(config: RunConfig, rows: list[Row]) -> None:
    trace, zs, sizes = config.trace, config.zs, config.sizes
    console.print(f"{len(trace):,} requests over {trace.objects:,} objects ({trace.source})")
    for c in sizes:
        t = Table(title=f"Mean latency (simulated, request-times), cache size {c:,}; in brackets: vs LRU",
                  caption=KIND_NOTE, caption_justify="left")
        t.add_column("policy")
        for z in zs:
            t.add_column(f"Z = {_fmt_z(z)}", justify="right")
        policies_here = list(dict.fromkeys(r["policy"] for r in rows if r["capacity"] == c))
        for p in policies_here:
            cells = [p]
            for z in zs:
                found = next((x for x in rows if x["policy"] == p and x["capacity"] == c and x["z"] == _zkey(z)), None)
                if found is None:
                    cells.append("—")
                    continue
                rel = f" ({100 * found['vs_lru']:+.1f}%)" if found.get("vs_lru") is not None and p != "lru" else ""
                cells.append(f"{found['mean_latency']:,.2f}{rel}")
            t.add_row(*cells)
        console.print(t)
    mid = sizes[len(sizes) // 2]
    t = Table(title=f"Hit rate is not latency: cache size {mid:,} (simulated)", caption_justify="left",
              caption="true hits, delayed hits and misses per request; AMAT = Eq. 2.1 estimate, error vs true latency")
    for col in ("policy", "Z", "hit", "delayed hit", "miss", "latency", "AMAT", "AMAT error"):
        t.add_column(col, justify="left" if col == "policy" else "right")
    for r in rows:
        if r["capacity"] != mid or r.get("hit_rate") is None:
            continue
        t.add_row(r["policy"], _fmt_z(r["z"]), f"{r['hit_rate']:.3f}", f"{r['delayed_hit_rate']:.3f}",
                  f"{r['miss_rate']:.3f}", f"{r['mean_latency']:,.2f}", f"{r['amat_latency']:,.2f}",
                  f"{100 * r['amat_error']:+.1f}%")
    console.print(t)


def _zkey(z: int | None) -> Any:
    return "trace" if z is None else z


def cmd_gen(args: argparse.Namespace) -> int:
    if args.trace:
        raise SuperlinearError("--trace has no effect in latency-sim gen (it generates a trace; the trace options "
                               "of run, belatedly and bench read one)")
    out = output_file(args.out)
    choices = None
    if args.latencies is not None:
        if args.binary:
            raise SuperlinearError("--latencies needs a text trace (the binary form holds objects only)")
        choices = int_list("--latencies", args.latencies, maximum=MAX_Z, repeats=True)
    trace = _generate(args)
    latencies = None
    if choices is not None:
        # Each object gets one of the latencies, spread by a multiplicative hash of its id.
        latencies = [choices[(o * 2654435761 % 2**32) % len(choices)] for o in range(trace.objects)]
    with written_atomically(out) as tmp:
        trace.write(tmp, binary=args.binary, latencies=latencies)
    bursty = sum(trace.bursty or [])
    # --objects is the population drawn from: a short trace requests only some of them.
    requested = trace.requested_objects
    doc = {"path": str(out), "requests": len(trace), "objects": trace.objects, "bursty_objects": bursty,
           "objects_requested": requested, "format": "binary" if args.binary else "text",
           "spec": asdict(_spec(args)), "latencies": args.latencies}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        drawn = "" if requested == trace.objects else f"drawn from {trace.objects:,}, "
        console.print(f"wrote {out}: {len(trace):,} requests of {requested:,} objects ({drawn}{bursty:,} of them "
                      f"bursty), {doc['format']}" + (f", per-object Z from {args.latencies}" if latencies else ""))
    return 0


class Belatedly(Study[argparse.Namespace]):
    """``latency-sim belatedly``: the LP lower bound and its rounding, against online policies."""

    experiment = "latency-belatedly"

    def run(self, config: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
        return _belatedly(config, progress)

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        _belatedly_table(outcome)

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"results: {path}"]


def _belatedly(args: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
    trace = _trace(args)
    zs = _zs(args, trace)
    if len(zs) != 1:
        raise SuperlinearError("belatedly: give one Z")
    z = zs[0]
    flag = spelled(args, "size", "--cache-size")
    c = _sizes(args.size, trace, BELATEDLY_SIZE, flag, one="belatedly: give one --cache-size")[0]
    if len(trace) > args.max_requests:
        raise SuperlinearError(f"the trace has {len(trace):,} requests, more than --max-requests "
                               f"{args.max_requests:,} (Belatedly's LP grows with the trace)")
    names = comma_list("--compare", args.compare) if args.compare else []
    if names:
        _check_policies("--compare", names)  # before the LP is solved, not after
    latency.check_rounds(args.rounds)
    _run_notes(trace, [c], flag)
    if progress is not None:
        progress(f"building and solving Belatedly's LP for {len(trace):,} requests")
    b = latency.belatedly(trace, z, c, rounds=args.rounds, seed=args.seed, time_limit=args.time_limit)
    rows = b.rows_out()
    for n in names:
        r = latency.simulate(trace, n, z, c, amat=False).row()
        r["vs_bound"] = r["mean_latency"] / b.lower_bound_mean - 1
        rows.append(r)
    config = {"source": _source(args), "requests": len(trace), "objects": trace.objects, "z": _fmt_z(z),
              "capacity": c, "rounds": args.rounds, "seed": args.seed, "time_limit": args.time_limit}
    if args.time_limit is not None and b.solve_s > args.time_limit:
        # HiGHS reads its limit between iterations only, so a solve can end past it (the LP is
        # then solved all the same, and the bound holds): said, not left to look as if it held.
        config["time_limit_overrun_s"] = b.solve_s - args.time_limit
        note(f"HiGHS solved the LP in {b.solve_s:.3g} s, past --time-limit {args.time_limit:g} "
             "(it reads the limit between its iterations only); the bound is that of the solved LP")
    return Outcome(rows, config, extra=(trace, z, c, b))


def _belatedly_table(outcome: Outcome) -> None:
    trace, z, c, b = outcome.extra
    rows = outcome.rows
    t = Table(title=f"Belatedly, {len(trace):,} requests, {trace.objects:,} objects, Z = {_fmt_z(z)}, cache {c:,}",
              caption="latency: simulated, mean request-times; LP bound: HiGHS optimum of the relaxation (a lower "
                      "bound on every schedule); times: measured wall clock", caption_justify="left")
    t.add_column("schedule")
    t.add_column("mean latency", justify="right")
    t.add_column("vs LP bound", justify="right")
    t.add_row("Belatedly LP bound", f"{b.lower_bound_mean:,.4f}", "—")
    t.add_row(f"Belatedly rounded ({b.rounding})", f"{b.rounded_mean:,.4f}", f"{100 * b.gap:+.2f}%")
    for r in rows[2:]:
        t.add_row(r["policy"], f"{r['mean_latency']:,.4f}", f"{100 * r['vs_bound']:+.2f}%")
    console.print(t)
    console.print(f"LP: {b.variables:,} variables, {b.rows:,} rows, {b.nonzeros:,} non-zeros, {b.intervals:,} caching "
                  f"intervals; built in {b.build_s:.2f} s, solved in {b.solve_s:.1f} s (measured, {b.solver})"
                  + ("; the LP solution is integral" if b.integral else ""))


class Bench(Study[argparse.Namespace]):
    """``latency-sim bench``: simulator speed per policy."""

    experiment = "latency-bench"

    def run(self, config: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
        return _bench(config, progress)

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        _bench_table(outcome)

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"trace generated in {outcome.config['trace_seconds_measured']:.1f} s (measured); results: {path}"]


def _bench(args: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
    names = comma_list("--policies", args.policies)
    _check_policies("--policies", names)
    zs = int_list("--z", args.z, maximum=MAX_Z)
    if len(zs) != 1:
        raise SuperlinearError("bench: give one --z")
    z = zs[0]
    t0 = time.perf_counter()
    trace = _trace(args)
    gen_s = time.perf_counter() - t0
    flag = spelled(args, "size", "--cache-size")
    c = _sizes(args.size, trace, BENCH_SIZE, flag, one="bench: give one --cache-size")[0]
    _run_notes(trace, [c], flag)
    config = {"source": _source(args), "requests": len(trace), "z": z, "capacity": c,
              "trace_seconds_measured": gen_s}
    # Rounds over every policy (interleaved, so a slow stretch of the machine touches each alike):
    # a rate is the rounds' median with their range; the simulated latency is the same each round.
    speeds: dict[str, list[latency.Speed]] = {n: [] for n in names}

    def rows() -> list[Row]:
        return [{**asdict(runs[0]), **ranged("requests_per_s", [r.requests_per_s for r in runs]),
                 "cpu_s": statistics.median(r.cpu_s for r in runs), "repeats": len(runs),
                 "mean_latency_equal": len({r.mean_latency for r in runs}) == 1,
                 "z": z, "capacity": c, "objects": trace.objects} for runs in speeds.values() if runs]

    with keeping(lambda: Outcome(rows(), config)):
        for rnd in range(args.repeats):
            for n in names:
                if progress is not None:
                    progress(f"round {rnd + 1}/{args.repeats}: {n} over {len(trace):,} requests")
                speeds[n].append(latency.speed(trace, n, z, c))
    return Outcome(rows(), config, extra=(trace, z, c))


def _bench_table(outcome: Outcome) -> None:
    trace, z, c = outcome.extra
    rows = outcome.rows
    n = rows[0]["repeats"] if rows else 1
    runs = f"median [min–max] of {n} interleaved rounds" if n > 1 else "one round"
    t = Table(title=f"Simulator speed: {len(trace):,} requests, {trace.objects:,} objects, Z = {z:,}, cache {c:,}",
              caption=escape(f"measured: one core, thread CPU time of the simulation (policy construction "
                             f"included); {runs}"), caption_justify="left")
    for col in ("policy", "M requests/s", "CPU s", "mean latency (simulated)"):
        t.add_column(col, justify="left" if col == "policy" else "right")
    for r in rows:
        t.add_row(r["policy"], row_spread(r, "requests_per_s", ",.2f", 1e-6), f"{r['cpu_s']:,.2f}",
                  f"{r['mean_latency']:,.2f}")
    console.print(t)


def _show_policies(ps: list[dict[str, Any]]) -> None:
    console.print(name_table("eviction policies (--policies)", ps,
                             [("offline", "offline"), ("latency-aware", "latency_aware")]))


LISTING = Listing("latency", "eviction policies of latency-sim", latency.policies, _show_policies)


#: Options of the trace generator: refused with --trace, which they would not change (``--seed``
#: also seeds Belatedly's rounding: see :func:`_seed_scope`; bench refuses it with --trace too).
GENERATOR_OPTIONS = ("requests", "objects", "bursty", "burst_length", "burst_gap", "alpha", "jitter")


def _seed_scope(parser: argparse.ArgumentParser) -> None:
    """``latency-sim run``: --seed with --trace seeds only Belatedly's rounding, so it is refused
    without --belatedly (the policies draw nothing). Call after the parser's ``func`` is set."""
    conditional_scope(parser, ("seed",),
                      lambda args: "with --trace and without --belatedly" if args.trace and not args.belatedly
                      else None, "it seeds a generated trace and Belatedly's rounding")


#: The generator's bounds (crates/cache generate.rs, ``TraceSpec::validate``), per flag: the
#: flag, its field, whether a value is in range, and what the range is.
GENERATOR_BOUNDS: tuple[tuple[str, str, Callable[[float], bool], str], ...] = (
    ("--bursty", "bursty", lambda v: 0 <= v <= 1, "the bursty fraction must be between 0 and 1"),
    ("--burst-length", "burst_length", lambda v: v >= 1, "the burst length must be at least 1 request"),
    ("--burst-gap", "burst_gap", lambda v: v > 0, "the gap between requests of a burst must be positive"),
    ("--alpha", "alpha", lambda v: v >= 0, "the Zipf exponent must not be negative"),
    ("--jitter", "jitter", lambda v: 0 <= v < 1, "the jitter must be in [0, 1)"),
)


def check_generator(args: argparse.Namespace) -> None:
    """The generator's numbers, each refused in one line naming its flag: the generator's own
    checks named its config field (``latency_trace config: field 'jitter': inf is not a finite
    number``) or no flag (``the jitter must be in [0, 1)``)."""
    for flag, dest, accept, rule in GENERATOR_BOUNDS:
        value = getattr(args, dest)
        if not math.isfinite(value):
            raise SuperlinearError(f"{flag} {value}: not a finite number")
        if not accept(value):
            raise SuperlinearError(f"{flag} {value:g}: {rule}")


def _trace_options(p: argparse.ArgumentParser, requests: int = 200_000, objects: int = 2_000) -> None:
    g = p.add_argument_group("trace", "a file (--trace), or a generated mix of bursty and paced objects")
    g.add_argument("--trace", metavar="FILE", help="text (OBJECT [TIMESTAMP [LATENCY]] per line) or binary SLKT trace")
    g.add_argument("--requests", type=positive_whole, default=requests, help=f"generated requests (default {requests})")
    g.add_argument("--objects", type=positive_whole, default=objects, help=f"generated objects (default {objects})")
    # The generator's own defaults, from Rust; requests and objects are each command's size.
    for flag, field, kind, text in (
        ("--bursty", "bursty_fraction", number, "share of bursty objects"),
        ("--burst-length", "burst_length", number, "mean requests per burst"),
        ("--burst-gap", "burst_gap", number, "mean steps between requests of a burst"),
        ("--alpha", "alpha", number, "Zipf exponent of object popularity"),
        ("--jitter", "jitter", number, "relative jitter of paced periods"),
        ("--seed", "seed", non_negative_int, "generator and rounding seed"),
    ):
        g.add_argument(flag, type=kind, default=field_default("latency_trace", field),
                       help=with_default(text, "latency_trace", field))


def _z_options(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--z", default=default,
                   help=f"miss latency Z in request-times, comma-separated, or 'trace' for the trace's latency "
                        "column (each object's mean latency / mean inter-request time, rounded to whole "
                        f"request-times, halves up; one that rounds to 0 is refused) (default {default})")
    p.add_argument("--latency", metavar="L,...",
                   help="miss latency in the trace's timestamp unit instead: Z = L / mean inter-request time, "
                        "rounded to whole request-times, halves up (one under half a request-time is refused)")
    p.set_defaults(z_default=default)


def register(sub: Any) -> None:
    """Adds ``latency-sim`` and its actions (``latency-sim policies`` is an alias of ``list latency``)."""
    policies = "comma-separated: " + known(latency.policy_names())
    a = sub.add_parser("latency-sim", help="caching with delayed hits: MAD, Belady-AD, Belatedly (thesis ch. 2)",
                       description="Latency-aware caching with delayed hits (thesis ch. 2). " + KIND_NOTE + ".")
    asub = a.add_subparsers(dest="latency_command", metavar="{run,gen,belatedly,bench,policies}")
    asub.required = True

    r = asub.add_parser("run", help="policies × Z × cache sizes: latency tables, result files and plots",
                        description="Simulate every policy at every Z and cache size. Writes result.json, result.csv "
                        "and plots (latency vs Z, vs cache size, AMAT vs true latency).")
    _trace_options(r)
    r.add_argument("--policies", help=policies + " (default: all)")
    _z_options(r, "10,100,1000,10000")
    r.add_argument("--cache-size", dest="sizes", metavar="SIZES",
                   help="cache sizes, comma-separated: objects or %% of objects "
                   f"(default {RUN_SIZES.replace('%', '%%')})")
    hidden_alias(r, "--sizes", dest="sizes")
    r.add_argument("--belatedly", action="store_true",
                   help="add Belatedly's LP bound and rounded schedule (small traces)")
    r.add_argument("--belatedly-max", type=positive_whole, default=50_000,
                   help="longest trace, in requests, that --belatedly takes; a longer one is refused (default 50000)")
    r.add_argument("--rounds", type=non_negative_whole, default=4,
                   help="random roundings besides the threshold ones (default 4)")
    add_study_options(r, Run(), "results/latency-run")
    generator_scope(r, GENERATOR_OPTIONS, why="it shapes a generated trace")
    needs_option(r, ("belatedly_max", "rounds"), "belatedly", "it sizes Belatedly's LP and its roundings")
    _seed_scope(r)

    g = asub.add_parser("gen", help="write a trace of bursty and paced objects",
                        description="Generate a trace: bursty objects arrive in trains, paced ones at a steady period.")
    _trace_options(g)
    g.add_argument("--out", required=True, metavar="FILE", help="trace file to write")
    g.add_argument("--binary", action="store_true", help="compact binary SLKT form (objects only)")
    g.add_argument("--latencies", metavar="Z,...", help="per-object Z: each object gets one (text: LATENCY column)")
    g.add_argument("--json", action="store_true",
                   help="print what was written (path, requests, objects, format, generator settings) as JSON "
                   "instead of one line")
    g.set_defaults(func=cmd_gen)

    b = asub.add_parser("belatedly", help="the latency-optimal bound: LP (HiGHS) and rounded schedule",
                        description="Build Belatedly's pruned flow LP (§2.4), solve it with HiGHS, round it by flow "
                        "balance and replay the schedule in the simulator.")
    _trace_options(b, requests=20_000, objects=300)
    _z_options(b, "100")
    b.add_argument("--cache-size", dest="size", metavar="SIZE",
                   help=f"cache size: objects or %% of objects (default {BELATEDLY_SIZE.replace('%', '%%')})")
    hidden_alias(b, "--size", dest="size")
    b.add_argument("--rounds", type=non_negative_whole, default=4,
                   help="random roundings besides the threshold ones (default 4)")
    compare = b.add_argument("--compare", default="lru,lru-mad,belady,belady-ad",
                             help=policies + " simulated alongside (default lru,lru-mad,belady,belady-ad; '': none)")
    setattr(compare, EMPTY_OK, True)
    # (inf was taken, and recorded in result.json as Infinity, which is not JSON.)
    b.add_argument("--time-limit", type=positive_finite,
                   help="HiGHS's time limit in seconds (default: none): a solve it stops is an error; it reads the "
                        "limit between its iterations only, so a solve can end past it (then said in a note)")
    b.add_argument("--max-requests", type=positive_whole, default=200_000, help="refuse larger traces (default 200000)")
    add_study_options(b, Belatedly(), "results/latency-belatedly")
    generator_scope(b, GENERATOR_OPTIONS, why="it shapes a generated trace")

    s = asub.add_parser("bench", help="simulator speed (requests/s) on a large trace",
                        description="Requests per second of the simulator per policy, thread CPU time (measured).")
    _trace_options(s, requests=10_000_000, objects=100_000)
    s.add_argument("--policies", default="lru,lru-mad", help=policies + " (default lru,lru-mad)")
    s.add_argument("--z", default="1000", help="Z (default 1000)")
    s.add_argument("--cache-size", dest="size", metavar="SIZE",
                   help=f"cache size: objects or %% of objects (default {BENCH_SIZE.replace('%', '%%')})")
    hidden_alias(s, "--size", dest="size")
    s.add_argument("--repeats", type=repeat_count, default=3, metavar="N",
                   help="rounds over every policy, interleaved: rates are their median [range] (default 3)")
    add_study_options(s, Bench(), "results/latency-bench")
    generator_scope(s, (*GENERATOR_OPTIONS, "seed"), why="it seeds a generated trace")

    p = asub.add_parser("policies", help="list the eviction policies")
    add_listing_options(p, LISTING)


__all__ = ["LISTING", "register"]
