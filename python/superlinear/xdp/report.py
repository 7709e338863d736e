"""Tables and the plot of ``superlinear xdp-bench``."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.table import Table

from superlinear.common.rows import Row
from superlinear.xdp.bench import SetResult

TRACE_LABELS = {"trace": "the trace", "high": "high locality (trains of 16)", "none": "no locality (shuffled)"}


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
            by = {r["system"]: r for r in res.rows if r.get("trace") == loc and r["kind"] == "measured"}
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


def check_lines(results: list[SetResult]) -> list[str]:
    out = []
    for res in results:
        c = res.check
        runs = c["xdp"] + c["work_study"]
        bad = [r for r in runs if not (r["counters_equal"] and r["work_equal"] and not r["order_violations"])]
        nft = c.get("nftables")
        out.append(f"{res.name}: {len(runs) - len(bad)} of {len(runs)} XDP runs equal ours rule by rule and worker by "
                   "worker" + ("" if nft is None else ", nftables " + ("equal" if nft["counters_equal"] else "DIFFERS"))
                   + ("" if not bad else "; differing: " + ", ".join(
                       f"{r['algo']} {r['dispatch']} k={r['k']}" for r in bad[:8])))
    return out


def plot(out: Path, results: list[SetResult]) -> list[Path]:
    """Cost per packet by trace (bars with range) and work speedup against k, per set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(results)
    fig, axes = plt.subplots(2, n, figsize=(5.5 * n, 8), squeeze=False)
    for j, res in enumerate(results):
        ax = axes[0][j]
        systems = [s for s in ("nftables", "xdp static", "xdp mrf") if any(r["system"] == s for r in res.rows)]
        locs = [loc for loc in TRACE_LABELS if any(r.get("trace") == loc and r["kind"] == "measured" for r in res.rows)]
        width = 0.8 / max(len(systems), 1)
        for i, s in enumerate(systems):
            ys, lo, hi = [], [], []
            for loc in locs:
                r = next((r for r in res.rows
                          if r["system"] == s and r.get("trace") == loc and r["kind"] == "measured"), None)
                y = r["ns_per_packet"] if r and r["ns_per_packet"] else 0.0
                ys.append(y)
                lo.append(y - (r["ns_per_packet_min"] or y) if r else 0.0)
                hi.append((r["ns_per_packet_max"] or y) - y if r else 0.0)
            ax.bar([x + i * width for x in range(len(locs))], ys, width, yerr=[lo, hi], label=s, capsize=3)
        ax.set_xticks([x + width * (len(systems) - 1) / 2 for x in range(len(locs))], locs)
        ax.set_yscale("log")
        ax.set_ylabel("ns per packet (measured, median, range)")
        ax.set_title(f"{res.name}: cost per packet, 1 worker CPU")
        ax.legend()
        ax = axes[1][j]
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
        ax.legend(fontsize=7)
    fig.tight_layout()
    paths = [out / "xdp-bench.png", out / "xdp-bench.svg"]
    for p in paths:
        fig.savefig(p, dpi=110)
    plt.close(fig)
    return paths
