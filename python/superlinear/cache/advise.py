"""The cache advisor: the speedup curve of k cache-aside replicas predicted from a key distribution,
the memory of one replica and the miss cost ρ, without servers.

Each replica is an exact LRU of ``items`` items fed its own share of the requests (as the router
sends them: key hash, random or DistCache; :func:`superlinear._native.cache_lru_sim`), so the hit
rate h(k) at every k is simulated rather than assumed (Eq. 3 assumes h(k) = min(kδ, 1), true only
for uniform requests over a key set split evenly). The speedup is Eq. 3 with that hit rate, s = 0
and the cache and backend scaled together:

    S(k) = k · (h(1) + (1 − h(1))·ρ) / (h(k) + (1 − h(k))·ρ)

which is a **model** (kind ``model``): the work the replicas and the database do per request,
with a hit costing 1 and a miss ρ. Beside it, ``work_speedups`` predict the tier's *work* kind
(``reproduce fig11``) from the simulated counts × unit CPU costs (:data:`UNIT_COSTS_US`,
calibrated at k = 1 on the real tier), under the bounds of :mod:`superlinear.cache.work`: the
busiest replica (its own share, so the replicas' imbalance counts), the queries over 4
connections per replica, and the client threads' request path (4 per replica). The superlinear
part is S(k)/k; it peaks where h(k) stops growing (``peak_k``: the first k within 2 % of the
largest S(k)/k) and from there the curve grows linearly again (``linear_from``: the first k
from which each added replica adds no more than 5 % over the average speedup per replica, S(k)
− S(k−1) ≤ 1.05 · S(k−1)/(k−1)).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from superlinear import _native
from superlinear.cache.work import Counts, UnitCosts
from superlinear.cache.work import work_span as _work_span
from superlinear.common.rows import Row

if TYPE_CHECKING:
    from superlinear.experiments.fig11 import CacheStudy

#: Items of 16-byte keys and 48-byte values in one MB of a memcached replica (27,592 in 4 MB,
#: measured with memcached 1.6: ``curr_items`` after offering every row).
ITEMS_PER_MB = 27_592 / 4

#: CPU µs per memcached get, PostgreSQL query, client read, client read past the cache and
#: memcached fill: the medians over the four panels' calibrations of a ``reproduce fig11`` run
#: (docs/results/cache-tier.md says where and when); only their ratios matter.
UNIT_COSTS_US = UnitCosts(memcached=8.2, postgresql=26.4, client_hit=12.0, client_miss=22.5, memcached_fill=11.3)
#: Each router's colour in the cache tier's plots (the advisor's and the figures' agree).
ROUTER_COLOURS = {"hash": "tab:red", "random": "tab:blue", "distcache": "tab:green"}
#: Client threads and database connections per replica (Fig. 11).
PER_REPLICA = 4

#: Relative tolerances of the peak and the return to linear.
PEAK_TOLERANCE = 0.02
LINEAR_TOLERANCE = 0.05


def items_for(memory_mb: float) -> int:
    """Items a replica of ``memory_mb`` MB holds (scaled from the measured 4 MB)."""
    return max(1, int(ITEMS_PER_MB * memory_mb))


def support_of(dist: str, rows: int) -> int:
    """The rows a distribution can ask for (``hot:H...``: H; otherwise every row)."""
    if dist.startswith("hot:"):
        return min(rows, int(dist.split(":")[1].replace("_", "")))
    return rows


def work_span(per: list[tuple[int, int]], k: int, costs: UnitCosts = UNIT_COSTS_US) -> float:
    """The work kind's completion time per request (µs) from simulated (hits, reads) per replica,
    with the driver's bounds (:func:`superlinear.cache.work.work_span`): every miss is one query
    and one fill, and there are 4 client threads and 4 connections per replica."""
    n = max(sum(r for _, r in per), 1)
    misses = sum(r - h for h, r in per)
    counts = Counts(replica_gets=[r for _, r in per], replica_fills=[r - h for h, r in per], requests=n,
                    past_cache=misses, db_reads=misses,
                    threads=PER_REPLICA * k, db_connections=PER_REPLICA * k)
    return _work_span(counts, costs)[0] / n


def eq3_hits(k: int, h1: float, hk: float, rho: float) -> float:
    """Eq. 3 (s = 0, joint scaling) with simulated hit rates: S(k) = k·cost(h1)/cost(hk)."""
    return k * (h1 + (1 - h1) * rho) / max(hk + (1 - hk) * rho, 1e-12)


@dataclass(frozen=True)
class CacheCurve:
    """One router's predicted curve."""

    router: str
    ks: tuple[int, ...]
    hit_rates: tuple[float, ...]
    speedups: tuple[float, ...]
    #: The work kind predicted from the simulated per-replica counts (None: not computed).
    work_speedups: tuple[float, ...] | None = None
    #: The simulated (hits, reads) of every replica at every k.
    counts: tuple[list[tuple[int, int]], ...] = ()

    def work_with(self, costs: UnitCosts) -> tuple[float, ...]:
        """The work kind of the same simulated counts under other unit costs."""
        spans = [work_span(per, k, costs) for per, k in zip(self.counts, self.ks, strict=True)]
        return tuple(spans[0] / s if s else 0.0 for s in spans)

    @property
    def work_peak_k(self) -> int | None:
        return peak_of(self.ks, self.work_speedups) if self.work_speedups else None

    @property
    def ratios(self) -> list[float]:
        return [s / k for s, k in zip(self.speedups, self.ks, strict=True)]

    @property
    def peak_k(self) -> int:
        """The first k within :data:`PEAK_TOLERANCE` of the largest S(k)/k."""
        best = max(self.ratios)
        return next(k for k, r in zip(self.ks, self.ratios, strict=True) if r >= best * (1 - PEAK_TOLERANCE))

    @property
    def peak_ratio(self) -> float:
        return max(self.ratios)

    @property
    def linear_from(self) -> int | None:
        """The first k ≥ the peak from which every added replica adds at most the average
        speedup per replica (+5 %); None if the curve is still accelerating at the last k."""
        pk = self.peak_k
        for i in range(1, len(self.ks)):
            if self.ks[i] <= pk:
                continue
            tail_ok = all(
                (self.speedups[j] - self.speedups[j - 1]) / (self.ks[j] - self.ks[j - 1])
                <= (1 + LINEAR_TOLERANCE) * self.speedups[j - 1] / self.ks[j - 1]
                for j in range(i, len(self.ks))
            )
            if tail_ok:
                return self.ks[i - 1] if self.ks[i - 1] >= pk else pk
        return None


