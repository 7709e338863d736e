"""Typed front of the Rust engine: one run of algorithm × dispatcher × workload × k."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from superlinear import _native
from superlinear._native import SuperlinearError
from superlinear.common.bounds import MAX_WORKERS, check_memory
from superlinear.common.defaults import config_defaults
from superlinear.common.interrupt import interruptible

if TYPE_CHECKING:
    from superlinear._native import RunRecord

__all__ = ["RunResult", "RunSpec", "SuperlinearError", "Workload", "algorithms", "dispatchers", "run"]


#: The engine's run config defaults (crates/core), the one source of the fields' defaults below.
_RUN = config_defaults("run")
_WORKLOAD = _RUN["workload"]


#: The sweep file's key (the run config's field) for each worker parameter.
WORKER_PARAMETER_KEYS = {"w": "compare_cycles", "rho": "miss_cycles"}
#: Worker parameters (by ``run``'s option dest): what they cost, and the workers whose
#: constructors read them (their registry entries' ``reads``, crates/core/src/workers/mod.rs):
#: given to any other worker, one is refused. tests/test_option_scope.py checks the registry
#: against the engine's workers.
WORKER_PARAMETERS: dict[str, tuple[str, frozenset[str]]] = {
    dest: (what, frozenset(a["name"] for a in _native.algorithms() if WORKER_PARAMETER_KEYS[dest] in a["reads"]))
    for dest, what in (("w", "per tree comparison"), ("rho", "per cache miss"))
}
#: Most cycles a worker parameter may charge (about 3 ms at 3 GHz per comparison or miss): a
#: documented maximum, since a larger one only makes a run take hours, or years.
MAX_WORKER_CYCLES = 10_000_000


@dataclass(frozen=True)
class Workload:
    """Where requests come from: ``uniform`` or ``zipf`` over m items, or a key ``trace`` file."""

    kind: str = _WORKLOAD["kind"]
    m: int = _WORKLOAD["m"]
    alpha: float = _WORKLOAD["alpha"]
    path: str | None = _WORKLOAD["path"]

    def label(self) -> str:
        if self.kind == "zipf":
            return f"zipf{self.alpha}"
        return self.kind


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs. ``modes`` picks projected / measured / single_core runs."""

    algo: str
    dispatch: str
    k: int
    workload: Workload = field(default_factory=Workload)
    requests: int = _RUN["requests"]
    warmup: int = _RUN["warmup"]
    exclude_warmup: bool = _RUN["exclude_warmup"]
    seed: int = _RUN["seed"]
    sharded: bool = _RUN["sharded"]
    compare_cycles: int = _RUN["compare_cycles"]
    miss_cycles: int = _RUN["miss_cycles"]
    capacity: int | None = _RUN["capacity"]
    modes: tuple[str, ...] = tuple(_RUN["modes"])
    parallel: int = _RUN["parallel"]
    repeats: int = _RUN["repeats"]
    #: Projected passes and measured threaded runs are added until they span this many
    #: milliseconds, keeping the least time (0: ``repeats`` passes and one threaded run).
    min_timed_ms: int = _RUN["min_timed_ms"]

    def to_native(self) -> dict[str, Any]:
        d = asdict(self)
        d["modes"] = list(self.modes)
        return d


#: One run's records: the engine's :class:`~superlinear._native.RunRecord`, as Rust returns it.
RunResult: TypeAlias = "RunRecord"


#: Bytes a run holds per request: the drawn keys, each worker's copy of its stream (projected
#: mode) and the batches in flight, with room to spare.
BYTES_PER_REQUEST = 24
#: Bytes a worker holds per item of the workload (a splay tree's node: about 40 on this build).
BYTES_PER_ITEM = 48
#: Bytes a cache worker reserves per slot of its capacity (the map at twice the capacity and
#: the recency list: about 73).
BYTES_PER_CACHE_SLOT = 80


def _capacity(algo: str, capacity: int | None) -> int:
    _, _, cap = algo.partition(":")
    return int(cap) if cap.strip().isdigit() else (capacity or 0)


def check_run_size(spec: RunSpec, what: str, k_flag: str = "--k") -> None:
    """Refuses a run the engine cannot index or whose requests, items and cache slots do not fit
    in this machine's memory, before anything starts (``what`` names the flags or the file that
    set them, ``k_flag`` the one that set k). Workers hold their structures while they run, at
    most one per core at a time."""
    if spec.k > MAX_WORKERS:
        raise SuperlinearError(f"{k_flag} {spec.k:,}: at most {MAX_WORKERS:,} workers")
    held = min(spec.k, os.cpu_count() or 1)
    items = spec.workload.m if spec.workload.kind != "trace" else 0
    needed = (BYTES_PER_REQUEST * (spec.requests + spec.warmup) + BYTES_PER_ITEM * items * (1 + held)
              + BYTES_PER_CACHE_SLOT * _capacity(spec.algo, spec.capacity) * held)
    check_memory(what, needed)


def run(spec: RunSpec) -> RunRecord:
    """Runs one configured point in the Rust engine (the GIL is released meanwhile; Ctrl-C stops
    it within a second)."""
    native = spec.to_native()
    return interruptible(lambda: _native.run(native))


def algorithms() -> list[dict[str, Any]]:
    """The worker registry."""
    return _native.algorithms()


def dispatchers() -> list[dict[str, Any]]:
    """The dispatcher registry."""
    return _native.dispatchers()
