"""Latency-aware caching with delayed hits (thesis ch. 2): the typed Python API over the
``superlinear-cache`` crate.

When a miss takes Z request-times to fill, requests for the same object that arrive meanwhile
are delayed hits. :func:`simulate` runs one eviction policy in the delayed-hits model and, next
to its true mean latency, the AMAT estimate of Eq. 2.1 that a classical (zero-delay) simulation
of the same policy predicts. :func:`belatedly` builds the offline latency-optimal flow LP
(§2.4), solves it with HiGHS (``scipy.optimize.linprog``), and rounds it to a schedule the
simulator replays. Latencies are in request-times and of kind *simulated*; solver and simulator
times are *measured* (wall clock or thread CPU time on this machine).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from superlinear import _native
from superlinear.common.args import comma_list
from superlinear.common.bounds import check_at_most
from superlinear.common.defaults import config_defaults
from superlinear.common.errors import SuperlinearError
from superlinear.common.interrupt import interruptible
from superlinear.common.rows import Row

if TYPE_CHECKING:
    from superlinear._native import LatencyRoundedRecord

#: The trace generator's defaults (crates/cache), asked of Rust.
_TRACE = config_defaults("latency_trace")
SIMULATED = "simulated"
MEASURED = "measured"


@dataclass(frozen=True)
class TraceSpec:
    """A synthetic trace of bursty and paced objects (see ``superlinear_cache::generate``)."""

    requests: int = _TRACE["requests"]
    objects: int = _TRACE["objects"]
    bursty_fraction: float = _TRACE["bursty_fraction"]
    burst_length: float = _TRACE["burst_length"]
    burst_gap: float = _TRACE["burst_gap"]
    alpha: float = _TRACE["alpha"]
    jitter: float = _TRACE["jitter"]
    seed: int = _TRACE["seed"]


class Trace:
    """A request trace: one request per time step, objects numbered densely."""

    def __init__(self, native: Any, source: str, bursty: list[bool] | None = None) -> None:
        self.native = native
        self.source = source
        self.bursty = bursty

    @classmethod
    def read(cls, path: str | Path) -> Trace:
        """Text (``OBJECT [TIMESTAMP [LATENCY]]``) or binary (``SLKT``) trace; the native reader
        names a missing file, a folder, a device and a file too large for memory."""
        return cls(_native.LatencyTrace.read(str(path)), str(path))

    @classmethod
    def generate(cls, spec: TraceSpec) -> Trace:
        native, bursty = interruptible(lambda: _native.LatencyTrace.generate(asdict(spec)))
        return cls(native, "generated", bursty)

    @classmethod
    def from_objects(cls, objects: Sequence[int]) -> Trace:
        """A trace from object keys (any non-negative integers), in request order."""
        return cls(_native.LatencyTrace.from_keys(list(objects)), "list")

    def __len__(self) -> int:
        return len(self.native)

    @property
    def objects(self) -> int:
        return int(self.native.objects)

    @property
    def requested_objects(self) -> int:
        """Objects the requests name at least once (a short generated trace names only some)."""
        return int(self.native.requested_objects)

    @property
    def mean_interval(self) -> float | None:
        """Mean inter-request time in the trace's timestamp unit (R of footnote 1), if known."""
        value: float | None = self.native.mean_interval
        return value

    @property
    def has_latencies(self) -> bool:
        return bool(self.native.has_latencies)

    def requests(self) -> list[int]:
        return list(self.native.requests())

    def miss_latencies(self, z: int | None) -> list[int]:
        """Z of every object: ``z`` for all, or (``None``) from the latency column."""
        return list(self.native.miss_latencies(z))

    def z_from_latency(self, latency: float) -> int:
        """Z = L / R (footnote 1) for a latency in the trace's timestamp unit, in whole
        request-times (:func:`whole_z`); a latency under half of one is refused (it was raised to
        Z = 1 unsaid)."""
        r = self.mean_interval
        if r is None or r <= 0:
            raise SuperlinearError("a latency in time units needs a trace with advancing timestamps")
        if latency / r < 0.5:
            raise SuperlinearError(f"Z = {latency / r:.3g} request-times (mean interval {r:g}); the shortest miss "
                                   f"is Z = 1, a latency of {r:g}")
        return whole_z(latency / r)

    def check_latency_column(self) -> None:
        """The latency column, as ``--z trace`` takes it: each object's Z is its mean latency over
        the mean interval R, rounded to whole request-times, halves up, as ``--latency`` is
        (:func:`whole_z`); the core refuses one that rounds to 0, naming the object's first line
        (it raised it to 1 unsaid), as ``--latency`` and ``--z 0`` are refused."""
        self.native.miss_latencies(None)

    def write(self, path: str | Path, binary: bool = False, latencies: list[int] | None = None) -> None:
        self.native.write(str(path), binary, latencies)


