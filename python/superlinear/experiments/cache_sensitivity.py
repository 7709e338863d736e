"""The sensitivity map of Fig. 11 (``reproduce cache-sensitivity``): speedup over linear at each
replica count against key skew, memory per replica and the miss cost ρ, for key hash, random and
DistCache routing, with the paper's Eq. 3 on the same axes.

* skew axis: measured on the real tier (kind ``work``, the driver's rows) and the model;
* memory and ρ axes: predicted only (an LRU simulation of each replica's key share,
  :mod:`superlinear.cache.advise`), as the work kind (simulated counts × the unit costs the tier
  measured, :mod:`superlinear.cache.work`; on the ρ axis the database side of a miss is scaled)
  and as the model (Eq. 3 with the simulated hit rates and the measured ρ);
* Eq. 3 (:func:`superlinear.analysis.law.cache_law`, s = 0) with δ = items per replica / rows the
  distribution asks for: exact for uniform hot sets, an approximation under Zipf.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from superlinear.analysis.law import cache_law
from superlinear.cache.advise import (
    UNIT_COSTS_US,
    CacheCurve,
    eq3_hits,
    items_for,
    peak_of,
    predict,
    support_of,
)
from superlinear.cache.work import UnitCosts
from superlinear.common.rows import Row
from superlinear.experiments.fig11 import (
    HOT_ROWS,
    SENSITIVITY_MEMORY_MB,
    SENSITIVITY_RHO,
    CacheStudy,
)

MODEL_KS = (1, 2, 4, 6, 8, 10, 11, 12, 13, 14, 15)
MODEL_ROUTERS = ("hash", "random", "distcache")
#: Reads counted per simulated point (after the pre-fill and a warm-up).
MODEL_REQUESTS = 100_000


def measured_costs(rows: list[Row]) -> UnitCosts:
    """The unit costs the tier measured: each unit's median over every panel's calibration (the
    median of its k = 1 runs); this machine's defaults where no run carries them."""
    runs = [UnitCosts(**r["unit_costs_ns"]) for r in rows if r["k"] == 1 and r.get("unit_costs_ns")]
    return UnitCosts.median_of(runs) if runs else UNIT_COSTS_US


def sensitivity_rows(study: CacheStudy, rows: list[Row]) -> list[Row]:
    """One row per (axis, value, router, kind, k): speedup and speedup over linear."""
    costs = measured_costs(rows)
    rho = costs.rho
    out: list[Row] = []

    def add(axis: str, value: str, router: str, kind: str, ks: list[int], speedups: list[float],
            extra: dict[str, Any] | None = None) -> None:
        pk = peak_of(ks, speedups)
        for k, s in zip(ks, speedups, strict=True):
            out.append({"axis": axis, "value": value, "dispatch": router, "kind": kind, "k": k, "speedup": s,
                        "over_linear": s / k, "peak_k": pk, **(extra or {})})

    # Skew: measured (work) and the model for every panel; Eq. 3 for key hash.
    for panel in study.panels:
        for router in panel.routers:
            pr = sorted((r for r in rows if r["panel"] == panel.name and r["dispatch"] == router),
                        key=lambda r: r["k"])
            if pr and all(r.get("speedup_work") for r in pr):
                add("skew", panel.name, router, "work", [r["k"] for r in pr], [r["speedup_work"] for r in pr],
                    {"hit_rates": [r["hit_rate"] for r in pr]})
        advice = predict(panel.dist, study.rows, items_for(study.memory_mb), rho, MODEL_KS, panel.routers,
                         requests=MODEL_REQUESTS, costs=costs)
        for c in advice.curves:
            add("skew", panel.name, c.router, "model", list(c.ks), list(c.speedups))
            add("skew", panel.name, c.router, "work predicted", list(c.ks), list(c.work_speedups or ()))
        delta = items_for(study.memory_mb) / support_of(panel.dist, study.rows)
        add("skew", panel.name, "hash", "eq3", list(MODEL_KS), [cache_law(k, 0.0, delta, rho) for k in MODEL_KS])
    # Memory per replica and ρ: the model over the Fig. 11 hot set.
    hot = f"hot:{HOT_ROWS}"
    at_4mb: list[CacheCurve] = []
    for mb in SENSITIVITY_MEMORY_MB:
        advice = predict(hot, study.rows, items_for(mb), rho, MODEL_KS, MODEL_ROUTERS, requests=MODEL_REQUESTS,
                         costs=costs)
        if mb == 4:
            at_4mb = list(advice.curves)
        for c in advice.curves:
            add("memory", f"{mb} MB", c.router, "model", list(c.ks), list(c.speedups))
            add("memory", f"{mb} MB", c.router, "work predicted", list(c.ks), list(c.work_speedups or ()))
        delta = items_for(mb) / HOT_ROWS
        add("memory", f"{mb} MB", "hash", "eq3", list(MODEL_KS), [cache_law(k, 0.0, delta, rho) for k in MODEL_KS])
    for r in sorted({*SENSITIVITY_RHO, round(rho, 2)}):
        label = f"ρ={r:g}" + (" (measured)" if r == round(rho, 2) else "")
        for c in at_4mb:  # the simulated hit rates at 4 MB, Eq. 3 at this ρ
            h = c.hit_rates
            add("rho", label, c.router, "model", list(c.ks),
                [eq3_hits(k, h[0], hk, r) for k, hk in zip(c.ks, h, strict=True)])
        # The work kind at this ρ: the database side of a miss scaled (the replicas' cost kept).
        scaled = costs.with_rho(r)
        if scaled is not None:
            for c in at_4mb:
                add("rho", label, c.router, "work predicted", list(c.ks), list(c.work_with(scaled)))
        delta = items_for(4) / HOT_ROWS
        add("rho", label, "hash", "eq3", list(MODEL_KS), [cache_law(k, 0.0, delta, r) for k in MODEL_KS])
    return out


