"""Paper Fig. 5 (§3.4): static vs self-adjusting workers behind round-robin and key-hash dispatch.

Full mode uses the paper's parameters; ``--quick`` shrinks m, w, ρ and the request counts so
that all five panels finish in about ten minutes on two cores (3 repeats, each point timed over a
1 s window) with the same shape of result.
"""

from __future__ import annotations

import math

from superlinear.engine.runs import Workload
from superlinear.experiments.spec import Experiment, Panel, Series

KS_FULL = (1, 2, 4, 8, 12, 16, 24, 32, 40, 48)
KS_TREE_FULL = (1, 2, 4, 8, 12, 16, 24, 32, 36)
KS_QUICK = (1, 2, 4, 8, 16, 32, 48)
KS_TREE_QUICK = (1, 2, 4, 8, 16, 36)
KS_SINGLE_CORE_FULL = (1, 2, 4, 8, 16, 24, 32, 48)
KS_SINGLE_CORE_QUICK = (1, 2, 4, 8, 16)


def _both(algos: tuple[str, ...]) -> tuple[Series, ...]:
    return tuple(Series(a, d) for a in algos for d in ("rr", "hash"))


def steady_state_warmup(m: int, k_max: int) -> int:
    """Requests after which each of k_max hash-dispatched workers has, with high probability,
    seen all of its m/k_max items (coupon collector: (m/k)·(ln(m/k) + 2) per worker), so an MTF
    list holds them at its front and an LRU cache holds them all."""
    per = max(m / k_max, 1.0)
    return int(k_max * per * (math.log(per) + 2))


def experiment(quick: bool = False) -> Experiment:
    ks = KS_QUICK if quick else KS_FULL
    ks_tree = KS_TREE_QUICK if quick else KS_TREE_FULL
    m_list = 20_000 if quick else 100_000
    lists = ("static", "mtf")
    panel_a = Panel(
        name="a",
        title=f"Static vs MTF list, uniform input (m = {m_list:,})",
        workload=Workload("uniform", m_list),
        series=(*_both(lists), Series("mtf", "hash", exclude_warmup=True)),
        ks=ks,
        requests=200_000 if quick else 1_000_000,
        warmup=steady_state_warmup(m_list, max(ks)),
        static_baseline="static",
    )
    panel_b = Panel(
        name="b",
        title=f"Static vs MTF list, Zipf α = 1.01 (m = {m_list:,})",
        workload=Workload("zipf", m_list, alpha=1.01),
        series=_both(lists),
        ks=ks,
        requests=200_000 if quick else 1_000_000,
        warmup=steady_state_warmup(m_list, max(ks)),
        static_baseline="static",
    )
    m_single = 10_000
    panel_c = Panel(
        name="c",
        title=f"Goodput, k threads on one core, uniform (m = {m_single:,})",
        workload=Workload("uniform", m_single),
        series=_both(lists),
        ks=KS_SINGLE_CORE_QUICK if quick else KS_SINGLE_CORE_FULL,
        requests=300_000 if quick else 1_000_000,
        warmup=steady_state_warmup(m_single, max(KS_SINGLE_CORE_QUICK if quick else KS_SINGLE_CORE_FULL)),
        metric="goodput",
    )
    m_cache = 5_000 if quick else 50_000
    delta = 0.05
    panel_d = Panel(
        name="d",
        title=f"LRU cache, uniform input (m = {m_cache:,}, δ = {delta}, ρ = {'10k' if quick else '100k'} cycles)",
        workload=Workload("uniform", m_cache),
        series=(Series("lru", "rr"), Series("lru", "hash"), Series("nocache", "hash")),
        ks=ks_tree,
        requests=100_000 if quick else 400_000,
        warmup=steady_state_warmup(m_cache, max(ks_tree)),
        miss_cycles=10_000 if quick else 100_000,
        capacity=int(m_cache * delta),
        static_baseline="nocache",
    )
    panel_e = Panel(
        name="e",
        title=f"Static balanced tree vs splay tree (m = 500, w = {'5k' if quick else '100k'} cycles)",
        workload=Workload("uniform", 500),
        series=_both(("tree", "splay")),
        ks=ks_tree,
        requests=20_000 if quick else 30_000,
        warmup=steady_state_warmup(500, max(ks_tree)),
        compare_cycles=5_000 if quick else 100_000,
        static_baseline="tree",
    )
    return Experiment(
        name="fig5",
        description="Paper Fig. 5: only a locality-boosting dispatcher with self-adjusting workers scales "
        "superlinearly" + (" (quick: reduced m, w, ρ and requests)" if quick else ""),
        panels=(panel_a, panel_b, panel_c, panel_d, panel_e),
    )
