"""Summary tables of engine experiments, and the honesty note every one of them carries: which
speedups are measured, which projected and which exact work counts."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from superlinear.common.rows import Row

HONESTY = (
    "measured = wall clock with real threads (only k ≤ cores); projected = serial dispatcher CPU time + slowest "
    "worker's own CPU time, calibrated against the run's cost per unit of work (ideal cores, no contention); "
    "work = exact operation counts."
)


def fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if abs(v) >= 1e6:
            return f"{v:.3g}"
        return f"{v:,.{digits}f}"
    return str(v)


def fmt_range(row: Row, field: str, digits: int = 1) -> str:
    """A timed figure as its median and, over several repeats, its range: ``2,106 [2,050–2,180]``."""
    med, lo, hi = row.get(field), row.get(f"{field}_lo"), row.get(f"{field}_hi")
    if med is None or lo is None or hi is None or row.get("repeats", 1) < 2:
        return fmt(med, digits)
    return f"{fmt(med, digits)} [{fmt(lo, digits)}–{fmt(hi, digits)}]"


#: A series with more k than this shows k = 1, 2 and the largest in the table, and says which k
#: it leaves out (every k is in result.csv and the plots).
MAX_KS_SHOWN = 6


def shown_ks(ks: list[int]) -> set[int]:
    """The k of a series the table shows: all of them, or the first, 2 and the largest."""
    if len(ks) <= MAX_KS_SHOWN:
        return set(ks)
    return {ks[0], ks[-1]} | ({2} if 2 in ks else set())


def summary_table(rows: list[Row], title: str) -> Table:
    """Every series with all three speedup kinds and throughput; long series show k = 1, 2 and
    the largest k, and the caption names the k left out."""
    # Packet rows (a rule set) count packets, key rows requests.
    unit = "Mpkt/s" if rows and all("rules" in r for r in rows) else "Mreq/s"
    by_series: dict[tuple[str, str, str, str], list[Row]] = {}
    for r in rows:
        by_series.setdefault((r["panel"], r["algo"], r["dispatch"], r["warmup"]), []).append(r)
    hidden: set[int] = set()
    for rs in by_series.values():
        ks = sorted(r["k"] for r in rs)
        hidden |= set(ks) - shown_ks(ks)
    caption = (HONESTY + f" {unit}: projected throughput (measured goodput for single-core rows). vs static k=1: "
               "projected throughput over the panel's non-adapting structure (static list, tree or no cache) at k = 1. "
               "imbalance: the busiest worker's packets (requests) / work over the mean (exact).")
    repeats = max((r.get("repeats", 1) for r in rows), default=1)
    if repeats > 1:
        caption += (f" Timed figures: median \\[range] of {repeats} independent runs, interleaved across series; "
                    "work is exact.")
    if hidden:
        left_out = ", ".join(map(str, sorted(hidden)))
        caption += f" Left out here: k = {left_out} (every k is in result.csv and the plots)."
    table = Table(title=title, caption=caption, caption_justify="left", show_lines=False)
    cols = ("panel", "series", "k", "measured ×", "projected ×", "work ×", unit, "vs static k=1 (proj.)", "hit rate",
            "imbalance pkt / work")
    for col in cols:
        table.add_column(col, justify="right" if col not in ("panel", "series") else "left")
    for (panel, algo, dispatch, warmup), rs in by_series.items():
        show = shown_ks(sorted(r["k"] for r in rs))
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
                fmt_range(r, "speedup_measured" if goodput is None else "goodput_ratio", 2),
                fmt_range(r, "speedup_projected"),
                fmt(r.get("speedup_work")),
                fmt(mreqs, 3),
                fmt(r.get("throughput_vs_static_k1"), 2),
                fmt(r.get("hit_rate"), 3),
                f"{fmt(r.get('load_imbalance'), 2)} / {fmt(r.get('work_imbalance'), 2)}",
            )
    return table
