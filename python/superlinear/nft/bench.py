"""``superlinear nft-bench``: the same rules and trace through Linux nftables and through our
classifiers, cross-checked rule by rule and measured side by side (paper §4: the self-adjusting
MRF classifier against the vanilla Linux classifier, which evaluates a chain as a linear list).

Per rule set, inside one pair of namespaces (:class:`superlinear.nft.netns.NetnsPair`):

1. **Round trip.** The rules become one linear chain with a counter per rule (the Rust
   ``superlinear_nftbench::chain``); ``nft -j list`` read back (:mod:`superlinear.nft.ruleset_json`) must
   equal the input rules, in order.
2. **Exact check.** The trace is replayed exactly once, paced; the counters' sum must equal the
   packets sent (every packet was classified; otherwise the replay is repeated at half the rate),
   and every rule's counter and the default policy's must equal our classifiers' counts (static
   list and MRF, each classifying the same trace). Differences are reported rule by rule.
3. **Throughput (measured).** For a fixed duration the sender loops over the trace as fast as it
   can, once with the rule chain and once with an empty chain, ``repeats`` times; the classified
   packets come from the counters. On a veth pair the receive path runs on the sending CPU
   (softirq at the end of each send), so a rate covers the whole path on one core: our sender,
   the AF_PACKET send, veth, the receive path and the nftables chains. Rates are per second of
   CPU time of that path (:mod:`superlinear.nft.cpuacct`), as ours are, and also per wall second. The
   difference ``1/rate(rules) − 1/rate(empty)`` is what evaluating the rules costs per packet.
4. **Our side.** Static list and MRF with one worker: single-thread CPU time per packet over the
   same trace (measured, release build); MRF with k = 2…32 workers behind a dispatcher: the
   core's projected mode (serial dispatcher CPU time + slowest worker's CPU time).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from superlinear import _native
from superlinear.common.args import comma_list
from superlinear.common.errors import SuperlinearError
from superlinear.common.rows import Row
from superlinear.experiments.repeats import interleaved_rounds, spread
from superlinear.nft.cpuacct import ReceivePathClock
from superlinear.nft.netns import NetnsPair
from superlinear.nft.ruleset_json import RuleRow, TableListing, compare_rows, describe_row, parse_table

Progress = Callable[[str], None]
#: Longest single call into the sender, so Ctrl-C is answered within about this long.
SLICE_S = 0.5
#: ClassBench sets ``--data`` runs by default, and their file names.
DATA_SETS = ("acl1", "ipc1", "fw1")


@dataclass(frozen=True)
class RuleSetInput:
    """One rule set and its trace."""

    name: str
    rules: str
    trace: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchConfig:
    """How to run the benchmark."""

    duration: float = 3.0
    repeats: int = 3
    ks: tuple[int, ...] = (2, 4, 8, 16, 32)
    dispatch: str = "rss"
    check_only: bool = False
    keep: bool = False
    batch: int = 256
    cpu: int | None = None
    check_rate: float = 50_000.0
    check_attempts: int = 4
    seed: int = 1


def rule_set_inputs(args: Any, options: dict[str, Any], trace_optional: bool = False) -> list[RuleSetInput]:
    """The rule sets a benchmark runs (``nft-bench``, ``xdp-bench``): ``--rules``/``--trace`` (and
    ``--name``), or the ClassBench sets ``--sets`` of size ``--size`` in ``--data``;
    ``trace_optional`` for a mode that reads the rules only (``nft-bench --emit``)."""
    if args.rules or args.trace:
        if args.data:
            raise SuperlinearError("give either --rules and --trace, or --data, not both")
        if not args.rules:
            raise SuperlinearError("--trace needs --rules (the rule set the trace runs through)")
        if not (args.trace or trace_optional):
            raise SuperlinearError("--rules needs --trace (the packets to replay)"
                                   + (", except with --emit" if hasattr(args, "emit") else ""))
        return [RuleSetInput(args.name or Path(args.rules).name, args.rules, args.trace or "", options)]
    if not args.data:
        raise SuperlinearError("nothing to run: give --rules FILE --trace FILE, or --data DIR (ClassBench sets)")
    root = Path(args.data)
    if not root.is_dir():
        raise SuperlinearError(f"{root}: --data must be a folder holding acl1_5k, acl1_5k_trace, ...")
    sets = comma_list("--sets", args.sets, empty="--sets: empty list (name one or more sets, e.g. acl1,ipc1,fw1)")
    for s in sets:
        for name in (f"{s}_{args.size}",) + (() if trace_optional else (f"{s}_{args.size}_trace",)):
            if not (root / name).is_file():
                raise SuperlinearError(f"--data {root}: no file {name} (set {s} of --sets, size {args.size})")
    return [RuleSetInput(f"{s}_{args.size}", str(root / f"{s}_{args.size}"), str(root / f"{s}_{args.size}_trace"),
                         options) for s in sets]


def require_file(path: str, what: str) -> None:
    """Refuses, in one line naming the flag, a ``what`` (rules, trace) path that is a folder or
    is not there; what else is no file (a device) the native reader refuses in its own words."""
    if Path(path).is_dir():
        raise SuperlinearError(f"{path}: a folder (--{what} wants a {what} file)")
    if not Path(path).exists():
        raise SuperlinearError(f"{path}: no such file (--{what} wants a {what} file)")


def load_rules(inp: RuleSetInput) -> Any:
    """The rule set alone (a header made from it stands in for the trace): for ``--emit``."""
    require_file(inp.rules, "rules")
    return _native.NftWorkload.load(inp.rules, None, {**inp.options, "generate": 0})


def load_workload(inp: RuleSetInput) -> Any:
    """The rule set and trace, read by the classifier's own readers."""
    for what, path in (("rules", inp.rules), ("trace", inp.trace)):
        require_file(path, what)
    w = _native.NftWorkload.load(inp.rules, inp.trace, inp.options)
    if w.rules() == 0:
        raise SuperlinearError(f"{inp.rules}: no rules")
    if w.packets() == 0:
        raise SuperlinearError(f"{inp.trace}: no TCP/UDP/IPv4 packets")
    return w


