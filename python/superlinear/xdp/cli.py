"""``superlinear xdp load|stats|update|unload|list``: the self-adjusting classifier in the Linux XDP
datapath, on your interface, with your rules (crates/xdp: an RSS dispatcher on the ingress
device redirects each frame through a cpumap to its logical worker's CPU, where a static or MRF
rule list classifies it; accept passes, every other action drops).

Exit codes: 0 done; 2 bad input or usage; 69 this build or kernel cannot run it (clang missing at
build time, no XDP on the device); 77 not enough privileges (CAP_BPF, CAP_NET_ADMIN,
CAP_SYS_ADMIN: run as root); 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from superlinear import _native
from superlinear.common.args import (
    comma_list,
    duration_seconds,
    int_list,
    online_cpus,
    positive_float,
    positive_int,
    repeat_count,
    usable_cpu,
)
from superlinear.common.errors import SuperlinearError, note
from superlinear.common.interrupt import stopped_exit_code
from superlinear.common.scope import OptionScope, conditional_scope, generator_scope, unless_chosen
from superlinear.nft.bench import require_file
from superlinear.nft.netns import NeedsPrivilegesError
from superlinear.nft.ruleset_json import describe_row
from superlinear.output.paths import inputs_of, output_dir, refuse_stdout
from superlinear.xdp import pins

console = Console(width=max(120, Console().width))
ACTIONS = ("load", "stats", "update", "unload", "list")
#: Default calibration sample of the rule-aware dispatcher, as `superlinear classify`.
CALIBRATION = 100_000


#: Logical workers the XDP datapath's maps hold (crates/xdp layout.rs, ``MAX_WORKERS``).
XDP_MAX_WORKERS = 1024


#: The largest queue a cpumap entry takes: the kernel refuses a bigger ``qsize`` (kernel/bpf/cpumap.c,
#: "sanity limit on qsize"), which once surfaced as exit 69, "the kernel refused the XDP datapath".
CPUMAP_MAX_QSIZE = 16_384


def queue_size(text: str) -> int:
    """``--queue-size``: frames per worker CPU queue, 1 to :data:`CPUMAP_MAX_QSIZE`."""
    v = positive_int(text)
    if v > CPUMAP_MAX_QSIZE:
        raise argparse.ArgumentTypeError(f"expected 1 to {CPUMAP_MAX_QSIZE:,} frames (the kernel's cpumap refuses a "
                                         f"larger queue), got {v:,}")
    return v


def whole_list(minimum: int, maximum: int | None = None) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: comma-separated whole numbers, each at least ``minimum`` (and at most
    ``maximum`` where given)."""

    def parse(text: str) -> tuple[int, ...]:
        try:
            return int_list("", text, minimum=minimum, maximum=maximum)
        except SuperlinearError as e:
            raise argparse.ArgumentTypeError(str(e).removeprefix(": ")) from None

    return parse


def online_cpu_list(text: str) -> tuple[int, ...]:
    """Comma-separated CPUs, each online (the datapath's worker CPUs are cpumap entries)."""
    cpus = whole_list(0)(text)
    online = online_cpus()
    missing = [c for c in cpus if c not in online]
    if missing:
        raise argparse.ArgumentTypeError(f"CPU {missing[0]} is not online here (online: {', '.join(map(str, online))})")
    return cpus


def read_rules(rules: str, trace: str | None, args: argparse.Namespace) -> Any:
    """Rules (and a trace, when given) read by the classifier's readers."""
    for what, path in (("rules", rules), ("trace", trace)):
        if path is not None:
            require_file(path, what)
    options = {"format": args.rule_format, "actions": args.actions, "default": args.default}
    w = _native.NftWorkload.load(rules, trace, options)
    if w.rules() == 0:
        raise SuperlinearError(f"{rules}: no rules")
    if trace is not None:
        if w.packets() == 0:
            # Calibrated on nothing, the rule-aware dispatcher chose its fields without traffic.
            raise SuperlinearError(f"{trace}: no TCP/UDP/IPv4 packets (--trace is the traffic sample the rule-aware "
                                   "dispatcher plans on)")
        w.calibrate(CALIBRATION)
    return w


