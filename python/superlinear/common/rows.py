"""The result schema of DESIGN.md, declared once.

Every experiment writes ``result.json``: a :class:`ResultDoc` whose ``rows`` hold one
:data:`Row` per measured point. The engine's rows carry the :class:`EngineRow` fields; every
study may add fields of its own (the schema allows extras), so a row as stored and passed around
is :data:`Row`, and :class:`EngineRow` names the fields a reader can rely on.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

#: One result row: the :class:`EngineRow` fields where they apply, plus the study's own.
Row = dict[str, Any]


class EngineRow(TypedDict, total=False):
    """The shared fields of an engine result row (DESIGN.md, "Results")."""

    panel: str
    algo: str
    dispatch: str
    workload: str
    m: int
    k: int
    requests: int
    warmup: str
    #: Timed figures are the median of ``repeats`` independent runs; ``*_lo`` / ``*_hi`` give
    #: their range (superlinear.experiments.repeats.RANGED lists the ranged ones).
    repeats: int
    speedup_measured: float | None
    speedup_projected: float | None
    speedup_projected_lo: float | None
    speedup_projected_hi: float | None
    #: The uncalibrated projection (largest measured worker CPU time), for comparison.
    speedup_projected_max_cpu: float | None
    speedup_work: float | None
    throughput_rps_projected: float | None
    throughput_vs_static_k1: float | None
    goodput_mrps: float | None
    goodput_ratio: float | None
    hit_rate: float | None
    #: The busiest worker's requests (packets) and work over the mean (exact).
    load_imbalance: float | None
    work_imbalance: float | None
    #: The second work counter (self-adjusting classifiers: list entries moved and dependency-
    #: list entries walked), summed over workers, per request, and added to the busiest
    #: worker's work; None where the workers do not count it.
    entries_moved: int | None
    entries_moved_per_request: float | None
    work_with_moves_span: int | None
    speedup_work_with_moves: float | None


class Machine(TypedDict):
    """Where a result was made: cores available, CPU model, code revision, Python version."""

    cores: int
    cpu: str
    git: str
    python: str


class ResultDoc(TypedDict):
    """The whole ``result.json``: experiment name, its config, the machine and the rows."""

    experiment: str
    config: dict[str, Any]
    machine: Machine
    rows: list[Row]
    #: The plots drawn from these rows (file names beside result.json): none until they are
    #: drawn, so that a result still being written, or one a stop cut short, never shows an
    #: earlier run's plot left in a reused folder.
    plots: list[str]
    #: The study's summary (stability, agreement, machine noise, findings), where it makes one.
    summary: NotRequired[dict[str, Any]]


def ranged(field: str, values: list[float]) -> Row:
    """A figure over several runs as a row carries it: ``FIELD`` the median, ``FIELD_lo`` /
    ``FIELD_hi`` the range and ``FIELD_runs`` every run's value."""
    return {field: statistics.median(values), f"{field}_lo": min(values), f"{field}_hi": max(values),
            f"{field}_runs": values}


def row_spread(row: Row, field: str, fmt: str = ",.2f", scale: float = 1.0) -> str:
    """``median [lo–hi]`` of a row's figure (see :func:`ranged`), times ``scale``; the value alone
    after one run, "—" without one."""
    v = row.get(field)
    if v is None:
        return "—"
    lo, hi = row.get(f"{field}_lo"), row.get(f"{field}_hi")
    if lo is None or hi is None or row.get("repeats", 1) < 2:
        return format(v * scale, fmt)
    return f"{format(v * scale, fmt)} [{format(lo * scale, fmt)}–{format(hi * scale, fmt)}]"


def slowest_worker_text(projected: Mapping[str, Any], fmt: str = ",.2f") -> str:
    """The slowest worker's share of a projected time, in words: its calibrated estimate beside
    its own CPU time where the run calibrated one (``cost_per_work_ns``), else its own CPU time
    alone (the estimate is that time then)."""
    cpu = max(projected["worker_cpu_ns"]) / 1e6
    if projected.get("cost_per_work_ns") is None:
        return f"slowest worker {format(cpu, fmt)} ms (its own CPU time)"
    estimate = max(projected["worker_estimate_ns"]) / 1e6
    return (f"slowest worker {format(estimate, fmt)} ms calibrated from its work "
            f"(the largest own CPU time {format(cpu, fmt)} ms)")

