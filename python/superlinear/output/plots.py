"""Plots in the paper's style: speedup against k on log axes with the linear bound dashed,
projected curves solid, work curves dotted, measured points as open markers; goodput panels on
linear axes. Timed figures are medians with their range over the independent repeats drawn as
error bars. Every figure is written as PNG and SVG.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.ticker import NullLocator, ScalarFormatter

from superlinear.common.rows import Row
from superlinear.experiments.spec import Experiment, Panel
from superlinear.output.figures import save_figure

COLORS = {"mtf": "#d62728", "splay": "#d62728", "lru": "#d62728", "static": "#1f77b4", "tree": "#1f77b4",
          "nocache": "#1f77b4", "hashmap": "#2ca02c", "mrf": "#d62728", "mrf-swap": "#ff7f0e"}
MARKERS = {"hash": "o", "rr": "s", "random": "^", "rss": "o", "rule": "*", "rss:dport": "D", "rss:sip": "v",
           "rss:sip,dip": "P", "rss:dip": "X"}
PACKET_METRICS = ("packets", "latency")


def _series_key(row: Row) -> tuple[str, str, str]:
    return (row["algo"], row["dispatch"], row["warmup"])


def _label(key: tuple[str, str, str]) -> str:
    algo, dispatch, warmup = key
    return f"{algo} + {dispatch}" + (" (steady state)" if warmup == "excluded" else "")


def _series(rows: list[Row]) -> dict[tuple[str, str, str], list[Row]]:
    """Rows by series (algorithm, dispatcher, warm-up), each sorted by k."""
    groups: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for r in rows:
        groups[_series_key(r)].append(r)
    for rs in groups.values():
        rs.sort(key=lambda r: r["k"])
    return groups


def _range_bars(ax: Axes, rows: list[Row], field: str, color: Any, scale: float = 1.0) -> None:
    """Error bars from each row's range of ``field`` over its repeats (none for a single run)."""
    pts = [(r["k"], r[field] * scale, (r[field] - r[f"{field}_lo"]) * scale, (r[f"{field}_hi"] - r[field]) * scale)
           for r in rows if r.get("repeats", 1) > 1 and r.get(field) is not None and r.get(f"{field}_lo") is not None]
    if pts:
        x, y, below, above = zip(*pts, strict=True)
        ax.errorbar(x, y, yerr=[below, above], fmt="none", ecolor=color, elinewidth=0.9, capsize=2.5, alpha=0.8)