def whole_z(z: float) -> int:
    """A miss latency in request-times rounded to whole ones, halves up: as the engine rounds a
    trace's latency column (Rust's ``f64::round``; Python's ``round`` takes halves to even)."""
    whole = math.floor(z)
    return int(whole) + (1 if z - whole >= 0.5 else 0)


#: The largest miss latency the simulator takes, in request-times (a u64 clock must add it to any
#: request's time without overflowing; a Z beyond the trace's length already makes every fill late).
MAX_Z = 2**62


def check_z(z: int | None) -> None:
    """A Z to simulate: ``z``, or ``None`` for the trace's latency column (the core checks it
    where it reads it, ``Trace.check_latency_column``)."""
    if z is not None and z < 1:
        raise SuperlinearError(f"Z must be at least 1 request-time, got {z}")
    if z is not None and z > MAX_Z:
        raise SuperlinearError(f"Z = {z:,} request-times: at most {MAX_Z:,}")


def check_rounds(rounds: int) -> None:
    """Belatedly's random roundings, at most :data:`MAX_ROUNDS`."""
    check_at_most("--rounds", rounds, MAX_ROUNDS, "each rounding replays the whole trace")


def check_capacity(capacity: int) -> None:
    if capacity < 1:
        raise SuperlinearError(f"cache size must be at least 1 object, got {capacity}")


@dataclass(frozen=True)
class SimResult:
    """One policy at one Z and cache size. Latencies in request-times (kind: simulated)."""

    policy: str
    z: int | None
    capacity: int
    requests: int
    hits: int
    delayed_hits: int
    misses: int
    latency: int
    mean_z: float
    amat_latency: float | None
    kind: str = SIMULATED

    @property
    def mean_latency(self) -> float:
        return self.latency / self.requests

    @property
    def hit_rate(self) -> float:
        return self.hits / self.requests

    @property
    def delayed_hit_rate(self) -> float:
        return self.delayed_hits / self.requests

    @property
    def miss_rate(self) -> float:
        return self.misses / self.requests

    def row(self) -> dict[str, Any]:
        """A result row (DESIGN.md schema: flat, with the kind)."""
        amat = self.amat_latency
        return {
            "policy": self.policy, "z": self.z if self.z is not None else "trace", "mean_z": self.mean_z,
            "capacity": self.capacity, "requests": self.requests, "kind": self.kind,
            "mean_latency": self.mean_latency, "normalized_latency": self.mean_latency / self.mean_z,
            "hit_rate": self.hit_rate, "delayed_hit_rate": self.delayed_hit_rate, "miss_rate": self.miss_rate,
            "hits": self.hits, "delayed_hits": self.delayed_hits, "misses": self.misses,
            "total_latency": self.latency, "amat_latency": amat,
            "amat_error": None if amat is None else (amat - self.mean_latency) / self.mean_latency
            if self.mean_latency else None,
        }


def policies() -> list[dict[str, Any]]:
    """The eviction policies: name, offline, latency_aware, summary."""
    return list(_native.latency_policies())


def policy_names() -> list[str]:
    return [p["name"] for p in policies()]


def check_policies(names: Sequence[str]) -> None:
    known = policy_names()
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise SuperlinearError(f"unknown policy {', '.join(bad) or '(none given)'} (known: {', '.join(known)})")


def simulate(trace: Trace, policy: str, z: int | None, capacity: int, amat: bool = True) -> SimResult:
    """Runs ``policy`` in the delayed-hits model; with ``amat`` also the classical model of the
    same policy, whose miss rate gives the AMAT estimate (Eq. 2.1, hit latency 0)."""
    check_z(z)
    check_capacity(capacity)
    r = interruptible(lambda: _native.latency_simulate(trace.native, policy, z, capacity, False))
    estimate = None
    if amat:
        c = interruptible(lambda: _native.latency_simulate(trace.native, policy, z, capacity, True))
        estimate = c["latency"] / c["requests"]
    return SimResult(policy=policy, z=z, capacity=capacity, requests=r["requests"], hits=r["hits"],
                     delayed_hits=r["delayed_hits"], misses=r["misses"], latency=r["latency"],
                     mean_z=r["mean_z"], amat_latency=estimate)