def _name(args: argparse.Namespace, only_one_will_do: bool = False) -> str:
    """The datapath the user named. ``only_one_will_do``: a read-only command (stats) may take the
    only one loaded; update and unload change it, so they must be told which."""
    if args.name:
        return str(args.name)
    if not args.iface:
        loaded = pins.loaded()
        if only_one_will_do and len(loaded) == 1:
            return loaded[0]
        raise SuperlinearError("which datapath? give --iface IF (and --netns NS), or --name "
                               + (f"(loaded: {', '.join(loaded)})" if loaded else "(none is loaded)"))
    return pins.datapath_name(args.iface, args.netns)


def cmd_load(args: argparse.Namespace) -> int:
    if not args.rules or not args.iface:
        raise SuperlinearError("xdp load needs --rules FILE and --iface IF")
    try:
        _native.xdp_check_dispatch(args.dispatch)
    except SuperlinearError as e:
        raise SuperlinearError(f"--dispatch: {e}") from None
    w = read_rules(args.rules, args.trace, args)
    pins.require()
    name = pins.datapath_name(args.iface, args.netns)
    if (pins.pin_dir(name) / "link").exists():
        gone = pins.gone(pins.read_meta(name))
        if gone is not None:
            raise SuperlinearError(f"{gone}, but the datapath loaded on it is still pinned as {name}: "
                                   f"`superlinear xdp unload --name {name}` removes it, then load again")
        raise SuperlinearError(f"a datapath is already loaded on {args.iface} ({name}): "
                               "`superlinear xdp update` replaces its rules, `xdp unload` removes it")
    cfg = {"iface": args.iface, "netns": args.netns or "", "algo": args.algo, "dispatch": args.dispatch,
           "k": args.workers or 0, "cpus": list(args.cpus or []), "queue_size": args.queue_size, "mode": args.mode,
           "pin_dir": str(pins.pin_dir(name))}
    try:
        info = pins.load(w, cfg)
        meta = {**cfg, **info, "rules_file": str(Path(args.rules).resolve()), "rule_format": args.rule_format,
                "actions": args.actions, "default": w.default_action()[0], "loaded_at": time.time()}
        pins.write_meta(name, meta)
    except BaseException:
        # A Ctrl-C during the load (it lands once the load returns) left the datapath attached,
        # classifying the interface's traffic, with nothing recorded of its rules: a load stopped
        # or failed loads nothing. (An unload that fails too must not hide why the load did.)
        with contextlib.suppress(SuperlinearError, OSError):
            pins.unload(name)
        raise
    if args.json:
        print(json.dumps(meta, indent=1))
        return 0
    where = f"{args.iface}" + (f" in namespace {args.netns}" if args.netns else "")
    console.print(f"loaded {info['rules']:,} rules ({info['algo']}) on {where}: dispatcher hashes "
                  f"{info['fields']}, {info['k']} logical worker(s) on CPU(s) {','.join(map(str, info['cpus']))}; "
                  f"pinned at {pins.pin_dir(name)}", highlight=False, markup=False, soft_wrap=True)
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    if not args.rules:
        raise SuperlinearError("xdp update needs --rules FILE (the new rule set)")
    w = read_rules(args.rules, None, args)
    pins.require()
    name = _name(args)
    if not (pins.pin_dir(name) / "settings").exists():
        raise SuperlinearError(f"no datapath {name} is loaded (superlinear xdp list)")
    meta = pins.read_meta(name)
    gone = pins.gone(meta)
    if gone is not None:
        # The pins outlive the interface: the update would land in maps no traffic reaches.
        raise SuperlinearError(f"{gone}: datapath {name} classifies no traffic, new rules would change nothing "
                               f"(`superlinear xdp unload --name {name}` removes it)")
    t0 = time.perf_counter()
    slot = _native.xdp_update(w, str(pins.pin_dir(name)))
    meta.update({"rules_file": str(Path(args.rules).resolve()), "rules": w.rules(), "rule_format": args.rule_format,
                 "actions": args.actions, "default": w.default_action()[0]})
    meta["updates"] = int(meta.get("updates", 0)) + 1
    pins.write_meta(name, meta)
    console.print(f"{w.rules():,} rules in force on {name} (generation slot {slot}, switched atomically in "
                  f"{time.perf_counter() - t0:.2f} s; orders start again in priority order)", highlight=False,
                  markup=False)
    return 0


