"""Plots of ``superlinear latency-sim``: mean latency against Z and against cache size, and the
AMAT estimate (Eq. 2.1, from a classical simulation) next to the true latency. Latency is
normalised by Z (1.0 = every request a full miss), as in the thesis' figures. PNG and SVG.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from superlinear.common.rows import Row
from superlinear.output.figures import save_figure

STYLE = {
    "lru": ("#1f77b4", "-"), "lru-mad": ("#1f77b4", "--"), "lfu": ("#2ca02c", "-"), "lfu-mad": ("#2ca02c", "--"),
    "arc": ("#9467bd", "-"), "arc-mad": ("#9467bd", "--"), "belady": ("#7f7f7f", "-"),
    "belady-ad": ("#7f7f7f", "--"), "belatedly": ("#d62728", "-"), "belatedly-lp": ("#d62728", ":"),
}
NOTE = "kind: simulated (delayed-hits model); latency / Z: 1.0 = every request a full miss"


def _numeric_z(rows: list[Row]) -> list[Row]:
    return [r for r in rows if isinstance(r["z"], int)]


def _panels(n: int) -> tuple[Any, list[Any]]:
    cols = min(3, n)
    fig, axes = plt.subplots((n + cols - 1) // cols, cols, figsize=(4.8 * cols, 3.8 * ((n + cols - 1) // cols)),
                             squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.axis("off")
    return fig, flat[:n]


def _series(ax: Any, rows: list[Row], x: str) -> None:
    by: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by[r["policy"]].append(r)
    for policy, rs in by.items():
        rs.sort(key=lambda r: r[x])
        color, style = STYLE.get(policy, (None, "-"))
        ax.plot([r[x] for r in rs], [r["normalized_latency"] for r in rs], style, marker="o", ms=3, color=color,
                label=policy)


def _against(out: Path, rows: list[Row], *, x: str, xlabel: str, subject: str, by: str, panels: list[Any],
             title: str, stem: str) -> Path:
    """Latency / Z against ``x`` (``subject`` in the figure's title), one line per policy, one
    panel per value of ``by`` (``title`` formats it)."""
    fig, axes = _panels(len(panels))
    for ax, v in zip(axes, panels, strict=True):
        _series(ax, [r for r in rows if r[by] == v], x)
        ax.set_xscale("log")
        ax.set_title(title.format(v), fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean latency / Z")
        ax.grid(True, alpha=0.2)
        ax.legend(fontsize=6)
    fig.suptitle(f"Mean latency against {subject}  (" + NOTE + ")", fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out / stem)


def plot_latency_vs_z(out: Path, rows: list[Row]) -> Path | None:
    rows = _numeric_z(rows)
    sizes = sorted({r["capacity"] for r in rows})
    if not rows or len({r["z"] for r in rows}) < 2:
        return None
    return _against(out, rows, x="z", xlabel="Z (miss latency / inter-request time)", subject="Z", by="capacity",
                    panels=sizes, title="cache size {}", stem="latency-vs-z")


def plot_latency_vs_size(out: Path, rows: list[Row]) -> Path | None:
    zs = sorted({r["z"] for r in rows}, key=str)
    if len({r["capacity"] for r in rows}) < 2:
        return None
    return _against(out, rows, x="capacity", xlabel="cache size (objects)", subject="cache size", by="z", panels=zs,
                    title="Z = {}", stem="latency-vs-size")


def plot_amat(out: Path, rows: list[Row]) -> Path | None:
    """True latency (solid) and the AMAT estimate (dotted) against Z, per policy, for the
    middle cache size: the model incongruity of §2.2.1 (Fig. 2.3)."""
    rows = [r for r in _numeric_z(rows) if r.get("amat_latency") is not None]
    if not rows or len({r["z"] for r in rows}) < 2:
        return None
    sizes = sorted({r["capacity"] for r in rows})
    c = sizes[len(sizes) // 2]
    rows = [r for r in rows if r["capacity"] == c]
    fig, (ax, err) = plt.subplots(1, 2, figsize=(10, 3.9))
    by: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by[r["policy"]].append(r)
    for policy, rs in by.items():
        rs.sort(key=lambda r: r["z"])
        zs = [r["z"] for r in rs]
        # One colour per policy here (the AMAT line is the dotted twin).
        line = ax.plot(zs, [r["mean_latency"] / r["mean_z"] for r in rs], "-", marker="o", ms=3,
                       label=f"{policy} true")[0]
        ax.plot(zs, [r["amat_latency"] / r["mean_z"] for r in rs], ":", color=line.get_color(), label=f"{policy} AMAT")
        err.plot(zs, [100 * r["amat_error"] for r in rs], "-", marker="o", ms=3, color=line.get_color(), label=policy)
    for a in (ax, err):
        a.set_xscale("log")
        a.set_xlabel("Z")
        a.grid(True, alpha=0.2)
    ax.set_ylabel("mean latency / Z")
    ax.set_title(f"true latency (solid) vs AMAT estimate (dotted), cache size {c}", fontsize=8)
    err.set_ylabel("AMAT error (%)")
    err.set_title("(AMAT - true) / true: the classical model underestimates", fontsize=8)
    ax.legend(fontsize=5, ncol=2)
    err.legend(fontsize=6)
    fig.tight_layout()
    return save_figure(fig, out / "amat-vs-true")


def plot_all(out: Path, rows: list[Row]) -> list[Path]:
    paths = [plot_latency_vs_z(out, rows), plot_latency_vs_size(out, rows), plot_amat(out, rows)]
    return [p for p in paths if p is not None]