@dataclass(frozen=True)
class CacheAdvice:
    """The prediction for one distribution and replica size."""

    dist: str
    rows: int
    items: int
    rho: float
    requests: int
    curves: tuple[CacheCurve, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def curve(self, router: str) -> CacheCurve:
        return next(c for c in self.curves if c.router == router)

    def rows_out(self) -> list[Row]:
        out: list[Row] = []
        for c in self.curves:
            for k, h, s in zip(c.ks, c.hit_rates, c.speedups, strict=True):
                out.append({"dispatch": c.router, "workload": self.dist, "m": self.rows, "k": k,
                            "items_per_replica": self.items, "rho": self.rho, "hit_rate_predicted": h,
                            "speedup_model": s, "speedup_model_over_linear": s / k,
                            "peak_k": c.peak_k, "linear_from": c.linear_from, "work_peak_k": c.work_peak_k})
            if c.work_speedups:
                for row, w in zip(out[-len(c.ks):], c.work_speedups, strict=True):
                    row["speedup_work_predicted"] = w
        return out


def predict(dist: str, rows: int, items: int, rho: float, ks: Sequence[int],
            routers: Sequence[str] = ("hash", "random"), requests: int | None = None, seed: int = 1,
            trace: str | None = None, costs: UnitCosts = UNIT_COSTS_US) -> CacheAdvice:
    """Simulates every router's replicas at every k and evaluates Eq. 3 with the hit rates.
    ``requests`` counted per k (default 200,000), after a pre-fill with every row the distribution
    can ask for and a warm-up of as many reads (the LRU steady state, as the real tier starts).
    With ``trace`` (a key trace file) the trace's reads replace the distribution: played once
    uncounted, then once counted, and ``rows`` becomes its number of distinct keys. ``costs``:
    the unit costs of the work kind (default: this machine's, :data:`UNIT_COSTS_US`)."""
    ks = sorted(set(ks))
    if not ks or ks[0] < 1:
        raise ValueError("the replica counts must be positive")
    if 1 not in ks:
        ks = [1, *ks]
    support = support_of(dist, rows)
    n = requests or 200_000
    if trace is not None:  # the trace is read once, for every router
        rows, per_router = _native.cache_lru_sim_trace(list(routers), ks, trace, items, seed)
        n = sum(r for _, r in per_router[0][0])
    else:
        per_router = [[_native.cache_lru_sim(router, k, dist, rows, items, n, support, seed) for k in ks]
                      for router in routers]
    curves = []
    for router, per_k in zip(routers, per_router, strict=True):
        hits = [sum(h for h, _ in per) / max(sum(r for _, r in per), 1) for per in per_k]
        speed = [eq3_hits(k, hits[0], h, rho) for k, h in zip(ks, hits, strict=True)]
        curve = CacheCurve(router, tuple(ks), tuple(hits), tuple(speed), counts=tuple(per_k))
        curves.append(dataclasses.replace(curve, work_speedups=curve.work_with(costs)))
    return CacheAdvice(f"trace:{trace}" if trace is not None else dist, rows, items, rho, n, tuple(curves))


def curve_of(ks: Sequence[int], speedups: Sequence[float]) -> CacheCurve:
    """Any speedup curve (measured, predicted) as a :class:`CacheCurve`, for its peak and its
    return to linear."""
    return CacheCurve("curve", tuple(ks), tuple(0.0 for _ in ks), tuple(speedups))


def peak_of(ks: Sequence[int], speedups: Sequence[float]) -> int:
    """The peak (first k within :data:`PEAK_TOLERANCE` of the largest S(k)/k) of any curve."""
    return curve_of(ks, speedups).peak_k


#: ρ the tier measured: a miss's request path (client, get, query, fill) over a hit's (client,
#: get), from :data:`UNIT_COSTS_US` (see docs/results/cache-tier.md); pass ``--rho`` for your servers.
DEFAULT_RHO = round(UNIT_COSTS_US.rho, 1)


@dataclass(frozen=True)
class Verification:
    """The advisor's peak (work kind, predicted from simulated counts) against a real tier run of
    the same distribution (key hash, work kind)."""

    dist: str
    predicted_peak: int
    tier_peak: int
    predicted_hits: tuple[float, ...]
    tier_hits: tuple[float, ...]
    tier_work: tuple[float, ...]
    ks: tuple[int, ...]
    #: The unit costs the real tier's calibration gave (ns), next to the prediction's; None where
    #: the run had no k = 1.
    measured_costs: UnitCosts | None = None

    @property
    def peak_error(self) -> int:
        return self.tier_peak - self.predicted_peak


def verify_study(dist: str, rows: int, ks: Sequence[int], memory_mb: int, requests: int) -> CacheStudy:
    """The real tier's runs that check an advice: key hash at each k, cache and backend scaled together."""
    from superlinear.experiments.fig11 import CachePanel, CacheStudy

    return CacheStudy(name="cache-advise-verify", description=f"advise --verify: {dist}", rows=rows,
                      memory_mb=memory_mb, replicas=max(ks),
                      panels=(CachePanel("verify", f"key hash, {dist}", ("hash",), tuple(ks), dist=dist,
                                         requests=requests),))


def verify(advice: CacheAdvice, memory_mb: int, requests: int, out: str, show_progress: bool) -> Verification:
    """Runs the real tier (key hash, cache and backend scaled together) at the advice's k and
    compares the peak of the measured work speedup with the predicted work speedup's."""
    from pathlib import Path

    from superlinear.experiments.cachetier_driver import run_study

    curve = advice.curve("hash")
    study = verify_study(advice.dist, advice.rows, curve.ks, memory_mb, requests)
    rows = sorted(run_study(study, None, Path(out), show_progress), key=lambda r: r["k"])
    work = [float(r.get("speedup_work") or 0.0) for r in rows]
    # The same kind on both sides: the work kind predicted from simulated counts against the work
    # kind of the real runs (Eq. 3's peak is printed beside it as the paper's model).
    predicted = curve.work_peak_k if curve.work_peak_k is not None else curve.peak_k
    costs = next((UnitCosts(**r["unit_costs_ns"]) for r in rows if r["k"] == 1 and r.get("unit_costs_ns")), None)
    return Verification(advice.dist, predicted, peak_of([r["k"] for r in rows], work),
                        curve.hit_rates, tuple(float(r["hit_rate"]) for r in rows), tuple(work), curve.ks, costs)