def counters(name: str) -> dict[str, Any]:
    if not (pins.pin_dir(name) / "settings").exists():
        raise SuperlinearError(f"no datapath {name} is loaded (superlinear xdp list)")
    c: dict[str, Any] = dict(_native.xdp_counters(str(pins.pin_dir(name))))
    return c


def _rule_texts(meta: dict[str, Any]) -> list[str] | None:
    try:
        opts = {"format": meta.get("rule_format", "auto"), "actions": meta.get("actions", "random"),
                "default": meta.get("default", "accept")}
        w = _native.NftWorkload.load(meta["rules_file"], None, opts)
        return [describe_row((*r[:10], r[11])) for r in w.rule_rows()]
    except (KeyError, SuperlinearError, OSError):
        return None


def _hist_label(b: int) -> str:
    return "0" if b == 0 else (str(1 << (b - 1)) if b == 1 else f"{1 << (b - 1)}-{(1 << b) - 1}")


def stats_tables(name: str, c: dict[str, Any], meta: dict[str, Any], top: int,
                 previous: tuple[float, dict[str, Any]] | None) -> Table:
    """One grid of tables: dispatcher, CPUs, logical workers, top rules."""
    grid = Table.grid(padding=(0, 0))
    fields = meta.get("fields", "?")
    grid.add_row(f"[bold]{name}[/]: {c['rules']:,} rules ({c['algo']}), generation slot {c['generation']}, "
                 f"dispatcher hashes {fields}, {c['k']} logical worker(s)")
    dt = time.time() - previous[0] if previous else None
    d = Table(title="dispatcher (frames)", title_justify="left")
    d.add_column("reason")
    d.add_column("frames", justify="right")
    for reason, n in c["dispatch"]:
        d.add_row(reason, f"{n:,}")
    cost = Table(title="cost per packet (bpf_stats)", title_justify="left")
    cost.add_column("program")
    cost.add_column("runs", justify="right")
    cost.add_column("ns/packet", justify="right")
    for label, key in (("dispatcher", "dispatch_program"), ("worker", "worker_program")):
        ps = c[key]
        off = "off (sysctl kernel.bpf_stats_enabled=1)"
        per = f"{ps['run_time_ns'] / ps['run_count']:,.0f}" if ps["run_count"] else off
        cost.add_row(label, f"{ps['run_count']:,}", per)
    cpus = Table(title="worker CPUs", title_justify="left")
    for col in ("CPU", "packets", "rules compared", "per packet") + (("packets/s",) if dt else ()):
        cpus.add_column(col, justify="right")
    prev_cpu = {x["cpu"]: x for x in previous[1]["cpus"]} if previous else {}
    for x in c["cpus"]:
        row = [str(x["cpu"]), f"{x['packets']:,}", f"{x['compared']:,}",
               f"{x['compared'] / x['packets']:,.1f}" if x["packets"] else "-"]
        if dt:
            row.append(f"{(x['packets'] - prev_cpu.get(x['cpu'], {'packets': 0})['packets']) / dt:,.0f}")
        cpus.add_row(*row)
    workers = Table(title="logical workers (kernel counters)", title_justify="left")
    for col in ("worker", "CPU", "packets", "per packet", "moved"):
        workers.add_column(col, justify="right")
    hist_buckets = [b for b in range(16) if any(w["position_histogram"][b] for w in c["workers"])]
    for b in hist_buckets:
        workers.add_column(f"pos {_hist_label(b)}", justify="right")
    shown = c["workers"] if len(c["workers"]) <= 64 else sorted(c["workers"], key=lambda w: -w["packets"])[:64]
    for w in shown:
        workers.add_row(str(w["worker"]), str(w["cpu"]), f"{w['packets']:,}",
                        f"{w['compared'] / w['packets']:,.1f}" if w["packets"] else "-", f"{w['moved']:,}",
                        *[f"{w['position_histogram'][b]:,}" for b in hist_buckets])
    rules = Table(title=f"top {top} rules by hits", title_justify="left")
    rules.add_column("rule", justify="right")
    rules.add_column("hits", justify="right")
    rules.add_column("rule text")
    texts = _rule_texts(meta)
    order = sorted(range(len(c["rule_hits"])), key=lambda i: -c["rule_hits"][i])[:top]
    for i in order:
        if c["rule_hits"][i] == 0:
            break
        rules.add_row(str(i + 1), f"{c['rule_hits'][i]:,}", texts[i] if texts and i < len(texts) else "")
    rules.add_row("default", f"{c['default_hits']:,}", "no rule matched")
    for t in (d, cost, cpus, workers, rules):
        grid.add_row(t)
    if len(c["workers"]) > 64:
        grid.add_row(f"(64 busiest of {len(c['workers'])} logical workers shown; --json has all)")
    return grid


