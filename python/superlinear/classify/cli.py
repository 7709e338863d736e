"""``superlinear classify``: run the packet classifier on your rules and traffic (static list or
MRF, k workers behind RSS or the rule-aware dispatcher), check it against brute force, benchmark
it on ClassBench, generate the paper's synthetic rule sets and traces, convert rule files."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from rich.markup import escape
from rich.table import Table

from superlinear import _native
from superlinear.classify.compare import PEER_MIN_PACKETS_PER_S, PEER_SETUP_S, cmd_compare, peer_timeout
from superlinear.classify.workload import (
    BYTES_PER_PACKET,
    CLASSBENCH_SETS,
    DEFAULT_PACKETS,
    MAX_DEPTH,
    MAX_FLOWS_PER_RULE,
    MAX_SYNTHETIC_RULES,
    PacketWorkloadSpec,
    check_packet_count,
    load,
)
from superlinear.common.args import (
    comma_list,
    duration_seconds,
    fraction,
    non_negative_int,
    positive_int,
    positive_int_at_most,
    repeat_count,
)
from superlinear.common.bounds import MAX_WORKERS, check_memory
from superlinear.common.defaults import config_defaults
from superlinear.common.errors import SuperlinearError, note
from superlinear.common.interrupt import interruptible
from superlinear.common.listing import Listing, known, name_table, show_listing
from superlinear.common.progress import progress_bar
from superlinear.common.rows import Row, slowest_worker_text
from superlinear.common.scope import OptionScope, hidden_alias, needs_option, spelled
from superlinear.common.study import Outcome, Study, console, run_study
from superlinear.common.study import Progress as ProgressLine
from superlinear.experiments.repeats import interleaved_rounds, median_run, spread
from superlinear.output.paths import output_file, refuse_stdout, written_atomically

ACTIONS = ("run", "bench", "compare", "gen-rules", "gen-trace", "convert", "algorithms")
KINDS = ("projected = serial dispatcher CPU time + slowest worker's own CPU time; measured = wall clock with real "
         "threads (only k ≤ cores); work = rules compared (exact); entries moved = MRF's upkeep, positions rewritten "
         "by moves plus dependency- and same-action-list entries read (exact; 0 for the static list).")


def _workload(args: argparse.Namespace) -> Any:
    if args.rules:
        cfg = {"rule_format": args.rule_format, "actions": args.actions, "default_action": args.default,
               "trace_format": args.trace_format, "generate": (args.packets or DEFAULT_PACKETS) + args.warmup,
               "seed": args.seed}
        if not args.trace or args.packets:
            # Generated, or the trace replayed to --packets plus the warm-up: sized here. A trace
            # alone is as long as it is, its warm-up taken from its start (checked below).
            check_packet_count(args.packets or DEFAULT_PACKETS, args.warmup, given=bool(args.packets))
        w = _native.PacketWorkload.load(args.rules, args.trace, cfg)
        if args.trace and args.packets:
            w.replay(args.packets + args.warmup)
        elif args.trace and args.warmup >= w.packets:
            raise SuperlinearError(f"--warmup {args.warmup:,}: {args.trace} holds {w.packets:,} packets, nothing left "
                                   f"to count after the warm-up (give --warmup below {w.packets:,}, or --packets N to "
                                   "replay the trace to N packets after it)")
        w.calibrate(args.calibration)
        return w
    if args.trace:
        raise SuperlinearError("--trace needs --rules (the rule set to classify against)")
    spec = PacketWorkloadSpec(kind="synthetic", synthetic_rules=args.synthetic_rules, depth=args.depth,
                              flows_per_rule=args.flows_per_rule, catch_all=args.catch_all,
                              packets=args.packets or 0, seed=args.seed, calibration=args.calibration,
                              warmup=args.warmup)  # 0 packets: the default count (load says so in errors)
    return load(spec)




def check_workers(workers: int, rules: int, packets: int, flag: str = "--k", worker_bytes: int = 0) -> None:
    """Refuses worker counts the dispatchers cannot name, the packets cannot keep busy (a worker
    without a packet measures nothing) or this machine cannot hold: each worker holds
    ``worker_bytes`` of its own (its structures and per-rule counters, counted by the core; at
    least an order entry, a prefilter key and an order label per rule, 20 bytes, where not given),
    and every packet is copied into its worker's stream."""
    if workers > MAX_WORKERS:
        raise SuperlinearError(f"{flag} {workers:,}: at most {MAX_WORKERS:,} (the RSS indirection table "
                               "names workers with 16 bits)")
    if workers > packets:
        raise SuperlinearError(f"{flag} {workers:,}: more workers than the {packets:,} packets to classify (give "
                               "--packets at least k)")
    per_worker = max(float(worker_bytes), 20.0 * rules) + 4096.0
    check_memory(f"{flag} {workers:,} over {rules:,} rules and {packets:,} packets",
                 per_worker * workers + BYTES_PER_PACKET * packets)


