"""The analytic laws against the paper's equations."""

from __future__ import annotations

import math

from superlinear.analysis import law


def test_eq2_is_k_squared_without_serial_part() -> None:
    for k in (1, 2, 7, 48):
        assert math.isclose(law.mtf_uniform(k, 0.0), k * k)
    assert law.mtf_uniform(48, 0.01) < 100  # s = 0.01 caps the speedup at 1/s


def test_amdahl_and_general_law_agree_at_q_k_ell_1() -> None:
    for k in (1, 4, 32):
        assert math.isclose(law.general_law(k, 0.05, k, 1.0), law.amdahl(k, 0.05))


def test_cache_law_fig10() -> None:
    s, delta, rho = 0.1, 0.1, 10.0
    assert math.isclose(law.cache_law(1, s, delta, rho), 1.0)
    # Superlinear while the per-worker hit rate kδ still grows, above Amdahl throughout.
    assert law.cache_law(5, s, delta, rho) > 5
    assert all(law.cache_law(k, s, delta, rho) > law.amdahl(k, s) for k in range(2, 64))
    # Past kδ = 1 every request hits: the elevated Amdahl profile T(1)/(s + (1-s)/k).
    k = 20
    assert math.isclose(law.cache_law(k, s, delta, rho), law.cache_time(1, s, delta, rho) * law.amdahl(k, s))
    # Scaling only the cache ramps up more slowly.
    assert law.cache_only_law(5, s, delta, rho) < law.cache_law(5, s, delta, rho)