def cmd_stats(args: argparse.Namespace) -> int:
    pins.require()
    name = _name(args, only_one_will_do=True)
    meta = pins.read_meta(name)
    c = counters(name)
    gone = pins.gone(meta)
    if gone is not None:
        note(f"{gone}: datapath {name} sees no traffic, its counters are the last ones "
             f"(`superlinear xdp unload --name {name}` removes it)")
    if args.json:
        print(json.dumps({"name": name, "meta": meta, "gone": gone, **c}, indent=1))
        return 0
    if not args.watch:
        console.print(stats_tables(name, c, meta, args.top, None))
        return 0
    previous = (time.time(), c)
    with Live(stats_tables(name, c, meta, args.top, None), console=console, auto_refresh=False) as live:
        while True:
            time.sleep(args.watch)
            c = counters(name)
            live.update(stats_tables(name, c, meta, args.top, previous), refresh=True)
            previous = (time.time(), c)


def cmd_unload(args: argparse.Namespace) -> int:
    pins.require()
    names = pins.loaded() if args.all else [_name(args)]
    for name in names:
        gone = pins.gone(pins.read_meta(name))
        if pins.unload(name):
            # A datapath whose interface is gone was attached to nothing: only its pins were left.
            console.print(f"unloaded {name}" + (f" ({gone}: removed the pins it left behind)" if gone else ""),
                          highlight=False, markup=False, soft_wrap=True)
        elif not args.all:
            raise SuperlinearError(f"no datapath {name} is loaded (superlinear xdp list)")
    if args.all and not names:
        console.print("no datapath is loaded")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    names = pins.loaded()
    rows = []
    for n in names:
        meta = pins.read_meta(n)
        rows.append({"name": n, **meta, "gone": pins.gone(meta)})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    if not rows:
        console.print("no datapath is loaded")
        return 0
    t = Table()
    for col in ("name", "interface", "namespace", "rules", "algo", "fields", "k", "CPUs", "rule file", "state"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["name"], str(r.get("iface", "?")), str(r.get("netns") or "-"), f"{r.get('rules', '?')}",
                  str(r.get("algo", "?")), str(r.get("fields", "?")), str(r.get("k", "?")),
                  ",".join(map(str, r.get("cpus", []))), str(r.get("rules_file", "?")),
                  escape(f"gone: {r['gone']}") if r["gone"] else "attached")
    console.print(t)
    return 0


COMMANDS = {"load": cmd_load, "stats": cmd_stats, "update": cmd_update, "unload": cmd_unload, "list": cmd_list}

#: The options (by dest) each action reads; the others are refused, naming the actions that do
#: (one parser serves them all: ``xdp update --workers 8`` once replaced the rules and kept 4).
RULE_OPTIONS = ("rules", "rule_format", "actions", "default")
WHICH = ("iface", "netns", "name")
USED = {
    "load": {*RULE_OPTIONS, "iface", "netns", "algo", "dispatch", "workers", "cpus", "trace", "queue_size", "mode",
             "json"},
    "stats": {*WHICH, "top", "watch", "json"},
    "update": {*RULE_OPTIONS, *WHICH},
    "unload": {*WHICH, "all"},
    "list": {"json"},
}


