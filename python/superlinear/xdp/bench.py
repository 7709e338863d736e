"""``superlinear xdp-bench``: your rules and trace through the XDP datapath (static list and MRF),
through Linux nftables and through our user-space classifiers, cross-checked rule by rule and
worker by worker, and measured side by side.

Per rule set, inside one pair of network namespaces (:class:`superlinear.nft.netns.NetnsPair`;
the frames are sent from one namespace and arrive on the other's veth device, where the datapath
is loaded):

1. **nftables** (unless ``--no-nft``): the exact check and the cost per packet of the linear
   chain, exactly as ``superlinear nft-bench`` measures them (:mod:`superlinear.nft.bench`).
2. **Agreement.** For static and MRF, with 1 and 2 worker CPUs (k = CPUs) and each dispatcher,
   the trace is replayed once, paced (halved and repeated when the kernel counted fewer packets
   than were sent), and the kernel's counters are compared with ours: every rule's hits and the
   default policy's with ``superlinear classify``'s first-match counts, every logical worker's
   rules compared with the same run in user space (same dispatcher, same k), and, for MRF, every
   worker's order in the kernel against the dependency graph (no rule ahead of a rule it
   depends on).
3. **Cost per packet (measured)**: bpf_stats' run time over run count of the worker program with
   one worker CPU, over the exact replays of the trace, of the trace with high temporal locality
   (packet trains) and with none (the same packets shuffled); ``repeats`` interleaved runs, median
   and range. Next to it the nftables chain's cost on the same traffic.
4. **Work speedup (work)** at k = 1…32 logical workers from the kernel's own counters (rules
   compared by the whole run over rules compared by the busiest logical worker), next to ours.
   Logical workers above the worker CPUs share CPUs (w mod CPUs), each with its own order.
5. **Packets per second against worker CPUs (measured)**: the trace flooded by ``senders``
   threads into 1, 2, 4, ... worker CPUs (:mod:`superlinear.xdp.throughput`), in a namespace pair
   of its own whose veth has a queue per sender.

``studies`` picks among ``check`` (1 and 2), ``cost`` (3), ``work`` (4) and ``throughput`` (5).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from superlinear import _native
from superlinear.common.errors import SuperlinearError
from superlinear.common.rows import Row
from superlinear.experiments.repeats import interleaved_rounds
from superlinear.nft.bench import (
    BenchConfig,
    RuleSetInput,
    exact_check,
    kernel_throughput,
    load_workload,
    median_range,
    reached_rate,
    send_frames,
)
from superlinear.nft.netns import NetnsPair
from superlinear.xdp import pins
from superlinear.xdp.throughput import sender_cpus, throughput_study, worker_cpu_counts

Progress = Callable[[str], None]
#: Trace variants of the cost study: the trace as given, packet trains, shuffled.
LOCALITIES = ("trace", "high", "none")
#: The parts of the benchmark (module docstring).
STUDIES = ("check", "cost", "work", "throughput")


@dataclass(frozen=True)
class XdpBenchConfig:
    """How to run the benchmark."""

    ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
    cpu_counts: tuple[int, ...] = (1, 2)
    dispatches: tuple[str, ...] = ("rss", "rule")
    localities: tuple[str, ...] = LOCALITIES
    repeats: int = 3
    duration: float = 3.0
    check_rate: float = 50_000.0
    check_attempts: int = 4
    nft: bool = True
    batch: int = 256
    sender_cpu: int | None = None
    queue_size: int = 8192
    mode: str = "native"
    keep: bool = False
    seed: int = 1
    studies: tuple[str, ...] = STUDIES
    #: Worker CPU counts of the throughput study; None: 1, 2, 4, ... and all the senders leave.
    throughput_cpus: tuple[int, ...] | None = None
    senders: int = 1
    #: How the throughput study's senders make traffic: ``xdp-live`` (the in-kernel replayer,
    #: BPF_PROG_RUN live frames) or ``sendmmsg`` (AF_PACKET batches).
    generator: str = "xdp-live"
    warmup: float = 0.5

    def nft_config(self) -> BenchConfig:
        return BenchConfig(duration=self.duration, repeats=self.repeats, check_rate=self.check_rate,
                           check_attempts=self.check_attempts, batch=self.batch, cpu=self.sender_cpu, keep=self.keep)


@dataclass
class Datapath:
    """One load on the receiving device, unloaded on exit whatever happens."""

    pair: NetnsPair
    w: Any
    algo: str
    dispatch: str
    k: int
    cpus: tuple[int, ...]
    cfg: XdpBenchConfig
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def pin(self) -> str:
        return str(pins.pin_dir(pins.datapath_name(self.pair.rx_dev, self.pair.rx_ns)))

    def __enter__(self) -> Datapath:
        _native.xdp_unload(self.pin)
        try:
            self.info = pins.load(self.w, {
                "iface": self.pair.rx_dev, "netns": self.pair.rx_ns, "algo": self.algo, "dispatch": self.dispatch,
                "k": self.k, "cpus": list(self.cpus), "queue_size": self.cfg.queue_size, "mode": self.cfg.mode,
                "pin_dir": self.pin})
        except BaseException:
            # A Ctrl-C during the load (a second or so) lands once it has returned, before the
            # `with` block that unloads it: the pins stayed behind the namespaces' removal, one
            # set per interrupted run. (An unload that fails too must not hide why the load did.)
            with contextlib.suppress(SuperlinearError, OSError):
                _native.xdp_unload(self.pin)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        _native.xdp_unload(self.pin)

    def counters(self) -> dict[str, Any]:
        c: dict[str, Any] = dict(_native.xdp_counters(self.pin))
        return c


def _counted(c: dict[str, Any]) -> int:
    return int(sum(c["rule_hits"]) + c["default_hits"])


def replay_once(dp: Datapath, progress: Progress) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The whole trace once, paced; slower again while the kernel counted fewer than were sent
    (a worker CPU's queue overflowed). Returns the final counters and every attempt."""
    n = dp.w.packets()
    rate = dp.cfg.check_rate
    attempts: list[dict[str, Any]] = []
    c: dict[str, Any] = {}
    for _ in range(dp.cfg.check_attempts):
        _native.xdp_reset(dp.pin)
        sent = send_frames(dp.pair, dp.w, dp.cfg.nft_config(), count=n, rate=rate)
        deadline = time.monotonic() + 3.0
        c = dp.counters()
        while _counted(c) < sent["sent"] and time.monotonic() < deadline:
            time.sleep(0.05)
            c = dp.counters()
        # The pace asked for and the one the sender reached (nft.bench.reached_rate).
        attempts.append({"rate_pps": rate, "reached_pps": reached_rate(sent), "sent": sent["sent"],
                         "counted": _counted(c)})
        if _counted(c) == sent["sent"] == n:
            break
        progress(f"  {_counted(c):,} of {sent['sent']:,} packets counted in the kernel: replaying slower")
        rate /= 2
    return c, attempts