def cmd_run(args: argparse.Namespace) -> int:
    w = _workload(args)
    info = w.info()
    if args.updates:
        return cmd_updates(args, w, info)
    check_workers(args.workers, info["rules"], info["packets"], spelled(args, "workers", "--k"),
                  w.worker_bytes(args.algo, args.front))
    if args.algo.startswith("rule-cache") and args.front >= info["rules"]:
        note(f"--front {args.front:,} holds all {info['rules']:,} rules: the front never evicts "
             "(the tuple-space search behind it serves the packets whose rule is not in it yet)")
    modes = ["projected"] + (["measured"] if not args.no_measure else [])
    config = {"algo": args.algo, "dispatch": args.dispatch, "k": args.workers, "modes": modes, "stats": True,
              "window": args.window, "seed": args.seed, "warmup": args.warmup, "front": args.front,
              "dispatchers": args.dispatchers}
    runs = [interruptible(lambda: w.run(config)) for _ in range(args.repeats)]
    raw = runs[0]
    median, times = median_run(runs)
    p, m = median["projected"], median["measured"]
    assert p is not None
    walls = [r["measured"]["wall_ns"] for r in runs if r["measured"] and r["measured"]["wall_ns"]]
    measured_runs = [p["requests"] * 1e3 / w for w in walls]
    mpps = p["requests"] * 1e3 / max(p["projected_ns"], 1)
    matches = list(raw["rule_matches"])  # per rule, all workers together
    default_hits = sum(s["default_hits"] for s in raw["stats"])
    doc: dict[str, Any] = {"rules_file": args.rules, "trace_file": args.trace, "algo": args.algo,
                           "dispatch": raw["dispatch"], "k": args.workers, "info": info, "cores": raw["cores"],
                           "warmup": args.warmup, "dispatchers": args.dispatchers, "measure_asked": not args.no_measure,
                           "repeats": args.repeats, "mpps_projected": mpps,
                           "mpps_projected_runs": [p["requests"] * 1e3 / max(t, 1) for t in times],
                           # The median of the measured runs, as the text shows it (the median
                           # run is the projection's, whose own measured rate can be any of them).
                           "mpps_measured": statistics.median(measured_runs) if measured_runs else None,
                           "mpps_measured_runs": measured_runs,
                           "projected": p, "measured": m, "work_per_packet": p["work_total"] / max(p["requests"], 1),
                           "entries_moved_per_packet": (p["entries_moved_total"] or 0) / max(p["requests"], 1),
                           "load_imbalance": p["load_imbalance"], "work_imbalance": p["work_imbalance"],
                           "workers": [{k: v for k, v in s.items() if k != "matches"} for s in raw["stats"]],
                           "rule_matches": matches, "default_hits": default_hits, "kinds": KINDS}
    if args.check:
        doc["check"] = w.check(args.algo, args.dispatch, args.workers, args.seed, args.front)
        doc["check"].pop("matches", None)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        _print_run(doc, args.top)
    if args.check and doc["check"]["mismatches"]:
        return 1
    return 0


#: Options of a plain run that a run with --updates does not use (it classifies once, in trace
#: order, with no timing, per-worker statistics or warm-up).
NOT_WITH_UPDATES = frozenset({"no_measure", "window", "top", "warmup", "repeats", "dispatchers"})


def cmd_updates(args: argparse.Namespace, w: Any, info: dict[str, Any]) -> int:
    """``classify --updates FILE``: the rule changes of FILE published while the packets flow,
    each worker switching at its next packet; with --check, every verdict against brute-force
    first match over the rule set in force at that packet."""
    check_workers(args.workers, info["rules"], info["packets"], spelled(args, "workers", "--k"),
                  w.worker_bytes(args.algo, args.front, stats=False))
    cfg = {"rule_format": "auto", "actions": args.actions, "default_action": args.default, "generate": 1,
           "seed": args.seed}
    report = interruptible(lambda: w.run_updates(args.updates, cfg, args.algo, args.dispatch, args.workers,
                                                 args.seed, args.check, args.front))
    doc = {"rules_file": args.rules, "trace_file": args.trace, "updates_file": args.updates, "algo": args.algo,
           "dispatch": args.dispatch, "k": args.workers, **report}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        console.print(f"{args.algo} behind {args.dispatch}, k = {args.workers}: {report['packets']:,} packets, "
                      f"{report['updates_applied']:,} updates from {args.updates} applied while they flowed",
                      highlight=False, markup=False)
        t = Table(title="rule set generations (work: rules compared, exact)")
        for c in ("generation", "from packet", "change", "rules", "packets", "rules compared / packet"):
            t.add_column(c, justify="left" if c == "change" else "right")
        for g in report["generations"]:
            t.add_row(str(g["generation"]), f"{g['from_packet']:,}", g["change"] or "initial rules",
                      f"{g['rules']:,}", f"{g['packets']:,}", f"{g['work'] / max(g['packets'], 1):,.1f}")
        console.print(t)
        if args.check:
            verdict = "OK" if not report["mismatches"] else "MISMATCH"
            console.print(f"  check: {report['packets']:,} packets against brute-force first match over the rule "
                          f"set in force ({report['changed_by_updates']:,} of them with another rule or verdict "
                          f"than under the initial rules): {report['mismatches']:,} mismatches [{verdict}]"
                          + (f"; first: {report['first_mismatch']}" if report["first_mismatch"] else ""),
                          highlight=False, markup=False)
    return 1 if args.check and report["mismatches"] else 0


#: The most workers the per-worker table shows (--json has them all).
MAX_WORKER_ROWS = 32