def _check_options(args: argparse.Namespace, scope: OptionScope) -> None:
    """Refuses what ``args.action`` would not read, then the combinations it would not either."""
    where = {dest: "it is for xdp " + ", ".join(a for a in ACTIONS if dest in USED[a]) for dest in scope.flags}
    scope.check(args, USED[args.action], f"in xdp {args.action}", where)
    given = {dest for dest in scope.flags if scope.given(args, dest)}
    if args.action == "load" and "trace" in given and not (args.dispatch or "").startswith("rule"):
        raise SuperlinearError("--trace has no effect in xdp load without --dispatch rule (it is the traffic sample "
                               "the rule-aware dispatcher plans on)")
    if args.action == "stats" and args.json:
        for dest in ("top", "watch"):
            if dest in given:
                raise SuperlinearError(f"{scope.flags[dest]} has no effect in xdp stats with --json (it prints every "
                                       "counter once)")
    if args.action in ("stats", "update", "unload") and "name" in given:
        for dest in ("iface", "netns"):
            if dest in given:
                raise SuperlinearError(f"{scope.flags[dest]} has no effect in xdp {args.action} with --name (the name "
                                       "says the interface and namespace)")
    if args.action == "unload" and args.all:
        for dest in WHICH:
            if dest in given:
                raise SuperlinearError(f"{scope.flags[dest]} has no effect in xdp unload with --all (it unloads every "
                                       "datapath this project loaded)")
    scope.fill(args)