def agreement(dp: Datapath, expected: tuple[list[int], int], progress: Progress) -> dict[str, Any]:
    """One exact replay, and the kernel's counters against ours."""
    c, attempts = replay_once(dp, progress)
    per_rule, default = expected
    mismatched = [i + 1 for i, (a, b) in enumerate(zip(c["rule_hits"], per_rule, strict=True)) if a != b]
    ours = dp.w.projected(dp.algo, dp.dispatch, dp.k, 1, dp.cfg.seed)
    kernel_work = [w["compared"] for w in c["workers"]]
    kernel_packets = [w["packets"] for w in c["workers"]]
    order_violations = _native.xdp_check_orders(dp.w, dp.pin) if dp.algo == "mrf" else []
    ok_rules = not mismatched and c["default_hits"] == default
    ok_work = kernel_work == list(ours["worker_work"]) and kernel_packets == list(ours["worker_requests"])
    complete = attempts[-1]["counted"] == attempts[-1]["sent"] == dp.w.packets()
    run = c["worker_program"]
    return {
        "algo": dp.algo, "dispatch": dp.dispatch, "dispatch_fields": dp.info["fields"], "k": dp.k,
        "cpus": list(dp.cpus), "attempts": attempts, "all_counted": complete,
        "rules_mismatched": len(mismatched), "mismatched_rules": mismatched[:50],
        "default_kernel": c["default_hits"], "default_ours": default,
        "counters_equal": ok_rules and complete,
        "worker_work_kernel": kernel_work, "worker_work_ours": list(ours["worker_work"]),
        "worker_packets_kernel": kernel_packets, "worker_packets_ours": list(ours["worker_requests"]),
        "work_equal": ok_work, "order_violations": order_violations[:20],
        "work_total": sum(kernel_work), "work_span": max(kernel_work) if kernel_work else 0,
        "work_span_ours": ours["work_span"], "work_total_ours": ours["work_total"],
        "ns_per_packet": run["run_time_ns"] / run["run_count"] if run["run_count"] else None,
        "dispatch_ns_per_packet": (c["dispatch_program"]["run_time_ns"] / c["dispatch_program"]["run_count"]
                                   if c["dispatch_program"]["run_count"] else None),
        "dispatcher": dict(c["dispatch"]),
    }


