"""The nft-bench report: the side-by-side table (terminal), the check's details (``check.json``)
and the plot of packets per second per core per system (PNG and SVG)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from rich.markup import escape
from rich.table import Table

from superlinear.nft.bench import SetResult, paced_at
from superlinear.output.figures import save_figure

KINDS = ("measured = this machine: nftables from its counters over a fixed duration, per CPU second of the "
         "sending core's whole path (sender thread + inline softirq + ksoftirqd); cost per packet = 1/rate(rules) − "
         "1/rate(empty chain); ours as single-thread CPU time per packet (release build); projected = serial "
         "dispatcher CPU time + slowest worker's CPU time (calibrated), i.e. k ideal cores without contention. "
         "Rates are the median [min–max] of --repeats runs (the projected ones interleaved across k).")


def _num(v: Any, fmt: str = ",.0f") -> str:
    return "—" if v is None else format(v, fmt)


def _rate(v: float, unit: tuple[float, str]) -> str:
    """Three significant digits in the unit (so a range fits the column)."""
    scale, suffix = unit
    x = v / scale
    return format(x, ".0f" if abs(x) >= 100 else ".1f" if abs(x) >= 10 else ".2f") + suffix


def _ranged(row: Any, field: str) -> str:
    """A rate as ``median [min–max]`` where the row has its range, else the value alone, in one
    unit (M or k packets/s) so the range fits its column."""
    med, lo, hi = row.get(field), row.get(f"{field}_min"), row.get(f"{field}_max")
    if med is None:
        return "—"
    unit = (1e6, " M") if med >= 1e6 else (1e3, " k") if med >= 1e3 else (1.0, "")
    if lo is None or hi is None:
        return _rate(med, unit)
    return f"{_rate(med, unit)} [{_rate(lo, unit).split()[0]}–{_rate(hi, unit).split()[0]}]"


def side_by_side(results: list[SetResult]) -> Table:
    """One row per system and k, per rule set."""
    t = Table(title="nftables vs our classifiers: packets per second per core (classification only)",
              caption=escape(KINDS), caption_justify="left")
    for col in ("set", "system", "k", "kind", "ns/packet", "packets/s per core", "× nftables per core",
                "packets/s (all k)", "× nftables", "counters"):
        t.add_column(col, justify="left" if col in ("set", "system", "kind", "counters") else "right")
    for res in results:
        for r in res.rows:
            counters = ""
            if r["system"] == "nftables":
                counters = "equal" if r["check_counters_equal"] else f"DIFFER ({r['check_rules_mismatched']} rules)"
                if not r["check_round_trip_equal"]:
                    counters += ", round trip DIFFERS"
            t.add_row(res.name, r["system"], str(r["k"]), r["kind"], _num(r.get("ns_per_packet"), ",.1f"),
                      _ranged(r, "pps_per_core"), _num(r.get("ratio_per_core_vs_nftables"), ",.2f"),
                      _ranged(r, "pps"), _num(r.get("ratio_vs_nftables"), ",.2f"), counters)
    return t


def path_lines(results: list[SetResult]) -> list[str]:
    """The raw nftables rates behind the cost per packet, with their spread."""
    lines = []
    for res in results:
        if res.kernel is None:
            continue
        k = res.kernel

        def span(d: dict[str, Any], fmt: str = ",.0f") -> str:
            return f"{d['median']:{fmt}} [{d['min']:{fmt}}–{d['max']:{fmt}}]"

        n = len(k["runs"]["rules"])
        lines.append(f"{res.name}: nftables whole path on one core (measured, median [min–max] of {n}): rule chain "
                     f"{span(k['pps_rules'])} packets per CPU second, empty chain {span(k['pps_empty'])}; "
                     f"cost of the rules {span(k['cost_ns'])} ns/packet")
        lines.append(f"{res.name}: per wall second: rule chain {span(k['pps_rules_wall'])}, empty chain "
                     f"{span(k['pps_empty_wall'])}, cost {span(k['cost_ns_wall'])} ns/packet; the path had "
                     f"{k['cpu_share_of_wall']['median']:.0%} of its core, ksoftirqd did "
                     f"{k['ksoftirqd_share']['median']:.1%} of it")
    return lines


def check_lines(results: list[SetResult]) -> list[str]:
    """One line per set on the exact check, plus the first mismatches."""
    lines = []
    for res in results:
        c = res.check
        last = c["attempts"][-1]
        lines.append(f"{res.name}: exact check (measured): {last['classified']:,} of {last['sent']:,} packets "
                     f"classified, {paced_at(last)}; {c['rules_equal']:,} of "
                     f"{c['rules_equal'] + c['rules_mismatched']:,} rule counters and the default "
                     f"({c['default']['nft']:,}) "
                     + ("equal static and MRF" if c["counters_equal"] else "checked: MISMATCH")
                     + f"; round trip {'equal' if c['round_trip']['equal'] else 'DIFFERS'}")
        for d in c["round_trip"]["differences"][:5]:
            lines.append(f"  round trip: {d}")
        for m in c["mismatches"][:10]:
            lines.append(f"  rule {m['rule']}: nft {m['nft']}, static {m['static']}, mrf {m['mrf']}  ({m['text']})")
    return lines


def write_check(out: Path, results: list[SetResult]) -> Path:
    """Every set's check in full (per-rule counters included)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "check.json"
    path.write_text(json.dumps({r.name: r.check for r in results}, indent=1) + "\n", encoding="utf-8")
    return path


