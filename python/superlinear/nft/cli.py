"""``superlinear nft-bench``: your rules and trace through Linux nftables and through our
classifiers, cross-checked rule by rule and measured side by side (see
:mod:`superlinear.nft.bench` for what is measured and how).

Exit codes: 0 everything equal; 1 a check failed (a counter or the round trip differs; the
report names the rules); 2 bad input or usage; 69 ``ip`` or ``nft`` missing; 77 not enough
privileges (CAP_NET_ADMIN: run as root); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM).
Namespaces, devices and the table are removed on every one of these paths.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from superlinear.common.args import (
    duration_seconds,
    k_list,
    non_negative_int,
    positive_float,
    positive_int_at_most,
    repeat_count,
    usable_cpu,
)
from superlinear.common.errors import SuperlinearError, note
from superlinear.common.scope import OptionScope, hidden_alias
from superlinear.nft.bench import (
    DATA_SETS,
    BenchConfig,
    RuleSetInput,
    SetResult,
    load_rules,
    rule_set_inputs,
    run_sets,
)
from superlinear.nft.netns import RX_DEV, TABLE, NeedsPrivilegesError, TerminatedError, remove_all
from superlinear.output.paths import inputs_of, output_dir, output_file, refuse_stdout, write_text_atomic
from superlinear.output.results import record_plots, write_results

console = Console(width=max(120, Console().width))
err = Console(stderr=True, width=max(120, Console(stderr=True).width))
EXIT_CHECK_FAILED = 1
EXIT_TERMINATED = 143


#: Frames one sendmmsg call takes (the kernel's UIO_MAXIOV).
MAX_SENDMMSG_BATCH = 1024


def inputs_from(args: argparse.Namespace) -> list[RuleSetInput]:
    """The rule sets to run: ``--rules``/``--trace``, or the ClassBench sets in ``--data``
    (``--emit`` needs no trace: it converts the rules only)."""
    options = {"format": args.format, "trace_format": args.trace_format, "actions": args.actions,
               "default": args.default}
    return rule_set_inputs(args, options, trace_optional=bool(args.emit))


def cmd_emit(args: argparse.Namespace, inputs: list[RuleSetInput]) -> int:
    """Writes the benchmark table of the (first) rule set: `nft -f FILE` loads it. Only the rules
    are read; a trace, if given, has no part in it."""
    target = None if args.emit == "-" else output_file(args.emit, "--emit",
                                                        [("--rules", inputs[0].rules), ("--trace", inputs[0].trace)])
    w = load_rules(inputs[0])
    text = w.nft_table(TABLE, args.device, False)
    if target is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(target, text)
        err.print(f"{w.rules():,} rules written to {args.emit} as table netdev {TABLE} on {args.device} ingress "
                  f"(load with: nft -f {args.emit})")
    if args.trace:
        # Accepted (commands that name the pair keep working), but said: it was not read.
        note(f"--trace {args.trace} was not read (--emit makes the table from the rules alone)")
    return 0


def _config(args: argparse.Namespace) -> BenchConfig:
    # Pinned by default: the sender and the receive path it drives stay on one core.
    cpu = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    return BenchConfig(duration=args.duration, repeats=args.repeats, ks=args.ks, dispatch=args.dispatch,
                       check_only=args.check_only, keep=args.keep, batch=args.batch, cpu=cpu,
                       check_rate=args.check_rate, seed=args.seed)


def _save(out: Path, cfg: BenchConfig, inputs: list[RuleSetInput], results: list[SetResult]) -> Path:
    from superlinear.nft.report import plot, write_check

    config: dict[str, Any] = {**cfg.__dict__, "ks": list(cfg.ks),
                              "sets": [{"name": i.name, "rules": i.rules, "trace": i.trace, **i.options}
                                       for i in inputs]}
    # ``default`` above is --default (for files that set none); this is the policy that ran.
    for entry, res in zip(config["sets"], results, strict=False):
        entry["default_in_force"] = res.default_policy
    rows = [r for res in results for r in res.rows]
    path = write_results(out, "nft-bench", config, rows)
    write_check(out, results)
    record_plots(path, plot(out, results))
    return path


#: Options of the rule set (and where it comes from): every mode but --cleanup reads them.
INPUT_OPTIONS = frozenset({"rules", "data", "sets", "size", "format", "actions", "default"})
#: Options of the throughput runs, which --check-only skips.
THROUGHPUT_OPTIONS = frozenset({"duration", "repeats", "ks", "dispatch", "seed"})
#: Where an option applies, for the error that refuses it elsewhere.
ELSEWHERE = {"device": "it is for --emit", "emit": "it converts only", **{o: "it is for the throughput runs"
                                                                          for o in THROUGHPUT_OPTIONS}}


def mode_options(args: argparse.Namespace) -> tuple[frozenset[str], str]:
    """The options the chosen mode reads, and the mode in words."""
    if args.cleanup:
        return frozenset({"cleanup"}), "with --cleanup"
    if args.emit:
        # A trace is accepted beside the rules (commands that name the pair keep working), though
        # the table is made from the rules alone.
        return INPUT_OPTIONS | {"emit", "device", "trace", "trace_format"}, "with --emit"
    run = INPUT_OPTIONS | {"trace", "name", "trace_format", "check_only", "check_rate", "batch", "cpu", "keep", "out",
                           "json"}
    if args.check_only:
        return run, "with --check-only"
    return run | THROUGHPUT_OPTIONS, "in a benchmark run"


def cmd_nft_bench(args: argparse.Namespace, scope: OptionScope) -> int:
    used, mode = mode_options(args)
    scope.check(args, used, mode, ELSEWHERE)
    if args.rules:
        scope.check(args, used - {"sets", "size"}, "with --rules", dict.fromkeys(("sets", "size"),
                                                                                 "it picks ClassBench sets in --data"))
    elif args.data:
        scope.check(args, used - {"name"}, "with --data", {"name": "it labels the rule set of --rules; --data "
                                                                   "sets keep their file names"})
    seed_given = scope.given(args, "seed")
    scope.fill(args)
    if seed_given:
        from superlinear.classify.cli import refuse_unseeded_dispatch

        refuse_unseeded_dispatch(args.dispatch, f"with --dispatch {args.dispatch}", after=" of the projected runs")
    if args.data and not args.rules:  # a missing folder is the mistake to name, before what --sets picks in it
        from superlinear.experiments.packets import find_data

        find_data(Path(args.data))
    if args.emit and not args.rules and args.data and len([t for t in args.sets.split(",") if t.strip()]) > 1:
        raise SuperlinearError(f"--emit writes one rule set's table: name one with --sets (not {args.sets})")
    if args.cleanup:
        try:
            removed = remove_all()
        except NeedsPrivilegesError as e:
            print(f"superlinear: nft-bench: {e}", file=sys.stderr)
            return e.exit_code
        print(f"removed {len(removed)} namespace(s)" + (f": {', '.join(removed)}" if removed else ""))
        return 0
    if not args.emit:  # before the inputs are read
        refuse_stdout(args.out, "--out", "nft-bench writes a folder of results (name one; --json prints result.json "
                      "on standard output, --emit - the nftables table)")
    inputs = inputs_from(args)
    if args.emit:
        return cmd_emit(args, inputs)
    cfg = _config(args)
    out = output_dir(args.out, inputs=inputs_of(args))

    def progress(msg: str) -> None:
        err.print(msg, highlight=False, markup=False, soft_wrap=True)

    try:
        results = run_sets(inputs, cfg, progress, on_set=lambda done: _save(out, cfg, inputs, done))
    except NeedsPrivilegesError as e:
        print(f"superlinear: nft-bench: {e}", file=sys.stderr)
        return e.exit_code
    except TerminatedError as e:
        print(f"superlinear: nft-bench: {e}; namespaces removed", file=sys.stderr)
        return EXIT_TERMINATED
    path = _save(out, cfg, inputs, results)
    from superlinear.nft.report import check_lines, path_lines, side_by_side

    ok = all(r.check["counters_equal"] and r.check["round_trip"]["equal"] for r in results)
    if args.json:
        print(path.read_text(encoding="utf-8"))
    else:
        if not cfg.check_only:
            console.print(side_by_side(results))
            for line in path_lines(results):
                console.print(line, highlight=False, markup=False)
        for line in check_lines(results):
            console.print(line, highlight=False, markup=False)
        console.print(f"results: {path}, {out / 'result.csv'}, {out / 'check.json'}"
                      + ("" if cfg.check_only else f"; plot: {out / 'nft-bench.png'} (and .svg)"), highlight=False,
                      markup=False)
    return 0 if ok else EXIT_CHECK_FAILED


def register(sub: Any) -> None:
    p = sub.add_parser(
        "nft-bench", help="your rules in Linux nftables vs our classifiers: exact counters and throughput",
        description="Convert a rule set into one linear nftables chain (a counter per rule), replay a trace "
        "through it between two network namespaces, check every rule's counter against our classifier, and "
        "measure packets per second: nftables vs our static list, MRF with 1 worker, and MRF projected at "
        "k = 2..32. Needs root (CAP_NET_ADMIN) and the ip and nft programs, except for --emit. Exit codes: 0 "
        "all equal, 1 a check failed, 2 bad input, 69 ip/nft missing, 77 no privileges, 130 Ctrl-C.",
    )
    g = p.add_argument_group("input")
    g.add_argument("--rules", metavar="FILE", help="rule set: ClassBench filters, native rules or nft list output")
    g.add_argument("--trace", metavar="FILE", help="trace: ClassBench header trace, pcap, pcapng or binary")
    g.add_argument("--name", help="label of this rule set in tables and results (default: the rules file name)")
    g.add_argument("--data", metavar="DIR", help="instead of --rules/--trace: a folder of ClassBench sets")
    g.add_argument("--sets", default=",".join(DATA_SETS), help="with --data: sets to run (default acl1,ipc1,fw1)")
    g.add_argument("--classbench-size", dest="size", default="5k",
                   help="with --data: size suffix of the files (default 5k)")
    hidden_alias(g, "--size", dest="size")
    g.add_argument("--rule-format", dest="format", default="auto",
                   help="rule format: auto, classbench, native, nft (default auto)")
    hidden_alias(g, "--format", dest="format")
    g.add_argument("--trace-format", default="auto", help="trace format: auto, classbench, pcap, pcapng, binary")
    g.add_argument("--actions", default="random",
                   help="actions of ClassBench filters: random[:DROP_FRACTION[:SEED]] or accept (default random, "
                        "as `superlinear classify`)")
    g.add_argument("--default", default="accept", help="default policy where the file sets none (default accept)")
    m = p.add_argument_group("measurement")
    m.add_argument("--duration", type=duration_seconds, default=3.0, help="seconds per throughput run (default 3)")
    m.add_argument("--repeats", type=repeat_count, default=3,
                   help="throughput runs per chain, single-core runs of ours and rounds of the projected runs "
                        "(default 3; median and range)")
    m.add_argument("--k", "-k", dest="ks", type=k_list, default=(2, 4, 8, 16, 32),
                   help="MRF projected at these k, comma-separated (default 2,4,8,16,32)")
    hidden_alias(m, "--ks", dest="ks", type=k_list)
    m.add_argument("--dispatch", default="rss", help="dispatcher for the projected MRF runs (default rss, 5-tuple)")
    m.add_argument("--check-only", action="store_true", help="round trip and exact counters only, no throughput")
    m.add_argument("--check-rate", type=positive_float, default=50_000.0,
                   help="pace of the exact check's replay in packets/s (default 50000; halved on a shortfall)")
    m.add_argument("--batch", type=positive_int_at_most(MAX_SENDMMSG_BATCH, "frames (sendmmsg's limit)"), default=256,
                   help="frames per sendmmsg call, at most 1024 (default 256)")
    m.add_argument("--cpu", type=usable_cpu, default=None,
                   help="pin the sender to this CPU (default: the last CPU this process may use)")
    m.add_argument("--seed", type=non_negative_int, default=1, help="seed of the projected runs' dispatcher")
    o = p.add_argument_group("output")
    o.add_argument("--out", default="results/nft-bench", help="output folder (default results/nft-bench)")
    o.add_argument("--json", action="store_true", help="print result.json instead of the table")
    o.add_argument("--emit", metavar="FILE",
                   help="only convert: write the nftables table for the rule set to FILE ('-': stdout) and stop "
                        "(no privileges needed)")
    o.add_argument("--device", default=RX_DEV, help=f"with --emit: the ingress device (default {RX_DEV})")
    o.add_argument("--keep", action="store_true",
                   help="leave namespaces, veth pair and table in place (removed by the next run or --cleanup)")
    o.add_argument("--cleanup", action="store_true", help="remove every namespace nft-bench left behind, and stop")
    scope = OptionScope(p)
    p.set_defaults(func=lambda args: cmd_nft_bench(args, scope))
    from superlinear.classify.cli import actions_scope

    actions_scope(p, format_dest="format")
