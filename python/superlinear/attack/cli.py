"""``superlinear attack sim|worker|classifier|bench-queue``: algorithmic complexity attacks against
self-adjusting workers (key workers and our packet classifier), SurgeProtector's WSJF scheduling
(thesis ch. 3) and the HFFS/BBQ priority queue it runs on (ch. 4).

Every number printed says its kind: **simulated** (the G/G/1/K model, true job sizes known),
**analytic** (the thesis's bounds), **work-clocked** (a real worker's exact work units times a
per-unit cost calibrated on this machine) or **measured** (thread CPU time).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.markup import escape
from rich.table import Table

from superlinear import _native
from superlinear.attack.classifier import ClassifierStudy, plot_classifier, run_classifier_study
from superlinear.attack.studies import (
    ALL_POLICIES,
    QueueBench,
    SimStudy,
    Traffic,
    WorkerStudy,
    plot_queue_bench,
    plot_sim,
    plot_worker,
    run_queue_bench,
    run_sim_study,
    run_worker_study,
)
from superlinear.classify.workload import MAX_DEPTH, MAX_FLOWS_PER_RULE, MAX_SYNTHETIC_RULES
from superlinear.common.args import (
    floats,
    fraction,
    int_list,
    names,
    non_negative_int,
    non_negative_whole,
    positive_finite,
    positive_int_at_most,
    positive_whole,
    repeat_count,
)
from superlinear.common.bounds import beyond_trace, check_at_most, check_memory
from superlinear.common.defaults import config_defaults, field_default, with_default
from superlinear.common.errors import SuperlinearError
from superlinear.common.input_files import require_input_file
from superlinear.common.listing import Listing, add_listing_options, known
from superlinear.common.rows import Row, row_spread
from superlinear.common.scope import (
    alpha_scope,
    conditional_scope,
    generator_scope,
    hidden_alias,
    needs_option,
    spelled,
    unless_chosen,
)
from superlinear.common.study import Outcome, Progress, Study, add_study_options, console

#: HFFS bitmap widths the queue takes (a bit per bucket of a level).
HFFS_WIDTHS = range(2, 65)


def hffs_width(width: int) -> int:
    """``--width``, checked before the queue is built (one line naming the flag)."""
    if width not in HFFS_WIDTHS:
        raise SuperlinearError(f"--width {width}: the HFFS bitmap width must be between 2 and 64 bits")
    return width

if TYPE_CHECKING:
    from superlinear._native import ConfigName

#: Sizes checked before a study starts (docs/attacks.md, "Limits"). Simulated packets cost time
#: only (the simulator streams them): beyond the maximum a run takes days. Probes multiply the
#: runs and hold their jobs. The rest are bytes per unit held in memory, measured on this
#: machine and rounded up generously.
MAX_SIM_PACKETS = 1_000_000_000
MAX_PROBE = 1_000
#: Attack packets cost simulated time in proportion to their rate: the simulator's attack rates
#: (Gbps), the work-clocked studies' (fractions of the innocent rate) and the largest job (µs)
#: are capped where one point would take minutes instead of about a second.
MAX_SIM_ATTACK_GBPS = 1_000
MAX_ATTACK_FRACTION = 100
MAX_JOB_US = 1_000_000_000
U32_MAX = 2**32 - 1
MAX_PACKET_BYTES = 65_535
#: ``--pmin``/``--pmax``: a packet size, 1 to :data:`MAX_PACKET_BYTES` (crates/sched traffic.rs).
packet_bytes = positive_int_at_most(MAX_PACKET_BYTES, "bytes (the largest IP packet)")
BYTES_PER_KEY_REQUEST = 64
BYTES_PER_ITEM = 96
BYTES_PER_CLASSIFIER_PACKET = 128
BYTES_PER_QUEUED = 64
BYTES_PER_PAIR = 16


#: The least innocent load ``attack sim`` takes: the simulated time grows as 1 / load and every
#: attack packet in it is stepped (--quick took 4 s at 0.1, 23 s at 0.01; 1e-300 would take years).
MIN_SIM_LOAD = 0.01


def sim_load(text: str) -> float:
    """``attack sim --load``: a finite number of at least :data:`MIN_SIM_LOAD`."""
    v = positive_finite(text)
    if v < MIN_SIM_LOAD:
        raise argparse.ArgumentTypeError(f"at least {MIN_SIM_LOAD:g} (the simulated time grows as 1 / load, and "
                                         f"every attack packet in it is stepped), got {text}")
    return v


def finite_floats(option: str, text: str | None) -> tuple[float, ...] | None:
    """:func:`floats`, each value also finite (``inf`` met a maximum first, in words about that
    maximum)."""
    values = floats(option, text)
    for v in values or ():
        if not math.isfinite(v):
            raise SuperlinearError(f"{option}: values must be finite numbers, got {v}")
    return values


def _check_buffer(args: argparse.Namespace) -> None:
    """The queue's buffer against memory, named by its flag (the queue's own check named only
    its capacity: "queue capacity 100000000000 exceeds 357913940")."""
    check_memory(f"--buffer {args.buffer:,}", BYTES_PER_QUEUED * args.buffer)


def _check_sim_size(args: argparse.Namespace, packets: int, rates: tuple[float, ...],
                    jmaxes: tuple[float, ...]) -> None:
    _check_buffer(args)
    if args.packets:
        check_at_most("--packets", packets, MAX_SIM_PACKETS, "the simulator runs every policy at every attack rate "
                      "over them; beyond this a study takes days")
    check_at_most("--probe", args.probe, MAX_PROBE, "each probe is one more run per attack rate")
    check_at_most("--flows", args.flows, U32_MAX, "flow ids are 32-bit")
    for rate in rates:
        check_at_most("--attack-rates", rate, MAX_SIM_ATTACK_GBPS, "Gbps; the simulator steps every attack packet")
    check_at_most("--jmax", args.jmax, MAX_JOB_US, "µs")
    for j in jmaxes:
        check_at_most("--jmax-sweep", j, MAX_JOB_US, "µs")


def _sim_config(args: argparse.Namespace) -> SimStudy:
    if args.trace:
        require_input_file(args.trace, "--trace")
    packets = args.packets or (20_000 if args.quick else field_default("attack_sweep", "packets"))
    rates = finite_floats("--attack-rates", args.attack_rates)
    jmaxes = () if args.no_growth else (finite_floats("--jmax-sweep", args.jmax_sweep) or ())
    _check_sim_size(args, packets, rates or (), jmaxes)
    if args.pmin > args.pmax:
        raise SuperlinearError(f"--pmin {args.pmin} is above --pmax {args.pmax} (the innocent packet sizes are drawn "
                               "between them)")
    traffic = Traffic(packet=args.packet_size, job=args.job_size, bytes_min=args.pmin, bytes_max=args.pmax,
                      job_max=args.jmax, trace=args.trace, flows=args.flows)
    return SimStudy(
        traffic=traffic,
        policies=names("--policies", args.policies, ALL_POLICIES),
        load=args.load,
        attack_rates_gbps=rates,
        jmax_sweep=jmaxes,
        buffer=args.buffer,
        packets=packets,
        probe_jobs=args.probe,
        width=hffs_width(args.width),
        levels=args.levels,
        seed=args.seed,
    )


def _sim_tables(study: SimStudy, rows: list[Row], summary: dict[str, Any]) -> None:
    traffic = study.traffic
    t = Table(title=f"Displacement factor under each policy's optimal attack (simulated G/G/1/K, load "
                    f"{study.load:g}, r_max {summary['r_max_gbps']:.2f} Gbit/s, J_max {traffic.job_max:g} µs, "
                    f"P_min {traffic.bytes_min} B)",
              caption="DF = innocent Gbit/s displaced per attack Gbit/s, max over the swept attack rates (Eq. 3.1). "
                      "Bounds are analytic: FCFS Eq. 3.4 and FQ Eq. 3.7 are lower bounds, SJF (Thm. 2) and "
                      "WSJF (Thm. 3) upper bounds.", caption_justify="left")
    for c in ("policy", "DF (simulated)", "at r_A Gbit/s", "attack job µs", "bound (analytic)"):
        t.add_column(c, justify="left" if c == "policy" else "right")
    for policy, s in summary["policies"].items():
        b = "—" if s["bound"] is None else f"{'≥' if s['bound_kind'] == 'lower' else '≤'} {s['bound']:.3g}"
        t.add_row(policy, f"{s['displacement_factor']:.3g}", f"{s['at_attack_rate_gbps']:.3g}",
                  f"{s['attack_job_us']:.3g}", b)
    console.print(t)
    for policy, s in summary["policies"].items():
        # (A DF of no resolved rate is 0: the note on plotting says why, not this one.)
        if (s["bound_kind"] == "lower" and s["bound"] is not None and s.get("resolved", True)
                and s["displacement_factor"] < s["bound"]):
            console.print(f"note: {policy}'s simulated DF {s['displacement_factor']:.3g} is below its analytic lower "
                          f"bound {s['bound']:.3g}: the bound is for the optimal attack rate (r_A ≈ r_I·P_min/J_max), "
                          "which the swept --attack-rates do not include", markup=False, highlight=False)
    growth = [r for r in rows if r["panel"] == "growth-summary"]
    if growth:
        grid = "rates from just below the FCFS/FQ optimum (r_A ≈ r_I·P_min/J_max) up to r_max"
        same = (f"the J_max {traffic.job_max:g} µs column is the sweep of the table above, the others sweep {grid}"
                if traffic.job_max in {r["job_max_us"] for r in growth} else f"each column sweeps {grid}")
        g = Table(title="Growth with J_max / P_min (simulated DF)", caption_justify="left",
                  caption=f"DF: max over the swept attack rates; {same}.")
        jmaxes = sorted({r["job_max_us"] for r in growth})
        g.add_column("policy")
        for j in jmaxes:
            g.add_column(f"J_max {j:g} µs", justify="right")
        for policy in study.policies:
            vals = {r["job_max_us"]: r["displacement_factor"] for r in growth if r["policy"] == policy}
            g.add_row(policy, *[f"{vals[j]:.3g}" for j in jmaxes])
        console.print(g)


#: The most µs a work unit may cost (one second): beyond it the rates underflow the tables' Gbit/s.
MAX_US_PER_WORK = 1_000_000


#: The innocent packet sizes of the work-clocked studies, in bytes: the engine cuts every drawn
#: size into them (crates/sched stage/experiment.rs, ``innocent_requests``).
WORK_CLOCKED_BYTES = (64, 1500)


def _bytes_text(v: float) -> str:
    """A size as ``attack sim`` shows it (``70000``, ``10.5``)."""
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:g}"


def _check_packet_size(spec: str) -> None:
    """``--packet-size`` of the work-clocked studies: a size the DIST always or often takes
    (``const:V``, ``uniform:LO:HI``, ``bimodal:A:B:P``) must lie in :data:`WORK_CLOCKED_BYTES`, as
    ``attack sim`` refuses one outside --pmin..--pmax; the engine would cut it into the range
    without a word (tails of a spread are cut, as in the simulator). A spec the engine's parser
    refuses is left to it: its message names the problem."""
    kind, *parts = spec.strip().split(":")
    try:
        nums = [float(p) for p in parts if "_" not in p]  # Python's float takes 1_500; Rust's does not
    except ValueError:
        return
    if len(nums) != len(parts):
        return
    if not all(math.isfinite(v) for v in nums):
        return
    # The forms and their conditions as crates/sched dist.rs parses them.
    forms = {"const": len(nums) == 1 and nums[0] > 0,
             "uniform": len(nums) == 2 and 0 <= nums[0] < nums[1],
             "bimodal": len(nums) == 3 and nums[0] > 0 and nums[1] > 0 and 0 <= nums[2] <= 1}
    if not forms.get(kind, False):
        return
    fixed = nums[:2]  # const:V, uniform:LO:HI, bimodal:A:B (its third number is a probability)
    lo, hi = WORK_CLOCKED_BYTES
    for v in fixed:
        if not lo <= v <= hi:
            raise SuperlinearError(f"--packet-size: {_bytes_text(v)} bytes is outside the packet sizes {lo}..{hi} "
                                   "(the innocent packets' smallest and largest size here)")


def _work_clocked(args: argparse.Namespace) -> dict[str, Any]:
    """Options the work-clocked studies (worker, classifier) share: innocent packets, load,
    policies, buffer, µs per work unit and seed."""
    _check_buffer(args)
    _check_packet_size(args.packet_size)
    if args.us_per_work is not None:
        check_at_most("--us-per-work", args.us_per_work, MAX_US_PER_WORK,
                      "µs per work unit: at a second a unit, a worker serves less than a packet a second")
    return {"packet": args.packet_size, "load": args.load, "buffer": args.buffer, "us_per_work": args.us_per_work,
            "policies": names("--policies", args.policies, ALL_POLICIES), "seed": args.seed}


S = TypeVar("S", WorkerStudy, ClassifierStudy)


def _with_attack_rates(study: S, args: argparse.Namespace) -> S:
    fractions = finite_floats("--attack-rates", args.attack_rates)
    for f in fractions or ():
        check_at_most("--attack-rates", f, MAX_ATTACK_FRACTION, "times the innocent rate; every attack packet is "
                      "served")
    return replace(study, attack_fractions=fractions) if fractions else study


def _worker_config(args: argparse.Namespace) -> WorkerStudy:
    _native.check_algo(args.algo)
    if args.trace:
        require_input_file(args.trace, "--trace")
    adversaries = names("--adversary", args.adversary, [a[0] for a in _native.sched_catalogue()["adversaries"]])
    requests = args.requests or (20_000 if args.quick else field_default("attack_key", "requests"))
    if args.requests:
        check_memory(f"--requests {requests:,}", BYTES_PER_KEY_REQUEST * requests)
    if args.trace:
        # The worker serves the trace's first --requests keys, all of them when it holds fewer: a
        # longer --requests ran (and was recorded as) more than was served.
        keys = _native.trace_length(args.trace)
        if args.requests and args.requests > keys:
            raise beyond_trace(args.requests, args.trace, keys)
        requests = args.requests or min(requests, keys)  # the default, or the whole trace when shorter
    else:
        check_memory(f"--m {args.m:,}", BYTES_PER_ITEM * args.m)
    study = WorkerStudy(
        algo=args.algo,
        adversaries=adversaries,
        workload="trace" if args.trace else args.workload,
        m=args.m,
        alpha=args.alpha,
        trace=args.trace,
        requests=requests,
        learn=args.learn,
        **_work_clocked(args),
    )
    return _with_attack_rates(study, args)


def _worker_tables(study: WorkerStudy, rows: list[Row], summary: dict[str, Any]) -> None:
    for adv, s in summary["adversaries"].items():
        t = Table(title=f"{study.algo} worker over {s['items']:,} items vs '{adv}' adversary: innocent goodput "
                        f"(work-clocked, {s['us_per_work'] * 1e3:.3g} ns per work unit"
                        f"{' calibrated here' if s['calibrated'] else ''}; load {study.load:g} of "
                        f"{s['r_max_gbps']:.3g} Gbit/s)",
                  caption="attack rate as a fraction of the innocent rate; DF = innocent Gbit/s lost per attack "
                          "Gbit/s; fcfs = unprotected worker, wsjf = SurgeProtector (learned job sizes)",
                  caption_justify="left")
        console.print(_goodput_table(t, rows, adv, study.policies, study.attack_fractions))
        console.print("  displacement factor (max): " + ", ".join(
            f"{p} {v:.3g}" for p, v in s["displacement_factor"].items()))


def _goodput_table(t: Table, rows: list[dict[str, Any]], adversary: str, policies: Sequence[str],
                   fractions: Sequence[float], mark_unresolved: bool = False) -> Table:
    """Fills `t`: one row per attack rate, innocent Gbit/s and displacement factor per policy;
    with `mark_unresolved`, a factor from fewer than 100 attack packets is marked with *."""
    t.add_column("attack / innocent", justify="right")
    for p in policies:
        t.add_column(f"{p} Gbit/s", justify="right")
        t.add_column(f"{p} DF", justify="right")
    for f in (0.0, *fractions):
        cells = [f"{f:.3g}"]
        for p in policies:
            r = next(r for r in rows if r["adversary"] == adversary and r["policy"] == p and r["attack_fraction"] == f)
            unresolved = mark_unresolved and not r["resolved"]
            df = "—" if f == 0 else f"{r['displacement_factor']:.3g}" + ("*" if unresolved else "")
            cells += [f"{r['goodput_gbps']:.3f}", df]
        t.add_row(*cells)
    return t


def _classifier_config(args: argparse.Namespace) -> ClassifierStudy:
    cat = _native.sched_catalogue()
    if args.algo not in cat["classifier_algos"]:
        known = ", ".join(cat["classifier_algos"])
        raise SuperlinearError(f"--algo: unknown classifier '{args.algo}' (known: {known})")
    for option, path in (("--rules", args.rules), ("--trace", args.trace)):
        if path:
            require_input_file(path, option)
    if args.trace and not args.rules:
        raise SuperlinearError("--trace needs --rules (the rules the trace is classified against)")
    if args.packets:
        check_memory(f"--packets {args.packets:,}", BYTES_PER_CLASSIFIER_PACKET * args.packets)
    check_at_most("--attack-bytes", args.attack_bytes, MAX_PACKET_BYTES, "an IP packet's largest size")
    if args.attack_bytes < WORK_CLOCKED_BYTES[0]:
        raise SuperlinearError(f"--attack-bytes {args.attack_bytes}: at least {WORK_CLOCKED_BYTES[0]} (the smallest "
                               "Ethernet frame, as for the innocent packets)")
    check_at_most("--chains", args.chains, MAX_SYNTHETIC_RULES, "synthetic rules are numbered with 16 bits")
    # The generator's own bounds (crates/classify generate.rs), named by this command's flags.
    check_at_most("--depth", args.depth, MAX_DEPTH, "dependencies per chain")
    check_at_most("--flows", args.flows, MAX_FLOWS_PER_RULE, "each flow is a source port from 1024 up")
    study = ClassifierStudy(
        rules=args.rules,
        trace=args.trace,
        rule_format=args.rule_format,
        actions=args.actions,
        default_action=args.default_action,
        trace_format=args.trace_format,
        chains=args.chains,
        depth=args.depth,
        flows_per_chain=args.flows,
        alpha=args.alpha,
        catch_all=args.catch_all,
        packets=args.packets or (20_000 if args.quick else None),
        algo=args.algo,
        estimator=args.estimator,
        learn=args.learn,
        adversaries=names("--adversary", args.adversary, [a[0] for a in cat["classifier_adversaries"]]),
        attack_bytes=args.attack_bytes,
        **_work_clocked(args),
    )
    return _with_attack_rates(study, args)


def _classifier_tables(study: ClassifierStudy, rows: list[Row], summary: dict[str, Any]) -> None:
    w = summary["workload"]
    source = f"{study.rules}" + (f" + {study.trace}" if study.trace else " + generated headers") if study.rules \
        else f"synthetic: {study.chains} chains of depth {study.depth}" + (" + catch-all" if study.catch_all else "")
    console.print(f"[bold]{study.algo}[/bold] classifier: {w['rules']:,} rules ({source}), {w['packets']:,} innocent "
                  f"packets, {w['dependency_edges']:,} dependency edges, longest chain {w['max_dependency_depth']}")
    for adv, s in summary["adversaries"].items():
        calibrated = " calibrated here" if s["calibrated"] else ""
        targets = ("the default policy (no rule matches)" if s["target_rules"] == [-1] else
                   f"{s['targets']} target rule{'s' if s['targets'] != 1 else ''}, mean chain "
                   f"{s['target_depth_mean']:.1f}")
        t = Table(title=f"'{adv}' adversary ({targets}): innocent goodput (work-clocked, "
                        f"{s['us_per_work'] * 1e3:.3g} ns per rule compared{calibrated}"
                        f"; load {study.load:g} of {s['r_max_gbps']:.3g} Gbit/s)",
                  caption=f"DF = innocent bits lost per attack bit; fcfs = unprotected, wsjf = SurgeProtector "
                          f"({study.estimator} estimator). Work probe (exact): {s['probe_attack_work']:.0f} rules "
                          f"compared per attack packet vs {s['probe_innocent_work']:.1f} per innocent packet.",
                  caption_justify="left")
        console.print(_goodput_table(t, rows, adv, study.policies, study.attack_fractions, mark_unresolved=True))
        dfs = ", ".join(f"{p} {v:.3g}" for p, v in s["displacement_factor"].items())
        console.print(f"  displacement factor (max over resolved rates; * = fewer than 100 attack packets): {dfs}")


class BenchQueue(Study[QueueBench]):
    """``attack bench-queue``: enqueue+dequeue pairs per second of each priority queue."""

    experiment = "queue-bench"

    def config_from(self, args: argparse.Namespace) -> QueueBench:
        return _queue_bench_config(args)

    def run(self, config: QueueBench, progress: Progress | None) -> Outcome:
        return Outcome(run_queue_bench(config, progress), {"study": "queue-bench", **asdict(config)})

    def plot(self, out: Path, config: QueueBench, outcome: Outcome) -> list[Path]:
        return plot_queue_bench(out, outcome.rows)

    def table(self, config: QueueBench, outcome: Outcome) -> None:
        _queue_bench_table(config, outcome.rows)


def _queue_bench_config(args: argparse.Namespace) -> QueueBench:
    cat = _native.sched_catalogue()
    flag = spelled(args, "sizes", "--queue-size")
    sizes = int_list(flag, args.sizes)
    pairs = args.pairs or (300_000 if args.quick else 1_000_000)
    check_memory(f"{flag} {max(sizes):,}", BYTES_PER_QUEUED * max(sizes))
    check_memory(f"--pairs {pairs:,}", BYTES_PER_PAIR * pairs)
    return QueueBench(
        sizes=sizes,
        pairs=pairs,
        queues=names("--queues", args.queues, cat["queues"]),
        patterns=names("--patterns", args.patterns, [p[0] for p in cat["patterns"]]),
        width=hffs_width(args.width),
        levels=args.levels,
        seed=args.seed,
        repeats=args.repeats,
    )


def _queue_bench_table(bench: QueueBench, rows: list[Row]) -> None:
    runs = f"median [min–max] of {bench.repeats} interleaved rounds" if bench.repeats > 1 else "one round"
    t = Table(title=escape(f"M enqueue+dequeue pairs/s, one core, measured (thread CPU time; {runs}); HFFS "
                           f"{bench.width}-bit × {bench.levels} levels = {bench.width ** bench.levels:,} priorities"),
              caption="hold model: n elements queued, each pair = one push + one pop-min (pop-max for drop-max); "
                      "× heap: HFFS over the binary heap", caption_justify="left")
    t.add_column("n", justify="right")
    t.add_column("pattern")
    for q in bench.queues:
        t.add_column(q, justify="right")
    if "hffs" in bench.queues and "binary-heap" in bench.queues:
        t.add_column("× heap", justify="right")
    for n in bench.sizes:
        for pattern in bench.patterns:
            cells = [f"{n:,}", pattern]
            by_q = {r["queue"]: r for r in rows if r["n"] == n and r["pattern"] == pattern}
            for q in bench.queues:
                cells.append(row_spread(by_q[q], "pairs_per_s", ".2f", 1e-6) if q in by_q else "—")
            if "hffs" in bench.queues and "binary-heap" in bench.queues:
                h = by_q.get("hffs", {}).get("vs_binary_heap")
                cells.append(f"{h:.1f}" if h else "—")
            t.add_row(*cells)
    console.print(t)


@dataclass
class AttackStudy(Study[Any]):
    """An attack study: its config from the arguments, a run that returns rows and a summary
    (kept in ``result.json``), its plots and its tables."""

    experiment: str
    label: str
    build: Callable[[argparse.Namespace], Any]
    runner: Callable[[Any, Progress | None], tuple[list[Row], dict[str, Any]]]
    plotter: Callable[[Path, Any, list[Row]], list[Path]]
    tables: Callable[[Any, list[Row], dict[str, Any]], None]

    def config_from(self, args: argparse.Namespace) -> Any:
        return self.build(args)

    def run(self, config: Any, progress: Progress | None) -> Outcome:
        rows, summary = self.runner(config, progress)
        return Outcome(rows, {"study": self.label, **asdict(config)}, summary)

    def plot(self, out: Path, config: Any, outcome: Outcome) -> list[Path]:
        return self.plotter(out, config, outcome.rows)

    def table(self, config: Any, outcome: Outcome) -> None:
        self.tables(config, outcome.rows, outcome.summary or {})


SIM = AttackStudy("attack-sim", "sim", _sim_config, run_sim_study, lambda out, _, rows: plot_sim(out, rows),
                  _sim_tables)
WORKER = AttackStudy("attack-worker", "worker", _worker_config, run_worker_study,
                     lambda out, study, rows: plot_worker(out, rows, study.algo), _worker_tables)
CLASSIFIER = AttackStudy("attack-classifier", "classifier", _classifier_config, run_classifier_study,
                         lambda out, study, rows: plot_classifier(out, rows, study.algo), _classifier_tables)


def _attack_doc() -> dict[str, Any]:
    cat = _native.sched_catalogue()
    return {"policies": _native.sched_policies(),
            "adversaries": [{"name": a, "summary": s} for a, s in cat["adversaries"]],
            "classifier_adversaries": [{"name": a, "summary": s} for a, s in cat["classifier_adversaries"]],
            "queues": cat["queues"], "patterns": [{"name": a, "summary": s} for a, s in cat["patterns"]]}


def _show_attack(doc: dict[str, Any]) -> None:
    for section in ("policies", "adversaries", "classifier_adversaries", "patterns"):
        console.print(f"[bold]{section}[/bold]")
        for e in doc[section]:
            console.print(f"  {e['name']:<14} {e['summary']}")
    console.print(f"[bold]queues[/bold]  {', '.join(doc['queues'])}")


LISTING = Listing("attack", "scheduling policies, adversaries, priority queues and their patterns", _attack_doc,
                  _show_attack)


def _work_clocked_options(p: argparse.ArgumentParser, config: ConfigName, policies: str, work_unit: str,
                          rate_flags: list[str]) -> None:
    """The options of :func:`_work_clocked` and the attack rates, shared by ``worker`` and ``classifier``
    (``config`` names the study's config, whose defaults the options take)."""
    d = config_defaults(config)
    lo, hi = WORK_CLOCKED_BYTES
    p.add_argument("--packet-size", default=d["packet"], metavar="DIST",
                   help=f"innocent packet bytes, {lo} to {hi}: const:V, uniform:LO:HI, exp:MEAN, normal:MEAN:SD, "
                        f"lognormal:MEDIAN:SIGMA, bimodal:A:B:P (a spread's tails are cut to {lo}..{hi}; default "
                        f"{d['packet']})")
    p.add_argument("--load", type=positive_finite, default=d["load"],
                   help=with_default("innocent load of the worker", config, "load"))
    p.add_argument(*rate_flags, dest="attack_rates", metavar="FRACTION,...",
                   help="attack rates as fractions of the innocent rate (default 9 from 1e-4 to 1)")
    p.add_argument("--policies", default=",".join(d["policies"]), help=with_default(policies, config, "policies"))
    p.add_argument("--buffer", type=positive_whole, default=d["buffer"],
                   help=with_default("buffer in packets", config, "buffer"))
    p.add_argument("--us-per-work", type=positive_finite, help=f"µs per {work_unit} (default: calibrate here)")
    p.add_argument("--seed", type=non_negative_int, default=d["seed"],
                   help=with_default("seed of the generated innocent traffic and packet sizes", config, "seed"))
    p.add_argument("--quick", action="store_true", help="fewer packets")


#: The scheduling policies built on the HFFS queue, whose --width and --levels size it
#: (crates/sched/src/schedulers: sjf.rs, wsjf.rs, wsjf_inorder.rs; fcfs and fq take neither).
HFFS_POLICIES = frozenset({"sjf", "wsjf", "wsjf-inorder"})


def register(sub: Any) -> None:
    """Adds ``attack`` and its studies (``attack policies`` is an alias of ``list attack``)."""
    policies = "comma-separated: " + known(ALL_POLICIES)
    cat = _native.sched_catalogue()
    classifiers = known(cat["classifier_algos"])
    adversaries = known(a[0] for a in cat["adversaries"])
    classifier_adversaries = known(a[0] for a in cat["classifier_adversaries"])
    a = sub.add_parser("attack", help="algorithmic complexity attacks, SurgeProtector (WSJF) and the HFFS queue",
                       description="Attacks on self-adjusting workers and their mitigation by SurgeProtector's "
                       "WSJF scheduling on an HFFS/BBQ priority queue (thesis ch. 3 and 4).")
    asub = a.add_subparsers(dest="attack_command", metavar="{sim,worker,classifier,bench-queue,policies}")
    asub.required = True

    s = asub.add_parser("sim", help="simulate every policy under its optimal attack: goodput and displacement factor",
                        description="Event-driven G/G/1/K simulation (thesis §3.6.2): innocent traffic at a given "
                        "load plus the optimal adversary of each policy (FCFS/FQ: P_min packets with J_max jobs; "
                        "SJF, WSJF: Eqs. 3.8, 3.9 solved by bisection), swept over attack rates; then the "
                        "displacement factor against J_max / P_min. Sizes in bytes, job sizes in µs, rates in Gbit/s.")
    s.add_argument("--policies", default=",".join(ALL_POLICIES), help=policies + " (default: all)")
    sweep = config_defaults("attack_sweep")
    s.add_argument("--packet-size", default=sweep["packet"], metavar="DIST",
                   help=with_default("innocent packet bytes: const:V, uniform:LO:HI, exp:MEAN, normal:MEAN:SD, "
                                     "lognormal:MEDIAN:SIGMA, bimodal:A:B:P", "attack_sweep", "packet"))
    s.add_argument("--job-size", default=sweep["job"], metavar="DIST",
                   help=with_default("innocent job µs, same forms", "attack_sweep", "job"))
    s.add_argument("--pmin", type=packet_bytes, default=sweep["bytes_min"],
                   help=with_default("smallest packet, bytes", "attack_sweep", "bytes_min"))
    s.add_argument("--pmax", type=packet_bytes, default=sweep["bytes_max"],
                   help=with_default("largest packet, bytes", "attack_sweep", "bytes_max"))
    s.add_argument("--jmax", type=positive_finite, default=sweep["job_max"],
                   help=with_default("largest job, µs", "attack_sweep", "job_max"))
    s.add_argument("--trace", metavar="FILE", help="innocent (BYTES JOB_US) pairs, one per line, instead of DISTs")
    s.add_argument("--flows", type=positive_whole, default=sweep["flows"],
                   help=with_default("innocent flows", "attack_sweep", "flows"))
    s.add_argument("--load", type=sim_load, default=sweep["load"],
                   help=with_default("innocent load r_I / r_max", "attack_sweep", "load"))
    s.add_argument("--attack-rates", metavar="GBPS,...", help="attack rates (default: 17 from 1e-4 to 1 × r_max)")
    s.add_argument("--jmax-sweep", default="5,10,20,50", metavar="US,...",
                   help="J_max values for the growth panel, comma-separated µs (default 5,10,20,50)")
    s.add_argument("--no-growth", action="store_true", help="skip the J_max growth panel")
    s.add_argument("--buffer", type=positive_whole, default=sweep["buffer"],
                   help=with_default("buffer K in packets", "attack_sweep", "buffer"))
    s.add_argument("--packets", type=positive_whole,
                   help=f"innocent packets per run (default {sweep['packets']}, quick 20000)")
    s.add_argument("--probe", type=non_negative_whole, default=sweep["probe_jobs"], metavar="N",
                   help=with_default("also try N other attack job sizes per rate and keep the worst", "attack_sweep",
                                     "probe_jobs"))
    s.add_argument("--width", type=positive_whole, default=sweep["width"],
                   help=with_default("HFFS bitmap width", "attack_sweep", "width"))
    s.add_argument("--levels", type=positive_whole, default=sweep["levels"],
                   help=with_default("HFFS levels", "attack_sweep", "levels"))
    s.add_argument("--seed", type=non_negative_int, default=sweep["seed"],
                   help=with_default("seed of the generated innocent traffic", "attack_sweep", "seed"))
    s.add_argument("--quick", action="store_true", help="fewer packets")
    add_study_options(s, SIM, "results/attack-sim")
    generator_scope(s, ("packet_size", "job_size", "pmax"), why="it shapes generated innocent traffic")
    generator_scope(s, ("jmax_sweep",), source="no_growth", why="it sets the growth panel's J_max values")
    conditional_scope(s, ("width", "levels"), lambda args: unless_chosen(args.policies, HFFS_POLICIES, "--policies"),
                      "it sizes the HFFS queue of " + ", ".join(sorted(HFFS_POLICIES)))

    w = asub.add_parser("worker", help="attack a real worker (`list engine`) with and without SurgeProtector",
                        description="One worker from the core registry serves innocent keys at a given load; an "
                        "adversary adds minimum-size packets (deep: the last item; rotate[:N]: round robin over "
                        "the N least popular items, which keeps defeating move-to-front; absent: keys the worker "
                        "does not hold, a full scan like a classifier's catch-all rule). Compares FCFS (unprotected) "
                        "with WSJF on the HFFS queue (SurgeProtector, job sizes learned per item). Real work; "
                        "time is work-clocked.")
    key = config_defaults("attack_key")
    w.add_argument("--algo", default=key["algo"], help=f"worker (default {key['algo']}; see `superlinear list engine`)")
    w.add_argument("--adversary", default="rotate,absent",
                   help=f"comma-separated: {adversaries}; rotate takes :N (default rotate,absent)")
    w.add_argument("--workload", choices=["zipf", "uniform"], default=key["workload"],
                   help=with_default("popularity of the generated innocent keys", "attack_key", "workload"))
    w.add_argument("--m", type=positive_whole, default=key["m"], help=with_default("items", "attack_key", "m"))
    w.add_argument("--alpha", type=positive_finite, default=key["alpha"],
                   help=with_default("zipf exponent", "attack_key", "alpha"))
    w.add_argument("--trace", metavar="FILE", help="innocent key trace (as for `superlinear run`)")
    w.add_argument("--requests", type=positive_whole,
                   help=f"innocent packets (default {key['requests']}, quick 20000)")
    w.add_argument("--learn", choices=["last", "max", "ewma"], default=key["learn"],
                   help=with_default("how a learned job size follows observations", "attack_key", "learn"))
    _work_clocked_options(w, "attack_key", policies, "work unit", ["--attack-rates"])
    add_study_options(w, WORKER, "results/attack-worker")
    generator_scope(w, ("workload", "m", "alpha"))
    alpha_scope(w, key["workload"])

    c = asub.add_parser("classifier", help="attack our MRF packet classifier with and without SurgeProtector",
                        description="One MRF classifier worker classifies innocent packets for real; an adversary "
                        "adds minimum-size packets (deep: the lowest-priority rule with the longest dependency "
                        "chain; rotate[:N]: round robin over the N least-used rules, longest chains first, which "
                        "keeps defeating move-forward; catch-all: packets only the final catch-all rule or the "
                        "default policy matches). Compares FCFS (unprotected) with WSJF on the HFFS queue "
                        "(SurgeProtector: job sizes from the flow's rule and its current position in the MRF order, "
                        "drop-max when full). Reports innocent goodput and the displacement factor (innocent bits "
                        "lost per attack bit). Without --rules it generates the paper's dependency chains with a "
                        "catch-all rule. Real work; time is work-clocked.")
    c.add_argument("--rules", metavar="FILE", help="rule file (ClassBench, native, nft); default: synthetic chains")
    c.add_argument("--trace", metavar="FILE",
                   help="innocent packets (ClassBench, pcap, pcapng, binary); default with --rules: headers "
                        "generated inside the rules")
    cd = config_defaults("attack_classifier")
    c.add_argument("--rule-format", default=cd["rule_format"],
                   help=with_default("auto, classbench, native, nft", "attack_classifier", "rule_format"))
    c.add_argument("--actions", default=cd["actions"],
                   help=with_default("actions of ClassBench rules: accept or random[:DROP_FRACTION[:SEED]]",
                                     "attack_classifier", "actions"))
    c.add_argument("--default", dest="default_action", default=cd["default_action"],
                   help=f"default policy where the file sets none (default {cd['default_action']})")
    hidden_alias(c, "--default-action", dest="default_action")
    c.add_argument("--trace-format", default=cd["trace_format"],
                   help=with_default("auto, classbench, pcap, pcapng, binary", "attack_classifier", "trace_format"))
    c.add_argument("--chains", type=positive_whole, default=cd["chains"],
                   help=with_default("synthetic: dependency chains", "attack_classifier", "chains"))
    c.add_argument("--depth", type=non_negative_whole, default=cd["depth"],
                   help=with_default("synthetic: dependencies per chain", "attack_classifier", "depth"))
    c.add_argument("--flows", type=positive_whole, default=cd["flows_per_chain"],
                   help=with_default("synthetic: innocent flows per chain", "attack_classifier", "flows_per_chain"))
    c.add_argument("--alpha", type=positive_finite, default=cd["alpha"],
                   help=with_default("synthetic: Zipf popularity", "attack_classifier", "alpha"))
    c.add_argument("--catch-all", type=fraction, default=cd["catch_all"],
                   help=f"synthetic: innocent share to the catch-all rule (default {cd['catch_all']:g}; "
                        "0: no catch-all rule)")
    c.add_argument("--packets", type=positive_whole,
                   help="innocent packets (default: the whole trace, or "
                        f"{field_default('classify_load', 'generate')} generated; quick 20000)")
    c.add_argument("--algo", default=cd["algo"], help=f"classifier: {classifiers} (default {cd['algo']})")
    c.add_argument("--adversary", default="rotate,catch-all",
                   help=f"comma-separated: {classifier_adversaries}; rotate takes :N (default rotate,catch-all)")
    c.add_argument("--estimator", choices=["position", "learned", "oracle"], default=cd["estimator"],
                   help="SurgeProtector's job size for a flow it has seen: its rule's current position (default), "
                        "the work learned per rule, or the exact work (oracle)")
    c.add_argument("--learn", choices=["last", "max", "ewma"], default=cd["learn"],
                   help=f"how learned per-rule work follows observations (--estimator learned; default {cd['learn']})")
    c.add_argument("--attack-bytes", type=positive_whole, default=cd["attack_bytes"],
                   help=with_default("attack packet bytes", "attack_classifier", "attack_bytes"))
    _work_clocked_options(c, "attack_classifier", policies, "rule compared", ["--attack-rates", "--attack-rate"])
    add_study_options(c, CLASSIFIER, "results/attack-classifier")
    generator_scope(c, ("chains", "depth", "flows", "alpha", "catch_all"), source="rules",
                    why="it shapes the synthetic rule set")
    needs_option(c, ("rule_format", "actions", "default_action"), "rules",
                 {"rule_format": "it says how to read a --rules file",
                  "actions": "it names the actions of ClassBench filters in a --rules file",
                  "default_action": "it is the default policy of a --rules file that sets none"})
    needs_option(c, ("trace_format",), "trace", "it says how to read a --trace file")
    conditional_scope(c, ("learn",), lambda args: None if args.estimator == "learned"
                      else f"with --estimator {args.estimator}", "it is for --estimator learned")
    from superlinear.classify.cli import actions_scope

    actions_scope(c)

    b = asub.add_parser("bench-queue", help="HFFS queue vs binary heap, B-tree and min-max heap (pairs/s)",
                        description="Enqueue+dequeue pairs per second on one core with n elements queued, per "
                        "priority pattern (including each heap's worst case). Measured, thread CPU time.")
    b.add_argument("--queue-size", dest="sizes", default="1000,10000,100000,1000000", metavar="SIZES",
                   help="elements queued, comma-separated (default 1000,10000,100000,1000000)")
    hidden_alias(b, "--sizes", dest="sizes")
    b.add_argument("--pairs", type=positive_whole, help="timed pairs per queue (default 1,000,000; quick 300,000)")
    queues, patterns = cat["queues"], [p[0] for p in cat["patterns"]]
    b.add_argument("--queues", default=",".join(queues), help=f"comma-separated: {known(queues)} (default: all)")
    b.add_argument("--patterns", default=",".join(patterns),
                   help=f"comma-separated: {known(patterns)} (default: all)")
    b.add_argument("--width", type=positive_whole, default=64, help="HFFS bitmap width in bits (default 64; 2 to 64)")
    b.add_argument("--levels", type=positive_whole, default=2, help="HFFS levels (default 2: 4096 priorities)")
    b.add_argument("--seed", type=non_negative_int, default=1,
                   help="seed of the random, bimodal and drop-max priorities (default 1)")
    b.add_argument("--quick", action="store_true", help="fewer pairs")
    b.add_argument("--repeats", type=repeat_count, default=3, metavar="N",
                   help="rounds over every queue, pattern and size, interleaved: rates are their median [range] "
                   "(default 3)")
    add_study_options(b, BenchQueue(), "results/queue-bench")
    conditional_scope(b, ("width", "levels"), lambda args: unless_chosen(args.queues, {"hffs"}, "--queues"),
                      "it sizes the HFFS queue (hffs)")

    p = asub.add_parser("policies", help="list scheduling policies, adversaries, queues and patterns")
    add_listing_options(p, LISTING)


__all__ = ["LISTING", "register"]
