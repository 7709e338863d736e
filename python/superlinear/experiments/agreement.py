"""Projected against measured speedups of one run, the check DESIGN.md asks for wherever a machine
has more cores: of the cells (a series at one k ≥ 2) that have both kinds, how many agree within
:data:`TOLERANCE`, and the largest gap with the medians and ranges it comes from.

Measured speedups exist only for k ≤ the machine's cores, so on two cores this compares k = 2
alone; on a 16-core machine every k up to 16.
"""

from __future__ import annotations

from typing import Any

from superlinear.common.rows import Row
from superlinear.experiments.repeats import describe_row, rounds_clause, rounds_of

#: How far measured may be from projected (relative) and still agree.
TOLERANCE = 0.15


def gap(row: Row) -> float | None:
    """measured ÷ projected − 1 of a row's speedups, or None where it lacks either (or k = 1, whose
    speedup is 1 by definition)."""
    measured, projected = row.get("speedup_measured"), row.get("speedup_projected")
    if row.get("k", 1) < 2 or not measured or not projected:
        return None
    return float(measured / projected - 1)


def _ranged(row: Row, field: str) -> dict[str, Any]:
    return {"median": row[field], "lo": row.get(f"{field}_lo", row[field]), "hi": row.get(f"{field}_hi", row[field]),
            **rounds_of(row, field)}


def agreement(rows: list[Row]) -> dict[str, Any] | None:
    """The comparison over ``rows``, or None where no row has both kinds."""
    cells = [(r, g) for r in rows if (g := gap(r)) is not None]
    if not cells:
        return None
    worst_row, worst = max(cells, key=lambda c: abs(c[1]))
    return {
        "tolerance": TOLERANCE,
        "cells": len(cells),
        "within": sum(1 for _, g in cells if abs(g) <= TOLERANCE),
        "below": sum(1 for _, g in cells if g < 0),
        "ks": sorted({int(r["k"]) for r, _ in cells}),
        "largest": {"row": describe_row(worst_row), "gap": worst, "measured": _ranged(worst_row, "speedup_measured"),
                    "projected": _ranged(worst_row, "speedup_projected")},
        "gaps": [{"row": describe_row(r), "gap": g} for r, g in cells],
    }


def _spread(figure: dict[str, Any]) -> str:
    return f"{figure['median']:,.4g}× [{figure['lo']:,.4g}–{figure['hi']:,.4g}]"


def agreement_lines(summary: dict[str, Any] | None) -> list[str]:
    """The comparison in words: one line, or none where nothing was measured."""
    if not summary:
        return []
    ks = summary["ks"]
    where = f"k = {ks[0]}" if len(ks) == 1 else f"k = {ks[0]}–{ks[-1]}"
    w = summary["largest"]
    return [f"projected against measured ({where}, real threads only where k ≤ cores): {summary['within']} of "
            f"{summary['cells']} within {summary['tolerance']:.0%}, measured below projected in {summary['below']}; "
            f"largest gap {w['gap']:+.0%} at {w['row']} (measured {_spread(w['measured'])} against projected "
            f"{_spread(w['projected'])}{_rounds(w)})"]


def _rounds(largest: dict[str, Any]) -> str:
    """The largest gap's rounds, measured then projected (one point's run gave both, after one probe)."""
    measured = largest["measured"].get("rounds")
    if not measured or len(measured) < 2:
        return ""
    text = "; measured rounds " + ", ".join(f"{v:,.4g}" for v in measured) + "×"
    return text + rounds_clause(largest["projected"]).replace("; rounds", ", projected", 1)
