"""Typed front of the Rust engine: one run of algorithm × dispatcher × workload × k."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from superlinear import _native
from superlinear._native import SuperlinearError

__all__ = ["Accounting", "RunResult", "RunSpec", "SuperlinearError", "algorithms", "dispatchers", "run"]


@dataclass(frozen=True)
class Workload:
    """Where requests come from: ``uniform`` or ``zipf`` over m items, or a key ``trace`` file."""

    kind: str = "uniform"
    m: int = 100_000
    alpha: float = 1.01
    path: str | None = None

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
    requests: int = 100_000
    warmup: int = 0
    exclude_warmup: bool = False
    seed: int = 1
    sharded: bool = False
    compare_cycles: int = 0
    miss_cycles: int = 0
    capacity: int | None = None
    modes: tuple[str, ...] = ("projected",)
    parallel: int = 0
    repeats: int = 1

    def to_native(self) -> dict[str, Any]:
        d = asdict(self)
        d["modes"] = list(self.modes)
        return d


@dataclass(frozen=True)
class Accounting:
    """What one run cost; see DESIGN.md's honesty contract for the meaning of each time."""

    k: int
    requests: int
    wall_ns: int | None
    dispatcher_cpu_ns: int
    worker_cpu_ns: list[int]
    worker_work: list[int]
    worker_requests: list[int]
    projected_ns: int
    work_span: int
    work_total: int
    hit_rate: float | None
    load_imbalance: float


@dataclass(frozen=True)
class RunResult:
    items: int
    cores: int
    projected: Accounting | None
    measured: Accounting | None
    single_core: Accounting | None


def run(spec: RunSpec) -> RunResult:
    """Runs one configured point in the Rust engine (the GIL is released meanwhile)."""
    raw = _native.run(spec.to_native())

    def acc(key: str) -> Accounting | None:
        v = raw.get(key)
        return Accounting(**v) if v is not None else None

    return RunResult(
        items=raw["items"],
        cores=raw["cores"],
        projected=acc("projected"),
        measured=acc("measured"),
        single_core=acc("single_core"),
    )


def algorithms() -> list[dict[str, Any]]:
    """The worker registry."""
    return _native.algorithms()


def dispatchers() -> list[dict[str, Any]]:
    """The dispatcher registry."""
    return _native.dispatchers()
