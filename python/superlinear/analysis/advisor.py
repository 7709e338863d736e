"""The locality advisor: which dispatch key boosts locality most for a given request stream.

Every candidate dispatcher is scored with the working-set law (``superlinear.analysis.predict``):
q(k)·ℓ(k) = T(1)/max_i T_i(k) at each k, exactly the work speedup an engine run would show. The
recommendation is the candidate with the highest geometric mean of q·ℓ over the k asked for
(ties: the highest q·ℓ at the largest k).

Candidates come in two forms:

* key workloads: the engine's key dispatchers by name (``hash``, ``rr``, ``random``), see
  :func:`advise`;
* anything else: named functions ``k -> worker of every request`` over an item sequence given
  separately, see :func:`advise_assigned`. Packet traces plug in here: the item of a packet is its
  matched rule, and each candidate hashes a subset of the 5-tuple (src IP, dst IP, ports, proto)
  onto k workers (in Rust: a ``superlinear_core::law::DispatcherCandidate`` over any
  ``Dispatcher<Packet>``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from superlinear import _native
from superlinear.analysis.predict import LawPoint, Progress, law_model
from superlinear.common.interrupt import interruptible
from superlinear.common.rows import Row
from superlinear.engine.runs import Workload
from superlinear.output.figures import save_figure

__all__ = ["Advice", "CandidateScore", "advise", "advise_assigned", "plot_advice"]

AssignFn = Callable[[int], Sequence[int]]
"""A packet (or any other) candidate: given k, the worker of every request."""


@dataclass(frozen=True)
class CandidateScore:
    """One candidate's law points over k."""

    name: str
    points: tuple[LawPoint, ...]

    @property
    def score(self) -> float:
        """Geometric mean of q(k)·ℓ(k) over the k evaluated."""
        vals = [max(p.q_ell, 1e-300) for p in self.points]
        return math.exp(sum(math.log(v) for v in vals) / len(vals))

    def at(self, k: int) -> LawPoint:
        return next(p for p in self.points if p.k == k)


@dataclass(frozen=True)
class Advice:
    """Scores of every candidate and the recommendation."""

    algo: str
    workload: str
    requests: int
    m: int
    ks: tuple[int, ...]
    candidates: tuple[CandidateScore, ...]
    seconds: float
    """Wall time of the evaluation on this machine (one core)."""
    model: str = "working-set law"
    """What made the numbers: the law, or the exact simulation of a worker without one (splay)."""

    @property
    def recommended(self) -> str:
        k_max = max(self.ks)
        return max(self.candidates, key=lambda c: (c.score, c.at(k_max).q_ell)).name

    def best_at(self, k: int) -> str:
        return max(self.candidates, key=lambda c: c.at(k).q_ell).name

    def rows(self) -> list[Row]:
        """Result rows in the DESIGN.md schema (one per candidate and k; all numbers predicted)."""
        best = self.recommended
        return [
            {"panel": "advise", "algo": self.algo, "dispatch": c.name, "workload": self.workload, "m": self.m,
             "k": p.k, "requests": self.requests, "speedup_measured": None, "speedup_projected": None,
             "speedup_work": None, "speedup_work_predicted": p.speedup_work_predicted, "ell": p.ell, "q": p.q,
             "q_ell": p.q_ell, "superlinear": p.q_ell > p.k, "load_imbalance": p.load_imbalance,
             "hit_rate": p.hit_rate, "score_geomean_q_ell": c.score, "recommended": c.name == best,
             "model": self.model}
            for c in self.candidates for p in c.points
        ]


def _evaluate(names: Sequence[str], ks: Sequence[int], point: Callable[[str, int], LawPoint],
              progress: Progress | None) -> tuple[CandidateScore, ...]:
    if not ks:
        raise ValueError("advise needs at least one k")
    if not names:
        raise ValueError("advise needs at least one candidate")
    total, done, out = len(names) * len(ks), 0, []
    for name in names:
        pts = []
        for k in ks:
            if progress is not None:
                progress(done, total, f"{name} at k = {k}")
            pts.append(point(name, k))
            done += 1
        out.append(CandidateScore(name, tuple(pts)))
    return tuple(out)


def advise(workload: Workload, *, ks: Sequence[int] = (2, 4, 8, 16, 32, 64), algo: str = "mtf", rho: int = 0,
           requests: int = 0, seed: int = 1, candidates: Sequence[str] | None = None,
           progress: Progress | None = None) -> Advice:
    """Scores the engine's key dispatchers (all of them unless ``candidates`` names some) on a key
    workload or trace (``requests`` = 0: the whole trace)."""
    names = list(candidates) if candidates else [d["name"] for d in _native.dispatchers()]
    t0 = time.perf_counter()
    model = law_model(workload, requests, seed, algo, rho)
    scores = _evaluate(names, ks, lambda name, k: LawPoint.from_native(interruptible(lambda: model.point(name, k)),
                                                                        name), progress)
    return Advice(algo=model.algo, workload=workload.label(), requests=model.requests, m=model.m, ks=tuple(ks),
                  candidates=scores, seconds=time.perf_counter() - t0, model=model.model)


def advise_assigned(items: Sequence[int], m: int, candidates: Mapping[str, AssignFn], *,
                    ks: Sequence[int] = (2, 4, 8, 16, 32, 64), algo: str = "mtf", rho: int = 0,
                    workload: str = "items", progress: Progress | None = None) -> Advice:
    """Scores candidates given as functions ``k -> worker per request`` over an item sequence
    (``items[t]``: request t's item as its position in the initial order 0..m−1)."""
    t0 = time.perf_counter()
    model = _native.LawModel.from_items(list(items), m, algo, rho)

    def point(name: str, k: int) -> LawPoint:
        return LawPoint.from_native(interruptible(lambda: model.point_assigned(list(candidates[name](k)), k)), name)

    scores = _evaluate(list(candidates), ks, point, progress)
    return Advice(algo=model.algo, workload=workload, requests=model.requests, m=model.m, ks=tuple(ks),
                  candidates=scores, seconds=time.perf_counter() - t0)


def plot_advice(advice: Advice, out_dir: Path, name: str = "advise") -> list[Path]:
    """q(k)·ℓ(k) per candidate against the linear bound, log axes; PNG and SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    ks = list(advice.ks)
    ax.plot([min(ks), max(ks)], [min(ks), max(ks)], "k--", lw=1, label="linear")
    best = advice.recommended
    for i, c in enumerate(advice.candidates):
        ax.plot([p.k for p in c.points], [p.q_ell for p in c.points], "-", marker="o", ms=4, color=f"C{i}",
                lw=2.2 if c.name == best else 1.0,
                label=f"{c.name}" + (" (recommended)" if c.name == best else ""))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("workers k")
    ax.set_ylabel("q(k)·ℓ(k) = predicted work speedup")
    ax.set_title(f"locality advisor: {advice.algo}, {advice.workload}, m = {advice.m:,}, "
                 f"{advice.requests:,} requests", fontsize=9)
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(fontsize=8)
    fig.tight_layout()
    png = save_figure(fig, out_dir / name)
    return [png, png.with_suffix(".svg")]
