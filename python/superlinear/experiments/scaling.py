"""Projected against measured speedup on a many-core machine (issue 18, docs/results/
measured-vs-projected-16-cores.md): the headline Fig. 5a lists and the Fig. 8 acl1 classifier
series on a grid of k that a 16-core machine can run with real threads, one worker per core.

Every point is run both ways (projected and, for k ≤ cores, measured), so the table and the
result rows show the two side by side, each the median and range of independent repeats. k = 15
leaves the dispatcher thread a core of its own on 16 cores; at k = 16 worker 0's thread routes. On a machine
with fewer cores the points above its core count are projected only.
"""

from __future__ import annotations

from pathlib import Path

from superlinear.common.rows import Row
from superlinear.engine.runs import Workload
from superlinear.experiments.fig5 import steady_state_warmup
from superlinear.experiments.packets import RSS5, classbench, find_data, packet_panel, series
from superlinear.experiments.spec import Experiment, Panel, Series

__all__ = ["KS", "experiment"]

#: The grid: powers of two up to 16, and 12 and 15 (15 workers + the dispatcher fill 16 cores).
KS = (1, 2, 4, 8, 12, 15, 16)


def experiment(quick: bool = False, data: Path | None = None) -> Experiment:
    """Fig. 5a's four lists (and MTF + hash in steady state) at Fig. 5a's quick or full size,
    and, with the ClassBench data, acl1 5k with the static list and MRF behind 5-tuple RSS and
    the rule-aware dispatcher."""
    m = 20_000 if quick else 100_000
    panels = [
        Panel(
            name="lists",
            title=f"Static vs MTF list, uniform input (m = {m:,})",
            workload=Workload("uniform", m),
            series=(*(Series(a, d) for a in ("static", "mtf") for d in ("rr", "hash")),
                    Series("mtf", "hash", exclude_warmup=True)),
            ks=KS,
            requests=200_000 if quick else 1_000_000,
            warmup=steady_state_warmup(m, max(KS)),
            static_baseline="static",
        )
    ]
    root = find_data(data)
    if root is not None:
        panels.append(packet_panel("acl1", "ClassBench acl1 5k, RSS and rule-aware dispatch",
                                   classbench(root, "acl1", "5k", quick),
                                   series(("static", RSS5), ("mrf", RSS5), ("mrf", "rule")), KS))
    return Experiment(
        summary=where_measured_time_went,
        name="scaling",
        description="Projected against measured speedup, k up to 16 (measured where k ≤ cores)"
        + (" (quick sizes)" if quick else ""),
        panels=tuple(panels),
    )


def where_measured_time_went(rows: list[Row]) -> list[str]:
    """For each measured point with k ≥ 2: measured against projected speedup, and where the
    measured run's time went (medians over the repeats): the slowest worker's wall-clock time
    serving over the projected worker time (above 1: slower side by side than one at a time, from
    shared caches and memory bandwidth or from being descheduled), and the dispatcher's time
    blocked on full rings as a share of the wall clock (near 0 with idle workers: the dispatcher
    set the pace). A measured worker's thread CPU time is not compared: a worker on a core of its
    own spins while it waits, so its CPU time holds its waits too."""
    out = []
    for r in rows:
        m, p = r.get("speedup_measured"), r.get("speedup_projected")
        serve, est, wall = r.get("measured_max_worker_serve_ns"), r.get("max_worker_estimate_ns"), r.get("wall_ns")
        if r["k"] < 2 or not (m and p and serve and est and wall):
            continue
        blocked = (r.get("measured_dispatcher_blocked_ns") or 0) / wall
        out.append(f"{r['panel']} {r['algo']} + {r['dispatch']} k={r['k']}: measured {m:.3g}× vs projected "
                   f"{p:.3g}× ({m / p - 1:+.0%}); slowest worker serving {serve / est:.2f}× the projected worker "
                   f"time; dispatcher blocked {blocked:.0%} of the wall clock")
    return out
