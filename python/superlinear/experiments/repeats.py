"""Independent repeats of a grid point: the median and range of every timed figure, and the
stability summary of a whole run.

The driver runs a panel ``n`` times over, each round every baseline and every point once
(interleaved across series, not back to back), and each round's speedups are taken against the
baselines of the same round. A row then carries the median of the rounds as the figure and its
range as ``FIELD_lo`` / ``FIELD_hi``; work counts are exact and the same in every round.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from superlinear.common.rows import Row

if TYPE_CHECKING:
    from superlinear._native import RunRecord

P = TypeVar("P", bound=Hashable)
T = TypeVar("T")


def interleaved_rounds(points: Sequence[P], rounds: int, measure: Callable[[P], T],
                       into: dict[P, list[T]] | None = None) -> dict[P, list[T]]:
    """Measures every point once per round, ``rounds`` rounds, interleaved (a, b, c, a, b, c, …)
    rather than back to back, so that a slow spell of the machine lands on every point alike;
    each point's values in round order. Values go into ``into`` as they are measured, so that a
    caller stopped part way keeps the rounds that finished."""
    values: dict[P, list[T]] = {} if into is None else into
    for _ in range(rounds):
        for point in points:
            value = measure(point)  # first: a point a stop cut short gets no (empty) entry
            values.setdefault(point, []).append(value)
    return values


#: Timed figures whose median and range a row carries (``FIELD``, ``FIELD_lo``, ``FIELD_hi``).
RANGED = ("speedup_projected", "speedup_projected_max_cpu", "speedup_measured", "throughput_rps_projected",
          "throughput_rps_measured", "throughput_vs_static_k1", "goodput_mrps", "goodput_ratio")
#: Other timed figures: the median of the rounds.
TIMED = ("projected_ns", "projected_max_cpu_ns", "wall_ns", "dispatcher_cpu_ns", "dispatcher_ns_per_request",
         "max_worker_cpu_ns", "max_worker_estimate_ns", "mean_service_ns_projected", "workers_rerun",
         "measured_max_worker_serve_ns", "measured_max_worker_cpu_ns", "measured_dispatcher_blocked_ns")
#: The machine-noise probe's walk (ns per step) before a round's point and before its baseline:
#: the median of the rounds, and every round's value as ``FIELD_runs`` beside the speedups' runs.
PROBED = ("probe_walk_ns", "probe_walk_ns_baseline")
#: Figures the stability summary looks at.
STABILITY_FIELDS = ("speedup_projected", "speedup_measured")


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def aggregate(rounds: list[Row]) -> Row:
    """One row from the rows of the rounds run so far (the first round's row for everything that
    is not timed)."""
    row = dict(rounds[0])
    row["repeats"] = len(rounds)
    for field in RANGED + TIMED:
        values = [r[field] for r in rounds if r.get(field) is not None]
        if not values:
            continue
        row[field] = _median(values)
        if field in RANGED:
            row[f"{field}_lo"] = min(values)
            row[f"{field}_hi"] = max(values)
            if field in STABILITY_FIELDS:
                row[f"{field}_runs"] = values
    for field in PROBED:
        if all(r.get(field) is not None for r in rounds):
            row[field] = _median([r[field] for r in rounds])
            row[f"{field}_runs"] = [r[field] for r in rounds]
    return row


def relative_range(row: Row, field: str) -> float | None:
    """(hi - lo) / median of a ranged figure, or None where the row has no range of it."""
    med, lo, hi = row.get(field), row.get(f"{field}_lo"), row.get(f"{field}_hi")
    if med is None or lo is None or hi is None or not med or row.get("repeats", 1) < 2:
        return None
    return float((hi - lo) / med)


def describe_row(row: Row) -> str:
    """The row's series and k, as the summary tables name them (a cache tier's row: its routing)."""
    if "algo" not in row:
        return f"panel {row['panel']}, {row['dispatch']} routing, k = {row['k']}"
    steady = " steady" if row.get("warmup") == "excluded" else ""
    return f"panel {row['panel']}, {row['algo']} + {row['dispatch']}{steady}, k = {row['k']}"


def stability(rows: list[Row]) -> dict[str, Any]:
    """The widest relative range of each figure over the rows, and which row it is; a row with k
    = 1 is left out (its speedup is 1 by definition)."""
    out: dict[str, Any] = {"repeats": max((r.get("repeats", 1) for r in rows), default=1)}
    for field in STABILITY_FIELDS:
        spans = [(s, r) for r in rows if r["k"] != 1 and (s := relative_range(r, field)) is not None]
        if not spans:
            out[field] = None
            continue
        span, row = max(spans, key=lambda p: p[0])
        out[field] = {"widest_relative_range": span, "row": describe_row(row), "median": row[field],
                      "lo": row[f"{field}_lo"], "hi": row[f"{field}_hi"], **rounds_of(row, field)}
    return out


def rounds_of(row: Row, field: str) -> dict[str, Any]:
    """Every round's figure of a row (``rounds``) with the probe's walk before each round's point
    and before its baseline, where the row has them: which round stands out, and in what weather."""
    out: dict[str, Any] = {}
    if row.get(f"{field}_runs") is not None:
        out["rounds"] = row[f"{field}_runs"]
    for probed in PROBED:
        if row.get(f"{probed}_runs") is not None:
            out[probed] = row[f"{probed}_runs"]
    return out


def rounds_clause(figure: dict[str, Any]) -> str:
    """``; rounds a, b, c× (probe walk before each point …)`` for a figure carrying :func:`rounds_of`,
    or nothing where it has no rounds."""
    rounds = figure.get("rounds")
    if not rounds or len(rounds) < 2:
        return ""
    text = "; rounds " + ", ".join(f"{v:,.4g}" for v in rounds) + "×"
    walks = figure.get("probe_walk_ns")
    if walks and len(walks) == len(rounds):
        text += " with the probe's walk before each point " + ", ".join(f"{w:.3g}" for w in walks) + " ns"
        base = figure.get("probe_walk_ns_baseline")
        if base and len(base) == len(rounds):
            text += " and before its baseline " + ", ".join(f"{w:.3g}" for w in base) + " ns"
    return text


def stability_lines(summary: dict[str, Any]) -> list[str]:
    """The stability summary in words, one line per figure."""
    if summary["repeats"] < 2:
        return ["stability: one run per point (--repeats 1): no range to report"]
    lines = []
    for field, what in (("speedup_projected", "projected"), ("speedup_measured", "measured")):
        s = summary.get(field)
        if s is None:
            continue
        lines.append(f"stability ({summary['repeats']} independent repeats): the widest range of a {what} speedup "
                     f"is {s['widest_relative_range']:.1%} of its median ({s['lo']:,.4g}–{s['hi']:,.4g}× around "
                     f"{s['median']:,.4g}×), at {s['row']}{rounds_clause(s)}")
    return lines


def median_run(records: list[RunRecord]) -> tuple[RunRecord, list[int]]:
    """Of a single command's independent runs (``run``, ``classify``): the run whose projected
    time is the median (the lower one of an even count) and every run's projected time."""
    times = [r["projected"]["projected_ns"] if r["projected"] else 0 for r in records]
    order = sorted(range(len(records)), key=times.__getitem__)
    return records[order[(len(order) - 1) // 2]], times


def spread(values: list[float], fmt: str = ",.2f") -> str:
    """``median [lo–hi]`` of several runs' values, or the one value."""
    if len(values) < 2:
        return format(values[0], fmt) if values else "—"
    return f"{format(_median(values), fmt)} [{format(min(values), fmt)}–{format(max(values), fmt)}]"