def median_range(values: list[float]) -> dict[str, float | None]:
    """Median, least, largest and (largest − least) / median of repeated figures (None when empty)."""
    if not values:
        return {"median": None, "min": None, "max": None, "rel_spread": None}
    med = statistics.median(values)
    lo, hi = min(values), max(values)
    return {"median": med, "min": lo, "max": hi, "rel_spread": (hi - lo) / med if med else None}


def send_frames(pair: NetnsPair, w: Any, cfg: BenchConfig, count: int | None = None, seconds: float | None = None,
                rate: float | None = None, start: int = 0) -> dict[str, int]:
    """Sends with ``w.send`` (the workload's sendmmsg sender, or an ``XdpReplayer``) in slices of at
    most SLICE_S seconds (Ctrl-C lands between slices), from packet ``start`` of the trace on,
    continuing where the previous slice stopped."""
    total = {"sent": 0, "elapsed_ns": 0, "cpu_ns": 0, "calls": 0, "refused": 0}
    left_n, left_s = count, seconds
    while True:
        spec: dict[str, Any] = {"netns": pair.tx_ns, "device": pair.tx_dev, "start": start, "batch": cfg.batch,
                                "cpu": cfg.cpu, "rate_pps": rate}
        if left_n is not None:
            spec["count"] = min(left_n, max(cfg.batch, int((rate or 200_000) * SLICE_S)))
        if left_s is not None:
            spec["seconds"] = min(SLICE_S, left_s)
        r = w.send(spec)
        for key in total:
            total[key] += r[key]
        start = r["next"]
        if left_n is not None:
            left_n -= r["sent"]
            if left_n <= 0:
                break
        if left_s is not None:
            left_s -= r["elapsed_ns"] / 1e9
            if left_s <= 1e-3:
                break
    return total


def reached_rate(sent: dict[str, int]) -> float | None:
    """The packets per second a paced replay reached (sent over its wall-clock time); None where
    nothing was timed."""
    return sent["sent"] * 1e9 / sent["elapsed_ns"] if sent["elapsed_ns"] > 0 and sent["sent"] else None


def paced_at(attempt: dict[str, Any]) -> str:
    """The pace of a replay in words: the rate reached, and the one asked for (``--check-rate``)."""
    asked, reached = attempt["rate_pps"], attempt.get("reached_pps")
    if reached is None:
        return f"paced at {asked:,.0f} packets/s asked (the rate reached was not timed)"
    return f"replayed at {reached:,.0f} packets/s ({asked:,.0f} asked)"


