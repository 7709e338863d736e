"""Typed front of the packet classifier (crate ``superlinear-classify``): packet workloads as
data, loaded once and cached, and one run of classifier × dispatcher × k returning the engine's
:class:`~superlinear._native.RunRecord`, so the shared experiment driver runs packet panels
exactly like key panels (paper §4, Figs. 8–9)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from superlinear import _native
from superlinear.common.bounds import check_memory
from superlinear.common.defaults import config_defaults
from superlinear.common.interrupt import interruptible
from superlinear.engine.runs import SuperlinearError

if TYPE_CHECKING:
    from superlinear._native import RunRecord

__all__ = ["CLASSBENCH_SETS", "DEFAULT_PACKETS", "PacketWorkloadSpec", "load", "run_point"]

#: The classifier's load and synthetic-generator defaults (crates/classify), asked of Rust.
_LOAD = config_defaults("classify_load")
_SYNTHETIC = config_defaults("classify_synthetic")
#: Packets of a workload whose ``packets`` is 0 (the loader's generated-trace length).
DEFAULT_PACKETS: int = _LOAD["generate"]

#: The synthetic generator's bounds (crates/classify, generate.rs), checked where the flags are
#: parsed so that the error names the flag: each base rule matches one destination port
#: (1..=65535), and each of its flows is a source port from 1024 up.
MAX_SYNTHETIC_RULES = 65_535
MAX_FLOWS_PER_RULE = 65_535 - 1_024
#: The deepest dependency chain the generator makes.
MAX_DEPTH = 32

#: ClassBench files of the shared data folder (``--data DIR``), by set name.
CLASSBENCH_SETS = ("acl1", "ipc1", "fw1")


@dataclass(frozen=True)
class PacketWorkloadSpec:
    """Where packets and rules come from.

    ``kind`` is ``files`` (``rules`` and, optionally, ``trace`` paths; without a trace,
    ``packets`` headers are generated inside the rules) or ``synthetic`` (the paper's
    generators: ``synthetic_rules`` base rules, dependency ``depth``, ``flows_per_rule``,
    ``catch_all`` traffic share). ``packets`` > 0 replays a trace file until it holds that many
    packets (a traffic generator looping a capture), or sets the generated trace's length.
    ``calibration`` packets from the start of the trace (before replay) calibrate the
    rule-aware dispatcher. ``actions`` assigns actions to ClassBench filters. ``warmup`` > 0
    puts that many more packets in front (the replay or the generated trace runs on), which
    every run serves first and leaves out of its figures: the steady state.
    """

    kind: str = "synthetic"
    name: str = ""
    rules: str | None = None
    trace: str | None = None
    actions: str = _LOAD["actions"]
    synthetic_rules: int = _SYNTHETIC["rules"]
    depth: int = _SYNTHETIC["depth"]
    flows_per_rule: int = _SYNTHETIC["flows_per_rule"]
    catch_all: float = _SYNTHETIC["catch_all"]
    packets: int = 0
    calibration: int = 100_000
    seed: int = _LOAD["seed"]
    warmup: int = 0

    def label(self) -> str:
        if self.name:
            return self.name
        if self.kind == "files":
            return Path(self.rules or "rules").name
        tail = f", d={self.depth}" if self.depth else ""
        tail += f", {self.flows_per_rule} flows/rule" if self.flows_per_rule != 1 else ""
        tail += f", catch-all {self.catch_all:g}" if self.catch_all else ""
        return f"synthetic {self.synthetic_rules} rules{tail}"


#: Bytes a loaded workload holds per packet of its trace: the header, its matching rule and the
#: worker streams' copies (projected mode), with room to spare.
BYTES_PER_PACKET = 48



def check_packet_count(packets: int, warmup: int = 0, flag: str = "--packets") -> None:
    """Refuses a trace of ``packets`` + ``warmup`` packets that would not fit in memory."""
    check_memory(f"{flag} {packets:,}" + (f" with --warmup {warmup:,}" if warmup else ""),
                 BYTES_PER_PACKET * (packets + warmup))


_CACHE: dict[PacketWorkloadSpec, _native.PacketWorkload] = {}


def load(spec: PacketWorkloadSpec) -> _native.PacketWorkload:
    """The workload of ``spec``, built once per process (rules, dependency graph, trace)."""
    if spec in _CACHE:
        return _CACHE[spec]
    total = (spec.packets or DEFAULT_PACKETS) + spec.warmup
    check_packet_count(spec.packets or DEFAULT_PACKETS, spec.warmup)
    if spec.kind == "files":
        if not spec.rules:
            raise SuperlinearError("a packet workload from files needs a rules file")
        cfg: dict[str, Any] = {"actions": spec.actions, "generate": total, "seed": spec.seed}
        w = _native.PacketWorkload.load(spec.rules, spec.trace, cfg)
        if spec.trace and (spec.packets or spec.warmup):
            w.replay(total)
    elif spec.kind == "synthetic":
        syn = {"rules": spec.synthetic_rules, "depth": spec.depth, "flows_per_rule": spec.flows_per_rule,
               "catch_all": spec.catch_all}
        w = _native.PacketWorkload.synthetic(syn, total, spec.seed)
    else:
        raise SuperlinearError(f"unknown packet workload kind '{spec.kind}' (known: files, synthetic)")
    w.calibrate(spec.calibration)
    if len(_CACHE) > 4:
        _CACHE.clear()
    _CACHE[spec] = w
    return w


def run_point(spec: PacketWorkloadSpec, algo: str, dispatch: str, k: int, modes: tuple[str, ...],
              repeats: int = 1, seed: int = 1, min_timed_ms: int = 0) -> RunRecord:
    """One run of ``algo`` behind ``dispatch`` with k workers on the workload of ``spec``
    (its warm-up served first and left out); projected passes span at least ``min_timed_ms``."""
    w = load(spec)
    config = {"algo": algo, "dispatch": dispatch, "k": k, "modes": list(modes), "repeats": repeats, "seed": seed,
              "warmup": spec.warmup, "min_timed_ms": min_timed_ms}
    raw = interruptible(lambda: w.run(config))
    return {"items": raw["items"], "cores": raw["cores"], "projected": raw["projected"], "measured": raw["measured"],
            "single_core": None}
