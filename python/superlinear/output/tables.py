"""Summary tables of engine experiments, and the honesty note every one of them carries: which
speedups are measured, which projected and which exact work counts."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from superlinear.common.rows import Row

HONESTY = (
    "measured = wall clock with real threads (only k ≤ cores); projected = serial dispatcher CPU time + slowest "
    "worker's own CPU time (ideal cores, no contention); work = exact operation counts."
)


def fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if abs(v) >= 1e6:
            return f"{v:.3g}"
        return f"{v:,.{digits}f}"
    return str(v)


#: A series with more k than this shows k = 1, 2 and the largest only (the caption says so).
MAX_K_SHOWN = 6


def _shown_ks(ks: set[int]) -> set[int]:
    """The k of a series the summary shows."""
    if len(ks) <= MAX_K_SHOWN:
        return ks
    return {min(ks), max(ks)} | ({2} & ks)


def summary_table(rows: list[Row], title: str) -> Table:
    """Every k of every series (k = 1, 2 and the largest where a series has more than
    :data:`MAX_K_SHOWN`), with all three speedup kinds and throughput."""
    unit = "Mpkt/s" if any("rules" in r for r in rows) else "Mreq/s"
    what = "packets" if unit == "Mpkt/s" else "requests"
    ks_of: dict[tuple[Any, ...], set[int]] = {}
    for r in rows:
        ks_of.setdefault((r["panel"], r["algo"], r["dispatch"], r["warmup"]), set()).add(r["k"])
    hidden = sum(len(ks) - len(_shown_ks(ks)) for ks in ks_of.values())
    caption = HONESTY + f" {unit}: projected throughput in million {what}/s (measured goodput for single-core rows)."
    if hidden:
        caption += f" Series with more than {MAX_K_SHOWN} values of k show k = 1, 2 and the largest here ({hidden} " \
                   "rows hidden); result.csv has every k."
    table = Table(title=title, caption=caption, caption_justify="left", show_lines=False)
    cols = ("panel", "series", "k", "measured ×", "projected ×", "work ×", unit, "vs static k=1", "hit rate")
    for col in cols:
        table.add_column(col, justify="right" if col not in ("panel", "series") else "left")
    by_series: dict[tuple[str, str, str, str], list[Row]] = {}
    for r in rows:
        by_series.setdefault((r["panel"], r["algo"], r["dispatch"], r["warmup"]), []).append(r)
    for (panel, algo, dispatch, warmup), rs in by_series.items():
        show = _shown_ks({r["k"] for r in rs})
        for r in sorted(rs, key=lambda r: r["k"]):
            if r["k"] not in show:
                continue
            goodput = r.get("goodput_mrps")
            mreqs = goodput if goodput is not None else (r.get("throughput_rps_projected") or 0) / 1e6
            table.add_row(
                panel,
                f"{algo} + {dispatch}" + (" steady" if warmup == "excluded" else "")
                + (" (1 core: measured goodput)" if goodput is not None else ""),
                str(r["k"]),
                fmt(r.get("speedup_measured") if goodput is None else r.get("goodput_ratio"), 2),
                fmt(r.get("speedup_projected")),
                fmt(r.get("speedup_work")),
                fmt(mreqs, 3),
                fmt(r.get("throughput_vs_static_k1"), 2),
                fmt(r.get("hit_rate"), 3),
            )
    return table