def _log2_k(ax: Axes, ks: list[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel("workers k")
    ax.grid(True, which="both", alpha=0.2)


def draw_speedup(ax: Axes, panel: Panel, rows: list[Row]) -> None:
    groups = _series(rows)
    ks = sorted({r["k"] for r in rows})
    ax.plot(ks, ks, "k--", lw=1, label="linear")
    packets = panel.metric in PACKET_METRICS
    by_algo = len({k[0] for k in groups}) == len(groups) or not packets
    for i, (key, rs) in enumerate(groups.items()):
        color = COLORS.get(key[0]) if by_algo else f"C{i}"
        style = ":" if key[2] == "excluded" else "-"
        marker = MARKERS.get(key[1], "o")
        x = [r["k"] for r in rs]
        line = ax.plot(x, [r["speedup_projected"] for r in rs], style, marker=marker, ms=4, color=color,
                       alpha=0.55 if key[1] not in ("hash", "rss", "rule") and not packets else 1.0,
                       label=f"{_label(key)} projected")[0]
        _range_bars(ax, rs, "speedup_projected", line.get_color())
        ax.plot(x, [r["speedup_work"] for r in rs], style, lw=0.8, color=line.get_color(), alpha=0.35)
        measured = [(r["k"], r["speedup_measured"]) for r in rs if r.get("speedup_measured") is not None]
        if len(measured) > 1:
            ax.plot(*zip(*measured, strict=True), linestyle="none", marker=marker, ms=9, mfc="none",
                    color=line.get_color(), label=f"{_label(key)} measured")
            _range_bars(ax, rs, "speedup_measured", line.get_color())
    _log2_k(ax, ks)
    ax.set_yscale("log")
    ax.set_ylabel("speedup T(1)/T(k)")


def draw_goodput(ax: Axes, panel: Panel, rows: list[Row]) -> None:
    for key, rs in _series(rows).items():
        line = ax.plot([r["k"] for r in rs], [r["goodput_mrps"] for r in rs], "-", marker=MARKERS.get(key[1], "o"),
                       color=COLORS.get(key[0]), alpha=1.0 if key[1] == "hash" else 0.55,
                       label=f"{_label(key)} measured")[0]
        _range_bars(ax, rs, "goodput_mrps", line.get_color())
    ax.set_xlabel("threads k on one core")
    ax.set_ylabel("goodput (M requests/s)")
    ax.grid(True, alpha=0.2)


def draw_packet_rate(ax: Axes, panel: Panel, rows: list[Row]) -> None:
    """The paper's bottom row: raw packet rate (projected Mpps) against k, static list dashed."""
    ks = sorted({r["k"] for r in rows})
    groups = _series(rows)
    by_algo = len({k[0] for k in groups}) == len(groups)
    for i, (key, rs) in enumerate(groups.items()):
        marker = MARKERS.get(key[1], "o")
        line = ax.plot([r["k"] for r in rs], [(r.get("throughput_rps_projected") or 0) / 1e6 for r in rs],
                       "-" if key[0] != "static" else "--", marker=marker, ms=4,
                       color=COLORS.get(key[0]) if by_algo else f"C{i}",
                       label=f"{_label(key)} projected")[0]
        _range_bars(ax, rs, "throughput_rps_projected", line.get_color(), scale=1e-6)
        measured = [(r["k"], r["throughput_rps_measured"] / 1e6) for r in rs if r.get("throughput_rps_measured")]
        if measured:
            ax.plot(*zip(*measured, strict=True), linestyle="none", marker=marker, ms=9, mfc="none",
                    color=line.get_color(), label=f"{_label(key)} measured")
    _log2_k(ax, ks)
    ax.set_yscale("log")
    ax.set_ylabel("packet rate (Mpps)")


def draw_latency(ax: Axes, panel: Panel, rows: list[Row]) -> None:
    """Fig. 9a: mean per-packet classification time (worker CPU time per packet, projected)."""
    ks = sorted({r["k"] for r in rows})
    for key, rs in _series(rows).items():
        ax.plot([r["k"] for r in rs], [r["mean_service_ns_projected"] / 1e3 for r in rs], "-",
                marker=MARKERS.get(key[1], "o"), ms=4, color=COLORS.get(key[0]), label=f"{_label(key)} projected")
    _log2_k(ax, ks)
    ax.set_yscale("log")
    ax.set_ylabel("mean time per packet (µs)")


def _draw_packet_pair(top: Axes, bottom: Axes, panel: Panel, rows: list[Row]) -> None:
    (draw_latency if panel.metric == "latency" else draw_speedup)(top, panel, rows)
    draw_packet_rate(bottom, panel, rows)
    top.set_title(f"({panel.name}) {panel.title}", fontsize=8)
    top.legend(fontsize=5, loc="upper left")
    bottom.legend(fontsize=5, loc="upper left")


def plot_packet_experiment(out_dir: Path, experiment: Experiment, rows: list[Row]) -> list[Path]:
    """The paper's two-row figures (Figs. 8, 9): speedup (or latency) above, raw Mpps below;
    one figure per panel and an overview with every panel as a column."""
    paths: list[Path] = []
    present = [p for p in experiment.panels if any(r["panel"] == p.name for r in rows)]
    for panel in present:
        prow = [r for r in rows if r["panel"] == panel.name]
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(5.2, 7.0))
        _draw_packet_pair(top, bottom, panel, prow)
        fig.text(0.99, 0.005, "projected: serial dispatcher + slowest worker CPU time (calibrated), median and range "
                 "of the repeats; thin: work (rules compared)",
                 ha="right", fontsize=5, alpha=0.7)
        fig.tight_layout()
        paths.append(save_figure(fig, out_dir / f"{experiment.name}{panel.name}"))
    if len(present) > 1:
        cols = len(present)
        fig, axes = plt.subplots(2, cols, figsize=(4.2 * cols, 7.4), squeeze=False)
        for i, panel in enumerate(present):
            _draw_packet_pair(axes[0][i], axes[1][i], panel, [r for r in rows if r["panel"] == panel.name])
        fig.suptitle(experiment.description, fontsize=10)
        fig.tight_layout()
        paths.append(save_figure(fig, out_dir / experiment.name))
    return paths


def _draw(ax: Axes, panel: Panel, rows: list[Row]) -> None:
    (draw_goodput if panel.metric == "goodput" else draw_speedup)(ax, panel, rows)
    ax.set_title(f"({panel.name}) {panel.title}", fontsize=9)
    ax.legend(fontsize=6, loc="upper left")


def plot_experiment(out_dir: Path, experiment: Experiment, rows: list[Row]) -> list[Path]:
    """One figure per panel plus an overview with every panel; returns the PNG paths."""
    if any(p.metric in PACKET_METRICS for p in experiment.panels):
        return plot_packet_experiment(out_dir, experiment, rows)
    paths: list[Path] = []
    present = [p for p in experiment.panels if any(r["panel"] == p.name for r in rows)]
    for panel in present:
        prow = [r for r in rows if r["panel"] == panel.name]
        fig, ax = plt.subplots(figsize=(5.5, 4.2))
        _draw(ax, panel, prow)
        fig.text(0.99, 0.01, "projected: serial dispatcher + slowest worker CPU time (calibrated), median and range "
                 "of the repeats; dotted thin: work units",
                 ha="right", fontsize=5, alpha=0.7)
        fig.tight_layout()
        paths.append(save_figure(fig, out_dir / f"{experiment.name}{panel.name}"))
    if len(present) > 1:
        cols = min(3, len(present))
        nrows = (len(present) + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.2 * nrows), squeeze=False)
        for ax, panel in zip(axes.flat, present, strict=False):
            _draw(ax, panel, [r for r in rows if r["panel"] == panel.name])
        for ax in list(axes.flat)[len(present):]:
            ax.axis("off")
        fig.suptitle(experiment.description, fontsize=10)
        fig.tight_layout()
        paths.append(save_figure(fig, out_dir / experiment.name))
    return paths
