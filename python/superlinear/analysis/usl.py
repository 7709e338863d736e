"""The Universal Scalability Law (Gunther; seed ``usl-perpetual-motion-of-parallel-performance``),
fitted with superlinear support.

    X(p) = γ·p / (1 + σ(p − 1) + κ·p(p − 1))

σ is contention, κ coherency, γ the throughput (or speedup) of one node. σ < 0 is not an error:
it is the signature of superlinear speedup (a capacity boost), and with κ > 0 the curve must
cross the linear bound at p_x = ⌈|σ|/κ⌉ (seed Eq. 3) into the payback region.

Fitting is bounded nonlinear least squares (``scipy.optimize.least_squares``) from several
starting points. Repeated measurements at the same p are reduced to mean ± standard error (seed
Table 2) and fitted with weights 1/SE². Standard errors come from the Jacobian at the optimum
(cov = s²·(JᵀJ)⁻¹ with s² the residual variance), t and p values from Student's t with n − 3
degrees of freedom; confidence and prediction intervals at new p use the delta method.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, stats

PARAMS = ("sigma", "kappa", "gamma")
Array = NDArray[np.float64]


class USLError(ValueError):
    """The data cannot determine the model; the message says why."""


def usl(p: Array | float, sigma: float, kappa: float, gamma: float) -> Array | float:
    """X(p) of the USL."""
    return gamma * p / (1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0))


def _gradient(p: Array, sigma: float, kappa: float, gamma: float) -> Array:
    """∂X/∂(σ, κ, γ) at each p, shape (len(p), 3)."""
    d = 1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0)
    x = gamma * p / d
    return np.column_stack([-x * (p - 1.0) / d, -x * p * (p - 1.0) / d, p / d])


@dataclass(frozen=True)
class Point:
    """Measurements at one p: mean ± standard error over its repeats."""

    p: float
    mean: float
    stderr: float | None
    n: int
    relative_error: float | None


@dataclass(frozen=True)
class Estimate:
    value: float
    stderr: float | None
    t: float | None
    p_value: float | None
    ci95: tuple[float, float] | None


@dataclass
class USLFit:
    """Coefficients with their statistics and the figures derived from them."""

    sigma: Estimate
    kappa: Estimate
    gamma: Estimate
    points: list[Point]
    weighted: bool
    dof: int
    residual_standard_error: float | None
    efficiency: list[float]
    covariance: list[list[float]] | None
    derived: dict[str, Any] = field(default_factory=dict)

    def coefficients(self) -> tuple[float, float, float]:
        return self.sigma.value, self.kappa.value, self.gamma.value

    def predict(self, p: Sequence[float]) -> list[dict[str, float | None]]:
        """X at new p with 95 % confidence and prediction intervals (delta method)."""
        ps = np.asarray(p, dtype=float)
        s, k, g = self.coefficients()
        x = np.asarray(usl(ps, s, k, g), dtype=float)
        out: list[dict[str, float | None]] = []
        if self.covariance is None or self.residual_standard_error is None or self.dof <= 0:
            return [{"p": float(pi), "x": float(xi), "ci_low": None, "ci_high": None, "pi_low": None,
                     "pi_high": None} for pi, xi in zip(ps, x, strict=True)]
        cov = np.asarray(self.covariance)
        tq = float(stats.t.ppf(0.975, self.dof))
        grad = _gradient(ps, s, k, g)
        var_mean = np.einsum("ij,jk,ik->i", grad, cov, grad)
        # Residual variance at a new point: s² in the fit's units; for weighted fits, scaled by
        # the mean squared standard error of the data (the typical variance of one mean).
        s2 = self.residual_standard_error**2
        if self.weighted:
            se = np.array([pt.stderr for pt in self.points if pt.stderr], dtype=float)
            s2 = s2 * float(np.mean(se**2)) if len(se) else s2
        for pi, xi, vm in zip(ps, x, var_mean, strict=True):
            ci = tq * math.sqrt(max(vm, 0.0))
            pi_half = tq * math.sqrt(max(vm + s2, 0.0))
            out.append({"p": float(pi), "x": float(xi), "ci_low": float(xi - ci), "ci_high": float(xi + ci),
                        "pi_low": float(xi - pi_half), "pi_high": float(xi + pi_half)})
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["model"] = "X(p) = gamma*p / (1 + sigma*(p-1) + kappa*p*(p-1))"
        return d


def aggregate(p: Sequence[float], y: Sequence[float]) -> list[Point]:
    """Mean ± standard error per distinct p (seed Table 2)."""
    groups: dict[float, list[float]] = {}
    for pi, yi in zip(p, y, strict=True):
        groups.setdefault(float(pi), []).append(float(yi))
    points = []
    for pi in sorted(groups):
        ys = np.asarray(groups[pi])
        mean = float(ys.mean())
        se = float(ys.std(ddof=1) / math.sqrt(len(ys))) if len(ys) > 1 else None
        points.append(Point(pi, mean, se, len(ys), (se / mean) if se is not None and mean else None))
    return points


#: The largest p and y a fit takes.
MAX_USL_VALUE = 1e100


def validate(p: Sequence[float], y: Sequence[float]) -> None:
    if len(p) != len(y):
        raise USLError("x and y have different lengths")
    bad = [(a, b) for a, b in zip(p, y, strict=True) if not (math.isfinite(a) and math.isfinite(b))]
    if bad:
        raise USLError(f"non-numeric or infinite values, e.g. p={bad[0][0]}, y={bad[0][1]}")
    if any(v <= 0 for v in p):
        raise USLError("p (nodes, load, workers) must be positive")
    if any(v <= 0 for v in y):
        raise USLError("throughput / speedup values must be positive")
    # The model squares p and the fit and its plot scale y: keep both far from the float range.
    if max(p) > MAX_USL_VALUE or max(y) > MAX_USL_VALUE:
        raise USLError(f"p and y must be at most {MAX_USL_VALUE:g} (rescale the units), "
                       f"got p up to {max(p):g} and y up to {max(y):g}")
    if len(set(p)) < 3:
        raise USLError(f"need measurements at 3 or more distinct p to determine σ, κ and γ; got {len(set(p))}")
    if len(set(y)) == 1:
        raise USLError("all y values are equal: the data cannot determine the model")


def fit(p: Sequence[float], y: Sequence[float], yerr: Sequence[float] | None = None,
        fixed_gamma: float | None = None) -> USLFit:
    """Fits the USL to raw measurements (repeats at the same p are averaged), or to means with
    their standard errors ``yerr`` (one row per p). ``fixed_gamma`` pins γ (e.g. 1 for speedups
    normalised to S(1) = 1, the seed's Eq. 2), leaving σ and κ to the fit. Overflow on the way
    (values near the float range) is not printed: a fit it spoils fails with one error."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _fit(p, y, yerr, fixed_gamma)


def _fit(p: Sequence[float], y: Sequence[float], yerr: Sequence[float] | None,
         fixed_gamma: float | None) -> USLFit:
    validate(p, y)
    if yerr is not None:
        if len(yerr) != len(y) or len(set(p)) != len(p):
            raise USLError("standard errors need exactly one row per distinct p")
        if any(not math.isfinite(e) or e < 0 for e in yerr):
            raise USLError("standard errors must be non-negative numbers")
        points = sorted((Point(float(a), float(b), float(e), 1, float(e) / float(b)) for a, b, e in
                         zip(p, y, yerr, strict=True)), key=lambda pt: pt.p)
    else:
        points = aggregate(p, y)
    if fixed_gamma is not None and not (math.isfinite(fixed_gamma) and fixed_gamma > 0):
        raise USLError(f"a fixed gamma must be positive, got {fixed_gamma}")
    xs = np.array([pt.p for pt in points])
    ys = np.array([pt.mean for pt in points])
    ses = [pt.stderr for pt in points]
    weighted = all(se is not None and se > 0 for se in ses)
    w = 1.0 / np.array(ses, dtype=float) if weighted else np.ones_like(ys)

    # γ starts from the smallest-p measurement; σ from both sides of zero, κ across magnitudes.
    gamma0 = float(ys[0] / xs[0])
    lower = [-1.0, 0.0, 1e-12]
    upper = [1.0, np.inf, np.inf]

    free = 2 if fixed_gamma is not None else 3
    if fixed_gamma is not None:
        lower, upper = lower[:2], upper[:2]

    def full(theta: Array) -> Array:
        return np.append(theta, fixed_gamma) if fixed_gamma is not None else theta

    def residuals(theta: Array) -> Array:
        s, k, _ = full(theta)
        denominator = 1.0 + s * (xs - 1.0) + k * xs * (xs - 1.0)
        if np.any(denominator <= 1e-9):
            # Outside the model's domain (throughput would be infinite or negative): a large,
            # finite penalty steers the optimiser back without breaking it.
            return np.asarray((np.abs(ys) + 1.0) * w * 1e3, dtype=float)
        return np.asarray((np.asarray(usl(xs, *full(theta)), dtype=float) - ys) * w, dtype=float)

    best = None
    for s0 in (-0.1, -0.01, 0.0, 0.05, 0.3):
        for k0 in (0.0, 1e-4, 1e-2):
            start = np.array([s0, k0, gamma0][:free])
            start = np.clip(start, np.array(lower) + 1e-12, np.array(upper) - 1e-12)
            try:
                res = optimize.least_squares(residuals, start, bounds=(lower, upper), method="trf",
                                             x_scale="jac", max_nfev=5000)
            except (ValueError, FloatingPointError):
                continue
            if best is None or res.cost < best.cost:
                best = res
    if best is None or not np.all(np.isfinite(best.x)):
        raise USLError("the fit did not converge")

    theta = full(best.x)
    n = len(xs)
    dof = n - free
    rss = float(2.0 * best.cost)
    rse = math.sqrt(rss / dof) if dof > 0 else None
    cov = None
    if dof > 0:
        jac = best.jac
        try:
            cov_m = np.linalg.inv(jac.T @ jac) * (rss / dof)
            if fixed_gamma is not None:  # γ is known exactly: zero variance, no covariance
                cov_m = np.pad(cov_m, ((0, 1), (0, 1)))
            cov = cov_m.tolist()
        except np.linalg.LinAlgError:
            cov = None
    estimates = []
    tq = float(stats.t.ppf(0.975, dof)) if dof > 0 else None
    for i in range(3):
        value = float(theta[i])
        if fixed_gamma is not None and i == 2:
            estimates.append(Estimate(value, None, None, None, None))
        elif cov is not None and cov[i][i] >= 0 and tq is not None:
            se = math.sqrt(cov[i][i])
            t = value / se if se > 0 else None
            pv = float(2.0 * stats.t.sf(abs(t), dof)) if t is not None else None
            estimates.append(Estimate(value, se, t, pv, (value - tq * se, value + tq * se)))
        else:
            estimates.append(Estimate(value, None, None, None, None))
    sigma, kappa, gamma = estimates
    efficiency = [float(pt.mean / (gamma.value * pt.p)) for pt in points]
    result = USLFit(sigma, kappa, gamma, points, weighted, dof, rse, efficiency, cov)
    result.derived = derived_figures(sigma.value, kappa.value, gamma.value, max(pt.p for pt in points))
    return result


#: A coefficient whose whole effect on the USL's denominator at the largest measured p is below
#: this is rounding, not a measurement: exactly linear data fits σ ≈ ±1e-18, and its sign then
#: read as superlinear, payback or retrograde with a peak at p ≈ 10⁹.
NEGLIGIBLE = 1e-9


def derived_figures(sigma: float, kappa: float, gamma: float, p_max: float | None = None) -> dict[str, Any]:
    """Ceiling, peak and crossover, with a sentence saying what they mean. With ``p_max`` (the
    largest measured p), σ and κ too small to move the curve there (:data:`NEGLIGIBLE`) count as 0."""
    if p_max is not None and p_max > 1:
        if abs(sigma) * (p_max - 1) < NEGLIGIBLE:
            sigma = 0.0
        if abs(kappa) * p_max * (p_max - 1) < NEGLIGIBLE:
            kappa = 0.0
    # Above linear (X(p) > γ·p) exactly where σ + κ·p < 0: for some p > 1 only if |σ| > κ.
    superlinear = sigma < 0 and (kappa <= 0 or -sigma > kappa)
    d: dict[str, Any] = {"superlinear": superlinear}
    if sigma > 0:
        d["amdahl_ceiling"] = gamma / sigma
    falls = False
    if kappa > 0:
        p_star = math.sqrt(max(1.0 - sigma, 0.0) / kappa)
        if p_star > 1.0:
            d["peak_p"] = p_star
            d["peak_x"] = float(usl(p_star, sigma, kappa, gamma))
        else:
            # The model's maximum lies below p = 1, where there is no node count: from p = 1 on,
            # X only falls, and X(p*) there (huge as p* → 0) is no throughput the data show.
            falls = True
            d["peak_p"] = 1.0
            d["peak_x"] = float(usl(1.0, sigma, kappa, gamma))
            d["falls_from_p1"] = True
    peak = ("throughput falls from p = 1 on (no peak at p > 1; X(1) = "
            f"{d['peak_x']:.4g})" if falls else
            f"retrograde past the peak {d['peak_x']:.4g} at p ≈ {d['peak_p']:.1f}" if kappa > 0 else "")
    if superlinear and kappa > 0:
        d["crossover_p"] = math.ceil(abs(sigma) / kappa)
        d["summary"] = (f"superlinear up to p ≈ {d['crossover_p']}, then payback (sublinear); "
                        f"peak {d['peak_x']:.4g} at p ≈ {d['peak_p']:.1f}")
    elif superlinear:
        d["summary"] = "superlinear with no coherency penalty measured (κ = 0): no crossover predicted from this data"
    elif sigma < 0:
        # σ < 0 with κ ≥ |σ|: the capacity boost never lifts the curve above linear at p > 1.
        d["summary"] = f"sublinear (σ < 0, but κ ≥ |σ|: never above linear at p > 1); {peak}"
    elif kappa > 0:
        d["summary"] = f"sublinear; {peak}"
    elif sigma > 0:
        d["summary"] = f"sublinear (Amdahl-like), ceiling {d['amdahl_ceiling']:.4g}"
    else:
        d["summary"] = "linear"
    return d