@dataclass
class SetResult:
    """Everything measured for one rule set."""

    name: str
    rows: list[Row]
    check: dict[str, Any]


def _worker_cpus(n: int, sender: int) -> tuple[int, ...]:
    """``n`` worker CPUs, the sender's last (it also runs the receive path and the dispatcher)."""
    cpus = sorted(os.sched_getaffinity(0))
    others = [c for c in cpus if c != sender]
    return tuple([*others, sender][:n])


def run_set(pair: NetnsPair, inp: RuleSetInput, w: Any, cfg: XdpBenchConfig, progress: Progress) -> SetResult:
    w.build_frames(pair.rx_mac, pair.tx_mac)
    sender = cfg.sender_cpu if cfg.sender_cpu is not None else max(os.sched_getaffinity(0))
    cfg = replace(cfg, sender_cpu=sender)
    check: dict[str, Any] = {"set": inp.name, "rules": w.rules(), "packets": w.packets()}
    rows: list[Row] = []
    base = {"panel": inp.name, "workload": inp.name, "m": w.rules(), "requests": w.packets(),
            "speedup_measured": None, "speedup_projected": None}
    nft_cost: dict[str, dict[str, float | None]] = {}

    # 1. nftables: its counters against ours, and what a packet costs in the chain.
    if cfg.nft and "check" in cfg.studies:
        nft_check = exact_check(pair, w, cfg.nft_config(), progress)
        check["nftables"] = {k: v for k, v in nft_check.items() if k != "per_rule"}
        progress("nftables counters " + ("equal ours, rule by rule" if nft_check["counters_equal"] else "DIFFER"))
        pair.nft(["delete", "table", "netdev", pair.table])
    expected = {algo: w.counts(algo) for algo in ("static", "mrf")}

    # 2. Agreement, every algorithm × worker CPUs × dispatcher.
    runs: list[dict[str, Any]] = []
    ncpu = len(os.sched_getaffinity(0))
    for algo in ("static", "mrf") if "check" in cfg.studies else ():
        for n in (c for c in cfg.cpu_counts if c <= ncpu):
            for dispatch in cfg.dispatches:
                with Datapath(pair, w, algo, dispatch, n, _worker_cpus(n, sender), cfg) as dp:
                    r = agreement(dp, expected[algo], progress)
                runs.append(r)
                progress(f"xdp {algo:<6} {n} CPU(s), {dispatch:<4} ({r['dispatch_fields']}): counters "
                         + ("equal" if r["counters_equal"] else f"DIFFER ({r['rules_mismatched']} rules)")
                         + ", worker work " + ("equal" if r["work_equal"] else "DIFFERS")
                         + (f", order violations: {len(r['order_violations'])}" if r["order_violations"] else ""))
    check["xdp"] = runs
    localities = cfg.localities if "cost" in cfg.studies else ()

    # 3. Cost per packet, one worker CPU, per trace variant; repeats interleaved.
    def one_core(wl: Any, loc: str, runs: dict[str, list[dict[str, Any]]], algo: str) -> dict[str, Any]:
        """One run of ``algo`` on one worker CPU over the ``loc`` trace, checked against ours."""
        with Datapath(pair, wl, algo, "rss", 1, _worker_cpus(1, sender), cfg) as dp:
            r = agreement(dp, (list(wl.counts(algo)[0]), wl.counts(algo)[1]), progress)
        if not (r["counters_equal"] and r["work_equal"]):
            raise SuperlinearError(f"{inp.name} ({loc}): the kernel's {algo} counters differ from ours")
        ns = r["ns_per_packet"]
        progress(f"cost, {loc} trace, run {len(runs.get(algo, [])) + 1}/{cfg.repeats}: {algo} "
                 f"{ns if ns is not None else float('nan'):,.0f} ns per packet")
        return r

    costs: dict[str, dict[str, list[float]]] = {}
    for loc in localities:
        wl = w if loc == "trace" else w.reshaped(loc, cfg.seed)
        if loc != "trace":
            wl.build_frames(pair.rx_mac, pair.tx_mac)
        cost_runs: dict[str, list[dict[str, Any]]] = {}
        interleaved_rounds(("static", "mrf"), cfg.repeats, partial(one_core, wl, loc, cost_runs), into=cost_runs)
        costs[loc] = {algo: [r["ns_per_packet"] for r in rs if r["ns_per_packet"] is not None]
                      for algo, rs in cost_runs.items()}
        # The dispatcher's cost in the order it was measured (both classifiers, round by round).
        costs[loc]["dispatcher"] = [r["dispatch_ns_per_packet"] for rnd in zip(*cost_runs.values(), strict=True)
                                    for r in rnd if r["dispatch_ns_per_packet"] is not None]
        if cfg.nft:
            kern = kernel_throughput(pair, wl, cfg.nft_config(), progress)
            nft_cost[loc] = kern["cost_ns"]
            pair.nft(["delete", "table", "netdev", pair.table])
        work = {algo: wl.single_core(algo, 1)[1] for algo in ("static", "mrf")}
        for algo in ("static", "mrf"):
            s = median_range(costs[loc][algo])
            nft_med = nft_cost.get(loc, {}).get("median")
            rows.append({**base, "system": f"xdp {algo}", "algo": algo, "dispatch": "rss", "k": 1, "kind": "measured",
                         "trace": loc, "ns_per_packet": s["median"], "ns_per_packet_min": s["min"],
                         "ns_per_packet_max": s["max"], "pps_per_core": 1e9 / s["median"] if s["median"] else None,
                         "work_per_packet": work[algo], "repeats": cfg.repeats,
                         "gain_vs_nftables": nft_med / s["median"] if nft_med and s["median"] else None,
                         "dispatcher_ns_per_packet": median_range(costs[loc]["dispatcher"])["median"],
                         "speedup_work": None})
        if cfg.nft:
            c = nft_cost[loc]
            rows.append({**base, "system": "nftables", "algo": "nft-linear", "dispatch": "none", "k": 1,
                         "kind": "measured", "trace": loc, "ns_per_packet": c["median"], "ns_per_packet_min": c["min"],
                         "ns_per_packet_max": c["max"], "repeats": cfg.repeats, "speedup_work": None,
                         "pps_per_core": 1e9 / c["median"] if c["median"] and c["median"] > 0 else None})

    # 4. Work speedup at k logical workers, from the kernel's counters, next to ours.
    study = []
    all_cpus = _worker_cpus(min(max(cfg.cpu_counts), ncpu), sender)
    for dispatch in cfg.dispatches if "work" in cfg.studies else ():
        w1 = None
        for k in cfg.ks:
            with Datapath(pair, w, "mrf", dispatch, k, all_cpus, cfg) as dp:
                r = agreement(dp, expected["mrf"], progress)
            if w1 is None:
                w1 = (r["work_total"], r["work_total_ours"])
            r["speedup_work"] = w1[0] / r["work_span"] if r["work_span"] else None
            r["speedup_work_ours"] = w1[1] / r["work_span_ours"] if r["work_span_ours"] else None
            study.append(r)
            rows.append({**base, "system": "xdp mrf", "algo": "mrf", "dispatch": r["dispatch_fields"],
                         "dispatcher": dispatch, "k": k,
                         "kind": "work", "trace": "trace", "speedup_work": r["speedup_work"],
                         "speedup_work_user_space": r["speedup_work_ours"], "work_span": r["work_span"],
                         "work_total": r["work_total"], "worker_cpus": len(all_cpus),
                         "check_work_equal": r["work_equal"], "check_counters_equal": r["counters_equal"]})
            progress(f"work speedup, {dispatch} ({r['dispatch_fields']}), k = {k}: kernel "
                     f"{r['speedup_work']:,.2f}x, user space {r['speedup_work_ours']:,.2f}x")
    check["work_study"] = study
    check["ok"] = (all(r["counters_equal"] and r["work_equal"] and not r["order_violations"] for r in runs + study)
                   and (not cfg.nft or "check" not in cfg.studies or check["nftables"]["counters_equal"]))
    return SetResult(inp.name, rows, check)


