"""Tables and the plot of ``superlinear xdp-bench``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from superlinear.common.rows import Row
from superlinear.output.figures import save_figure
from superlinear.xdp.bench import SetResult

TRACE_LABELS = {"trace": "the trace", "high": "high locality (trains of 16)", "none": "no locality (shuffled)"}


def _is_cost(r: Row) -> bool:
    return r["kind"] == "measured" and r.get("study") != "throughput"


def _ns(row: Row | None) -> str:
    if row is None or row.get("ns_per_packet") is None:
        return "-"
    return f"{row['ns_per_packet']:,.0f} [{row['ns_per_packet_min']:,.0f}–{row['ns_per_packet_max']:,.0f}]"


def cost_table(results: list[SetResult]) -> Table:
    t = Table(title=escape("Cost per packet, one worker CPU (measured; median [range] of the repeats): XDP from "
                           "bpf_stats (worker program), nftables chain from classified packets per CPU second"))
    for col in ("set", "trace", "nftables chain ns", "XDP static ns", "XDP MRF ns", "MRF vs nftables",
                "MRF rules compared/pkt"):
        t.add_column(col, justify="left" if col in ("set", "trace") else "right")
    for res in results:
        for loc in TRACE_LABELS:
            by = {r["system"]: r for r in res.rows if r.get("trace") == loc and _is_cost(r)}
            if not by:
                continue
            mrf = by.get("xdp mrf")
            gain = mrf.get("gain_vs_nftables") if mrf else None
            t.add_row(res.name, TRACE_LABELS[loc], _ns(by.get("nftables")), _ns(by.get("xdp static")), _ns(mrf),
                      f"{gain:,.1f}x cheaper" if gain else "-",
                      f"{mrf['work_per_packet']:,.1f}" if mrf else "-")
    return t


def work_table(results: list[SetResult]) -> Table:
    t = Table(title="Work speedup of MRF at k logical workers (work: rules compared by all / by the busiest "
              "worker), kernel counters next to user space")
    for col in ("set", "dispatcher", "fields hashed", "k", "kernel", "user space", "equal per worker"):
        t.add_column(col, justify="left" if col in ("set", "dispatcher", "fields hashed") else "right")
    for res in results:
        for r in res.rows:
            if r["kind"] == "work":
                t.add_row(res.name, str(r.get("dispatcher", "")), str(r["dispatch"]), str(r["k"]),
                          f"{r['speedup_work']:,.2f}x",
                          f"{r['speedup_work_user_space']:,.2f}x", "yes" if r["check_work_equal"] else "NO")
    return t


def throughput_table(results: list[SetResult]) -> Table:
    t = Table(title=escape("Packets per second against worker CPUs (measured; median [range] of the rounds, "
                           "classified by the kernel per wall second; RSS over the 5-tuple, k = worker CPUs)"))
    for col in ("set", "algo", "worker CPUs", "senders", "packets/s", "per worker CPU", "speedup", "offered/s",
                "dropped", "busiest/mean", "limited by"):
        t.add_column(col, justify="left" if col in ("set", "algo", "limited by") else "right")
    for res in results:
        for r in res.rows:
            if r.get("study") != "throughput" or r["pps"] is None:
                continue
            t.add_row(res.name, r["algo"], str(r["worker_cpus"]), str(r["senders"]),
                      f"{r['pps']:,.0f} [{r['pps_min']:,.0f}–{r['pps_max']:,.0f}]", f"{r['pps_per_worker_cpu']:,.0f}",
                      f"{r['speedup_measured']:,.2f}x [{r['speedup_measured_lo']:,.2f}–{r['speedup_measured_hi']:,.2f}]"
                      if r["speedup_measured"] else "-", f"{r['offered_pps']:,.0f}",
                      f"{100 * r['dropped_share']:.1f} %", f"{r['load_imbalance']:.2f}", r["limited_by"])
    return t


def check_lines(results: list[SetResult]) -> list[str]:
    out = []
    for res in results:
        c = res.check
        runs = c["xdp"] + c["work_study"]
        if not runs and c.get("nftables") is None:
            continue
        bad = [r for r in runs if not (r["counters_equal"] and r["work_equal"] and not r["order_violations"])]
        nft = c.get("nftables")
        out.append(f"{res.name}: {len(runs) - len(bad)} of {len(runs)} XDP runs equal ours rule by rule and worker by "
                   "worker" + ("" if nft is None else ", nftables " + ("equal" if nft["counters_equal"] else "DIFFERS"))
                   + ("" if not bad else "; differing: " + ", ".join(
                       f"{r['algo']} {r['dispatch']} k={r['k']}" for r in bad[:8])))
    return out


def plot(out: Path, results: list[SetResult]) -> list[Path]:
    """Per set, a column: cost per packet by trace (bars with range), work speedup against k, and
    packets per second against worker CPUs, each where the run has it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(results)
    rows = [r for res in results for r in res.rows]
    panels = [f for f, has in ((_plot_cost, any(_is_cost(r) for r in rows)),
                               (_plot_work, any(r["kind"] == "work" for r in rows)),
                               (_plot_throughput, any(r.get("study") == "throughput" for r in rows))) if has]
    if not panels:
        # Only the check study ran (--studies check): it has no figure, its results are check.json
        # (an empty cost panel would stand for it).
        return []
    fig, axes = plt.subplots(len(panels), n, figsize=(5.5 * n, 4 * len(panels)), squeeze=False)
    for j, res in enumerate(results):
        for i, draw in enumerate(panels):
            draw(axes[i][j], res)
    fig.tight_layout()
    png = save_figure(fig, out / "xdp-bench")
    return [png, png.with_suffix(".svg")]