def grid(trace: Trace, names: Sequence[str], zs: Sequence[int | None], capacities: Sequence[int],
         on_point: Callable[[SimResult], None] | None = None) -> list[SimResult]:
    """Every policy × Z × cache size."""
    check_policies(names)
    out = []
    for capacity in capacities:
        for z in zs:
            for name in names:
                res = simulate(trace, name, z, capacity)
                out.append(res)
                if on_point:
                    on_point(res)
    return out


#: Largest cache the simulators hold (their object ids are 32-bit).
MAX_CACHE_OBJECTS = 2**32 - 2


def parse_sizes(text: str | None, objects: int, default: str, option: str = "--cache-size") -> list[int]:
    """Cache sizes: objects (``200``) or percentages of the trace's objects (``5%``); ``text`` None
    takes ``default``, and an error then says it was the default, not something the user typed."""
    given = text is not None
    source = text if text is not None else default

    def bad(problem: str) -> SuperlinearError:
        if given:
            return SuperlinearError(f"{option}: {problem}")
        return SuperlinearError(f"{option} defaults to {default}, but {problem}; give {option} N (objects)")

    sizes = []
    for part in comma_list(option, source, empty=str(bad("give at least one cache size"))):
        try:
            value = float(part[:-1]) * objects / 100 if part.endswith("%") else float(part)
        except ValueError:
            raise bad(f"'{part}' is not a number or a percentage") from None
        if not math.isfinite(value):
            raise bad(f"'{part}' is not a finite number (give objects, e.g. 200, or a percentage, e.g. 5%)")
        if value < 1 or (not part.endswith("%") and value != int(value)):
            of = f" of {objects:,} objects" if part.endswith("%") else ""
            raise bad(f"'{part}'{of} gives no whole cache of at least 1 object")
        if value > MAX_CACHE_OBJECTS:
            raise bad(f"'{part}': at most {MAX_CACHE_OBJECTS:,} objects")
        sizes.append(max(1, round(value)))
    return sizes


@dataclass(frozen=True)
class BelatedlyResult:
    """Belatedly at one Z and cache size: the LP lower bound and the best rounded schedule
    (latencies simulated, in request-times); sizes; build and solve times (measured, wall)."""

    z: int | None
    capacity: int
    requests: int
    lower_bound: float
    rounded_latency: int
    rounding: str
    roundings: list[LatencyRoundedRecord]
    variables: int
    rows: int
    nonzeros: int
    intervals: int
    build_s: float
    solve_s: float
    solver: str
    mean_z: float
    integral: bool = field(default=False)

    @property
    def lower_bound_mean(self) -> float:
        return self.lower_bound / self.requests

    @property
    def rounded_mean(self) -> float:
        return self.rounded_latency / self.requests

    @property
    def gap(self) -> float:
        """(rounded - bound) / bound."""
        return (self.rounded_latency - self.lower_bound) / self.lower_bound if self.lower_bound else 0.0

    def rows_out(self) -> list[Row]:
        """Two result rows: the LP bound and the rounded schedule."""
        common = {"z": self.z if self.z is not None else "trace", "mean_z": self.mean_z, "capacity": self.capacity,
                  "requests": self.requests, "kind": SIMULATED, "lp_variables": self.variables,
                  "lp_rows": self.rows, "lp_nonzeros": self.nonzeros, "caching_intervals": self.intervals,
                  "build_s_measured": self.build_s, "solve_s_measured": self.solve_s, "solver": self.solver}
        return [
            {**common, "policy": "belatedly-lp", "mean_latency": self.lower_bound_mean,
             "normalized_latency": self.lower_bound_mean / self.mean_z, "note": "LP lower bound"},
            {**common, "policy": "belatedly", "mean_latency": self.rounded_mean,
             "normalized_latency": self.rounded_mean / self.mean_z, "rounding": self.rounding,
             "gap_to_bound": self.gap, "note": "flow-balance rounded schedule, replayed by the simulator"},
        ]


