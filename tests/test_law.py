"""The analytic laws against the paper's equations."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

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


@pytest.mark.parametrize(("flags", "fragment"), [
    (["--s", "-1"], "--s: expected a number in [0, 1]"),
    (["--s", "nan"], "--s: expected a number in [0, 1]"),
    (["--s-cache", "2"], "--s-cache: expected a number in [0, 1]"),
    (["--delta", "5"], "--delta: expected a number in [0, 1]"),
    (["--rho", "-10"], "--rho: expected a finite number ≥ 0"),
    (["--k", "0"], "--k: values must be at least 1"),
    (["--k", ""], "--k: empty (give "),
    (["--k", "abc"], "--k: 'abc' is not a whole number"),
])
def test_law_refuses_values_outside_its_model_in_one_line(flags: list[str], fragment: str, cli: Any,
                                                           tmp_path: Path) -> None:
    r = cli("law", *flags, "--out", str(tmp_path / "law"))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert fragment in last and "error" in last, last