def summary_lines(srows: list[Row]) -> list[str]:
    """Per (axis, value, router, kind): the peak over linear and where it is."""
    seen: dict[tuple[str, str, str, str], list[Row]] = {}
    for r in srows:
        seen.setdefault((r["axis"], r["value"], r["dispatch"], r["kind"]), []).append(r)
    lines = []
    for (axis, value, router, kind), rr in seen.items():
        best = max(rr, key=lambda r: r["over_linear"])
        last = max(rr, key=lambda r: r["k"])
        lines.append(f"{axis} {value} {router} ({kind}): peak {best['over_linear']:.2f}× linear at "
                     f"k={rr[0]['peak_k']}, {last['over_linear']:.2f}× at k={last['k']}")
    return lines


def plot_sensitivity(out: Path, srows: list[Row]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from superlinear.output.figures import save_figure

    paths = []
    styles = {"work": dict(ls="none", marker="o", ms=5), "work predicted": dict(ls="--", lw=1.2),
              "model": dict(ls="-", lw=0.8, alpha=0.6), "eq3": dict(ls=":", lw=1.2)}
    for axis, routers in (("skew", MODEL_ROUTERS), ("memory", MODEL_ROUTERS), ("rho", MODEL_ROUTERS)):
        ar = [r for r in srows if r["axis"] == axis]
        if not ar:
            continue
        values = list(dict.fromkeys(r["value"] for r in ar))
        cmap = plt.get_cmap("viridis")
        colour = {v: cmap(i / max(len(values) - 1, 1)) for i, v in enumerate(values)}
        fig, axes = plt.subplots(1, len(routers), figsize=(5 * len(routers), 4), sharey=True)
        for ax, router in zip(axes, routers, strict=True):
            for v in values:
                for kind, st in styles.items():
                    rr = sorted((r for r in ar if r["value"] == v and r["dispatch"] == router and r["kind"] == kind),
                                key=lambda r: r["k"])
                    if rr:
                        ax.plot([r["k"] for r in rr], [r["over_linear"] for r in rr], color=colour[v],
                                label=f"{v} ({kind})", **st)
            ax.axhline(1, color="black", ls="--", lw=1)
            ax.set_title(f"{router}: speedup / k vs {axis}", fontsize=9)
            ax.set_xlabel("replicas k")
            ax.grid(True, alpha=0.2)
        axes[0].set_ylabel("speedup over linear (S(k)/k)")
        axes[-1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.suptitle("o = work (real tier), - - = work predicted (LRU simulation, counts × the tier's unit costs), "
                     "— = model (LRU simulation + Eq. 3), ··· = Eq. 3 (δ = items / hot rows)", fontsize=8)
        fig.tight_layout()
        paths.append(save_figure(fig, out / f"cache-sensitivity-{axis}"))
        plt.close(fig)
    return paths
