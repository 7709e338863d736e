"""``superlinear cache advise``: the speedup curve of a cache tier predicted from a key
distribution, the memory of one replica and ρ (:mod:`superlinear.cache.advise`); ``--verify``
runs the real tier at the same k and compares the peak."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from rich.table import Table

from superlinear import _native
from superlinear.cache.advise import (
    DEFAULT_RHO,
    LINEAR_TOLERANCE,
    ROUTER_COLOURS,
    UNIT_COSTS_US,
    CacheAdvice,
    CacheCurve,
    Verification,
    items_for,
    predict,
    verify,
    verify_study,
)
from superlinear.common.args import comma_list, int_list, non_negative_finite, positive_int
from superlinear.common.bounds import MAX_WORKERS
from superlinear.common.errors import SuperlinearError
from superlinear.common.scope import generator_scope, needs_option
from superlinear.common.study import Outcome, Progress, Study, add_study_options, console


def peak_sentence(c: CacheCurve) -> str:
    """Where a router's predicted curve (model) peaks over linear, in words that cannot contradict
    each other: the peak is the first k within 2 % of the largest S(k)/k, so a curve whose
    largest S(k)/k is at its last k is said to be still rising."""
    ratios = c.ratios
    if c.peak_ratio <= 1 + LINEAR_TOLERANCE:
        head = f"{c.router}: never above linear (S(k)/k at most {c.peak_ratio:.2f}, model)"
    else:
        at = ratios[c.ks.index(c.peak_k)]
        best_k = c.ks[ratios.index(c.peak_ratio)]
        head = f"{c.router}: superlinearity peaks at k = {c.peak_k} ({at:.2f}× linear, model"
        head += f"; {c.peak_ratio:.2f}× at k = {best_k}, within 2 %)" if best_k != c.peak_k else ")"
        lf = c.linear_from
        head += (f"; linear again from k = {lf}" if lf is not None else
                 "; still rising at the largest k" if best_k == c.ks[-1] else "; not yet linear again at the largest k")
    if c.work_speedups:
        best_work = max(w / k for w, k in zip(c.work_speedups, c.ks, strict=True))
        head += ("; work kind (simulated counts × unit costs) "
                 + (f"peaks at k = {c.work_peak_k}" if best_work > 1 + LINEAR_TOLERANCE else "never above linear"))
    return head


#: Memory per replica, MB: the paper's App. B replicas.
DEFAULT_MEMORY_MB = 4
#: The key distribution of ``reproduce fig11`` over its 1,000,000 rows.
DEFAULT_DIST = "hot:386000"


class CacheAdvise(Study[argparse.Namespace]):
    """``cache advise``: predicted hit rates and speedups per router, the peak and the return to linear."""

    experiment = "cache-advise"

    def config_from(self, args: argparse.Namespace) -> argparse.Namespace:
        try:
            _native.cache_lru_sim("hash", 1, args.dist, args.rows, 1, 1, 0, 1)
        except SuperlinearError as e:
            default = (f" (the default --dist, made for Fig. 11's 1,000,000 rows: give a --dist for --rows "
                       f"{args.rows:,})") if args.dist == DEFAULT_DIST else ""
            raise SuperlinearError(f"--dist: {e}{default}") from None
        if args.items is not None and args.memory_mb is not None and not args.verify:
            raise SuperlinearError("--memory-mb has no effect with --items (--items sets the items per replica; "
                                   "--memory-mb sizes them, and the real replicas of --verify)")
        if args.memory_mb is None:
            args.memory_mb = DEFAULT_MEMORY_MB
        if args.trace is not None and args.verify:
            raise SuperlinearError("--verify replays a distribution (--dist) on the real tier; with --trace, "
                                   "compare against your own tier's counts instead")
        routers = comma_list("--routers", args.routers)
        # Each router by its name, an alias (key-hash, jump) as the router it spells.
        named = {spelling: r["name"] for r in _native.cache_routers() for spelling in (r["name"], *r["aliases"])}
        bad = [r for r in routers if r not in named]
        if bad or not routers:
            raise SuperlinearError(f"--routers: unknown router(s) {', '.join(bad) or '(none)'} "
                                   f"(known: {', '.join(sorted(set(named.values())))})")
        routers = list(dict.fromkeys(named[r] for r in routers))
        if args.verify and "hash" not in routers:
            raise SuperlinearError("--verify compares key hash: keep hash in --routers")
        args.router_list = routers
        # The work kind follows --rho too: the database side of a miss is scaled to it.
        args.costs = UNIT_COSTS_US.with_rho(args.rho)
        if args.costs is None:
            raise SuperlinearError(f"--rho {args.rho:g}: below what a miss costs even with a free database here "
                                   f"(client + get + fill: ρ ≥ {UNIT_COSTS_US.least_rho:.2f})")
        args.ks = int_list("--k", args.k, maximum=MAX_WORKERS)
        if args.verify:
            from superlinear.experiments.cachetier_driver import check_servers_fit

            check_servers_fit(verify_study(args.dist, args.rows, args.ks, args.memory_mb, args.verify_requests),
                              "--k")
        return args

    def run(self, config: argparse.Namespace, progress: Progress | None) -> Outcome:
        items = config.items or items_for(config.memory_mb)
        try:
            advice = predict(config.dist, config.rows, items, config.rho, config.ks, config.router_list,
                             seed=config.seed, trace=config.trace, costs=config.costs)
        except SuperlinearError as e:  # only the trace file can fail here: --dist was checked above
            raise SuperlinearError(f"--trace: {e}") from None
        checked = (verify(advice, config.memory_mb, config.verify_requests, str(Path(config.out) / "verify"),
                          progress is not None) if config.verify else None)
        recorded: dict[str, Any] = {
            "dist": advice.dist, "rows": advice.rows, "trace": config.trace, "memory_mb": config.memory_mb,
            "items_per_replica": items,
            "rho": config.rho, "requests_simulated": advice.requests, "kind": "model (LRU simulation + Eq. 3)",
            "curves": {c.router: {"peak_k": c.peak_k, "peak_over_linear": c.peak_ratio,
                                  "linear_from": c.linear_from, "work_peak_k": c.work_peak_k,
                                  "work_peak_over_linear": max((w / k for w, k in zip(c.work_speedups, c.ks,
                                                                                       strict=True)), default=None)
                                  if c.work_speedups else None} for c in advice.curves},
        }
        if checked is not None:
            recorded["verify"] = {"predicted_peak": checked.predicted_peak, "tier_peak": checked.tier_peak,
                                  "peak_error": checked.peak_error, "ks": list(checked.ks),
                                  "tier_hit_rate": list(checked.tier_hits),
                                  "tier_speedup_work": list(checked.tier_work),
                                  "predicted_hit_rate": list(checked.predicted_hits),
                                  "measured_unit_costs_ns": dataclasses.asdict(checked.measured_costs)
                                  if checked.measured_costs else None}
        return Outcome(advice.rows_out(), recorded, extra=(advice, checked))

    def plot(self, out: Path, config: argparse.Namespace, outcome: Outcome) -> list[Path]:
        return plot_cache_advice(out, *outcome.extra)

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        advice, checked = outcome.extra
        t = Table(title=f"cache advise: {advice.dist} over {advice.rows:,} rows, {advice.items:,} items per replica, "
                  f"ρ = {advice.rho:g} (model: LRU simulation + Eq. 3; eq3 = the paper's Eq. 3 on the simulated hit "
                  "rates, work = simulated counts × unit CPU costs)")
        t.add_column("k", justify="right")
        for c in advice.curves:
            t.add_column(f"{c.router} hit (sim.)", justify="right")
            t.add_column(f"{c.router} S(k) eq3", justify="right")
            t.add_column(f"{c.router} S/k eq3", justify="right")
            t.add_column(f"{c.router} work/k", justify="right")
        for i, k in enumerate(advice.curves[0].ks):
            cells = [str(k)]
            for c in advice.curves:
                cells += [f"{c.hit_rates[i]:.3f}", f"{c.speedups[i]:.1f}", f"{c.ratios[i]:.2f}",
                          f"{c.work_speedups[i] / k:.2f}" if c.work_speedups else "—"]
            t.add_row(*cells)
        console.print(t)
        for c in advice.curves:
            console.print(peak_sentence(c))
        if checked is not None:
            console.print(f"verify (real tier, key hash): predicted peak (work) k = {checked.predicted_peak}, the real "
                          f"tier's (work) k = {checked.tier_peak}, error {checked.peak_error:+d}; hit rate (count) "
                          "predicted vs real tier: " + ", ".join(f"k={k} {p:.3f}/{m:.3f}" for k, p, m in
                                                   zip(checked.ks, checked.predicted_hits, checked.tier_hits,
                                                       strict=True)))
            u = checked.measured_costs
            if u is not None:
                console.print(f"the real tier calibrated: memcached {u.memcached / 1e3:.1f} µs per get, "
                              f"{u.memcached_fill / 1e3:.1f} µs per fill, query {u.postgresql / 1e3:.1f} µs, client "
                              f"{u.client_hit / 1e3:.1f} µs + {u.client_miss / 1e3:.1f} µs past the cache: ρ = "
                              f"{u.rho:.2f} (the prediction used {advice.rho:g}; --rho {u.rho:.1f} sets the tier's ρ "
                              "by scaling the database side of a miss, the other costs stay the defaults')")

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"results: {path}; plots: {', '.join(str(p) for p in plots if p.suffix == '.png')}"]


def plot_cache_advice(out: Path, advice: CacheAdvice, checked: Verification | None) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from superlinear.output.figures import save_figure

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    colours = ROUTER_COLOURS
    for c in advice.curves:
        col = colours.get(c.router, "gray")
        ax.plot(c.ks, c.ratios, "-o", ms=3, color=col, label=f"{c.router} (model: Eq. 3 with simulated hits)")
        if c.work_speedups:
            ax.plot(c.ks, [w / k for w, k in zip(c.work_speedups, c.ks, strict=True)], "--", color=col, lw=1,
                    label=f"{c.router} (work predicted: simulated counts × unit costs)")
        ax2.plot(c.ks, c.hit_rates, "-o", ms=3, color=col, label=f"{c.router} (LRU simulation)")
        ax.axvline(c.peak_k, color=col, ls=":", lw=1)
    if checked is not None:
        ax.plot(checked.ks, [w / k for w, k in zip(checked.tier_work, checked.ks, strict=True)], "s",
                mfc="none", color="black", label="hash, real tier (work)")
        ax2.plot(checked.ks, checked.tier_hits, "s", mfc="none", color="black", label="hash, real tier (count)")
    ax.axhline(1, color="black", ls="--", lw=1)
    ax.set_xlabel("replicas k")
    ax.set_ylabel("speedup / k (over linear)")
    ax.set_title(f"{advice.dist}, {advice.items:,} items/replica, ρ = {advice.rho:g}", fontsize=9)
    ax.legend(fontsize=7)
    ax2.set_xlabel("replicas k")
    ax2.set_ylabel("hit rate")
    ax2.set_ylim(0, 1.02)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    path = save_figure(fig, out / "cache-advise")
    plt.close(fig)
    return [path]


def register(cs: Any) -> None:
    """Adds ``advise`` to the ``cache`` subcommands."""
    a = cs.add_parser("advise", help="predict the tier's speedup curve, its peak and return to linear",
                      description="Simulate each replica as an exact LRU of its share of the keys (key hash, random, "
                      "DistCache) and evaluate the paper's Eq. 3 with those hit rates: the predicted speedup at each "
                      "k, the replica count where superlinearity peaks and where the curve is linear again. A model, "
                      "no servers; --verify runs the real tier (key hash) and compares the peak.")
    a.add_argument("--dist", default=DEFAULT_DIST,
                   help=f"uniform, zipf:ALPHA, hot:H or hot:H:zipf:ALPHA (default {DEFAULT_DIST}, Fig. 11)")
    a.add_argument("--trace", metavar="FILE",
                   help="a key trace instead of --dist: one read per line ('KEY [TIMESTAMP [LATENCY]]', any token "
                   "as KEY) or the engine's binary key trace; played once to warm the replicas, then once counted")
    a.add_argument("--rows", type=positive_int, default=1_000_000, help="rows in the table (default 1,000,000)")
    a.add_argument("--memory-mb", type=positive_int, default=None,
                   help=f"memory per replica in MB (default {DEFAULT_MEMORY_MB})")
    a.add_argument("--items", type=positive_int, help="items per replica instead of --memory-mb's estimate")
    a.add_argument("--rho", type=non_negative_finite, default=DEFAULT_RHO,
                   help=f"a miss's request path (client, get, query, fill) over a hit's (client, get); default "
                   f"{DEFAULT_RHO:g}, as the tier measured here. Eq. 3 takes it as is; the work kind scales the "
                   "database side of a miss to it")
    a.add_argument("--k", "-k", default=",".join(str(k) for k in range(1, 16)), help="replica counts (default 1..15)")
    a.add_argument("--routers", default="hash,random", help="comma-separated routers (default hash,random)")
    a.add_argument("--seed", type=positive_int, default=1,
                   help="seed of the simulated key draws and the routers (default 1)")
    a.add_argument("--verify", action="store_true", help="also run the real tier (key hash) at every k and compare")
    a.add_argument("--verify-requests", type=positive_int, default=6_000,
                   help="requests per point of --verify (default 6,000)")
    add_study_options(a, CacheAdvise(), "results/cache-advise")
    generator_scope(a, ("dist", "rows"), why="it shapes a generated workload; a trace brings its own keys")
    needs_option(a, ("verify_requests",), "verify", "it sizes the real tier's runs")


__all__ = ["CacheAdvise", "register"]
