"""Packets per second of the XDP datapath against its worker CPUs (measured), for
``superlinear xdp-bench --studies throughput``.

Sender threads flood the trace, unpaced, each pinned to a CPU of its own and starting at its own
point of the trace, into a veth pair with one queue per sender, so the receive path and the
dispatcher program run on the sender CPUs side by side (:class:`NetnsPair` ``queues``). A sender
is either the in-kernel replayer (``xdp-live``: an XDP program run with BPF_PROG_RUN in
live-frames mode writes the next trace frame and transmits it) or an AF_PACKET socket
(``sendmmsg``); the replayer offers several times the packets per sender CPU, so fewer sender
CPUs saturate more workers. The worker program runs on n other CPUs (1 logical worker per CPU,
k = n, RSS over the 5-tuple). After a warm-up, the kernel's own per-worker packet counters are
read at the start and at the end of a timed window: classified packets per wall second over that
window is the throughput.

What limits a point is said with it: where the senders offered more than was classified (the
cpumap queues of the workers overflowed and dropped), the workers were the limit; where almost
everything offered was classified, the senders were, and a bigger n cannot show more.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from superlinear import _native
from superlinear.common.errors import SuperlinearError
from superlinear.common.interrupt import stop_native_calls
from superlinear.common.rows import Row
from superlinear.experiments.repeats import interleaved_rounds
from superlinear.nft.bench import median_range, send_frames
from superlinear.nft.netns import NetnsPair

Progress = Callable[[str], None]
#: Below this share of offered packets dropped, the senders, not the workers, set the rate.
SATURATED_DROP_SHARE = 0.01


def sender_cpus(senders: int) -> tuple[int, ...]:
    """The last ``senders`` CPUs of this process; at least one CPU must be left for workers."""
    cpus = sorted(os.sched_getaffinity(0))
    if senders >= len(cpus):
        raise SuperlinearError(f"--senders {senders}: this process may use {len(cpus)} CPU(s), and at least one "
                               "must be left for a worker")
    return tuple(cpus[-senders:])


def worker_cpu_counts(asked: tuple[int, ...] | None, senders: int) -> tuple[int, ...]:
    """The worker CPU counts to measure: ``asked`` (each must fit beside the senders), or 1, 2, 4,
    ... and every CPU the senders leave."""
    free = len(os.sched_getaffinity(0)) - len(sender_cpus(senders))
    if asked is not None:
        too_many = [n for n in asked if n > free]
        if too_many:
            raise SuperlinearError(f"--throughput-cpus: {too_many[0]} worker CPUs asked for, but {free} are left "
                                   f"beside {senders} sender CPU(s)")
        return asked
    counts = [n for n in (1, 2, 4, 8, 16, 32, 64, 128) if n < free]
    return (*counts, free)


def _worker_packets(c: dict[str, Any]) -> list[int]:
    return [int(w["packets"]) for w in c["workers"]]


def _counters_at(dp: Any) -> tuple[float, list[int]]:
    """The workers' packet counters and the moment they were read (the middle of the read)."""
    t0 = time.monotonic()
    c = dp.counters()
    return (t0 + time.monotonic()) / 2, _worker_packets(c)