def _legend(ax: Any, **kwargs: Any) -> None:
    """A legend where the panel has labelled artists (matplotlib warns of an empty one)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def _plot_cost(ax: Any, res: SetResult) -> None:
    """Cost per packet by trace variant, bars with the range."""
    systems = [s for s in ("nftables", "xdp static", "xdp mrf") if any(r["system"] == s for r in res.rows)]
    locs = [loc for loc in TRACE_LABELS if any(r.get("trace") == loc and _is_cost(r) for r in res.rows)]
    width = 0.8 / max(len(systems), 1)
    for i, s in enumerate(systems):
        ys, lo, hi = [], [], []
        for loc in locs:
            r = next((r for r in res.rows if r["system"] == s and r.get("trace") == loc and _is_cost(r)), None)
            y = r["ns_per_packet"] if r and r["ns_per_packet"] else 0.0
            ys.append(y)
            lo.append(y - (r["ns_per_packet_min"] or y) if r else 0.0)
            hi.append((r["ns_per_packet_max"] or y) - y if r else 0.0)
        ax.bar([x + i * width for x in range(len(locs))], ys, width, yerr=[lo, hi], label=s, capsize=3)
    ax.set_xticks([x + width * (len(systems) - 1) / 2 for x in range(len(locs))], locs)
    ax.set_yscale("log")
    ax.set_ylabel("ns per packet (measured, median, range)")
    ax.set_title(f"{res.name}: cost per packet, 1 worker CPU")
    _legend(ax)


def _plot_work(ax: Any, res: SetResult) -> None:
    """MRF's work speedup against logical workers, kernel and user space."""
    for d in sorted({str(r.get("dispatcher", r["dispatch"])) for r in res.rows if r["kind"] == "work"}):
        rs = [r for r in res.rows if r["kind"] == "work" and str(r.get("dispatcher", r["dispatch"])) == d]
        ks = [r["k"] for r in rs]
        ax.plot(ks, [r["speedup_work"] for r in rs], "o-", label=f"kernel, {d}")
        ax.plot(ks, [r["speedup_work_user_space"] for r in rs], "x--", label=f"user space, {d}")
    ax.plot([1, 32], [1, 32], ":", color="grey", label="linear")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("k logical workers")
    ax.set_ylabel("work speedup (work)")
    ax.set_title(f"{res.name}: MRF work speedup")
    _legend(ax, fontsize=7)


def _plot_throughput(ax: Any, res: SetResult) -> None:
    """Packets per second against worker CPUs, median with the range as error bars."""
    rows = [r for r in res.rows if r.get("study") == "throughput" and r["pps"] is not None]
    for algo in ("static", "mrf"):
        rs = sorted((r for r in rows if r["algo"] == algo), key=lambda r: r["worker_cpus"])
        if not rs:
            continue
        xs = [r["worker_cpus"] for r in rs]
        ys = [r["pps"] / 1e6 for r in rs]
        err = [[(r["pps"] - r["pps_min"]) / 1e6 for r in rs], [(r["pps_max"] - r["pps"]) / 1e6 for r in rs]]
        ax.errorbar(xs, ys, yerr=err, fmt="o-", capsize=3, label=f"XDP {algo}")
        ax.plot(xs, [ys[0] * x / xs[0] for x in xs], ":", color="grey", label=f"linear from {algo}'s first point")
        ax.plot(xs, [r["offered_pps"] / 1e6 for r in rs], "x--", alpha=0.5, label=f"offered ({algo} runs)")
    ax.set_xlabel("worker CPUs")
    ax.set_ylabel("Mpps classified (measured)")
    ax.set_title(f"{res.name}: packets/s against worker CPUs (dotted: linear)")
    _legend(ax, fontsize=7)
