"""Predicted work speedup of a packet classifier behind each dispatch candidate, from the model of
the worker that will actually run (``advise --rules``, ``predict --rules``).

The model is an exact simulation, not a law: the run's classifier (MRF with its dependency bounds,
MRF-swap or the static list; paper §4.1, Alg. 1) serves a sample of the trace behind the run's
dispatcher on k workers and on one worker (``crates/classify/src/predict.rs``, the simulation the
rule-aware dispatcher uses for its shortlist, extended to a whole run: each worker serves its part
of the sample's two halves (and all of it again once per replay of the trace); the rest of the
trace is extrapolated at the second half's rate; exact when the sample is the whole trace). The
work speedup is one worker's work over the busiest worker's, q(k)·ℓ(k) of the paper's App. A.

* Confidence band: none when the sample is the whole trace (the prediction is then the run's own
  work count). Otherwise the same prediction is made from each half of the sample on its own
  (two disjoint samples, each extrapolated to the run); their largest disagreement with the
  full-sample prediction P, in log space d = max |ln(P / P_half)|, is what one doubling of the
  sample moved the prediction by. Reaching the whole trace of N packets from a sample of n takes
  log2(N/n) more doublings, each allowed to move it as much: the band is
  P·exp(±d·max(1, log2(N/n))). On the ClassBench 5k traces (5,000, 10,000 and 20,000-packet
  samples, 108 predictions) it held the obtained work speedup in 97 and was wider than ±10 % for
  every one of the 81 predictions off by more than 10 % (docs/results/analysis.md). A band wider
  than ±10 % (:data:`BAND_LIMIT`) is printed as a warning: simulate more of the trace (the whole
  trace is exact) or ``--verify``.
* Projected time (work-span + dispatcher cost): T(k) = dispatcher CPU per packet × packets + the
  busiest worker's work × CPU per work unit, both timed on this machine; T(1) one worker's work.
* ``verify``: runs the real classifier (``superlinear classify`` with k workers over the whole
  trace, and one worker) and reports obtained against predicted work speedup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from superlinear.common.rows import Row
from superlinear.output.figures import save_figure

__all__ = ["BAND_LIMIT", "DEFAULT_SAMPLE", "ClassifierAdvice", "Verified", "WorkPoint", "advise_classifier",
           "plot_classifier_advice", "predict_point", "verify"]

DEFAULT_SAMPLE = 100_000
"""Packets simulated by default: the rule-aware dispatcher's calibration sample (the whole trace
when shorter)."""

BAND_LIMIT = 0.10
"""A prediction whose band reaches further than this (relative) from it is flagged as unreliable."""

PROJECTED_MARGIN = 0.02
"""Projected speedups closer than this (relative) count as a tie: they come from CPU timings."""

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class WorkPoint:
    """One candidate at one k: predicted work speedup with its band, balance and projected time."""

    candidate: str
    dispatch: str
    """The dispatcher's canonical name (the rule-aware one names its fields)."""
    algo: str
    k: int
    sample: int
    target: int
    predicted: float
    band: tuple[float, float]
    busiest_share: float
    load_imbalance: float
    dispatch_ns_per_packet: float
    ns_per_work: float
    baseline_work: float
    span_work: float
    trace: int = 0
    """Packets of the trace (before replay); the sample is exact when it covers all of them."""

    @property
    def exact(self) -> bool:
        return self.sample >= self.trace

    @property
    def model(self) -> str:
        if self.exact:
            return f"{self.algo} exact simulation on {self.sample:,} packets"
        return f"{self.algo} simulation on {self.sample:,} of {self.trace:,} packets, extrapolated"

    @property
    def band_relative(self) -> float:
        """How far the band reaches from the prediction, relative (0 when exact)."""
        if self.predicted <= 0:
            return 0.0
        return max(self.band[1] / self.predicted - 1.0, 1.0 - self.band[0] / self.predicted)

    def projected(self, ns_per_work: float, dispatch_ns_per_packet: float) -> float:
        """Projected speedup T(1)/T(k) with the given costs (shared by every candidate so that
        timing noise of one call does not rank)."""
        t1 = self.baseline_work * ns_per_work
        tk = dispatch_ns_per_packet * self.target + self.span_work * ns_per_work
        return t1 / tk if tk > 0 else math.inf


@dataclass(frozen=True)
class Verified:
    """The real classifier's run for one candidate at one k."""

    candidate: str
    k: int
    predicted: float
    obtained: float
    work_span: int
    baseline_work: int
    load_imbalance: float

    @property
    def error(self) -> float:
        """Relative error of the prediction: predicted / obtained − 1."""
        return self.predicted / self.obtained - 1.0 if self.obtained > 0 else math.inf


def _point(raw: dict[str, Any], candidate: str, band: tuple[float, float], trace: int) -> WorkPoint:
    work = [float(x) for x in raw["worker_work"]]
    return WorkPoint(candidate=candidate, dispatch=raw["dispatch"], algo=raw["algo"], k=raw["k"],
                     sample=raw["sample"], target=raw["target"], predicted=raw["work_speedup"], band=band,
                     busiest_share=raw["busiest_share"], load_imbalance=raw["load_imbalance"],
                     dispatch_ns_per_packet=raw["dispatch_ns_per_packet"], ns_per_work=raw["ns_per_work"],
                     baseline_work=raw["baseline_work"], span_work=max(work), trace=trace)


