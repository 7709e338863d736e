"""Predict the speedup of a distributed self-adjusting system from its request stream alone
(paper, Appendix A), exactly in the engine's work units.

For every request the working-set size |W_t(x)| (distinct other items since x's last request) is
computed for one worker and, per k, on the worker the dispatcher sends it to (its own stream
only), with a Fenwick tree in O(n log n) per k. The cost function g of the structure turns those
into work: MTF costs |W| + 1 (the item's list position), LRU costs 1 plus ρ per miss (a miss is a
first access or |W| ≥ C). A first access on a worker of a replicated MTF list costs its true
position: the items that worker has accessed so far, plus the never-accessed items ahead of it in
the initial order. So T(1) = Σ g(|W_t(x)|), T_i(k) = Σ_{t→i} g(|W_t(x) ∩ U_i|),

* ℓ(k) = T(1) / Σ_i T_i(k)            (work reduction by isolating working sets),
* q(k) = Σ_i T_i(k) / max_i T_i(k)     (parallelizability of the reduced work, ≤ k),
* q·ℓ = T(1) / max_i T_i(k)            (the work speedup: equals the engine's ``speedup_work``),
* S(k) = 1 / (s + (1 − s)/(q·ℓ))       (the general law with serial fraction s).

The paper prints the fraction for q(k) upside down (as 1/q, which would make q ≤ 1); its text
(q ≤ k, uniform input gives q = k) and Definition A.2 fix the orientation used here.

Splay trees (and every other engine worker whose cost is not a function of the working set)
have no such g: for them the model is the exact simulation of the engine's own worker on each
worker's dispatched key stream (``crates/core/src/law/simulate.rs``), named in every output as
``exact simulation of the splay worker``; ℓ, q and q·ℓ follow from its work counts the same way.

Number kinds: ``speedup_work_predicted`` and ``speedup_law`` are predictions of this model;
``speedup_work`` (exact operation counts) and ``speedup_projected`` (CPU-time projection: the
median, with its range, of three interleaved rounds) come from real engine runs and exist only
with ``compare=True``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from superlinear import _native
from superlinear.common.args import comma_list
from superlinear.common.bounds import MAX_WORKERS, beyond_trace
from superlinear.common.errors import SuperlinearError
from superlinear.common.interrupt import interruptible
from superlinear.common.rows import Row
from superlinear.engine.runs import RunSpec, Workload, run
from superlinear.output.figures import save_figure

if TYPE_CHECKING:
    # A worker's predicted stream cost (engine work units) is the law's own record.
    from superlinear._native import Accounting
    from superlinear._native import LawWorkerStats as WorkerPrediction

__all__ = [
    "EngineCheck",
    "LawPoint",
    "Prediction",
    "law_model",
    "parse_ks",
    "plot_prediction",
    "predict",
    "predict_assigned",
]

#: Interleaved rounds of the engine runs of ``compare`` (k = 1 and every k in each).
ENGINE_ROUNDS = 3

Progress = Callable[[int, int, str], None]
"""Called as ``progress(done, total, what_next)`` before each step of a long computation."""


@dataclass(frozen=True)
class LawPoint:
    """The law at one k for one dispatch: ℓ, q, and the predicted speedups."""

    k: int
    dispatch: str
    baseline_work: int
    work_total: int
    work_span: int
    ell: float
    q: float
    speedup_work_predicted: float
    speedup_law: float
    s: float
    load_imbalance: float
    hit_rate: float | None
    workers: tuple[WorkerPrediction, ...]

    @property
    def q_ell(self) -> float:
        """q(k)·ℓ(k): superlinear where it exceeds k."""
        return self.q * self.ell

    @classmethod
    def from_native(cls, d: Mapping[str, Any], dispatch: str) -> LawPoint:
        return cls(
            k=d["k"], dispatch=dispatch, baseline_work=d["baseline_work"], work_total=d["work_total"],
            work_span=d["work_span"], ell=d["ell"], q=d["q"], speedup_work_predicted=d["work_speedup"],
            speedup_law=d["law_speedup"], s=d["s"], load_imbalance=d["load_imbalance"], hit_rate=d["hit_rate"],
            workers=tuple(d["workers"]),
        )


@dataclass(frozen=True)
class EngineCheck:
    """An engine run at the same k, for ``compare``: its work counts and projected speedup."""

    k: int
    worker_work: tuple[int, ...]
    speedup_work: float
    #: The median over :data:`ENGINE_ROUNDS` interleaved rounds, each against its own k = 1.
    speedup_projected: float
    exact: bool
    predicted_over_engine: float
    speedup_projected_lo: float = math.nan
    speedup_projected_hi: float = math.nan


@dataclass(frozen=True)
class Prediction:
    """The law for one workload, algorithm and dispatcher over a list of k."""

    algo: str
    dispatch: str
    workload: Workload
    requests: int
    m: int
    seed: int
    s: float
    rho: int
    baseline_work: int
    points: tuple[LawPoint, ...]
    seconds: float
    """Wall time of the law computation on this machine (one core; engine comparison excluded)."""
    model: str = "working-set law"
    """What made the predicted numbers: ``working-set law`` or ``exact simulation of the ALGO worker``."""
    engine: tuple[EngineCheck, ...] | None = None
    config: dict[str, Any] = field(default_factory=dict)

    def rows(self) -> list[Row]:
        """Result rows in the DESIGN.md schema (one per k)."""
        checks = {c.k: c for c in self.engine or ()}
        rows = []
        for p in self.points:
            c = checks.get(p.k)
            rows.append({
                "panel": "predict", "algo": self.algo, "dispatch": p.dispatch, "workload": self.workload.label(),
                "m": self.m, "k": p.k, "requests": self.requests,
                "speedup_measured": None,
                "speedup_projected": c.speedup_projected if c else None,
                "speedup_projected_lo": c.speedup_projected_lo if c else None,
                "speedup_projected_hi": c.speedup_projected_hi if c else None,
                "repeats": ENGINE_ROUNDS if c else None,
                "speedup_work": c.speedup_work if c else None,
                "speedup_work_predicted": p.speedup_work_predicted,
                "speedup_law": p.speedup_law, "s": p.s, "model": self.model,
                "ell": p.ell, "q": p.q, "q_ell": p.q_ell,
                "baseline_work": p.baseline_work, "work_total": p.work_total, "work_span": p.work_span,
                "load_imbalance": p.load_imbalance, "hit_rate": p.hit_rate,
                "mean_working_set": _mean_ws(p.workers),
                "worker_work_predicted": [w["work"] for w in p.workers],
                "worker_work_engine": list(c.worker_work) if c else None,
                "engine_exact_match": c.exact if c else None,
                "predicted_over_engine": c.predicted_over_engine if c else None,
            })
        return rows


def _mean_ws(workers: Sequence[WorkerPrediction]) -> float | None:
    if all(w["mean_working_set"] is None for w in workers):
        return None  # a simulation (or no re-access): no working sets
    total = sum((w["mean_working_set"] or 0.0) * (w["requests"] - w["first_accesses"] - w["absent"]) for w in workers)
    repeats = sum(w["requests"] - w["first_accesses"] - w["absent"] for w in workers)
    return total / repeats if repeats else None


def parse_ks(text: str) -> list[int]:
    """``"1,2,4"`` → [1, 2, 4]; every value a positive integer, none twice, no empty entry."""
    ks: list[int] = []
    try:
        parts = comma_list("--k", text)
    except SuperlinearError as e:
        raise ValueError(str(e)) from None
    for part in parts:
        try:
            k = int(part)
        except ValueError:
            raise ValueError(f"--k expects comma-separated positive integers, got {part!r}") from None
        if k <= 0:
            raise ValueError(f"--k expects positive integers, got {k}")
        if k > MAX_WORKERS:
            raise ValueError(f"--k {k:,}: at most {MAX_WORKERS:,} workers")
        ks.append(k)
    return ks


def law_model(workload: Workload, requests: int, seed: int, algo: str, rho: int = 0) -> _native.LawModel:
    """The item sequence of a workload, generated (or read) exactly as an engine run with the same
    ``requests`` and ``seed`` would see it; ``requests`` = 0 takes a whole trace. More requests
    than a trace holds are refused, as ``run`` and ``sweep`` refuse them: the trace's keys alone
    were taken, and the law reported on fewer requests than asked for."""
    model = interruptible(lambda: _native.LawModel.from_workload(asdict(workload), requests, seed, algo, rho))
    if workload.kind == "trace" and requests and model.requests < requests:
        raise beyond_trace(requests, workload.path or "", model.requests)
    return model


def predict(workload: Workload, *, algo: str = "mtf", dispatch: str = "hash", ks: Sequence[int] = (1, 2, 4, 8),
            requests: int = 0, s: float = 0.0, seed: int = 1, rho: int = 0, compare: bool = False,
            progress: Progress | None = None) -> Prediction:
    """The law for ``workload`` under ``algo`` (``mtf`` or ``lru:C``, ρ = ``rho`` per miss; any
    other engine worker such as ``splay`` is simulated exactly) and the engine's dispatcher
    ``dispatch`` at every k in ``ks``. With ``compare`` the engine runs every k (and k = 1) on the
    same stream, seed and dispatcher, and the result carries its numbers."""
    if not ks:
        raise ValueError("predict needs at least one k")
    steps = 1 + len(ks) + (ENGINE_ROUNDS * len(set(ks) | {1}) if compare else 0)
    step = _stepper(progress, steps)
    t0 = time.perf_counter()
    step("reading/generating the workload, T(1)")
    model = law_model(workload, requests, seed, algo, rho)
    baseline = interruptible(model.baseline)
    points = []
    for k in ks:
        step(f"working sets at k = {k}")
        points.append(LawPoint.from_native(interruptible(partial(model.point, dispatch, k, s)), dispatch))
    seconds = time.perf_counter() - t0
    pred = Prediction(algo=model.algo, dispatch=dispatch, workload=workload, requests=model.requests, m=model.m,
                      seed=seed, s=s, rho=rho, baseline_work=baseline["work"], points=tuple(points), seconds=seconds,
                      model=model.model)
    if compare:
        pred = _with_engine(pred, step)
    return pred


def _stepper(progress: Progress | None, total: int) -> Callable[[str], None]:
    done = [0]

    def step(what: str) -> None:
        if progress is not None:
            progress(done[0], total, what)
        done[0] += 1

    return step


def _with_engine(pred: Prediction, step: Callable[[str], None]) -> Prediction:
    def engine_run(k: int, rnd: int) -> Accounting:
        step(f"engine run at k = {k} (round {rnd + 1}/{ENGINE_ROUNDS})")
        spec = RunSpec(algo=pred.algo, dispatch=pred.dispatch, k=k, workload=pred.workload, requests=pred.requests,
                       seed=pred.seed, miss_cycles=pred.rho, modes=("projected",))
        acc = run(spec)["projected"]
        assert acc is not None
        return acc

    # Rounds of k = 1 and every k (interleaved, not back to back): a projected speedup is the
    # median of the rounds, each against its own k = 1. Work is exact: the first round's.
    ks = sorted({1} | {p.k for p in pred.points})
    rounds = [{k: engine_run(k, r) for k in ks} for r in range(ENGINE_ROUNDS)]
    base = rounds[0][1]
    checks = []
    for p in pred.points:
        acc = rounds[0][p.k]
        speedup_work = base["work_span"] / max(acc["work_span"], 1)
        projected = [r[1]["projected_ns"] / max(r[p.k]["projected_ns"], 1) for r in rounds]
        checks.append(EngineCheck(
            k=p.k, worker_work=tuple(acc["worker_work"]),
            speedup_work=speedup_work,
            speedup_projected=statistics.median(projected),
            speedup_projected_lo=min(projected), speedup_projected_hi=max(projected),
            exact=list(acc["worker_work"]) == [w["work"] for w in p.workers] and base["work_span"] == p.baseline_work,
            predicted_over_engine=p.speedup_work_predicted / speedup_work if speedup_work else math.nan,
        ))
    return replace(pred, engine=tuple(checks))


def predict_assigned(items: Sequence[int], m: int, assignments: Mapping[int, Sequence[int]], *, algo: str = "mtf",
                     rho: int = 0, s: float = 0.0, name: str = "custom") -> list[LawPoint]:
    """The law for an item sequence and dispatch given separately: ``items[t]`` is request t's
    item as its position in the initial order (0..m−1; ≥ m: not in the item set), and
    ``assignments[k][t]`` the worker (0..k−1) serving request t with k workers. This is the form
    for packet classification, where the item is the matched rule and the dispatcher hashes
    header fields."""
    model = _native.LawModel.from_items(list(items), m, algo, rho)
    return [LawPoint.from_native(interruptible(partial(model.point_assigned, list(workers), k, s)), name)
            for k, workers in sorted(assignments.items())]


def plot_prediction(pred: Prediction, out_dir: Path, name: str = "predict") -> list[Path]:
    """ℓ(k), q(k), the predicted work speedup q·ℓ, the law S(k) with s, the engine's work and
    projected speedups (with ``compare``) and the linear bound, on log axes; PNG and SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = [p.k for p in pred.points]
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    lo, hi = min(ks), max(ks)
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="linear")
    ax.plot(ks, [p.ell for p in pred.points], ":", marker=".", color="C0", label="ℓ(k) work reduction")
    ax.plot(ks, [p.q for p in pred.points], "-.", marker=".", color="C2", label="q(k) parallelizability")
    ax.plot(ks, [p.speedup_work_predicted for p in pred.points], "-", marker="o", ms=4, color="C3",
            label="S(k) = q·ℓ predicted (work)")
    if pred.s > 0:
        ax.plot(ks, [p.speedup_law for p in pred.points], "-", lw=1, color="C1",
                label=f"S(k) law, s = {pred.s:g} (predicted)")
    if pred.engine:
        ek = [c.k for c in pred.engine]
        ax.plot(ek, [c.speedup_work for c in pred.engine], linestyle="none", marker="o", ms=10, mfc="none",
                color="C3", label="engine work speedup (exact counts)")
        med = [c.speedup_projected for c in pred.engine]
        ax.errorbar(ek, med, yerr=[[m - c.speedup_projected_lo for m, c in zip(med, pred.engine, strict=True)],
                                   [c.speedup_projected_hi - m for m, c in zip(med, pred.engine, strict=True)]],
                    linestyle="none", marker="x", ms=7, color="C4", capsize=3,
                    label=f"engine projected speedup (CPU time; median, range of {ENGINE_ROUNDS})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("workers k")
    ax.set_ylabel("factor")
    ax.set_title(f"{pred.algo} + {pred.dispatch}, {pred.workload.label()}, m = {pred.m:,}, "
                 f"{pred.requests:,} requests", fontsize=9)
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(fontsize=7)
    fig.tight_layout()
    png = save_figure(fig, out_dir / name)
    return [png, png.with_suffix(".svg")]