def _print_run(doc: dict[str, Any], top: int) -> None:
    info = doc["info"]
    warm = f" (the first {doc['warmup']:,} a warm-up, left out of throughput and work)" if doc["warmup"] else ""
    console.print(f"{doc['algo']} behind {doc['dispatch']}, k = {doc['k']}: {info['rules']:,} rules "
                  f"({info['dependency_edges']:,} dependencies, {info['dependent_rules']:,} dependent rules, longest "
                  f"chain {info['max_dependency_depth']}; graph built in {info['dependency_seconds'] * 1e3:,.1f} ms), "
                  f"{info['packets']:,} packets{warm}")
    skipped = sum(info.get(k, 0) for k in ("skipped_not_ipv4", "skipped_not_tcp_udp", "skipped_truncated"))
    if skipped:
        console.print(f"  skipped frames: {info.get('skipped_not_ipv4', 0):,} not IPv4, "
                      f"{info.get('skipped_not_tcp_udp', 0):,} not TCP/UDP, {info.get('skipped_truncated', 0):,} "
                      "truncated")
    p = doc["projected"]
    many = doc["repeats"] > 1
    d = doc["dispatchers"]
    dispatch = (f"dispatcher {p['dispatcher_cpu_ns'] / max(p['requests'], 1):,.2f} ns/packet" if d == 1 else
                f"{d} dispatchers, the slowest {p['dispatcher_cpu_ns'] / max(p['requests'], 1):,.2f} ns per packet of "
                f"the trace ({p['dispatcher_cpu_total_ns'] / max(p['requests'], 1):,.2f} all together)")
    console.print(f"  throughput: {spread(doc['mpps_projected_runs'], ',.3f')} Mpps projected"
                  + (f" (median \\[range] of {doc['repeats']} runs; median run: " if many else " (") + f"{dispatch}"
                  f", {slowest_worker_text(p, ',.1f')})"
                  + (f", {spread(doc['mpps_measured_runs'], ',.3f')} Mpps measured"
                     + (" (the dispatcher shared worker 0's core)"
                        if (doc["measured"] or {}).get("dispatcher_shares_core") else "") if doc["mpps_measured"] else
                     ", measured: skipped (--no-measure)" if not doc["measure_asked"] else
                     f", measured: — (k + D = {doc['k'] + d} > {doc['cores']} cores)" if d > 1 else
                     f", measured: — (k = {doc['k']} > {doc['cores']} cores)"))
    console.print(f"  work: {doc['work_per_packet']:,.1f} rules compared and {doc['entries_moved_per_packet']:,.1f} "
                  f"entries moved per packet; busiest worker {p['work_span']:,} rules compared"
                  + (f" ({p['work_with_moves_span']:,} with entries moved)" if p["work_with_moves_span"] is not None
                     else ""))
    console.print(f"  imbalance (busiest worker / mean): packets {p['load_imbalance']:.2f}, work "
                  f"{p['work_imbalance']:.2f}")
    workers = doc["workers"]
    # Thousands of rows would take minutes to draw and tell no one anything: the busiest workers
    # (by rules compared), in worker order, are where the imbalance shows.
    shown = sorted(sorted(range(len(workers)), key=lambda i: workers[i]["work"], reverse=True)[:MAX_WORKER_ROWS])
    title = ("per-worker statistics" if len(shown) == len(workers) else
             f"per-worker statistics (the {len(shown)} busiest of {len(workers):,} workers by rules compared; "
             f"{len(workers) - len(shown):,} left out, --json lists all)")
    t = Table(title=title, caption=KINDS, caption_justify="left")
    for c in ("worker", "packets", "rules compared / packet", "entries moved / packet", "mean position",
              "mean active rules / window", "max active", "mean chain levels", "distinct rules"):
        t.add_column(c, justify="right")
    for i in shown:
        s = workers[i]
        n = max(s["packets"], 1)
        t.add_row(str(i), f"{s['packets']:,}", f"{s['work'] / n:,.1f}", f"{s['entries_moved'] / n:,.1f}",
                  f"{s['mean_position']:,.1f}", f"{s['mean_active_rules']:,.1f}",
                  f"{s['max_active_rules']:,}", f"{s['mean_chain']:.2f}", f"{s['distinct_rules']:,}")
    console.print(t)
    ranked = sorted(((c, i) for i, c in enumerate(doc["rule_matches"]) if c), reverse=True)[:top]
    if ranked:
        r = Table(title=f"matches per rule (top {len(ranked)}; --json lists all)")
        r.add_column("rule (1-based)", justify="right")
        r.add_column("packets", justify="right")
        for c, i in ranked:
            r.add_row(str(i + 1), f"{c:,}")
        r.add_row("default policy", f"{doc['default_hits']:,}")
        console.print(r)
    if "check" in doc:
        c = doc["check"]
        verdict = "OK" if not c["mismatches"] else "MISMATCH"
        console.print(f"  check: {c['checked']:,} packets against brute-force first match: {c['mismatches']:,} "
                      f"mismatches [{verdict}]" + (f"; first: {c['first_mismatch']}" if c["first_mismatch"] else ""))


class Bench(Study[argparse.Namespace]):
    """``classify bench``: single-core classification throughput per ClassBench set and classifier."""

    experiment = "classify-bench"

    def run(self, config: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
        rows = _bench_rows(config, progress is not None)
        return Outcome(rows, {"quick": config.quick, "kind": "measured: thread CPU time, one core; median "
                              "[lo–hi] of alternated rounds (3; 1 with --quick)"})

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        spread_of = ("one round (--quick)" if config.quick else
                     "median \\[lo–hi] of 3 alternated rounds")
        t = Table(title=f"single-core classification throughput (measured, thread CPU time, {spread_of})")
        for c in ("rule set", "rules", "packets", "algo", "Mpps", "rules compared / packet", "ns / rule compared"):
            t.add_column(c, justify="right")
        for r in outcome.rows:
            t.add_row(r["rules_set"], f"{r['rules']:,}", f"{r['packets']:,}", r["algo"],
                      escape(spread(r["mpps_single_core_runs"], ".3f")), f"{r['work_per_packet']:,.1f}",
                      f"{r['ns_per_rule_compared']:.2f}")
        console.print(t)

    def json_text(self, path: Path, outcome: Outcome) -> str:
        return json.dumps(outcome.rows, indent=1)

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"results: {path}"]


def cmd_bench(args: argparse.Namespace) -> int:
    return run_study(Bench(), args)


def _bench_rows(args: argparse.Namespace, show: bool) -> list[Row]:
    from superlinear.experiments.packets import find_data

    rows: list[Row] = []
    targets: list[tuple[str, Any]] = []
    if args.rules:
        targets.append((Path(args.rules).name, _workload(args)))
    else:
        root = find_data(Path(args.data) if args.data else None)
        if root is None:
            raise SuperlinearError("classify bench needs --data DIR (ClassBench files) or --rules FILE")
        for size in comma_list("--classbench-size", args.sizes):
            for name in CLASSBENCH_SETS:
                rules = root / f"{name}_{size}"
                if not rules.exists():
                    raise SuperlinearError(f"{rules}: no such ClassBench rule set")
                spec = PacketWorkloadSpec(kind="files", rules=str(rules), trace=str(rules) + "_trace",
                                          packets=args.packets or (200_000 if args.quick else 1_000_000),
                                          actions=args.actions)
                targets.append((f"{name}_{size.strip()}", load(spec)))
    algos = args.algos
    with progress_bar(show) as bar:
        rounds = 1 if args.quick else 3
        task = bar.add_task("classify bench", total=len(targets) * len(algos) * rounds)
        for label, w in targets:
            info = w.info()
            # Each figure is the median of its interleaved rounds, with the range.
            def bench(algo: str, w: Any = w, label: str = label) -> tuple[float, float]:
                bar.update(task, description=f"{label} {algo}")
                pps, work = w.bench(algo, 1)
                bar.advance(task)
                return pps / 1e6, work

            runs = interleaved_rounds(algos, rounds, bench)
            for algo in algos:
                mpps = [m for m, _ in runs[algo]]
                med, work = statistics.median(mpps), runs[algo][-1][1]
                rows.append({"bench": "classify", "rules_set": label, "rules": info["rules"],
                             "packets": info["packets"], "algo": algo, "mpps_single_core": med,
                             "mpps_single_core_lo": min(mpps), "mpps_single_core_hi": max(mpps),
                             "mpps_single_core_runs": mpps, "work_per_packet": work,
                             "ns_per_rule_compared": 1e3 / med / max(work, 1e-9)})
    return rows