def predict_point(w: Any, algo: str, candidate: str, k: int, *, sample: int = DEFAULT_SAMPLE,
                  seed: int = 1) -> WorkPoint:
    """Predicts ``candidate`` at k on a ``_native.PacketWorkload``: the first ``sample`` packets
    of its trace simulated; the band (module doc) from each half of them, none when exact."""
    trace = int(w.info()["trace_packets"])
    n = max(1, min(sample, trace))
    full = w.predict_work(algo, candidate, k, n, seed=seed)
    p = float(full["work_speedup"])
    if n >= trace or n < 2:
        return _point(full, candidate, (p, p), trace)
    half = n // 2
    halves = [float(w.predict_work(algo, candidate, k, half, start=start, seed=seed)["work_speedup"])
              for start in (0, half)]
    return _point(full, candidate, extrapolation_band(p, halves, n / trace), trace)


def extrapolation_band(predicted: float, halves: Sequence[float], fraction: float) -> tuple[float, float]:
    """The band of a prediction ``predicted`` from a sample that is ``fraction`` n/N of the trace,
    given the predictions from each half of the sample (module doc): P·exp(±d·max(1, log2(N/n)))."""
    tiny = 1e-300
    d = max((abs(math.log(max(predicted, tiny) / max(h, tiny))) for h in halves), default=0.0)
    f = min(max(fraction, tiny), 1.0)
    reach = min(d * max(1.0, math.log2(1.0 / f)), 700.0)
    return predicted * math.exp(-reach), predicted * math.exp(reach)


def verify(w: Any, algo: str, points: Sequence[WorkPoint], seed: int = 1) -> list[Verified]:
    """Runs the real classifier (k workers over the whole trace, and one worker) for each point."""
    base: dict[str, int] = {}
    out = []
    for p in points:
        if algo not in base:
            one = w.run({"algo": algo, "dispatch": "rr", "k": 1, "modes": ["projected"], "seed": seed,
                         "parallel": 1})
            base[algo] = int(one["projected"]["work_span"])
        run = w.run({"algo": algo, "dispatch": p.candidate, "k": p.k, "modes": ["projected"], "seed": seed,
                     "parallel": 1})["projected"]
        span = int(run["work_span"])
        out.append(Verified(candidate=p.candidate, k=p.k, predicted=p.predicted, obtained=base[algo] / max(span, 1),
                            work_span=span, baseline_work=base[algo], load_imbalance=float(run["load_imbalance"])))
    return out