def flood_point(dp: Any, w: Any, senders: tuple[int, ...], warmup: float, window: float,
                nft_config: Any, generator: Any) -> dict[str, Any]:
    """One point: every sender floods for warm-up + window + a tail; the window's classified
    packets per second, what was offered and what was dropped. ``generator``: what sends
    (``w`` itself, the sendmmsg sender, or an ``XdpReplayer``)."""
    n = w.packets()
    seconds = warmup + window + 0.3
    reports: list[dict[str, int] | None] = [None] * len(senders)
    errors: list[BaseException] = []

    def send(i: int, cpu: int) -> None:
        try:
            reports[i] = send_frames(dp.pair, generator, replace(nft_config, cpu=cpu), seconds=seconds,
                                     start=i * n // len(senders))
        except BaseException as e:  # re-raised in the caller's thread
            errors.append(e)

    _native.xdp_reset(dp.pin)
    _native.cancel_clear()
    threads = [threading.Thread(target=send, args=(i, cpu), daemon=True) for i, cpu in enumerate(senders)]
    for t in threads:
        t.start()
    try:
        time.sleep(warmup)
        t0, p0 = _counters_at(dp)
        time.sleep(window)
        t1, p1 = _counters_at(dp)
    except BaseException as e:
        # Ctrl-C: the senders stop at their next call (superlinear_core::cancel) and are waited
        # for, so that the interpreter never shuts down under a native send still running.
        stop_native_calls(lambda: not any(t.is_alive() for t in threads), e)
        raise
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    done = [r for r in reports if r is not None]
    sent = sum(r["sent"] for r in done)
    wall = max(r["elapsed_ns"] for r in done) / 1e9
    # Whatever is still queued is classified now; the rest was dropped on the way.
    counted, deadline = sum(_worker_packets(dp.counters())), time.monotonic() + 1.0
    while time.monotonic() < deadline:
        time.sleep(0.1)
        again = sum(_worker_packets(dp.counters()))
        if again == counted:
            break
        counted = again
    per_worker = [b - a for a, b in zip(p0, p1, strict=True)]
    classified = sum(per_worker)
    mean = classified / max(len(per_worker), 1)
    return {
        "pps": classified / (t1 - t0), "window_s": t1 - t0, "classified_in_window": classified,
        "offered_pps": sent / wall if wall else 0.0, "sent": sent, "classified_total": counted,
        "dropped_share": max(sent - counted, 0) / sent if sent else 0.0,
        "load_imbalance": max(per_worker) / mean if mean else None, "per_worker": per_worker,
        "refused": sum(r["refused"] for r in done),
    }


def throughput_study(pair: NetnsPair, w: Any, cfg: Any, datapath: Callable[..., Any], base: Row,
                     progress: Progress) -> tuple[list[Row], list[dict[str, Any]]]:
    """Every algorithm at every worker CPU count, ``cfg.repeats`` interleaved rounds (each round
    runs every point once); rows with the median and range of the rounds, and every point."""
    senders = sender_cpus(cfg.senders)
    counts = worker_cpu_counts(cfg.throughput_cpus, cfg.senders)
    workers_pool = [c for c in sorted(os.sched_getaffinity(0)) if c not in senders]
    generator = _native.XdpReplayer(w) if cfg.generator == "xdp-live" else w
    points: dict[tuple[str, int], list[dict[str, Any]]] = {}

    def flood(point: tuple[str, int]) -> dict[str, Any]:
        algo, n = point
        rnd = len(points.get(point, [])) + 1
        with datapath(pair, w, algo, "rss", n, tuple(workers_pool[:n]), cfg) as dp:
            r = flood_point(dp, w, senders, cfg.warmup, cfg.duration, cfg.nft_config(), generator)
        r.update(algo=algo, worker_cpus=n, round=rnd)
        progress(f"throughput, round {rnd}/{cfg.repeats}, {algo:<6} {n:>3} worker CPU(s): "
                 f"{r['pps']:>12,.0f} packets/s classified, {r['offered_pps']:,.0f} offered, "
                 f"{100 * r['dropped_share']:.1f} % dropped")
        return r

    interleaved_rounds([(algo, n) for n in counts for algo in ("static", "mrf")], cfg.repeats, flood, into=points)
    rows: list[Row] = []
    for algo in ("static", "mrf"):
        ones = points.get((algo, counts[0]), [])
        for n in counts:
            pts = points[(algo, n)]
            spread = median_range([p["pps"] for p in pts])
            pps, lo, hi = spread["median"], spread["min"], spread["max"]
            # Speedup per round against that round's smallest point: both share its conditions.
            ratios = [p["pps"] / o["pps"] * counts[0] for p, o in zip(pts, ones, strict=True) if o["pps"]]
            dropped = statistics.median(p["dropped_share"] for p in pts)
            rows.append({**base, "system": f"xdp {algo}", "algo": algo, "dispatch": "rss", "k": n, "kind": "measured",
                         "study": "throughput", "trace": "trace", "worker_cpus": n, "senders": len(senders),
                         "generator": cfg.generator,
                         "pps": pps, "pps_min": lo, "pps_max": hi, "pps_per_worker_cpu": pps / n if pps else None,
                         "speedup_measured": statistics.median(ratios) if ratios else None,
                         "speedup_measured_lo": min(ratios) if ratios else None,
                         "speedup_measured_hi": max(ratios) if ratios else None,
                         "offered_pps": statistics.median(p["offered_pps"] for p in pts),
                         "dropped_share": dropped,
                         "limited_by": "workers" if dropped >= SATURATED_DROP_SHARE else "senders",
                         "load_imbalance": statistics.median(p["load_imbalance"] or 0.0 for p in pts),
                         "repeats": len(pts), "speedup_work": None, "speedup_projected": None})
    return rows, [p for pts in points.values() for p in pts]