def _classified(listing: TableListing) -> int:
    return sum(listing.classify.counters) + listing.classify.default_count


def _settled(pair: NetnsPair, expect: int) -> TableListing:
    """The table once the receive backlog has drained (counters stop short of ``expect`` only
    while packets are still queued)."""
    listing = parse_table(pair.list_table(), pair.table)
    for _ in range(5):
        if _classified(listing) + listing.foreign >= expect:
            break
        time.sleep(0.2)
        listing = parse_table(pair.list_table(), pair.table)
    return listing


def round_trip(w: Any, listing: TableListing) -> dict[str, Any]:
    """Input rules (verdicts as the kernel chain runs them) against the listed chain."""
    want: list[RuleRow] = [(*r[:10], r[11]) for r in w.rule_rows()]
    diffs = compare_rows(want, listing.classify.rows)
    default_kernel = w.default_action()[1]
    if listing.classify.policy != default_kernel:
        diffs.append(f"default policy: in {default_kernel}, listed {listing.classify.policy}")
    return {"equal": not diffs, "rules": len(want), "listed": len(listing.classify.rows), "differences": diffs}


def exact_check(pair: NetnsPair, w: Any, cfg: BenchConfig, progress: Progress) -> dict[str, Any]:
    """Round trip, one paced replay, and the counters against our classifiers, rule by rule."""
    rules_text = w.nft_table(pair.table, pair.rx_dev)
    n = w.packets()
    rate = cfg.check_rate
    attempts: list[dict[str, Any]] = []
    listing: TableListing | None = None
    rt: dict[str, Any] = {}
    for attempt in range(1, cfg.check_attempts + 1):
        load_s = pair.load_table(rules_text)
        if attempt == 1:
            rt = round_trip(w, parse_table(pair.list_table(), pair.table))
            progress(f"{w.rules():,} rules loaded into nftables in {load_s:.2f} s; round trip "
                     + ("equal" if rt["equal"] else f"DIFFERS ({len(rt['differences'])} differences)"))
        rx0 = pair.rx_counters().rx_packets
        progress(f"exact check: replaying {n:,} packets once, paced at {rate:,.0f} packets/s asked (attempt "
                 f"{attempt})")
        sent = send_frames(pair, w, cfg, count=n, rate=rate)
        listing = _settled(pair, sent["sent"])
        counted = _classified(listing)
        received = pair.rx_counters().rx_packets - rx0
        # ``rate_pps`` is the pace asked for, ``reached_pps`` what the sender did (a pace above what
        # it can send is no limit, and must not be reported as the replay's rate).
        attempts.append({"rate_pps": rate, "reached_pps": reached_rate(sent), "sent": sent["sent"],
                         "received": received, "classified": counted, "foreign": listing.foreign,
                         "refused": sent["refused"]})
        if counted == sent["sent"] == n and listing.foreign == 0:
            break
        progress(f"  {counted:,} of {sent['sent']:,} packets classified: replaying slower")
        rate /= 2
    assert listing is not None
    final = attempts[-1]
    all_classified = final["classified"] == final["sent"] == n
    ours = {algo: w.counts(algo) for algo in ("static", "mrf")}
    nft_counts, nft_default = listing.classify.counters, listing.classify.default_count
    rows = w.rule_rows()
    mismatches = []
    for i, row in enumerate(rows):
        got = nft_counts[i] if i < len(nft_counts) else None
        st, mrf = ours["static"][0][i], ours["mrf"][0][i]
        if not got == st == mrf:
            mismatches.append({"rule": i + 1, "nft": got, "static": st, "mrf": mrf,
                               "text": describe_row((*row[:10], row[10]))})
    default_equal = nft_default == ours["static"][1] == ours["mrf"][1]
    accepted = sum(c for c, r in zip(nft_counts, rows, strict=False) if r[11] == "accept")
    accepted += nft_default if w.default_action()[1] == "accept" else 0
    return {
        "packets": n, "attempts": attempts, "all_classified": all_classified, "round_trip": rt,
        "rules_equal": len(rows) - len(mismatches), "rules_mismatched": len(mismatches),
        "mismatches": mismatches[:200], "default": {"nft": nft_default, "static": ours["static"][1],
                                                      "mrf": ours["mrf"][1], "equal": default_equal},
        "sink": listing.sink, "sink_expected": accepted,
        "counters_equal": not mismatches and default_equal and all_classified,
        "per_rule": {"nft": nft_counts, "static": ours["static"][0]},
    }