@dataclass(frozen=True)
class ClassifierAdvice:
    """Every candidate's predictions over k, the recommendation and (after ``verify``) the real runs."""

    algo: str
    workload: str
    rules: int
    packets: int
    ks: tuple[int, ...]
    points: tuple[WorkPoint, ...]
    verified: tuple[Verified, ...] = field(default=())

    @property
    def candidates(self) -> list[str]:
        return list(dict.fromkeys(p.candidate for p in self.points))

    def at(self, candidate: str, k: int) -> WorkPoint:
        return next(p for p in self.points if p.candidate == candidate and p.k == k)

    @property
    def costs(self) -> tuple[float, float]:
        """(CPU per work unit, dispatcher CPU per packet) shared by every projection: the medians
        of every timed call."""
        def median(xs: list[float]) -> float:
            s = sorted(xs)
            return s[len(s) // 2]
        return (median([p.ns_per_work for p in self.points]),
                median([p.dispatch_ns_per_packet for p in self.points]))

    def projected(self, p: WorkPoint) -> float:
        # One cost per work unit for all; each candidate's own dispatcher cost (its fastest timing).
        ns_per_work, _ = self.costs
        own = min(q.dispatch_ns_per_packet for q in self.points if q.candidate == p.candidate)
        return p.projected(ns_per_work, own)

    def score(self, candidate: str) -> float:
        """Geometric mean of the predicted work speedup over k."""
        vals = [max(self.at(candidate, k).predicted, 1e-300) for k in self.ks]
        return math.exp(sum(math.log(v) for v in vals) / len(vals))

    def projected_score(self, candidate: str) -> float:
        vals = [max(self.projected(self.at(candidate, k)), 1e-300) for k in self.ks]
        return math.exp(sum(math.log(v) for v in vals) / len(vals))

    @property
    def recommended(self) -> str:
        """By predicted work (geometric mean over k; ties: the larger at the largest k)."""
        k_max = max(self.ks)
        return max(self.candidates, key=lambda c: (self.score(c), self.at(c, k_max).predicted))

    @property
    def recommended_by_projected(self) -> str:
        return max(self.candidates, key=self.projected_score)

    def disagreement(self) -> str | None:
        """A sentence when the projected-time ranking picks another candidate by more than the
        timing margin; None when both agree."""
        by_work, by_time = self.recommended, self.recommended_by_projected
        if by_work == by_time:
            return None
        a, b = self.projected_score(by_work), self.projected_score(by_time)
        if b <= a * (1 + PROJECTED_MARGIN):
            return None
        return (f"by projected time (work-span + dispatcher cost) {by_time} ranks first ({b:,.2f}× against "
                f"{a:,.2f}× for {by_work}): its dispatcher or balance costs less than its extra work")

    def best_at(self, k: int) -> str:
        return max(self.candidates, key=lambda c: self.at(c, k).predicted)

    def band_warning(self) -> str | None:
        """A sentence when some prediction's band reaches further than ±BAND_LIMIT; None otherwise."""
        wide = [p for p in self.points if p.band_relative > BAND_LIMIT]
        if not wide:
            return None
        worst = max(wide, key=lambda p: p.band_relative)
        return (f"warning: {len(wide)} of {len(self.points)} predictions have a band wider than "
                f"±{BAND_LIMIT:.0%} (widest ±{worst.band_relative:.0%}: {worst.candidate} at k = {worst.k}); "
                f"{worst.sample:,} of {worst.trace:,} packets were simulated and the rest extrapolated, which this "
                f"trace does not support: raise --sample (the whole trace is exact) or --verify")

    def top(self, k: int, n: int) -> list[WorkPoint]:
        return sorted((self.at(c, k) for c in self.candidates), key=lambda p: -p.predicted)[:n]

    def rows(self) -> list[Row]:
        """Result rows in the DESIGN.md schema, one per candidate and k."""
        checks = {(v.candidate, v.k): v for v in self.verified}
        best = self.recommended
        out: list[Row] = []
        for p in self.points:
            v = checks.get((p.candidate, p.k))
            out.append({"panel": "advise", "algo": self.algo, "dispatch": p.candidate, "dispatch_name": p.dispatch,
                        "workload": self.workload, "m": self.rules, "k": p.k, "requests": self.packets,
                        "speedup_measured": None, "speedup_projected": None,
                        "speedup_work": v.obtained if v else None,
                        "speedup_work_predicted": p.predicted, "predicted_low": p.band[0],
                        "predicted_high": p.band[1], "band_relative": p.band_relative,
                        "band_exceeds_limit": p.band_relative > BAND_LIMIT, "model": p.model, "sample": p.sample,
                        "speedup_projected_predicted": self.projected(p), "busiest_share": p.busiest_share,
                        "load_imbalance": p.load_imbalance, "dispatch_ns_per_packet": p.dispatch_ns_per_packet,
                        "prediction_error": v.error if v else None, "superlinear": p.predicted > p.k,
                        "recommended": p.candidate == best})
        return out


def advise_classifier(w: Any, candidates: Sequence[str], ks: Sequence[int], *, algo: str = "mrf",
                      sample: int = DEFAULT_SAMPLE, seed: int = 1, workload: str = "packets",
                      progress: Progress | None = None) -> ClassifierAdvice:
    """Predicts every candidate at every k on a ``_native.PacketWorkload``."""
    if not ks:
        raise ValueError("advise needs at least one k")
    if not candidates:
        raise ValueError("advise needs at least one candidate")
    total = len(candidates) * len(ks)
    points: list[WorkPoint] = []
    for c in candidates:
        for k in ks:
            if progress is not None:
                progress(len(points), total, f"{c} at k = {k}")
            points.append(predict_point(w, algo, c, k, sample=sample, seed=seed))
    info = w.info()
    return ClassifierAdvice(algo=points[0].algo, workload=workload, rules=int(info["rules"]),
                            packets=int(info["packets"]), ks=tuple(ks), points=tuple(points))


def plot_classifier_advice(advice: ClassifierAdvice, out_dir: Path, name: str = "advise") -> list[Path]:
    """Predicted work speedup per candidate over k with its band, the obtained points of
    ``verify`` and the linear bound, log axes; PNG and SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    ks = list(advice.ks)
    ax.plot([min(ks), max(ks)], [min(ks), max(ks)], "k--", lw=1, label="linear")
    best = advice.recommended
    for i, c in enumerate(advice.candidates):
        pts = [advice.at(c, k) for k in ks]
        ys = [p.predicted for p in pts]
        err = [[y - p.band[0] for y, p in zip(ys, pts, strict=True)],
               [p.band[1] - y for y, p in zip(ys, pts, strict=True)]]
        ax.errorbar(ks, ys, yerr=err, fmt="-o", ms=4, capsize=3, color=f"C{i}", lw=2.2 if c == best else 1.0,
                    label=c + (" (recommended)" if c == best else ""))
        got = [(v.k, v.obtained) for v in advice.verified if v.candidate == c]
        if got:
            ax.plot([k for k, _ in got], [o for _, o in got], "x", ms=8, color=f"C{i}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("workers k")
    ax.set_ylabel("work speedup: predicted (band), obtained (x)")
    ax.set_title(f"dispatch advisor: {advice.algo}, {advice.rules:,} rules, {advice.packets:,} packets; "
                 f"{advice.points[0].model}", fontsize=8)
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(fontsize=7)
    fig.tight_layout()
    png = save_figure(fig, out_dir / name)
    return [png, png.with_suffix(".svg")]
