"""Experiments declared as data: an experiment is panels, a panel is series over a grid of k.

Nothing here runs anything; :mod:`superlinear.experiments.driver` runs every experiment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from superlinear.classify.workload import PacketWorkloadSpec
from superlinear.common.rows import Row
from superlinear.engine.runs import Workload


@dataclass(frozen=True)
class Series:
    """One curve: an algorithm behind a dispatcher."""

    algo: str
    dispatch: str
    exclude_warmup: bool = False

    def label(self) -> str:
        tail = ", steady state" if self.exclude_warmup else ""
        return f"{self.algo} + {self.dispatch}{tail}"


@dataclass(frozen=True)
class Panel:
    """A grid of runs sharing a workload and parameters.

    ``metric`` is ``speedup`` (projected, work and, for k ≤ cores, measured speedup against the
    same algorithm at k = 1) or ``goodput`` (measured million requests/s with every worker on one
    core, paper Fig. 5c). Packet panels (a :class:`PacketWorkloadSpec` workload) use
    ``packets`` (the paper's two rows: speedup above, raw Mpps below) or ``latency`` (mean
    per-packet time above, Mpps below, Fig. 9a); their rows are the same speedup rows.
    """

    name: str
    title: str
    workload: Workload | PacketWorkloadSpec
    series: tuple[Series, ...]
    ks: tuple[int, ...]
    requests: int
    warmup: int = 0
    compare_cycles: int = 0
    miss_cycles: int = 0
    capacity: int | None = None
    metric: str = "speedup"
    static_baseline: str | None = None
    sharded: bool = False
    seed: int = 1
    #: Independent repeats of the panel (rounds of the driver; ``--repeats`` overrides).
    repeats: int = 3
    #: Least wall-clock milliseconds the projected passes of a k = 1 baseline span, and of every
    #: other point (docs/design.md, "The calibrated projection"): a baseline is in every speedup
    #: of its series, so it gets the longer window, timed in two halves at the ends of each round.
    baseline_timed_ms: int = 3000
    point_timed_ms: int = 1000
    #: Packet panels: every row also carries the worker's memory (exact counts), the working-set
    #: law's prediction of it and the cache level that holds it (:mod:`superlinear.classify.footprint`).
    footprint: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    def runs(self) -> int:
        """Number of engine runs the driver will make in a round (k = 1 baselines are shared
        between series and timed in two halves, at the round's start and end)."""
        baselines = {(s.algo, s.exclude_warmup) for s in self.series}
        per_series = sum(1 for s in self.series for k in self.ks if k != 1)
        extra = 1 if self.static_baseline and (self.static_baseline, False) not in baselines else 0
        if self.metric == "goodput":
            return len(self.series) * len(self.ks)
        return 2 * (len(baselines) + extra) + per_series


@dataclass(frozen=True)
class Experiment:
    """A reproducible study: a name, what it shows, and its panels."""

    name: str
    description: str
    panels: tuple[Panel, ...]
    #: Findings in words from the rows of a run (printed under the table, kept in result.json).
    summary: Callable[[list[Row]], list[str]] | None = None

    def steady_state(self) -> Experiment:
        """The same experiment with the warm-up excluded from every series (``--exclude-warmup``)."""
        panels = []
        for p in self.panels:
            if not p.warmup:
                raise ValueError(f"panel {p.name} declares no warm-up length")
            series = tuple(dict.fromkeys(replace(s, exclude_warmup=True) for s in p.series))
            panels.append(replace(p, series=series))
        return replace(self, description=self.description + ", warm-up excluded", panels=tuple(panels))