def kernel_throughput(pair: NetnsPair, w: Any, cfg: BenchConfig, progress: Progress) -> dict[str, Any]:
    """Classified packets per second with the rule chain and with an empty chain, alternating,
    ``repeats`` times, and the cost per packet of evaluating the rules. Two clocks: CPU time
    (the sender thread's, which the inline receive path is charged to, plus ksoftirqd's and, where
    accounted apart, softirq time: see :mod:`superlinear.nft.cpuacct`) and wall time. CPU time is the
    primary one: it is what our classifiers are measured with, and it stays right when other
    processes share the core."""
    texts = {"empty": w.nft_table(pair.table, pair.rx_dev, True), "rules": w.nft_table(pair.table, pair.rx_dev)}
    runs: dict[str, list[dict[str, Any]]] = {"empty": [], "rules": []}
    clock = ReceivePathClock(cfg.cpu)

    def replay(mode: str) -> dict[str, Any]:
        pair.load_table(texts[mode])
        rx0 = pair.rx_counters().rx_packets
        k0 = clock.read()
        r = send_frames(pair, w, cfg, seconds=cfg.duration)
        time.sleep(0.05)  # anything still queued is processed (and charged) now
        k1 = clock.read()
        listing = _settled(pair, r["sent"])
        wall = r["elapsed_ns"] / 1e9
        ksoft, sirq = k1[0] - k0[0], k1[1] - k0[1]
        cpu = (r["cpu_ns"] + ksoft + sirq) / 1e9
        classified = _classified(listing)
        received = pair.rx_counters().rx_packets - rx0
        run = {"sent": r["sent"], "classified": classified, "received": received, "wall_s": wall, "cpu_s": cpu,
               "pps": classified / cpu, "pps_wall": classified / wall, "received_pps": received / cpu,
               "received_pps_wall": received / wall,
               "cpu_share_of_wall": cpu / wall, "ksoftirqd_share": ksoft / max(cpu * 1e9, 1),
               "refused": r["refused"]}
        progress(f"throughput {len(runs[mode]) + 1}/{cfg.repeats}, {mode + ' chain':<11}: {run['pps']:>12,.0f} "
                 f"classified packets per CPU second ({run['pps_wall']:,.0f} per wall second; {classified:,} in "
                 f"{cpu:.2f} s CPU, {wall:.2f} s wall)")
        return run

    interleaved_rounds(("empty", "rules"), cfg.repeats, replay, into=runs)
    costs = [1e9 / r["pps"] - 1e9 / e["pps"] for r, e in zip(runs["rules"], runs["empty"], strict=True)]
    costs_wall = [1e9 / r["pps_wall"] - 1e9 / e["pps_wall"] for r, e in zip(runs["rules"], runs["empty"], strict=True)]
    return {
        "runs": runs,
        "irq_time_accounting": clock.irq_accounting,
        "pps_rules": median_range([r["pps"] for r in runs["rules"]]),
        "pps_empty": median_range([r["pps"] for r in runs["empty"]]),
        "pps_rules_wall": median_range([r["pps_wall"] for r in runs["rules"]]),
        "pps_empty_wall": median_range([r["pps_wall"] for r in runs["empty"]]),
        "received_pps_rules": median_range([r["received_pps"] for r in runs["rules"]]),
        "received_pps_rules_wall": median_range([r["received_pps_wall"] for r in runs["rules"]]),
        "cpu_share_of_wall": median_range([r["cpu_share_of_wall"] for m in runs.values() for r in m]),
        "ksoftirqd_share": median_range([r["ksoftirqd_share"] for m in runs.values() for r in m]),
        "cost_ns": median_range(costs),
        "cost_ns_wall": median_range(costs_wall),
    }


