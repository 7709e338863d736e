"""The paper's analytic scaling laws.

* Amdahl's law, Eq. (1): S(k) = 1 / (s + (1 − s)/k).
* Distributed MTF lists on uniform input, Eq. (2): S(k) = 1 / (s + (1 − s)/k²) for k ≤ m.
* The general law of Appendix A: S(k) = 1 / (s + (1 − s)/(q(k)·ℓ(k))).
* Distributed caching, Eq. (3) and Fig. 10: T(k) = s + (1 − s)/k · (kδ + (1 − kδ)ρ) while kδ ≤ 1,
  else s + (1 − s)/k; and the variant where only the cache scales (App. B):
  T(k) = s + (1 − s)(δ' + (1 − kδ)ρ) with δ' = kδ the hit share.
"""

from __future__ import annotations

from pathlib import Path

from superlinear.output.figures import save_figure


def amdahl(k: float, s: float) -> float:
    """Eq. (1)."""
    return 1.0 / (s + (1.0 - s) / k)


def general_law(k: float, s: float, q: float, ell: float) -> float:
    """Appendix A: speedup from serial fraction s, parallelizability q(k) and work reduction ℓ(k)."""
    return 1.0 / (s + (1.0 - s) / (q * ell))


def mtf_uniform(k: float, s: float, m: float | None = None) -> float:
    """Eq. (2): q(k) = ℓ(k) = k while k ≤ m; beyond m the list is a hash table (ℓ stays m)."""
    ell = k if m is None else min(k, m)
    return general_law(k, s, k, ell)


def cache_time(k: float, s: float, delta: float, rho: float) -> float:
    """Eq. (3): time per request of k hash-partitioned caches, each with hit rate min(kδ, 1).
    A hit costs 1, a miss costs ρ; the backend scales with the caches."""
    if k * delta <= 1.0:
        return s + (1.0 - s) / k * (k * delta + (1.0 - k * delta) * rho)
    return s + (1.0 - s) / k


def cache_law(k: float, s: float, delta: float, rho: float) -> float:
    """Fig. 10: S_c(k) = T_c(1)/T_c(k)."""
    return cache_time(1, s, delta, rho) / cache_time(k, s, delta, rho)


def cache_only_time(k: float, s: float, delta: float, rho: float) -> float:
    """App. B: only the cache scales, the backend stays constant."""
    hit = min(k * delta, 1.0)
    return s + (1.0 - s) * (hit / k + (1.0 - hit) * rho)


def cache_only_law(k: float, s: float, delta: float, rho: float) -> float:
    return cache_only_time(1, s, delta, rho) / cache_only_time(k, s, delta, rho)


def law_table(ks: list[int], s_list: float, s_cache: float, delta: float, rho: float) -> list[dict[str, float]]:
    """Rows of every law at each k, as printed by ``superlinear law``."""
    return [
        {
            "k": k,
            "linear": float(k),
            "amdahl": amdahl(k, s_list),
            "mtf_uniform_k2": mtf_uniform(k, s_list),
            "cache_amdahl": amdahl(k, s_cache),
            "cache_law": cache_law(k, s_cache, delta, rho),
            "cache_only_law": cache_only_law(k, s_cache, delta, rho),
        }
        for k in ks
    ]


def plot_laws(out_dir: Path, s_list: float, s_cache: float, delta: float, rho: float, k_max: int) -> list[Path]:
    """Fig. 1 (Amdahl vs the k² law) and Fig. 10 (distributed caching)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    ks = list(range(1, k_max + 1))
    paths = []
    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    ax.plot(ks, ks, "k--", lw=1, label="linear")
    ax.plot(ks, [amdahl(k, s_list) for k in ks], label=f"Amdahl, Eq. (1), s = {s_list}")
    ax.plot(ks, [mtf_uniform(k, s_list) for k in ks], label=f"MTF + hash on uniform input, Eq. (2), s = {s_list}")
    ax.set_xlabel("workers k")
    ax.set_ylabel("speedup")
    ax.set_title("Linear, Amdahl and superlinear scaling (paper Fig. 1)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.2)
    fig.tight_layout()
    paths.append(save_figure(fig, out_dir / "law_fig1"))

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    ax.plot(ks, ks, "k--", lw=1, label="linear")
    ax.plot(ks, [amdahl(k, s_cache) for k in ks], label=f"Amdahl (random / round-robin), s = {s_cache}")
    ax.plot(ks, [cache_law(k, s_cache, delta, rho) for k in ks], label="key hash, cache and backend scaled, Eq. (3)")
    ax.plot(ks, [cache_only_law(k, s_cache, delta, rho) for k in ks], label="key hash, only the cache scaled")
    elevated = cache_time(1, s_cache, delta, rho)  # T(1) over the time of a system serving every request as a hit
    ax.plot(ks, [elevated * amdahl(k, s_cache) for k in ks], ":", label="elevated Amdahl (all hits)")
    ax.set_xlabel("workers k")
    ax.set_ylabel("speedup")
    ax.set_title(f"Distributed caching (paper Fig. 10): s = {s_cache}, δ = {delta}, ρ = {rho}", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.2)
    fig.tight_layout()
    paths.append(save_figure(fig, out_dir / "law_fig10"))
    return paths