def plot(out: Path, results: list[SetResult]) -> list[Path]:
    """Bars of packets/s per core per system for every set (log scale; projected bars hatched)."""
    measured = [r for r in results if r.kernel is not None and r.ours is not None]
    if not measured:
        return []
    fig, axes = plt.subplots(1, len(measured), figsize=(4.6 * len(measured), 4.2), squeeze=False)
    for ax, res in zip(axes.flat, measured, strict=False):
        labels, values, colors, hatches = [], [], [], []
        below: list[float] = []
        above: list[float] = []
        for r in res.rows:
            if r.get("pps_per_core") is None:
                continue
            name = {"nftables": "nft", "ours: static list": "static"}.get(r["system"], "MRF")
            labels.append(f"{name}\nk={r['k']}" if name == "MRF" else name)
            values.append(r["pps_per_core"])
            below.append(r["pps_per_core"] - r.get("pps_per_core_min", r["pps_per_core"]))
            above.append(r.get("pps_per_core_max", r["pps_per_core"]) - r["pps_per_core"])
            colors.append({"nft": "#7f7f7f", "static": "#1f77b4"}.get(name, "#d62728"))
            hatches.append("//" if r["kind"] == "projected" else "")
        bars = ax.bar(range(len(values)), values, color=colors, yerr=[below, above], capsize=2,
                      error_kw={"elinewidth": 0.8})
        for b, h in zip(bars, hatches, strict=True):
            b.set_hatch(h)
            if h:
                b.set_alpha(0.7)
        ax.set_xticks(range(len(values)), labels, fontsize=6)
        ax.set_yscale("log")
        ax.set_ylim(bottom=min(values) / 3)
        ax.set_ylabel("packets/s per core (classification)")
        ax.set_title(f"{res.name}: {res.rows[0]['m']:,} rules, {res.rows[0]['requests']:,} packets", fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.2)
    fig.text(0.5, 0.01, "solid: measured on this machine; hatched: projected (k ideal cores); "
             "bar: median, whiskers: range of the runs\n"
             "nft: 1 / (1/rate(rules) − 1/rate(empty chain)); ours: thread CPU time", ha="center", fontsize=6,
             alpha=0.8)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    png = save_figure(fig, out / "nft-bench")
    return [png, png.with_suffix(".svg")]