def our_side(w: Any, cfg: BenchConfig, progress: Progress) -> dict[str, Any]:
    """Single-thread rates of the static list and MRF, and MRF projected at every k."""
    single: dict[str, Any] = {}
    # Both classifiers in every round (interleaved, not back to back).
    rates = interleaved_rounds(("static", "mrf"), max(1, cfg.repeats), lambda algo: w.single_core(algo, 1))
    for algo, runs in rates.items():
        work = runs[-1][1]
        single[algo] = {"pps": median_range([pps for pps, _ in runs]), "work_per_packet": work}
        progress(f"ours: {algo:<6} 1 worker: {single[algo]['pps']['median']:>12,.0f} packets/s (thread CPU time), "
                 f"{work:,.1f} rules compared per packet")
    # Every round runs k = 1 and every k once (interleaved across k, not back to back); a round's
    # speedups are against its own k = 1, and each figure is the median of the rounds with their
    # range (work is exact and the same in every round).
    rounds = interleaved_rounds(list(dict.fromkeys((1, *cfg.ks))), max(1, cfg.repeats),
                                lambda k: w.projected("mrf", cfg.dispatch, k, 1, cfg.seed))
    projected: dict[int, dict[str, Any]] = {}
    said = []
    for k, accs in rounds.items():
        first = accs[0]
        pps = [a["requests"] * 1e9 / max(a["projected_ns"], 1) for a in accs]
        said.append(f"{k}: {spread([v / 1e6 for v in pps])} M")
        speedups = [base["projected_ns"] / max(a["projected_ns"], 1) for base, a in zip(rounds[1], accs, strict=True)]
        projected[k] = {"pps": median_range(pps), "speedup": median_range(speedups), "dispatch": first["dispatch"],
                        "work_span": first["work_span"], "work_total": first["work_total"],
                        "load_imbalance": first["load_imbalance"], "requests": first["requests"]}
    progress(f"ours: mrf projected (median [min–max] of {max(1, cfg.repeats)}) at k = " + ", ".join(said[1:])
             + " packets/s")
    return {"single": single, "projected": projected}


def make_rows(name: str, w: Any, cfg: BenchConfig, check: dict[str, Any], kern: dict[str, Any] | None,
              ours: dict[str, Any] | None) -> list[Row]:
    """Result rows (DESIGN.md schema, extra fields allowed): one per system, every number with its kind."""
    base = {"panel": name, "workload": name, "m": w.rules(), "requests": w.packets(),
            "speedup_measured": None, "speedup_work": None}
    checks = {"check_counters_equal": check["counters_equal"], "check_rules_mismatched": check["rules_mismatched"],
              "check_default_equal": check["default"]["equal"], "check_all_classified": check["all_classified"],
              "check_round_trip_equal": check["round_trip"]["equal"]}
    rows: list[Row] = []
    nft_pps = None
    if kern is not None:
        cost = kern["cost_ns"]
        nft_pps = 1e9 / cost["median"] if cost["median"] and cost["median"] > 0 else None
        rows.append({**base, "system": "nftables", "algo": "nft-linear", "dispatch": "none", "k": 1,
                     "kind": "measured", "speedup_projected": None,
                     "pps_per_core": nft_pps, "pps": nft_pps, "ns_per_packet": cost["median"],
                     "ns_per_packet_min": cost["min"], "ns_per_packet_max": cost["max"],
                     # A rate's range from the cost's: the least cost is the highest rate.
                     **({f"pps{per}_{end}": 1e9 / cost[c] for per in ("", "_per_core")
                         for end, c in (("min", "max"), ("max", "min"))} if nft_pps and cost["min"] > 0 else {}),
                     "ns_per_packet_wall": kern["cost_ns_wall"]["median"],
                     **{f"path_{key}{suffix}": kern[key][stat]
                        for key in ("pps_rules", "pps_empty", "pps_rules_wall", "pps_empty_wall")
                        for suffix, stat in (("", "median"), ("_min", "min"), ("_max", "max"))},
                     "received_pps_rules": kern["received_pps_rules"]["median"],
                     "received_pps_rules_wall": kern["received_pps_rules_wall"]["median"],
                     "cpu_share_of_wall": kern["cpu_share_of_wall"]["median"],
                     "ksoftirqd_share": kern["ksoftirqd_share"]["median"],
                     "irq_time_accounting": kern["irq_time_accounting"], "repeats": cfg.repeats,
                     "duration_s": cfg.duration, "ratio_vs_nftables": 1.0 if nft_pps else None,
                     "ratio_per_core_vs_nftables": 1.0 if nft_pps else None, **checks})
    else:
        rows.append({**base, "system": "nftables", "algo": "nft-linear", "dispatch": "none", "k": 1,
                     "kind": "check-only", **checks})
    if ours is None:
        return rows

    def ratio(pps: float) -> float | None:
        return pps / nft_pps if nft_pps else None

    for algo, label in (("static", "ours: static list"), ("mrf", "ours: MRF")):
        s = ours["single"][algo]
        pps = s["pps"]["median"]
        rows.append({**base, "system": label, "algo": algo, "dispatch": "none", "k": 1, "kind": "measured",
                     "speedup_projected": None, "pps": pps, "pps_per_core": pps, "ns_per_packet": 1e9 / pps,
                     "pps_min": s["pps"]["min"], "pps_max": s["pps"]["max"],
                     "pps_per_core_min": s["pps"]["min"], "pps_per_core_max": s["pps"]["max"],
                     "work_per_packet": s["work_per_packet"], "repeats": cfg.repeats,
                     "ratio_vs_nftables": ratio(pps), "ratio_per_core_vs_nftables": ratio(pps)})
    for k, p in ours["projected"].items():
        if k == 1:
            continue
        pps, speedup = p["pps"], p["speedup"]
        rows.append({**base, "system": "ours: MRF", "algo": "mrf", "dispatch": p["dispatch"], "k": k,
                     "kind": "projected", "repeats": cfg.repeats,
                     "speedup_projected": speedup["median"], "speedup_projected_lo": speedup["min"],
                     "speedup_projected_hi": speedup["max"], "throughput_rps_projected": pps["median"],
                     "pps": pps["median"], "pps_min": pps["min"], "pps_max": pps["max"],
                     "pps_per_core": pps["median"] / k, "pps_per_core_min": pps["min"] / k,
                     "pps_per_core_max": pps["max"] / k, "ns_per_packet": k * 1e9 / pps["median"],
                     "work_span": p["work_span"], "load_imbalance": p["load_imbalance"],
                     "ratio_vs_nftables": ratio(pps["median"]), "ratio_per_core_vs_nftables": ratio(pps["median"] / k)})
    return rows