def run_sets(inputs: list[RuleSetInput], cfg: XdpBenchConfig, progress: Progress,
             on_set: Callable[[list[SetResult]], object] | None = None) -> list[SetResult]:
    """Loads every rule set first (bad input fails before anything is created), then runs each
    inside one namespace pair, cleaned up whatever happens."""
    pins.require()
    if "throughput" in cfg.studies:
        worker_cpu_counts(cfg.throughput_cpus, cfg.senders)  # too many CPUs asked for fails before any work
    workloads = []
    for inp in inputs:
        w = load_workload(inp)
        w.calibrate(100_000)
        if any(d.split(":")[0] == "rule" for d in cfg.dispatches):
            progress(f"[{inp.name}] choosing the rule-aware dispatcher's fields for k = "
                     f"{', '.join(map(str, cfg.ks))} (simulated MRF workers on the trace's first 100,000 packets)")
        for d in cfg.dispatches:
            for k in cfg.ks:
                w.describe_dispatch(d, k)  # a bad --dispatch fails now, not after the kernel runs
        progress(f"[{inp.name}] {w.rules():,} rules, {w.packets():,} packets ({inp.rules}, {inp.trace})")
        workloads.append(w)
    old_stats = pins.bpf_stats(True)
    results: list[SetResult] = []
    try:
        if set(cfg.studies) - {"throughput"}:
            with NetnsPair(keep=cfg.keep, nft=cfg.nft) as pair:
                progress(f"namespaces {pair.tx_ns} -> {pair.rx_ns} (veth {pair.tx_dev} -> {pair.rx_dev}); "
                         f"XDP datapath on {pair.rx_dev}")
                for inp, w in zip(inputs, workloads, strict=True):
                    def tagged(msg: str, name: str = inp.name) -> None:
                        progress(f"[{name}] {msg}")

                    results.append(run_set(pair, inp, w, cfg, tagged))
                    if on_set is not None:
                        on_set(results)
        else:
            results = [SetResult(inp.name, [], {"set": inp.name, "rules": w.rules(), "packets": w.packets(),
                                                "xdp": [], "work_study": [], "ok": True})
                       for inp, w in zip(inputs, workloads, strict=True)]
        if "throughput" in cfg.studies:
            # A pair of its own: a queue per sender reorders packets across flows, which the
            # exact checks above must not see.
            with NetnsPair(keep=cfg.keep, queues=cfg.senders, nft=False) as pair:
                progress(f"throughput: {cfg.senders} sender(s) on CPU(s) "
                         f"{', '.join(map(str, sender_cpus(cfg.senders)))}, veth with {cfg.senders} queue(s)")
                for res, w in zip(results, workloads, strict=True):
                    w.build_frames(pair.rx_mac, pair.tx_mac)
                    base = {"panel": res.name, "workload": res.name, "m": w.rules(), "requests": w.packets()}
                    def tagged_tp(msg: str, name: str = res.name) -> None:
                        progress(f"[{name}] {msg}")

                    rows, points = throughput_study(pair, w, cfg, Datapath, base, tagged_tp)
                    res.rows.extend(rows)
                    res.check["throughput"] = points
                    if on_set is not None:
                        on_set(results)
    finally:
        pins.bpf_stats(old_stats)
    return results