#: The most random roundings of Belatedly's LP (each replays the whole trace; the paper uses a few).
MAX_ROUNDS = 10_000


def belatedly(trace: Trace, z: int | None, capacity: int, rounds: int = 4, seed: int = 1,
              time_limit: float | None = None) -> BelatedlyResult:
    """Builds Belatedly's flow LP (Rust), solves it with HiGHS's interior-point method through
    SciPy, and rounds it (threshold + ``rounds`` random roundings, best kept)."""
    import numpy as np
    import scipy.sparse as sp
    from scipy.optimize import linprog

    check_z(z)
    check_capacity(capacity)
    check_rounds(rounds)
    t0 = time.perf_counter()
    lp = interruptible(lambda: _native.LatencyLp(trace.native, z, capacity))
    a = lp.arrays()
    size = lp.size()
    matrix = sp.csr_matrix((np.asarray(a["values"]), np.asarray(a["indices"]), np.asarray(a["indptr"])),
                           shape=(len(a["rhs"]), len(a["cost"])))
    t1 = time.perf_counter()
    options: dict[str, Any] = {}
    if time_limit is not None:
        options["time_limit"] = time_limit
    if a["cost"]:
        cost, rhs, bounds = np.asarray(a["cost"]), np.asarray(a["rhs"]), np.column_stack([a["lower"], a["upper"]])
        res = interruptible(lambda: linprog(cost, A_eq=matrix, b_eq=rhs, bounds=bounds, method="highs-ipm",
                                            options=options))
        if res.status != 0 or res.x is None:
            raise SuperlinearError(f"HiGHS did not solve Belatedly's LP: {res.message}")
        x, objective = [float(v) for v in res.x], float(res.fun)
    else:
        x, objective = [], 0.0  # no caching decision: every object is fetched once
    t2 = time.perf_counter()
    bound = objective + a["constant"]
    roundings = list(interruptible(lambda: lp.round(x, rounds, seed)))
    best = min(roundings, key=lambda r: r["latency"])
    intervals = 2 * size["intervals"]
    integral = all(v < 1e-6 or v > 1 - 1e-6 for v in x[:intervals])
    if z is None:
        zs = trace.miss_latencies(None)
        mean_z = sum(zs[o] for o in trace.requests()) / len(trace)
    else:
        mean_z = float(z)
    return BelatedlyResult(z=z, capacity=capacity, requests=len(trace), lower_bound=bound,
                           rounded_latency=int(best["latency"]), rounding=str(best["rounding"]),
                           roundings=roundings, variables=size["variables"], rows=size["rows"],
                           nonzeros=size["nonzeros"], intervals=size["intervals"], build_s=t1 - t0, solve_s=t2 - t1,
                           solver="HiGHS interior point (scipy.optimize.linprog, method='highs-ipm')",
                           mean_z=mean_z, integral=integral)


def optimal(trace: Trace, z: int | None, capacity: int, any_time: bool = False) -> int:
    """Exhaustive optimum of a tiny instance (total latency): evictions only at fills (the
    simulator's model) or, with ``any_time``, at any step (the thesis' model)."""
    check_z(z)
    check_capacity(capacity)
    return int(interruptible(lambda: _native.latency_optimal(trace.native, z, capacity, any_time)))


@dataclass(frozen=True)
class Speed:
    """Simulator speed of one policy (kind: measured, thread CPU time)."""

    policy: str
    requests: int
    cpu_s: float
    requests_per_s: float
    mean_latency: float
    kind: str = MEASURED


def speed(trace: Trace, policy: str, z: int | None, capacity: int) -> Speed:
    check_z(z)
    check_capacity(capacity)
    r = interruptible(lambda: _native.latency_bench(trace.native, policy, z, capacity))
    return Speed(policy=policy, requests=r["requests"], cpu_s=r["cpu_ns"] / 1e9,
                 requests_per_s=r["requests_per_s"], mean_latency=r["latency"] / r["requests"])


__all__ = [
    "MEASURED", "SIMULATED", "BelatedlyResult", "SimResult", "Speed", "Trace", "TraceSpec", "belatedly",
    "grid", "optimal", "parse_sizes", "policies", "policy_names", "simulate", "speed",
]