@dataclass
class SetResult:
    """Everything measured for one rule set."""

    name: str
    rows: list[Row]
    check: dict[str, Any]
    kernel: dict[str, Any] | None
    ours: dict[str, Any] | None
    #: The default policy in force: the file's, or ``--default`` where the file sets none.
    default_policy: str = "accept"


def run_sets(inputs: list[RuleSetInput], cfg: BenchConfig, progress: Progress,
             on_set: Callable[[list[SetResult]], object] | None = None) -> list[SetResult]:
    """Loads every rule set first (bad input fails before anything is created), then runs each
    inside one namespace pair, cleaned up whatever happens."""
    workloads = []
    for inp in inputs:
        w = load_workload(inp)
        if not cfg.check_only:
            for k in cfg.ks:
                w.describe_dispatch(cfg.dispatch, k)  # a bad --dispatch fails now, not after the kernel runs
        progress(f"[{inp.name}] {w.rules():,} rules, {w.packets():,} packets ({inp.rules}, {inp.trace})")
        workloads.append(w)
    results: list[SetResult] = []
    with NetnsPair(keep=cfg.keep) as pair:
        progress(f"namespaces {pair.tx_ns} -> {pair.rx_ns} (veth {pair.tx_dev} -> {pair.rx_dev}), "
                 f"table netdev {pair.table} on {pair.rx_dev} ingress")
        for inp, w in zip(inputs, workloads, strict=True):
            def tagged(msg: str, name: str = inp.name) -> None:
                progress(f"[{name}] {msg}")

            w.build_frames(pair.rx_mac, pair.tx_mac)
            check = exact_check(pair, w, cfg, tagged)
            tagged("counters equal our classifier's, rule by rule and for the default policy"
                   if check["counters_equal"] else
                   f"COUNTERS DIFFER: {check['rules_mismatched']} rules, default "
                   f"{'equal' if check['default']['equal'] else 'differs'}, "
                   f"all classified: {check['all_classified']}")
            kern = None if cfg.check_only else kernel_throughput(pair, w, cfg, tagged)
            ours = None if cfg.check_only else our_side(w, cfg, tagged)
            results.append(SetResult(inp.name, make_rows(inp.name, w, cfg, check, kern, ours), check, kern, ours,
                                     default_policy=w.default_action()[0]))
            if on_set is not None:
                on_set(results)
        if cfg.keep:
            progress(f"kept: namespaces {pair.tx_ns}, {pair.rx_ns} (remove with `superlinear nft-bench --cleanup`)")
    return results