#: ``--out -``: the written file goes to standard output (as ``nft-bench --emit -``).
STDOUT = "-"
#: Formats that are not text: refused on a terminal.
BINARY_FORMATS = frozenset({"binary", "pcap", "pcapng"})


def _check_out(args: argparse.Namespace, fmt: str, inputs: list[tuple[str, str | None]] | None = None) -> None:
    """Checks ``--out`` before anything is generated or read: a file (:func:`output_file`), or
    ``-`` for standard output, which takes no binary trace while it is a terminal."""
    if args.out == STDOUT:
        if fmt in BINARY_FORMATS and sys.stdout.isatty():
            raise SuperlinearError(f"--out -: a {fmt} trace is not text, and standard output is a terminal "
                                   "(redirect it, or give --out FILE)")
        return
    output_file(args.out, inputs=inputs or [])


#: What a native writer returns (nothing, or how many packets a reader will skip).
T = TypeVar("T")


def _write_out(out: str, write: Callable[[str], T]) -> tuple[str, T]:
    """Writes with the native writer ``write`` (which takes a path) to the file ``out``, atomically,
    or to standard output for ``-``; returns how to name where it went, and what ``write`` said."""
    if out != STDOUT:
        with written_atomically(output_file(out)) as tmp:
            said = write(str(tmp))
        return out, said
    with tempfile.TemporaryDirectory(prefix="superlinear-") as folder:
        tmp = Path(folder) / "out"
        said = write(str(tmp))
        sys.stdout.flush()
        with tmp.open("rb") as f:
            shutil.copyfileobj(f, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    return "standard output", said


def _wrote(out: str, text: str) -> None:
    """The line saying what was written; none where the file itself went to standard output (as
    with ``nft-bench --emit -``): stdout is the file."""
    if out != STDOUT:
        console.print(text, highlight=False, markup=False)


def cmd_gen_rules(args: argparse.Namespace) -> int:
    if not args.out:
        raise SuperlinearError("gen-rules needs --out FILE ('-': standard output)")
    spec = PacketWorkloadSpec(kind="synthetic", synthetic_rules=args.synthetic_rules, depth=args.depth,
                              flows_per_rule=args.flows_per_rule, catch_all=args.catch_all, packets=1,
                              seed=args.seed)
    fmt = args.format or "native"
    _check_out(args, fmt)
    w = load(spec)
    where, _ = _write_out(args.out, lambda path: w.write_rules(path, fmt))
    _wrote(args.out, f"wrote {w.rules:,} rules to {where} ({fmt})")
    return 0


def cmd_gen_trace(args: argparse.Namespace) -> int:
    if not args.out:
        raise SuperlinearError("gen-trace needs --out FILE ('-': standard output)")
    fmt = args.format or "binary"
    _check_out(args, fmt, [("--rules", args.rules), ("--trace", args.trace)])
    if args.rules:
        if args.trace:
            raise SuperlinearError("gen-trace generates packets: give --rules without --trace")
        w = _workload(args)
    else:
        spec = PacketWorkloadSpec(kind="synthetic", synthetic_rules=args.synthetic_rules, depth=args.depth,
                                  flows_per_rule=args.flows_per_rule, catch_all=args.catch_all,
                                  packets=args.packets or DEFAULT_PACKETS, seed=args.seed)
        w = load(spec)
    where, skipped = _write_out(args.out, lambda path: w.write_trace(path, fmt))
    if skipped:
        # Frames carry ICMP and other protocols, but classify reads ports from TCP and UDP only.
        note(f"{skipped:,} of the {w.packets:,} packets are neither TCP nor UDP: {fmt} holds them, but classify "
             f"skips them when it reads the file (--format binary or classbench keeps every packet)")
    # Without --rules the packets are for the synthetic rules `gen-rules` writes with the same
    # options and seed: said, so that nobody takes them for packets of a rule file of their own.
    of = "" if args.rules else (f", for the {w.rules:,} synthetic rules gen-rules writes with the same --rules-count, "
                                "--depth and --catch-all")
    _wrote(args.out, f"wrote {w.packets:,} packets to {where} ({fmt}){of}")
    return 0


def _lost_actions(rules: str, rule_format: str) -> str | None:
    """What a conversion to ClassBench filters leaves out of ``rules``, if anything: the format
    carries no action and no default policy (a reader assigns them with ``--actions`` and
    ``--default``). Read with every assigned action accept, a ClassBench source loses nothing,
    whatever ``--actions`` said."""
    w = _native.NftWorkload.load(rules, None, {"format": rule_format, "actions": "accept", "default": "accept",
                                               "generate": 0})
    lost = sum(1 for *_, action, _verdict in w.rule_rows() if action != "accept")
    default = w.default_action()[0]
    losses = []
    if lost:
        rules_that = "rule that does" if lost == 1 else "rules that do"
        losses.append(f"the actions of {lost:,} {rules_that} not accept")
    if default != "accept":
        losses.append(f"the default policy {default}")
    return " and ".join(losses) or None


def cmd_convert(args: argparse.Namespace) -> int:
    if not args.rules or not args.out:
        raise SuperlinearError("convert needs --rules FILE and --out FILE ('-': standard output)")
    fmt = args.format or "nft"
    _check_out(args, fmt, [("--rules", args.rules)])
    cfg = {"rule_format": args.rule_format, "actions": args.actions, "default_action": args.default,
           "generate": 1, "seed": args.seed}
    w = _native.PacketWorkload.load(args.rules, None, cfg)
    lost = _lost_actions(args.rules, args.rule_format) if args.format == "classbench" else None
    where, _ = _write_out(args.out, lambda path: w.write_rules(path, fmt))
    _wrote(args.out, f"wrote {w.rules:,} rules to {where} ({fmt})")
    if lost:
        # Said, not refused: a ClassBench copy of a rule set is how it is benchmarked beside the
        # peers (the reader assigns actions again), but the user must know what it left out.
        verb = "is" if lost.startswith("the default policy") else "are"  # "the actions of ..." are
        note(f"ClassBench filters carry no actions: {lost} {verb} not in {where} "
             "(--format native or nft keeps them)")
    return 0


def _classify_doc() -> dict[str, Any]:
    return {"classifiers": _native.classify_algorithms(), "dispatchers": _native.classify_dispatchers()}


def _show_classify(doc: dict[str, Any]) -> None:
    console.print(name_table("classifiers (--algo)", doc["classifiers"]))
    console.print(name_table("dispatchers (--dispatch)", doc["dispatchers"]))


LISTING = Listing("classify", "packet classifiers and packet dispatchers", _classify_doc, _show_classify)


def cmd_algorithms(args: argparse.Namespace) -> int:
    return show_listing(LISTING, args.json)


#: Options of a rule file and its trace, and of the generated (synthetic) workload.
FILE_OPTIONS = frozenset({"rules", "trace", "rule_format", "trace_format", "actions", "default"})
SYNTHETIC_OPTIONS = frozenset({"synthetic_rules", "depth", "flows_per_rule", "catch_all"})


#: What each writing action writes, its default, and the file name endings that name a format.
OUTPUT_FORMATS = {"gen-rules": ("native", "nft", "classbench"), "convert": ("nft", "native", "classbench"),
                  "gen-trace": ("binary", "pcap", "pcapng", "classbench")}
FORMAT_BY_SUFFIX = {"gen-trace": {".pcap": "pcap", ".pcapng": "pcapng"}, "gen-rules": {".nft": "nft"},
                    "convert": {".nft": "nft"}}


def output_format(action: str, given: str | None, out: str | None) -> str:
    """The format ``action`` writes: ``--format``, else the one ``--out``'s ending names (``.pcap``,
    ``.pcapng``, ``.nft``), else the action's default. A format the name contradicts is refused:
    a tool that opens ``x.pcap`` would refuse a binary trace."""
    known = OUTPUT_FORMATS[action]
    if given is not None and given not in known:
        raise SuperlinearError(f"--format {given}: {action} writes {', '.join(known)}")
    named = FORMAT_BY_SUFFIX[action].get(Path(out).suffix.lower()) if out else None
    if given is None:
        return named or known[0]
    if named is not None and named != given:
        raise SuperlinearError(f"--out {out}: the name says {named}, --format says {given} (rename the file or "
                               f"drop --format)")
    return given


def used_options(action: str, rules: bool) -> frozenset[str]:
    """The options (by dest) that ``action`` reads, with or without ``--rules``: any other one
    given is refused (it would be silently ignored)."""
    if action == "run":
        source = FILE_OPTIONS if rules else SYNTHETIC_OPTIONS | {"synthetic"}
        return source | {"algo", "workers", "dispatch", "check", "packets", "warmup", "calibration", "window", "top",
                         "no_measure", "seed", "json", "updates", "repeats", "front", "dispatchers"}
    if action == "bench":
        # One classifier on one core, every packet timed: no warm-up left out, no dispatcher to calibrate.
        source = (FILE_OPTIONS | {"seed"}) if rules else frozenset({"data", "sizes", "actions"})
        return source | {"packets", "algo", "quick", "out", "json"}
    if action == "compare":
        return frozenset({"data", "sizes", "actions", "packets", "repeats", "peer", "peer_timeout", "algo", "traffic",
                          "json"})
    if action == "gen-rules":
        # The synthetic rule set is drawn without randomness; flows and the seed shape its packets.
        return (SYNTHETIC_OPTIONS - {"flows_per_rule"}) | {"format", "out"}
    if action == "gen-trace":
        # With --rules, --trace is kept in scope for the clearer message of cmd_gen_trace; the
        # headers are drawn inside the rules' fields, whatever their actions and default policy.
        source = (FILE_OPTIONS - {"trace_format", "actions", "default"}) if rules else SYNTHETIC_OPTIONS
        return source | {"packets", "seed", "format", "out"}
    if action == "convert":
        return (FILE_OPTIONS - {"trace", "trace_format"}) | {"format", "out"}
    return frozenset({"json"})  # algorithms


def _where_used(scope: OptionScope) -> dict[str, str]:
    """Per option, the actions that use it (for the error that refuses it elsewhere)."""
    where = {}
    for dest in scope.flags:
        uses = []
        for a in ACTIONS:
            on, off = dest in used_options(a, True), dest in used_options(a, False)
            if on or off:
                uses.append((a, "" if on and off else " with --rules" if on else " without --rules"))
        quals = {q for _, q in uses}
        if len(quals) == 1:
            where[dest] = f"it is for {', '.join(a for a, _ in uses)}{quals.pop()}"
        else:
            where[dest] = f"it is for {', '.join(a + q for a, q in uses)}"
    return where


def rule_file_format(path: str, given: str) -> str | None:
    """The format of the rule file ``path``: ``given`` (``--rule-format``) unless ``auto``, else
    the one the reader detects (crates/classify rules, ``RuleFormat::detect``); None where the file
    cannot be read (the reader then says why)."""
    return given if given != "auto" else _native.classify_rule_format(path)


def refuse_actions_beside(rules: str, rule_format: str | None = "auto") -> None:
    """Refuses --actions beside a rule file that gives every rule its own action (native, nft)."""
    fmt = rule_file_format(rules, rule_format or "auto")
    if fmt in ("native", "nft"):
        raise SuperlinearError(f"--actions has no effect with {fmt} rules ({rules} gives every rule its action; "
                               "--actions is for ClassBench filters, which have none)")


def file_default_policy(rules: str, rule_format: str | None = "auto") -> str | None:
    """The default policy the rule file ``rules`` sets itself (a native ``default`` line, an nft
    chain's ``policy``), None where it sets none (ClassBench filters never do) or cannot be read
    (the reader then says why)."""
    fmt = rule_file_format(rules, rule_format or "auto")
    if fmt not in ("native", "nft") or not Path(rules).is_file():
        return None
    w = _native.NftWorkload.load(rules, None, {"format": fmt, "actions": "accept", "generate": 0})
    return str(w.default_action()[0]) if w.default_from_file() else None


def refuse_default_beside(rules: str, rule_format: str | None, default: str, flag: str = "--default") -> None:
    """Refuses --default beside a rule file that sets its own default policy, as --actions beside
    one that sets its own actions: the reader keeps the file's (``classify --rules R --default
    accept`` on a file saying ``default drop`` would run, and report, drop)."""
    own = file_default_policy(rules, rule_format)
    if own is not None:
        fmt = rule_file_format(rules, rule_format or "auto")
        raise SuperlinearError(f"{flag} {default} has no effect with {fmt} rules ({rules} sets its own default "
                               f"policy, {own}; {flag} is for files that set none)")


#: The dests --default is stored under (``attack classifier`` keeps the old name).
DEFAULT_DESTS = ("default", "default_action")


def actions_scope(parser: argparse.ArgumentParser, format_dest: str = "rule_format") -> None:
    """Refuses --actions given beside a --rules file that sets its own actions, and --default
    beside one that sets its own default policy, in a command other than classify (``xdp load
    --rules native.txt --actions accept`` would load the file's own actions). Call after the
    parser's ``func`` is set (and after other scopes): it wraps it."""
    scope = OptionScope(parser, only=("actions", *DEFAULT_DESTS))
    inner: Callable[[argparse.Namespace], int] = parser.get_default("func")

    def func(args: argparse.Namespace) -> int:
        rules = getattr(args, "rules", None)
        if rules:
            if OptionScope.given(args, "actions"):
                refuse_actions_beside(rules, getattr(args, format_dest, None))
            for dest in DEFAULT_DESTS:
                if OptionScope.given(args, dest):
                    refuse_default_beside(rules, getattr(args, format_dest, None), getattr(args, dest),
                                          spelled(args, dest, "--default"))
        scope.fill(args)
        return inner(args)

    parser.set_defaults(func=func)


def seeded_dispatchers() -> list[str]:
    """Packet dispatchers that draw on --seed (the others hash, rotate or plan without one), as
    the registry says; tests/test_option_scope.py checks it against their assignments."""
    return sorted(d["name"] for d in _native.classify_dispatchers() if d["seeded"])


def _check_file_options(args: argparse.Namespace, action: str, given: set[str]) -> None:
    """Refuses --actions beside a rule file that sets its own actions (native, nft), --default
    beside one that sets its own default policy, and --seed with a trace where nothing is drawn:
    ``classify --rules native.txt --actions random:0.3`` would run the file's own actions, and
    ``--trace T --seed 5`` behind RSS as with any seed."""
    if "actions" in given and args.rules and not args.updates:
        # With --updates, a replacement file may be ClassBench: the reader gives it --actions.
        refuse_actions_beside(args.rules, args.rule_format)
    if "default" in given and args.rules and not args.updates:
        # With --updates, as with --actions: a replacement file may set no default policy.
        refuse_default_beside(args.rules, args.rule_format, args.default)
    if "seed" in given and args.rules and args.trace and action in ("run", "bench"):
        if action == "bench":
            raise SuperlinearError("--seed has no effect in classify bench with --trace (it seeds the packets "
                                   "generated without --trace)")
        refuse_unseeded_dispatch(args.dispatch, f"with --trace and --dispatch {args.dispatch}",
                                 "the packets generated without --trace and ")


def refuse_unseeded_dispatch(dispatch: str, mode: str, also: str = "", after: str = "") -> None:
    """Refuses --seed (``mode``: where it was given) behind a packet dispatcher that draws nothing;
    ``also`` and ``after`` name what else the seed would seed. An unknown dispatcher is left to the
    run, which names the known ones."""
    name = dispatch.split(":", 1)[0].strip()
    seeded = seeded_dispatchers()
    if name in {d["name"] for d in _native.classify_dispatchers()} and name not in seeded:
        raise SuperlinearError(f"--seed has no effect {mode} (it seeds {also}the "
                               f"{' and '.join(seeded)} dispatchers{after})")


def _classifiers(args: argparse.Namespace, action: str) -> None:
    """``--algo``: one classifier for run (``args.algo``), a list for bench (``args.algos``);
    the old bench spelling ``--algos`` is an alias."""
    flag = spelled(args, "algo", "--algo")
    known_names = _classifier_names()
    if args.algo is None:
        names = known_names if action in ("bench", "compare") else [config_defaults("classify_run")["algo"]]
    else:
        names = comma_list(flag, args.algo,
                           empty=f"{flag}: no classifier named in {args.algo!r} (known: {', '.join(known_names)})")
    for name in names:
        if name not in known_names:
            raise SuperlinearError(f"{flag}: unknown classifier {name!r} (known: {', '.join(known_names)})")
    if action == "run" and len(names) > 1:
        raise SuperlinearError(f"{flag} {args.algo}: classify run takes one classifier (a list is for classify bench)")
    args.algo, args.algos = names[0], names


def cmd_classify(args: argparse.Namespace, scope: OptionScope) -> int:
    action = args.action or "run"
    if action == "run" and not args.rules:
        if args.trace:
            raise SuperlinearError("--trace needs --rules (the rule set to classify against)")
        if not args.synthetic:
            raise SuperlinearError("classify needs --rules FILE [--trace FILE] (or --synthetic for a generated "
                                   "workload); see --help")
    rules = args.rules is not None
    mode = f"in classify {action}" + ((" with --rules" if rules else " without --rules")
                                      if used_options(action, True) != used_options(action, False) else "")
    scope.check(args, used_options(action, rules), mode, _where_used(scope))
    if args.updates:
        scope.check(args, used_options(action, rules) - NOT_WITH_UPDATES, "with --updates",
                    dict.fromkeys(NOT_WITH_UPDATES, "a run with updates classifies once, in trace order, untimed"))
    given = {dest for dest in ("front", "calibration", "actions", "default", "seed", "top", "trace_format")
             if OptionScope.given(args, dest)}
    scope.fill(args)
    if "trace_format" in given and not args.trace:
        raise SuperlinearError(f"--trace-format has no effect in classify {action} without --trace (it says how "
                               "to read the trace file)")
    if action == "run" and "top" in given and args.json:
        raise SuperlinearError("--top has no effect with --json (it shortens the printed table of rules; --json "
                               "has every rule's counters)")
    _check_file_options(args, action, given)
    if action in ("run", "bench", "compare"):
        _classifiers(args, action)
    if action == "run":
        # Options of one classifier or one dispatcher, refused beside another.
        if "front" in given and not args.algo.startswith("rule-cache"):
            raise SuperlinearError(f"--front has no effect with --algo {args.algo} (it sizes the front of rule-cache "
                                   "and rule-cache-flow)")
        if "calibration" in given and not args.dispatch.startswith("rule"):
            raise SuperlinearError(f"--calibration has no effect with --dispatch {args.dispatch} (it calibrates "
                                   "the rule-aware dispatcher)")
    if action == "bench":
        refuse_stdout(args.out, "--out", "classify bench writes a folder of results (name one; its table goes to "
                      "standard output already)")
    if action == "bench" and not args.out:
        args.out = "results/classify-bench"
    if action in ("gen-rules", "gen-trace", "convert"):
        args.format = output_format(action, args.format, args.out)
    if action == "convert" and args.format == "classbench":
        for dest, flag in (("actions", "--actions"), ("default", "--default")):
            if dest in given:
                raise SuperlinearError(f"{flag} has no effect with --format classbench (ClassBench filters carry no "
                                       "actions and no default policy; --format native or nft keeps them)")
    handler = {"run": cmd_run, "bench": cmd_bench, "compare": cmd_compare, "gen-rules": cmd_gen_rules,
               "gen-trace": cmd_gen_trace, "convert": cmd_convert, "algorithms": cmd_algorithms}[action]
    return handler(args)


def _classifier_names() -> list[str]:
    return [a["name"] for a in _native.classify_algorithms()]


def _dispatch_forms() -> list[str]:
    """``--dispatch`` forms from the registry: ``rss:FIELDS`` for one that takes an argument."""
    return [f"{d['name']}:{d['argument'][0]}" if d["argument"] else d["name"] for d in _native.classify_dispatchers()]


def _dispatch_help() -> str:
    """``--dispatch`` forms from the registry, with what their argument takes (said once per
    argument: ``rss``, ``two-choice`` and ``spray`` take the same fields)."""
    said: set[str] = set()
    forms = []
    for form, d in zip(_dispatch_forms(), _native.classify_dispatchers(), strict=True):
        if d["argument"] and d["argument"] not in said:
            said.add(d["argument"])
            form += f" ({d['argument'][1]})"
        forms.append(form)
    return known(forms) + " (default 5-tuple RSS)"


def register(sub: Any) -> None:
    """Adds ``classify`` and its actions (``classify algorithms`` is an alias of ``list classify``)."""
    classifiers = _classifier_names()
    dispatchers = _dispatch_forms()
    p = sub.add_parser(
        "classify", help="packet classification: static list or self-adjusting MRF behind RSS (paper §4)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Classify packets with k workers behind a dispatcher and report throughput, per-worker "
        "statistics and per-rule matches.\n\n"
        "  superlinear classify --rules R [--trace T] [--algo " + "|".join(classifiers) + "] [--k K]\n"
        "                       [--dispatch " + "|".join(dispatchers) + "] [--check] [--json]\n"
        "  superlinear classify bench [--data DIR] [--classbench-size 5k] [--quick]\n"
        "                             single-core Mpps per ClassBench set\n"
        "  superlinear classify compare [--data DIR] [--classbench-size 5k] [--packets N] [--repeats N]\n"
        "                               [--traffic trace|uniform] [--peer DIR|TMBENCH]\n"
        "                               ours vs the peer TupleMerge, one core, alternated\n"
        "  superlinear classify gen-rules --rules-count N [--depth D] [--catch-all F] --out F [--format nft]\n"
        "  superlinear classify gen-trace (--rules R | --rules-count N [--depth D] [--flows-per-rule F])\n"
        "                                 [--packets N] --out F [--format binary|pcap|pcapng|classbench]\n"
        "  superlinear classify convert --rules R --out F [--format nft|native|classbench]\n"
        "  superlinear classify algorithms\n"
        "                             list the classifiers and packet dispatchers (as `list classify`)\n\n"
        "Rules: ClassBench filters, the native format ('accept src 10.0.0.0/8 dport 53 proto udp') or `nft list "
        "ruleset` output (detected). Traces: ClassBench headers, pcap, pcapng (Ethernet/IPv4/TCP/UDP; other frames "
        "counted and skipped) or binary (detected). " + KINDS)
    p.add_argument("action", nargs="?", choices=ACTIONS, help="what to do (default: run); an option the action "
                   "does not use is refused")
    p.add_argument("--rules", metavar="FILE", help="rule file (ClassBench, native or nft; detected)")
    p.add_argument("--trace", metavar="FILE", help="packet trace (ClassBench, pcap, pcapng or binary; detected); "
                   "without one, packets are generated inside the rules")
    load_defaults = config_defaults("classify_load")
    synthetic = config_defaults("classify_synthetic")
    run_defaults = config_defaults("classify_run")
    p.add_argument("--rule-format", default=load_defaults["rule_format"],
                   choices=["auto", "classbench", "native", "nft"],
                   help=f"how to read --rules (default {load_defaults['rule_format']}: detected from the file)")
    p.add_argument("--trace-format", default=load_defaults["trace_format"],
                   choices=["auto", "classbench", "pcap", "pcapng", "binary"],
                   help=f"how to read --trace (default {load_defaults['trace_format']}: detected from the file)")
    p.add_argument("--actions", default=load_defaults["actions"],
                   help="actions of ClassBench filters: accept, or random:DROP_FRACTION[:SEED] "
                   f"(default {load_defaults['actions']})")
    p.add_argument("--default", default=load_defaults["default_action"],
                   choices=["accept", "drop", "reject", "queue"],
                   help=f"default policy when the file sets none (default {load_defaults['default_action']})")
    p.add_argument("--algo", metavar="ALGO", help="bench: a comma-separated list (compare too; default all); "
                   f"run: one classifier (default {run_defaults['algo']}): {', '.join(classifiers)}")
    hidden_alias(p, "--algos", dest="algo")
    p.add_argument("--k", "-k", dest="workers", type=positive_int, default=run_defaults["k"],
                   help=f"workers k (default {run_defaults['k']})")
    hidden_alias(p, "--workers", dest="workers", type=positive_int)
    p.add_argument("--dispatch", default="rss:sip,dip,sport,dport,proto",
                   help=_dispatch_help())
    p.add_argument("--check", action="store_true", help="verify every verdict against brute-force first match "
                   "(exit 1 on any mismatch)")
    p.add_argument("--updates", metavar="FILE", help="rule changes while the packets flow, one per line: "
                   "'AT insert POS RULE', 'AT delete INDEX' or 'AT replace RULES_FILE' (AT: packet index; positions "
                   "1-based); with --check every verdict is checked against the rule set in force "
                   "(docs/classification.md)")
    p.add_argument("--packets", type=positive_int,
                   help="replay the trace to N packets, or generate N packets (default: the whole trace, or "
                   f"{DEFAULT_PACKETS:,} generated, run and gen-trace alike; bench and compare over --data: "
                   "1,000,000 per ClassBench set, bench --quick 200,000)")
    p.add_argument("--warmup", type=non_negative_int, default=run_defaults["warmup"], metavar="N",
                   help="serve N packets first and leave them out of throughput and work (steady state); "
                   "with --packets they come on top, otherwise from the start of the trace "
                   f"(default {run_defaults['warmup']})")
    p.add_argument("--calibration", type=positive_int, default=100_000,
                   help="packets at the start of the trace that calibrate the rule-aware dispatcher "
                   "(default 100000; the whole trace if shorter)")
    p.add_argument("--front", type=positive_int, default=run_defaults["front"], metavar="N",
                   help=f"rule-cache: front capacity in rules (default {run_defaults['front']})")
    p.add_argument("--dispatchers", type=positive_int, default=run_defaults["dispatchers"], metavar="D",
                   help="projected kind: D dispatcher threads, each routing its own contiguous share of the packets "
                   "(as a NIC spreads them over D receive queues); T(k) then adds the slowest one's CPU time, not one "
                   "serial dispatcher's. A dispatcher with state (two-choice, spray) knows only its share. The "
                   "measured run has D dispatcher threads too, where k + D fit the cores "
                   f"(default {run_defaults['dispatchers']})")
    p.add_argument("--window", type=positive_int, default=10_000, help="active-rule window in packets (default 10000)")
    p.add_argument("--top", type=positive_int, default=10, help="rules shown in the match table (default 10)")
    p.add_argument("--no-measure", action="store_true", help="skip the real-thread run")
    p.add_argument("--repeats", type=repeat_count, default=3, metavar="N",
                   help="independent runs: throughputs are their median [range] (default 3)")
    p.add_argument("--seed", type=non_negative_int, default=run_defaults["seed"],
                   help=f"seed of generators and seeded dispatchers (default {run_defaults['seed']})")
    p.add_argument("--synthetic", action="store_true", help="run on a generated workload (--rules-count, ...)")
    p.add_argument("--rules-count", dest="synthetic_rules", type=positive_int_at_most(MAX_SYNTHETIC_RULES, "rules"),
                   default=synthetic["rules"],
                   help=f"synthetic base rules, ≤ {MAX_SYNTHETIC_RULES} (default {synthetic['rules']})")
    p.add_argument("--depth", type=int, default=synthetic["depth"], choices=range(0, MAX_DEPTH + 1), metavar="D",
                   help=f"synthetic dependency depth d (default {synthetic['depth']}; 0: independent rules)")
    p.add_argument("--flows-per-rule", type=positive_int_at_most(MAX_FLOWS_PER_RULE, "flows per rule"),
                   default=synthetic["flows_per_rule"],
                   help=f"synthetic flows per rule, ≤ {MAX_FLOWS_PER_RULE} (default {synthetic['flows_per_rule']})")
    p.add_argument("--catch-all", type=fraction, default=synthetic["catch_all"],
                   help=f"share of synthetic traffic to a final catch-all rule (default {synthetic['catch_all']:g}; "
                   "0: none)")
    p.add_argument("--format", help="output format: rules native|nft|classbench, traces binary|pcap|pcapng|classbench")
    p.add_argument("--out", metavar="FILE", help="output file (gen-rules, gen-trace, convert; '-': standard output) "
                   "or folder (bench)")
    p.add_argument("--data", metavar="DIR", help="bench: ClassBench folder")
    p.add_argument("--classbench-size", dest="sizes", default="5k",
                   help="bench: ClassBench sizes, comma-separated (default 5k)")
    hidden_alias(p, "--sizes", dest="sizes")
    p.add_argument("--quick", action="store_true", help="bench: fewer packets, one run")
    p.add_argument("--peer", metavar="DIR|TMBENCH", help="compare: the peer's tmbench binary, or a folder holding it; "
                   "an empty or new folder gets it built there with shared/peers/build-tuplemerge (a folder holding "
                   "other files is refused); without it, ours only")
    p.add_argument("--peer-timeout", type=duration_seconds, metavar="S",
                   help="compare: seconds one run of the peer may take before it is stopped and compare fails "
                   f"(default {PEER_SETUP_S:g} + 1 per {PEER_MIN_PACKETS_PER_S:,} packets: "
                   f"{peer_timeout(1_000_000):g} for the default 1,000,000)")
    p.add_argument("--traffic", choices=("trace", "uniform"), default="trace",
                   help="compare: the set's own ClassBench trace (default), or headers without locality: each packet "
                   "a uniformly random rule and a header uniformly inside it, the same packets for both sides")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    scope = OptionScope(p)
    p.set_defaults(func=lambda args: cmd_classify(args, scope))
    needs_option(p, ("peer_timeout",), "peer", "it limits each run of the peer")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