def cmd_xdp(args: argparse.Namespace, scope: OptionScope) -> int:
    _check_options(args, scope)
    try:
        return COMMANDS[args.action](args)
    except NeedsPrivilegesError as e:
        print(f"superlinear: xdp {args.action}: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return stopped_exit_code()


def add_rule_options(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """How rule files are read (the same flags as `superlinear classify`)."""
    p.add_argument("--rule-format", default="auto", help="rule format: auto, classbench, native, nft (default auto)")
    p.add_argument("--actions", default="random",
                   help="actions of ClassBench filters: random[:DROP_FRACTION[:SEED]] or accept (default random)")
    p.add_argument("--default", default="accept", help="default policy where the file sets none (default accept)")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "xdp", help="the self-adjusting classifier in the kernel's XDP datapath: load, stats, update, unload",
        description="Load your rules into the Linux XDP datapath of an interface: an XDP dispatcher hashes the "
        "chosen header fields (RSS) and redirects each frame through a cpumap to its logical worker's CPU, "
        "where a static or MRF rule list classifies it (accept passes, drop/reject/queue drop). The datapath "
        "stays loaded (pinned in bpffs) until `xdp unload`. Needs root. Exit codes: 0 done, 2 bad input, "
        "69 not supported by this build or kernel, 77 no privileges, 130 Ctrl-C.",
    )
    p.add_argument("action", choices=ACTIONS, help="load, stats (counters; --watch for live), update (new rules "
                   "under traffic), unload, list")
    p.add_argument("--rules", metavar="FILE", help="load/update: rule file (ClassBench, native or nft; detected)")
    add_rule_options(p)
    p.add_argument("--iface", metavar="IF", help="the ingress interface")
    p.add_argument("--netns", metavar="NS",
                   help="the interface's named network namespace (ip netns; default: this one)")
    p.add_argument("--name",
                   help="stats/update/unload: the datapath's name (see `xdp list`) instead of --iface/--netns")
    p.add_argument("--algo", default="mrf", choices=("static", "mrf"),
                   help="load: worker classifier (default mrf: Move-Recursively-Forward, paper Alg. 1)")
    p.add_argument("--dispatch", default="rss",
                   help="load: rss[:FIELDS] (Toeplitz over sip,dip,sport,dport,proto or a subset, e.g. rss:dport) "
                        "or rule (the rule-aware dispatcher's field choice for k; default rss, the 5-tuple)")
    p.add_argument("--workers", "-k", type=positive_int, default=None,
                   help="load: logical workers, each with its own order, bound to CPU w mod len(CPUs) "
                        "(default: one per worker CPU)")
    p.add_argument("--cpus", type=online_cpu_list, default=None, metavar="LIST",
                   help="load: worker CPUs, e.g. 0,1 (default: every online CPU)")
    p.add_argument("--trace", metavar="FILE", help="load: traffic sample the rule-aware dispatcher calibrates on")
    p.add_argument("--queue-size", type=queue_size, default=2048,
                   help=f"load: frames per worker CPU queue, 1 to {CPUMAP_MAX_QSIZE} (default 2048)")
    p.add_argument("--mode", choices=("native", "generic"), default="native",
                   help="load: native (driver) XDP, or generic (skb) where the driver has none (default native)")
    p.add_argument("--top", type=positive_int, default=10, help="stats: rules shown (default 10)")
    p.add_argument("--watch", type=positive_float, default=None, metavar="SECONDS",
                   help="stats: refresh every SECONDS with rates, until Ctrl-C")
    p.add_argument("--all", action="store_true", help="unload: every datapath this project loaded")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    scope = OptionScope(p, exempt=("action",))
    p.set_defaults(func=lambda args: cmd_xdp(args, scope))
    from superlinear.classify.cli import actions_scope

    actions_scope(p)


def _bench_inputs(args: argparse.Namespace) -> list[Any]:
    from superlinear.nft.bench import rule_set_inputs

    options = {"format": args.rule_format, "trace_format": args.trace_format, "actions": args.actions,
               "default": args.default}
    return rule_set_inputs(args, options)


def _check_cpu_counts(counts: tuple[int, ...], check: bool) -> None:
    """Counts of worker CPUs above those this process may use are left out of the runs (said);
    where none is left, the check study would check nothing and pass: refused (``--cpu-counts 64``
    on two CPUs would run no agreement run and exit 0)."""
    ncpu = len(os.sched_getaffinity(0))
    over = [c for c in counts if c > ncpu]
    if not over:
        return
    if check and len(over) == len(counts):
        raise SuperlinearError(f"--cpu-counts {','.join(map(str, counts))}: this process may use {ncpu} CPU(s), so "
                               f"no agreement run would be made (give counts of at most {ncpu})")
    note(f"--cpu-counts: {', '.join(map(str, over))} left out (this process may use {ncpu} CPU(s))")


def cmd_xdp_bench(args: argparse.Namespace) -> int:
    from superlinear.nft.netns import TerminatedError
    from superlinear.output.results import record_plots, write_results
    from superlinear.xdp.bench import STUDIES, XdpBenchConfig, run_sets
    from superlinear.xdp.report import check_lines, cost_table, plot, throughput_table, work_table
    from superlinear.xdp.throughput import worker_cpu_counts

    refuse_stdout(args.out, "--out", "xdp-bench writes a folder of results (name one; --json prints result.json on "
                  "standard output)")  # before the inputs are read
    studies = tuple(comma_list("--studies", args.studies))
    dispatches = tuple(comma_list("--dispatch", args.dispatch, separator=";"))
    for d in dispatches:
        # The datapath's own check, as `xdp load` makes it: a dispatcher of the user-space
        # classifier only (two-choice) failed at the first load, unnamed, namespaces made.
        try:
            _native.xdp_check_dispatch(d)
        except SuperlinearError as e:
            raise SuperlinearError(f"--dispatch {d}: {e}") from None
    unknown_studies = [x for x in studies if x not in STUDIES]
    if unknown_studies:
        raise SuperlinearError(f"--studies: unknown {', '.join(unknown_studies) or '(empty)'} "
                               f"(known: {', '.join(STUDIES)})")
    if "throughput" in studies:
        worker_cpu_counts(args.throughput_cpus, args.senders)  # more CPUs than there are: say so now
    if {"check", "work"} & set(studies):
        _check_cpu_counts(args.cpu_counts, "check" in studies)
    inputs = _bench_inputs(args)
    localities = tuple(comma_list("--localities", args.localities))
    unknown = [x for x in localities if x not in ("trace", "high", "none")]
    if unknown:
        raise SuperlinearError(f"--localities: unknown {', '.join(unknown) or '(empty)'} (known: trace, high, none)")
    cfg = XdpBenchConfig(ks=args.workers, cpu_counts=args.cpu_counts, dispatches=dispatches,
                         localities=localities, repeats=args.repeats, duration=args.duration,
                         check_rate=args.check_rate, nft=not args.no_nft, sender_cpu=args.cpu, mode=args.mode,
                         keep=args.keep, studies=studies, throughput_cpus=args.throughput_cpus, senders=args.senders,
                         generator=args.generator)
    out = output_dir(args.out, inputs=inputs_of(args))
    err = Console(stderr=True, width=max(120, Console(stderr=True).width))

    plots: list[Path] = []

    def save(results: list[Any]) -> Path:
        config = {**cfg.__dict__, "sets": [{"name": i.name, "rules": i.rules, "trace": i.trace} for i in inputs]}
        path = write_results(out, "xdp-bench", config, [r for res in results for r in res.rows])
        (out / "check.json").write_text(json.dumps([res.check for res in results], indent=1, default=str),
                                        encoding="utf-8")
        plots[:] = plot(out, results)  # none where only the check study ran
        record_plots(path, plots)
        return path

    try:
        results = run_sets(inputs, cfg, lambda m: err.print(m, highlight=False, markup=False, soft_wrap=True),
                           on_set=save)
    except NeedsPrivilegesError as e:
        print(f"superlinear: xdp-bench: {e}", file=sys.stderr)
        return e.exit_code
    except TerminatedError as e:
        print(f"superlinear: xdp-bench: {e}; namespaces and datapaths removed", file=sys.stderr)
        return 143
    path = save(results)
    if args.json:
        print(path.read_text(encoding="utf-8"))
    else:
        for table in (cost_table(results), work_table(results), throughput_table(results)):
            if table.row_count:
                console.print(table)
        for line in check_lines(results):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        console.print(f"results: {path}, {out / 'result.csv'}, {out / 'check.json'}"
                      + (f"; plot: {plots[0]}" if plots else ""), highlight=False, markup=False, soft_wrap=True)
    return 0 if all(res.check["ok"] for res in results) else 1


#: The xdp-bench options each study reads (xdp/bench.py run_set, xdp/throughput.py); one given
#: with --studies that leaves all of its studies out is refused. (--no-nft is not here: without
#: the studies that run nftables it still holds.)
BENCH_STUDY_OPTIONS = {
    "localities": ("cost",),
    "workers": ("work",),
    "cpu_counts": ("check", "work"),
    "dispatch": ("check", "work"),
    "check_rate": ("check", "cost", "work"),
    "cpu": ("check", "cost", "work"),
    "repeats": ("cost", "throughput"),
    "duration": ("cost", "throughput"),
    "throughput_cpus": ("throughput",),
    "senders": ("throughput",),
    "generator": ("throughput",),
}


#: Of the cost study, only nftables' runs read --duration (the XDP costs are exact replays).
NFT_ONLY_IN_COST = frozenset({"duration"})


def _unless_studies(args: argparse.Namespace, *, dest: str, users: tuple[str, ...]) -> str | None:
    if dest in NFT_ONLY_IN_COST and args.no_nft:
        users = tuple(u for u in users if u != "cost")
        refused = unless_chosen(args.studies, users, "--studies")
        return None if refused is None else f"{refused} and --no-nft"
    return unless_chosen(args.studies, users, "--studies")


def register_bench(sub: Any) -> None:
    p = sub.add_parser(
        "xdp-bench", help="your rules in the XDP datapath vs nftables vs user space: exact counters, cost, work",
        description="Replay a trace through a veth pair between two network namespaces into the XDP datapath "
        "(static list and MRF, 1 and 2 worker CPUs, each dispatcher), check every rule's counter and every logical "
        "worker's work against our user-space classifier (and nftables), measure the cost per packet (bpf_stats) "
        "on the trace, on packet trains and shuffled, against the nftables chain, and the work speedup at k "
        "logical workers from the kernel's counters. Needs root. Exit codes: 0 all equal, 1 a check failed, "
        "2 bad input, 69 unsupported, 77 no privileges, 130 Ctrl-C.",
    )
    g = p.add_argument_group("input")
    g.add_argument("--rules", metavar="FILE", help="rule set: ClassBench filters, native rules or nft list output")
    g.add_argument("--trace", metavar="FILE", help="trace: ClassBench header trace, pcap, pcapng or binary")
    g.add_argument("--name", help="label of this rule set (default: the rules file name)")
    g.add_argument("--data", metavar="DIR", help="instead of --rules/--trace: a folder of ClassBench sets")
    g.add_argument("--sets", default="acl1,ipc1,fw1", help="with --data: sets to run (default acl1,ipc1,fw1)")
    g.add_argument("--classbench-size", "--size", dest="size", default="5k",
                   help="with --data: size suffix of the files (default 5k)")
    add_rule_options(g)
    g.add_argument("--trace-format", default="auto", help="trace format: auto, classbench, pcap, pcapng, binary")
    m = p.add_argument_group("measurement")
    m.add_argument("--workers", "-k", type=whole_list(1, XDP_MAX_WORKERS), default=(1, 2, 4, 8, 16, 32),
                   help="logical workers of the work-speedup study (default 1,2,4,8,16,32)")
    m.add_argument("--cpu-counts", type=whole_list(1), default=(1, 2),
                   help="worker CPUs of the agreement runs (default 1,2; those above this machine's are skipped)")
    m.add_argument("--dispatch", default="rss;rule",
                   help="dispatchers, ';'-separated: rss[:FIELDS] or rule (default 'rss;rule')")
    m.add_argument("--localities", default="trace,high,none",
                   help="traces of the cost study: trace, high (trains of 16), none (shuffled) (default all)")
    m.add_argument("--repeats", type=repeat_count, default=3,
                   help="interleaved runs per cost (default 3; median, range)")
    m.add_argument("--duration", type=duration_seconds, default=3.0,
                   help="seconds per nftables throughput run and per timed window of the XDP throughput study "
                   "(default 3)")
    m.add_argument("--studies", default="check,cost,work,throughput",
                   help="parts to run: check (exact counters), cost (ns per packet), work (work speedup), "
                   "throughput (packets/s against worker CPUs) (default all)")
    m.add_argument("--throughput-cpus", type=whole_list(1), default=None, metavar="LIST",
                   help="worker CPU counts of the throughput study (default 1,2,4,... and all the senders leave)")
    m.add_argument("--senders", type=positive_int, default=1,
                   help="sender threads of the throughput study, each on a CPU of its own, the last CPUs "
                   "(default 1)")
    m.add_argument("--generator", choices=("xdp-live", "sendmmsg"), default="xdp-live",
                   help="how the throughput study's senders make traffic: xdp-live, the trace replayed by an XDP "
                   "program run in the kernel (BPF_PROG_RUN live frames, Linux 5.18+; several times the packets per "
                   "sender CPU), or sendmmsg, AF_PACKET batches (default xdp-live)")
    m.add_argument("--check-rate", type=positive_float, default=50_000.0,
                   help="pace of the exact replays in packets/s (default 50000; halved on a shortfall)")
    m.add_argument("--no-nft", action="store_true", help="leave nftables out")
    m.add_argument("--cpu", type=usable_cpu, default=None, help="the sender's CPU (default: the last one)")
    m.add_argument("--mode", choices=("native", "generic"), default="native", help="XDP mode (default native)")
    o = p.add_argument_group("output")
    o.add_argument("--out", default="results/xdp-bench", help="output folder (default results/xdp-bench)")
    o.add_argument("--json", action="store_true", help="print result.json instead of the tables")
    o.add_argument("--keep", action="store_true",
                   help="leave the namespaces in place (nft-bench --cleanup removes them)")
    p.set_defaults(func=cmd_xdp_bench)
    generator_scope(p, {"sets", "size"}, source="rules", why="it picks ClassBench sets in --data")
    conditional_scope(p, ("name",), lambda args: "with --data" if args.data and not args.rules else None,
                      "it labels the rule set of --rules; --data sets keep their file names")
    for dest, users in BENCH_STUDY_OPTIONS.items():
        named = ", ".join(users[:-1]) + (" and " if len(users) > 1 else "") + users[-1]
        why = f"it is for the {named} stud{'y' if len(users) == 1 else 'ies'}"
        if dest in NFT_ONLY_IN_COST:
            why += " (in the cost study, for nftables' runs)"
        conditional_scope(p, (dest,), partial(_unless_studies, dest=dest, users=users), why)
    from superlinear.classify.cli import actions_scope

    actions_scope(p)
