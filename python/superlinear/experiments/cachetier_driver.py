"""The driver of service-backed experiments (Fig. 11, the DistCache skew study).

The shared driver runs the in-process engine; these experiments need real servers. This driver
starts them (:mod:`superlinear.cache.services`) in a private directory, loads the table, runs every
panel's grid with the Rust benchmark client, writes ``result.json``/``result.csv`` in the shared
schema and the plots, and stops the servers, whatever happens.

Speedups carry their kind (DESIGN.md):

* ``speedup_measured``: throughput (requests / wall clock) against k = 1 of the same series, on
  this machine, only for k ≤ its cores (DESIGN.md; ``None`` above). Every participant (4k client
  threads, k replicas, up to 4k PostgreSQL backends) shares those cores, so even there the curve
  bends as soon as the machine is saturated (``machine_utilisation`` near 1). The raw measured
  throughput ``throughput_rps_measured`` is kept for every k.
* ``speedup_projected``: CPU times on ideal cores (one each, no contention): the busiest
  participant's, or the client threads' mean request path (closed loops wait for their servers),
  whichever is longer.
* ``speedup_work``: exact operation counts of each run (gets and fills per replica, database
  queries, requests, reads past the cache) × unit CPU costs calibrated at k = 1, under the same
  two bounds (:mod:`superlinear.cache.work`). The counts are what the routing and the hit rate
  decide; the unit costs are fixed, so this kind is free of the noise that other processes on a
  shared machine add to CPU times. The unit costs come from calibration runs per panel and
  round (k = 1, not shown as rows) with the replica and the client threads pinned to different
  CPUs, as on the kind's ideal cores: unpinned, the scheduler sometimes puts them on one CPU,
  where memcached and the client spend about half the CPU per operation, and the peak over
  linear moved by a fifth between runs (docs/results/cache-tier.md). A get and a fill are
  costed apart (the panel's own reads and reads that all hit; a third run at another hit rate
  checks them); ``speedup_work_one_memcached_cost`` keeps one cost per memcached operation.
* ``speedup_eq3``: the paper's Eq. 3 (with s = 0) evaluated with the measured single-replica hit
  rate δ and the miss penalty ρ from the unit costs: a model, not a measurement.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import statistics
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from rich.table import Table

from superlinear import _native
from superlinear.cache.advise import LINEAR_TOLERANCE, ROUTER_COLOURS, curve_of, items_for
from superlinear.cache.client import aggregate_rounds, bench_row, client_config
from superlinear.cache.services import PG_MAX_CONNECTIONS, PG_RESERVED_CONNECTIONS, Services, check_replica_bounds
from superlinear.cache.work import Counts, UnitCosts, busiest_participant_span, work_span
from superlinear.common.errors import SuperlinearError
from superlinear.common.interrupt import interruptible
from superlinear.common.progress import progress_bar
from superlinear.common.rows import Row, row_spread
from superlinear.experiments.fig11 import CachePanel, CacheStudy, cache_sensitivity, cache_skew, fig11
from superlinear.output.figures import save_figure

#: name → builder(quick) of the studies this driver runs.
SERVICE_EXPERIMENTS: dict[str, Callable[[bool], CacheStudy]] = {
    "fig11": fig11, "cache-skew": cache_skew, "cache-sensitivity": cache_sensitivity}

TABLE = "superlinear_kv"


def _threads(panel: CachePanel, k: int) -> int:
    return panel.threads if panel.threads else panel.threads_per_replica * k


def _db_connections(panel: CachePanel, k: int) -> int:
    return panel.db_per_replica * k if panel.backend == "joint" else panel.db_per_replica


def run_points(study: CacheStudy, panels: list[CachePanel], router: str, k: int, replicas: list[str], dsn: str,
               seed: int = 1) -> list[Row]:
    """The runs of every panel at (router, k): the caches are flushed and pre-filled once per key
    distribution (with the rows it can ask for), then each panel's benchmark runs on them (a run
    leaves an LRU cache in the same statistical state)."""
    rows: list[Row] = []
    warmed: str | None = None
    for i, panel in enumerate(panels):
        # Each panel draws its own keys: re-reading the previous panel's keys would hit on them.
        # (A hot set is the same rows for every seed: there the panels share their warm caches.)
        seed_i = seed + 7919 * (i + 1)
        threads = _threads(panel, k)
        db = _db_connections(panel, k)
        client = _native.CacheClient(client_config(replicas[:k], dsn, router, db, TABLE, seed=seed))
        bench = {"threads": threads, "rows": study.rows, "dist": panel.dist, "seed": seed_i,
                 "max_seconds": study.max_seconds_per_run, "write_fraction": 0.0}
        if panel.warm == "prefill":
            if warmed != panel.dist:
                client.flush_all()
                interruptible(partial(client.prefill, study.rows, seed, panel.dist))
                warmed = panel.dist
        else:
            client.flush_all()
            warmed = None
            if panel.warmup_requests:
                interruptible(partial(client.bench, {**bench, "requests": panel.warmup_requests, "seed": seed_i + 1}))
        report = interruptible(partial(client.bench, {**bench, "requests": panel.requests}))
        row = bench_row(report, k, _native.available_cores())
        row.update(panel=panel.name, algo="memcached+postgresql", dispatch=router,
                   workload=panel.dist.replace(":", ""), m=study.rows, threads=threads, db_connections=db,
                   backend=panel.backend, memory_mb=study.memory_mb, cores=_native.available_cores(),
                   warm=panel.warm)
        rows.append(row)
    return rows


@contextlib.contextmanager
def participants_apart(replica_pid: int) -> Iterator[str | None]:
    """Pins the replica's threads to one CPU and this thread (so the client threads it starts) to
    another, restoring both afterwards; yields where (``"memcached CPU a, client CPU b"``), or
    None where it cannot (one CPU, or the replica's affinity cannot be set)."""
    mine = os.sched_getaffinity(0)
    cpus = sorted(mine)
    try:
        before = {int(t): os.sched_getaffinity(int(t)) for t in os.listdir(f"/proc/{replica_pid}/task")}
    except OSError:
        before = {}
    if len(cpus) < 2 or not before:
        yield None
        return
    try:
        for t in before:
            os.sched_setaffinity(t, {cpus[0]})
        os.sched_setaffinity(0, {cpus[1]})
    except OSError:
        os.sched_setaffinity(0, mine)
        yield None
        return
    try:
        yield f"memcached CPU {cpus[0]}, client CPU {cpus[1]}"
    finally:
        os.sched_setaffinity(0, mine)
        for t, m in before.items():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(t, m)


#: The calibration runs' hot sets as multiples of the items one replica holds: ``hits`` (every
#: read hits once the replica is pre-filled) and ``check`` (about 80 % of them hit), the run that
#: checks the get and fill costs the other two give.
CALIBRATION_HOT_SETS = {"hits": 0.7, "check": 1.25}


def calibration_dist(study: CacheStudy, part: str) -> str:
    """Uniform reads over a hot set of :data:`CALIBRATION_HOT_SETS` ``[part]`` replicas' worth."""
    return f"hot:{min(study.rows, int(CALIBRATION_HOT_SETS[part] * items_for(study.memory_mb)))}"


def calibration_points(study: CacheStudy, panels: list[CachePanel], replicas: list[str], dsn: str,
                       replica_pid: int, seed: int) -> list[Row]:
    """Three k = 1 runs of every panel that has k = 1, with the replica and the client threads on
    different CPUs (:func:`participants_apart`): the panel's own reads (``calibration_part``
    ``mixed``), reads that all hit (``hits``) and reads of which about 80 % hit (``check``). The
    first two give the panel's unit costs (:meth:`UnitCosts.from_calibration`: a get and a fill
    costed apart); the third checks them (:class:`Calibration`)."""
    at = [p for p in panels if 1 in p.ks]
    if not at:
        return []
    parts = ["mixed", *CALIBRATION_HOT_SETS]
    runs = [p if part == "mixed" else dataclasses.replace(p, dist=calibration_dist(study, part))
            for part in parts for p in at]
    with participants_apart(replica_pid) as where:
        points = run_points(study, runs, at[0].routers[0], 1, replicas, dsn, seed=seed)
    for r, part in zip(points, [part for part in parts for _ in at], strict=True):
        r["calibration"] = where or "unpinned (fewer than 2 CPUs)"
        r["calibration_part"] = part
    return points


@dataclass(frozen=True)
class Calibration:
    """A panel's unit costs: medians over its rounds' calibrations."""

    #: A get and a fill costed apart (the work kind's costs).
    costs: UnitCosts
    #: One memcached cost per operation, the mean of the mixed run's (the estimator before).
    one_cost: UnitCosts
    #: How the costs were calibrated (runs and CPU placement).
    source: str
    #: The check run's hit rate and memcached CPU per read: measured, as the split costs predict it
    #: from the run's gets and fills, as one cost per operation predicts it (medians over the rounds;
    #: ns).
    check: tuple[float, ...] | None = None


def panel_calibrations(rows: list[Row]) -> dict[str, Calibration]:
    """Each panel's :class:`Calibration`. A panel without calibration runs takes the median over
    its k = 1 runs (every router and round runs the same single replica), one cost per operation."""
    parts: dict[tuple[str, int], dict[str, Row]] = {}
    for r in rows:
        if r.get("calibration"):
            parts.setdefault((r["panel"], r.get("round", 0)), {})[r.get("calibration_part", "mixed")] = r
    split: dict[str, list[UnitCosts]] = {}
    one: dict[str, list[UnitCosts]] = {}
    checks: dict[str, list[tuple[float, float, float, float]]] = {}
    source: dict[str, str] = {}
    for (panel, _), run in parts.items():
        if "mixed" not in run:
            continue
        mixed = run["mixed"]
        one_cost = UnitCosts.from_row(mixed)
        separated = UnitCosts.from_calibration(run["hits"], mixed) if "hits" in run else None
        costs = separated or one_cost
        split.setdefault(panel, []).append(costs)
        one.setdefault(panel, []).append(one_cost)
        source.setdefault(panel, f"{len(run)} calibration runs per round at k = 1 ({mixed['calibration']})")
        if separated is None:
            # Said, not hidden: this round's memcached cost is one mean per operation.
            source[panel] += "; a round's get and fill could not be told apart: one cost per operation there"
        if "check" in run:
            c = run["check"]
            gets, fills, reads = sum(c["replica_requests"]), sum(c["replica_fills"]), max(c["requests"], 1)
            checks.setdefault(panel, []).append((c["hit_rate"], c["replica_cpu_sum_ns"] / reads,
                                                 (gets * costs.memcached + fills * costs.memcached_fill) / reads,
                                                 (gets + fills) * one_cost.memcached / reads))
    for r in rows:
        if r["k"] == 1 and not r.get("calibration") and r["panel"] not in source:
            one.setdefault(r["panel"], []).append(UnitCosts.from_row(r))
    return {p: Calibration(costs=UnitCosts.median_of(split.get(p) or u), one_cost=UnitCosts.median_of(u),
                           source=source.get(p, "the k = 1 runs"),
                           check=tuple(map(statistics.median, zip(*checks[p], strict=True))) if p in checks else None)
            for p, u in one.items()}


def add_speedups(rows: list[Row]) -> None:
    """Speedups against k = 1 of the same panel and router, with their kinds; Eq. 3 as a model.
    Calibration rows (``calibration`` set) only give the unit costs; the caller drops them."""
    base: dict[tuple[str, str, int], Row] = {}
    for r in rows:
        if r["k"] == 1 and not r.get("calibration"):
            base[(r["panel"], r["dispatch"], r.get("round", 0))] = r
    # The unit costs of a panel: medians over its calibrations, so that a round's noisy
    # calibration moves no work speedup.
    calibrations = panel_calibrations(rows)
    for r in rows:
        b = base.get((r["panel"], r["dispatch"], r.get("round", 0)))

        def ratio(key: str, b: Row | None = b, r: Row = r) -> float | None:
            if b is None or not b.get(key) or not r.get(key):
                return None
            return float(r[key]) / float(b[key])

        # DESIGN.md: a measured speedup only where k fits the cores; above, the raw measured
        # throughput stays in the row, and the bend it shows is the cores', not the tier's.
        fits = r["k"] <= r.get("cores", r["k"])
        r["speedup_measured"] = ratio("throughput_rps_measured") if fits else None
        r["speedup_projected"] = ratio("throughput_rps_projected")
        r["speedup_linear"] = float(r["k"])
        r["speedup_work"] = r["speedup_eq3"] = r["throughput_rps_work"] = r["work_bottleneck"] = None
        # Without a k = 1 run (the skew study) the row calibrates its own unit costs: the work
        # throughput then shows what the busiest participant's exact load allows.
        unit = calibrations[r["panel"]].costs if b is not None else UnitCosts.from_row(r)
        counts = Counts.from_row(r)
        span, who = work_span(counts, unit)
        r["throughput_rps_work"] = r["requests"] * 1e9 / span if span else None
        r["work_bottleneck"] = who
        if b is None:
            continue
        base_counts = Counts.from_row(b)
        span1, _ = work_span(base_counts, unit)
        if span and span1:
            r["speedup_work"] = (r["requests"] / span) / (b["requests"] / span1)
            old, old1 = (busiest_participant_span(c, unit) for c in (counts, base_counts))
            r["speedup_work_busiest"] = (r["requests"] / old) / (b["requests"] / old1) if old and old1 else None
            one, one1 = (work_span(c, calibrations[r["panel"]].one_cost)[0] for c in (counts, base_counts))
            r["speedup_work_one_memcached_cost"] = (r["requests"] / one) / (b["requests"] / one1) if one and one1 \
                else None
        r["miss_penalty_rho"] = unit.rho
        r["unit_costs_ns"] = dataclasses.asdict(unit)
        r["unit_costs_from"] = calibrations[r["panel"]].source
        r["memcached_cpu_check_ns"] = calibrations[r["panel"]].check
        if r["dispatch"] == "hash" and not r["workload"].startswith("zipf"):
            # Eq. 3 assumes uniform requests over the rows the caches can be asked for (all rows,
            # or the hot set): δ = the single replica's measured hit rate.
            r["speedup_eq3"] = eq3_speedup(r["k"], b["hit_rate"], unit.rho, r["backend"])


def eq3_speedup(k: int, delta: float, rho: float, backend: str, s: float = 0.0) -> float:
    """Paper Eq. 3 (joint scaling) or the constant-backend profile of App. B, as a speedup."""

    def t_joint(kk: int) -> float:
        kd = min(kk * delta, 1.0)
        return s + (1 - s) / kk * (kd + (1 - kd) * rho)

    def t_constant(kk: int) -> float:
        kd = min(kk * delta, 1.0)
        # App. B: T_c(k) = s + (1-s)(δ + (1-kδ)ρ) when only the cache scales (hits get faster
        # with k only through the hit rate; the backend's share does not shrink).
        return s + (1 - s) * (kd / kk + (1 - kd) * rho)

    t = t_joint if backend == "joint" else t_constant
    return t(1) / t(k)


def _plot(out: Path, study: CacheStudy, rows: list[Row]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths: list[Path] = []
    colours = ROUTER_COLOURS
    for panel in study.panels:
        prow = [r for r in rows if r["panel"] == panel.name]
        if not prow:
            continue
        if len(panel.ks) == 1:
            fig, ax = plt.subplots(figsize=(6, 4))
            routers = [r["dispatch"] for r in prow]
            heights = [r["max_over_mean_load"] or 0 for r in prow]
            ax.bar(routers, heights, color=[colours.get(x, "gray") for x in routers])
            ax.axhline(1.2, ls="--", color="black", lw=1, label="1.2")
            ax.set_ylabel("max / mean replica load (count)")
            ax.set_title(f"{study.name} {panel.name}: {panel.title}", fontsize=9)
            ax.legend()
        else:
            fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
            ks = sorted({r["k"] for r in prow})
            ax.plot(ks, ks, "k--", lw=1, label="linear")
            for router in panel.routers:
                rr = sorted((r for r in prow if r["dispatch"] == router), key=lambda r: r["k"])
                c = colours.get(router, "gray")
                ax.plot([r["k"] for r in rr], [r["speedup_projected"] for r in rr], "-o", color=c, ms=4,
                        label=f"{router}: projected (CPU time, ideal cores)")
                wk = [r for r in rr if r.get("speedup_work") is not None]
                ax.errorbar([r["k"] for r in wk], [r["speedup_work"] for r in wk],
                            yerr=[[r["speedup_work"] - r.get("speedup_work_lo", r["speedup_work"]) for r in wk],
                                  [r.get("speedup_work_hi", r["speedup_work"]) - r["speedup_work"] for r in wk]],
                            fmt="-", color=c, lw=1.6, alpha=0.6, capsize=2,
                            label=f"{router}: work (counts × unit CPU costs), median [range]")
                ms = [r for r in rr if r.get("speedup_measured") is not None]
                if ms:
                    ax.plot([r["k"] for r in ms], [r["speedup_measured"] for r in ms], "s", mfc="none", color=c,
                            ms=7, label=f"{router}: measured (k ≤ {rr[0]['cores']} cores)")
                eq = [(r["k"], r["speedup_eq3"]) for r in rr if r.get("speedup_eq3")]
                if eq:
                    ax.plot([x for x, _ in eq], [y for _, y in eq], ":", color=c, label=f"{router}: Eq. 3 model")
                ax2.plot([r["k"] for r in rr], [r["hit_rate"] for r in rr], "-o", color=c, ms=4, label=router)
            ax.set_xlabel("memcached replicas k")
            ax.set_ylabel("speedup vs k = 1")
            fig.suptitle(textwrap.fill(f"{study.name} {panel.name}: {panel.title}", 120), fontsize=9)
            ax.legend(fontsize=7)
            ax2.set_xlabel("memcached replicas k")
            ax2.set_ylabel("cache hit rate")
            ax2.set_ylim(0, 1)
            ax2.legend(fontsize=8)
        fig.tight_layout()
        # The stem ends in ".png" (save_figure replaces a suffix, and panel names hold dots).
        png = save_figure(fig, out / f"{study.name}-{panel.name}.png")
        paths += [png, png.with_suffix(".svg")]
    return paths


def _summary(study: CacheStudy, rows: list[Row]) -> Table:
    t = Table(title=study.description, caption="measured: wall clock on this machine; projected: CPU time on "
              "ideal cores (busiest participant or the client threads' request path); work: counts × unit costs "
              "under the same bounds; eq3: the paper's model with measured δ and ρ (a path-only model); util: CPU "
              "used / (wall × cores).", caption_justify="left")
    for col in ("panel", "router", "k", "hit rate", "measured ×", "projected ×", "work ×", "eq3 ×", "req/s measured",
                "req/s projected", "max/mean load", "util", "wrong"):
        t.add_column(col, justify="left" if col in ("panel", "router") else "right")

    def f(v: Any, d: int = 2) -> str:
        return "—" if v is None else f"{v:,.{d}f}"

    for r in rows:
        t.add_row(r["panel"], r["dispatch"], str(r["k"]), f(r["hit_rate"], 3), f(r.get("speedup_measured")),
                  f(r.get("speedup_projected")), f(r.get("speedup_work")), f(r.get("speedup_eq3")),
                  f(r["throughput_rps_measured"], 0),
                  f(r["throughput_rps_projected"], 0), f(r["max_over_mean_load"]), f(r["machine_utilisation"]),
                  str(r["wrong_values"]))
    return t


def findings(study: CacheStudy, rows: list[Row]) -> list[str]:
    """The sentences the issue asks for, computed from the rows (each number with its kind)."""
    out: list[str] = []
    for panel in study.panels:
        pr = [r for r in rows if r["panel"] == panel.name]
        if not pr:
            continue  # a panel not run (--panel chose others) has no findings, not "0 wrong values"
        if len(panel.ks) > 1:
            for router in panel.routers:
                rr = sorted((r for r in pr if r["dispatch"] == router), key=lambda r: r["k"])
                if not rr:
                    continue
                last = rr[-1]

                def above(kind: str, rr: list[Row] = rr) -> str:
                    sup = [r for r in rr if (r.get(kind) or 0) > r["k"] * 1.05]
                    name = kind.split('_')[1]
                    if not sup:
                        return f"{name} never above linear"
                    best = max(sup, key=lambda r: (r.get(kind) or 0) / r["k"])
                    return (f"{name} above linear at k ∈ {[r['k'] for r in sup]}, peak "
                            f"{row_spread(best, kind, '.1f')}× at k={best['k']} "
                            f"({best[kind] / best['k']:.2f}× linear, median)")

                at14 = next((r for r in rr if r["k"] == 14), None)
                worst = max(rr, key=lambda r: abs((r.get("speedup_work") or r["k"]) / r["k"] - 1))
                out.append(
                    f"{panel.name}/{router}: hit rate {row_spread(rr[0], 'hit_rate', '.3f')} → "
                    f"{row_spread(last, 'hit_rate', '.3f')} (count) from k=1 to k={last['k']}"
                    + (f", {row_spread(at14, 'hit_rate', '.3f')} at k=14" if at14 else "")
                    + f"; at k={last['k']}: work {row_spread(last, 'speedup_work', '.1f')}×, projected "
                    f"{row_spread(last, 'speedup_projected', '.1f')}×, "
                    + (f"measured {row_spread(last, 'speedup_measured', '.2f')}× on {last['cores']} cores"
                       if last.get("speedup_measured") is not None
                       else f"measured only for k ≤ {last['cores']} cores")
                    + f" (bottleneck by work: {last.get('work_bottleneck')}); "
                    f"{above('speedup_work')}; {above('speedup_projected')}; farthest from linear (work): "
                    f"{(worst.get('speedup_work') or 0) / worst['k']:.2f}× linear at k={worst['k']}; "
                    f"median [range] over {last.get('repeats', 1)} rounds")
                growth = linear_growth(rr)
                if growth:
                    out.append(f"{panel.name}/{router}: {growth}")
            first = min(pr, key=lambda r: r["k"]) if pr else None
            if first is not None:
                out.append(f"{panel.name}: at k={first['k']} the run already has {first['threads']} client "
                           f"threads, "
                           f"{first['k']} replica(s) and {first['db_connections']} database backends on "
                           f"{first['cores']} cores: the measured curve is bent from the start, and measured speedup "
                           f"mostly follows CPU per request ({first['cpu_per_request_ns'] / 1e3:.0f} µs at "
                           f"k={first['k']})")
        else:
            for r in pr:
                out.append(f"{panel.name}/{r['dispatch']}: max/mean replica load "
                           f"{r['max_over_mean_load']:.2f} (count), hit rate {r['hit_rate']:.3f} (count), "
                           f"{r['throughput_rps_measured']:,.0f} req/s measured, "
                           f"{(r['throughput_rps_projected'] or 0):,.0f} req/s projected, "
                           f"{(r['throughput_rps_work'] or 0):,.0f} req/s work (bottleneck {r['work_bottleneck']})")
        cal = next((r for r in pr if r.get("unit_costs_ns") and r["k"] == 1), None)
        if cal is not None:
            out.append(calibration_finding(panel.name, cal))
        wrong = sum(r["wrong_values"] + r.get("calibration_wrong_values", 0) for r in pr)
        reads = sum(r["requests"] + r.get("calibration_requests", 0) for r in pr)
        out.append(f"{panel.name}: {wrong} wrong values in {reads:,} reads, calibration runs included (count)")
    return out


def calibration_finding(panel: str, row: Row) -> str:
    """The unit costs a panel's work kind used and, where a check run was made, how well the get
    and fill costs predict memcached's CPU at another hit rate (and how well one cost did)."""
    u = row["unit_costs_ns"]
    text = (f"{panel}: unit costs from {row['unit_costs_from']}, medians: memcached {u['memcached'] / 1e3:.1f} µs per "
            f"get, {u['memcached_fill'] / 1e3:.1f} µs per fill; query {u['postgresql'] / 1e3:.1f} µs; client "
            f"{u['client_hit'] / 1e3:.1f} µs per read + {u['client_miss'] / 1e3:.1f} µs past the cache; ρ = "
            f"{row['miss_penalty_rho']:.2f}")
    check = row.get("memcached_cpu_check_ns")
    if check and check[1] > 0:
        hit, measured, split, one = check
        text += (f"; check at hit rate {hit:.2f}: memcached CPU per read {measured / 1e3:.2f} µs measured, "
                 f"{split / 1e3:.2f} predicted by get and fill ({split / measured - 1:+.0%}), {one / 1e3:.2f} by "
                 f"one cost per operation ({one / measured - 1:+.0%})")
    return text


def linear_growth(rr: list[Row]) -> str | None:
    """Where the work curve peaks over linear and from where it grows linearly again (each added
    replica adding at most the average per replica, +5 %: the advisor's ``linear_from``), with
    the gains per added replica that show it; None without work speedups at three k or more, or
    for a curve that never rises above linear."""
    pts = [(r["k"], r.get("speedup_work")) for r in rr]
    if len(pts) < 3 or any(s is None for _, s in pts):
        return None
    ks, sp = tuple(k for k, _ in pts), tuple(float(s or 0.0) for _, s in pts)
    curve = curve_of(ks, sp)
    if curve.peak_ratio < 1 + LINEAR_TOLERANCE:
        return None  # never superlinear: nothing to fall back from
    steps = ", ".join(f"{ks[i - 1]}→{ks[i]}: {(sp[i] - sp[i - 1]) / (ks[i] - ks[i - 1]):.2f} per replica "
                      f"(average {sp[i - 1] / ks[i - 1]:.2f})" for i in range(1, len(ks)) if ks[i - 1] >= curve.peak_k)
    head = f"S(k)/k (work) peaks at k={curve.peak_k} ({curve.peak_ratio:.2f}× linear)"
    if curve.linear_from is None:
        return f"{head}; still growing faster than linear at k={ks[-1]}"
    return (f"{head}; from k={curve.linear_from} on each added replica adds at most the average per replica "
            f"(+5 %), the curve grows linearly again" + (f": {steps}" if steps else ""))


def check_servers_fit(study: CacheStudy, flag: str) -> None:
    """Refuses, before any server starts, a study whose replicas the machine cannot hold (their
    count and memory) or whose runs would open more connections than its PostgreSQL takes (it
    refuses them with "too many clients" once runs have started), naming ``flag``, the option that
    set the replica counts."""
    check_replica_bounds(study.replicas, study.memory_mb, flag=flag, override=None)
    takes = PG_MAX_CONNECTIONS - PG_RESERVED_CONNECTIONS
    for p in study.panels:
        for k in p.ks:
            opens = min(_threads(p, k), _db_connections(p, k))  # a thread holds one connection at a time
            if opens > takes:
                raise SuperlinearError(f"{flag} {k}: {opens:,} PostgreSQL connections at {k} replicas, and the "
                                       f"tier's PostgreSQL takes {takes:,} (max_connections {PG_MAX_CONNECTIONS})")


def run_study(study: CacheStudy, panels: list[str] | None, out: Path, show_progress: bool,
              services_dir: str | None = None, on_round: Callable[[list[Row]], object] | None = None) -> list[Row]:
    """Starts the servers, runs the study, stops the servers; returns the rows. ``on_round``
    receives the rows of the rounds finished so far after each round, so that an interrupted run
    keeps them."""
    chosen = [p for p in study.panels if not panels or p.name in panels]
    own_dir = services_dir is None
    # /tmp: reachable by the unprivileged user PostgreSQL runs as when started by root.
    sdir = services_dir or tempfile.mkdtemp(prefix=f"superlinear-{study.name}-", dir="/tmp")
    os.chmod(sdir, 0o755)
    services = Services(sdir)
    rows: list[Row] = []
    try:
        with progress_bar(show_progress) as progress:
            total = study.repeats * sum(len(p.routers) * len(p.ks) for p in chosen)
            task = progress.add_task(f"{study.name}: starting {study.replicas} memcached + PostgreSQL", total=total)
            state = services.up(study.replicas, study.memory_mb, pg=True)
            assert state.postgres is not None
            dsn = state.postgres.dsn()
            progress.update(task, description=f"{study.name}: loading {study.rows:,} rows (COPY)")
            interruptible(lambda: _native.cache_load(dsn, study.rows, TABLE, False))
            routers = list(dict.fromkeys(r for p in chosen for r in p.routers))
            ks = sorted({k for p in chosen for k in p.ks})
            # Rounds are interleaved: every round runs every (router, k) once, in the same order,
            # after the round's calibration run.
            for rnd in range(study.repeats):
                progress.update(task, description=f"{study.name}: round {rnd + 1}/{study.repeats}, calibration")
                cal = calibration_points(study, chosen, state.addresses(), dsn, state.memcached[0].pid,
                                         seed=1 + 104_729 * rnd)
                for r in cal:
                    r["round"] = rnd
                rows.extend(cal)
                for router in routers:
                    for k in ks:
                        at = [p for p in chosen if router in p.routers and k in p.ks]
                        if not at:
                            continue
                        progress.update(task, description=f"{study.name}: round {rnd + 1}/{study.repeats}, "
                                                          f"{router} routing, k={k}")
                        points = run_points(study, at, router, k, state.addresses(), dsn, seed=1 + 104_729 * rnd)
                        for r in points:
                            r["round"] = rnd
                        rows.extend(points)
                        progress.advance(task, len(at))
                if on_round is not None:
                    on_round(finished_rows(study, [dict(r) for r in rows]))
    finally:
        if own_dir:
            services.down(purge=True)
    return finished_rows(study, rows)


def finished_rows(study: CacheStudy, rows: list[Row]) -> list[Row]:
    """The result rows of finished rounds' runs: sorted, with their speedups, each calibration
    folded into its k = 1 row, and the rounds aggregated into median [range]."""
    order = [p.name for p in study.panels]
    rows.sort(key=lambda r: (order.index(r["panel"]), r["dispatch"], r["k"], r["round"]))
    add_speedups(rows)
    fold_calibration(rows)
    return aggregate_rounds([r for r in rows if not r.get("calibration")])


def fold_calibration(rows: list[Row]) -> None:
    """Carries each calibration run's reads and wrong or stale values on the k = 1 row of the same
    panel and round (first router), so that no value a calibration read got wrong goes uncounted."""
    for cal in (r for r in rows if r.get("calibration")):
        row = next((r for r in rows if not r.get("calibration") and r["panel"] == cal["panel"] and r["k"] == 1
                    and r.get("round") == cal.get("round")), None)
        if row is not None:
            row["calibration_requests"] = row.get("calibration_requests", 0) + cal["requests"]
            row["calibration_wrong_values"] = (row.get("calibration_wrong_values", 0) + cal["wrong_values"]
                                               + cal.get("stale_values", 0) + cal.get("errors", 0))
