"""The million-flow study (issue 17; the scale of seeds/scouting-the-path-to-a-million-client-
server.txt): 10⁵ and 10⁶ concurrent flows, throughput and memory per worker at k = 1 … 32, and
the k from which a worker's hot state fits each cache level, against the working-set law.

The workload is the paper's generator (Fig. 9c): 1,000 independent rules, each matching one
destination port, with 100 or 1,000 flows per rule (source ports), every packet a flow drawn
uniformly at random, so every flow is concurrent with every other for the whole trace. The
series: the static list and the tuple-space classifiers (``tuple-merge``, ``rule-cache``,
``rule-cache-flow``) behind 5-tuple RSS, and MRF behind the rule-aware dispatcher (which keeps a
rule's flows on one worker; behind 5-tuple RSS every worker would see every rule).

Kinds (every row carries all of them): **projected** throughput and speedup (dispatcher CPU time
+ busiest worker's CPU time), **work** speedup (exact operation counts), memory as **exact
counts** of the worker's structures and of the part its stream touches
(:mod:`superlinear.classify.footprint`), **predicted** working sets, work speedup and flow-cache
hit rate from the working-set law, and this machine's cache sizes read from sysfs. Nothing here
is a wall-clock measurement of k threads (only k ≤ cores would be).

``--quick`` runs 10⁴ and 10⁵ flows on fewer packets and k = 1, 4, 32 (same shape, minutes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from superlinear.common.rows import Row
from superlinear.experiments.packets import KS_FULL, RSS5, packet_panel, series, synthetic
from superlinear.experiments.spec import Experiment, Panel

__all__ = ["RULES", "experiment", "findings", "first_k"]

#: Base rules of the generated set (one destination port each).
RULES = 1000
#: (panel, flows per rule, packets) of the full run: about 20 and 4 packets per flow.
FULL = (("f1e5", 100, 2_000_000), ("f1e6", 1000, 4_000_000))
#: The quick run: ten times fewer flows, 400,000 packets.
QUICK = (("f1e4", 10, 400_000), ("f1e5", 100, 400_000))
KS_QUICK = (1, 4, 32)
SERIES = (("static", RSS5), ("mrf", "rule"), ("tuple-merge", RSS5), ("rule-cache", RSS5), ("rule-cache-flow", RSS5))


def experiment(quick: bool = False) -> Experiment:
    panels: list[Panel] = []
    for name, per_rule, packets in QUICK if quick else FULL:
        flows = RULES * per_rule
        panel = packet_panel(name, f"{flows:,} concurrent flows ({RULES:,} rules × {per_rule:,} flows), "
                             f"{packets:,} packets", synthetic(RULES, quick, flows=per_rule, packets=packets),
                             series(*SERIES), KS_QUICK if quick else KS_FULL)
        if quick:
            panel = replace(panel, point_timed_ms=200, baseline_timed_ms=600)
        panels.append(replace(panel, footprint=True))
    return Experiment(
        name="million-flows",
        description=f"Million-flow study: {RULES:,} rules, concurrent flows per panel, memory per worker and "
        "the cache level of its hot state" + (" (quick sizes)" if quick else ""),
        panels=tuple(panels),
        summary=findings,
    )


def first_k(rows: Sequence[Row], holds: str) -> int | None:
    """The smallest k of ``rows`` (one series) from which ``holds`` is true at every larger k
    of the series; None where it does not hold at the largest."""
    ordered = sorted(rows, key=lambda r: r["k"])
    found: int | None = None
    for r in ordered:
        ok = _holds(r, holds)
        if ok and found is None:
            found = r["k"]
        elif not ok:
            found = None
    return found


def _holds(row: Row, what: str) -> bool:
    k = row["k"]
    speedups = {"projected": "speedup_projected", "work": "speedup_work", "law": "law_speedup_work",
                "workers": "speedup_workers_only"}
    if what in speedups:
        return bool(k > 1 and float(row.get(speedups[what]) or 0.0) > k)
    # A cache level: the hot state (exact count, or the law's) fits it or a smaller one.
    field, level = what.split(":", 1)
    fit = row.get(field)
    if fit is None or fit == "DRAM":
        return False
    names = [kv.split("=", 1)[0] for kv in str(row.get("cache_levels") or "").split(",") if kv]
    return level in names and fit in names and names.index(fit) <= names.index(level)


def _k(value: int | None) -> str:
    return "—" if value is None else f"k = {value}"


def findings(rows: list[Row]) -> list[str]:
    """Per panel and series: throughput and memory per worker at the smallest and largest k, the
    k from which the hot state fits each cache level (exact count and the law's), and the k from
    which the speedup is superlinear (projected, work, law)."""
    out: list[str] = []
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r["panel"], r["algo"], r["dispatch"]), []).append(r)
    for (panel, algo, dispatch), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["k"])
        if "hot_bytes_max" not in rs[0]:
            continue
        base = rs[0].get("max_worker_cpu_ns") if rs[0]["k"] == 1 else None
        # Projected without the serial dispatcher: the k = 1 worker's CPU time over the busiest one's.
        rs = [r | {"speedup_workers_only": base / r["max_worker_cpu_ns"] if base and r.get("max_worker_cpu_ns")
                   else None} for r in rs]
        levels = [kv.split("=", 1)[0] for kv in str(rs[0].get("cache_levels") or "").split(",") if kv]
        lo, hi = rs[0], rs[-1]

        def per_worker(r: Row) -> str:
            rate = (r.get("throughput_rps_projected") or 0) / r["k"] / 1e6
            alone = r["requests"] / r["max_worker_cpu_ns"] * 1e3 / r["k"] if r.get("max_worker_cpu_ns") else 0.0
            return f"{rate:,.2f} Mpps per worker at k = {r['k']} ({alone:,.2f} without the dispatcher)"

        fit = ", ".join(f"{lv} {_k(first_k(rs, 'hot_fits:' + lv))}" for lv in levels) or "no cache sizes"
        law = ", ".join(f"{lv} {_k(first_k(rs, 'law_fits:' + lv))}" for lv in levels) \
            if rs[0].get("law_items") else "no law for this worker"
        line = (f"{panel} {algo} + {dispatch}: {per_worker(lo)} → {per_worker(hi)} (projected); own memory "
                f"{lo['own_bytes']:,} B + shared {lo['shared_bytes']:,} B per worker at every k (exact count); "
                f"hot state "
                f"({lo['hot_state']}) {lo['hot_bytes_max']:,} → {hi['hot_bytes_max']:,} B (exact count), fits {fit}; "
                f"law's working set fits {law}; superlinear from projected {_k(first_k(rs, 'projected'))} "
                f"(without the dispatcher {_k(first_k(rs, 'workers'))}), work {_k(first_k(rs, 'work'))}, "
                f"law {_k(first_k(rs, 'law'))}")
        if hi.get("law_hit_rate") is not None:
            line += (f"; flow-cache hit rate predicted (LRU of {hi['flow_cache_entries']:,} entries) "
                     f"{lo['law_hit_rate']:.1%} → {hi['law_hit_rate']:.1%}")
        out.append(line)
    return out
