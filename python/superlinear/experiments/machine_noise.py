"""How fast the machine served memory while a timed run ran: a short probe before every point,
summarised at the end of the run next to the stability line.

The workers of the paper's experiments read lists and trees from the caches, which a shared or
virtual machine shares with work we cannot see (an SMT sibling shares a core's L1 and L2). The
probe (``_native.MemoryProbe``) walks a random cycle over three quarters of one core's L2 and then
runs a dependent multiply chain, 10 ms each, timed in the thread's CPU time, and keeps the share of
the wall-clock windows the thread had a CPU for. A walk far above its least while the chain holds
steady says the caches were taken; a low share says the CPU was. It is a record, not a correction:
no figure is scaled by it. Each row also keeps the walk taken before each of its rounds (and before
its round's baseline), so a round far from the others can be set beside the walk of its time.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from superlinear._native import MemoryProbe

#: Milliseconds each probe walks (and as long again multiplies): with the untimed warm-up lap,
#: about 2 % of a point's 1 s window.
WINDOW_MS = 10.0


def _spread(values: list[float]) -> dict[str, float]:
    """Least (``lo``), median, 90th percentile (the value a tenth of the samples reach or pass;
    the largest below ten samples) and most (``hi``)."""
    ordered = sorted(values)
    return {"lo": ordered[0], "median": float(statistics.median(ordered)),
            "p90": ordered[min(len(ordered) - 1, (9 * len(ordered)) // 10)], "hi": ordered[-1]}


class MachineNoise:
    """The probe's samples of one run; the probe is built at the first sample."""

    def __init__(self) -> None:
        self._probe: MemoryProbe | None = None
        self.walk_ns: list[float] = []
        self.alu_ns: list[float] = []
        self.cpu_share: list[float] = []

    def sample(self) -> float:
        """One sample, taken just before a point runs; returns its walk's nanoseconds per step."""
        if self._probe is None:
            from superlinear import _native

            self._probe = _native.MemoryProbe()
        walk, alu, share = self._probe.sample(WINDOW_MS)
        self.walk_ns.append(walk)
        self.alu_ns.append(alu)
        self.cpu_share.append(share)
        return float(walk)

    def summary(self) -> dict[str, Any] | None:
        """The samples' spreads, or None without samples."""
        if self._probe is None or not self.walk_ns:
            return None
        return {"walk_bytes": self._probe.bytes, "walk_sized_by_l2": self._probe.sized_by_l2, "window_ms": WINDOW_MS,
                "samples": len(self.walk_ns), "walk_ns": _spread(self.walk_ns), "alu_ns": _spread(self.alu_ns),
                "cpu_share": _spread(self.cpu_share)}


def _ns(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def machine_noise_lines(summary: dict[str, Any] | None) -> list[str]:
    """The summary in words: one line, or none without samples."""
    if not summary:
        return []
    walk, alu, share = summary["walk_ns"], summary["alu_ns"], summary["cpu_share"]
    size = f"{summary['walk_bytes'] / 1024:,.0f} KiB"
    if summary["walk_sized_by_l2"]:
        size += " (¾ of this CPU's L2)"
    return [f"machine noise ({summary['samples']} probes of {summary['window_ms']:g} ms, one before each point, in "
            f"thread CPU time): a random walk over {size} took median {walk['median'] / walk['lo']:.2f}× its least "
            f"({_ns(walk['lo'])}–{_ns(walk['hi'])} ns per step; slowest tenth ≥ {walk['p90'] / walk['lo']:.2f}×), a "
            f"multiply chain median {alu['median'] / alu['lo']:.2f}× its least ({_ns(alu['lo'])}–{_ns(alu['hi'])} "
            f"ns); the thread had a CPU for {share['lo']:.0%}–{share['hi']:.0%} of the windows (median "
            f"{share['median']:.0%}). A walk far above its least while the chain holds steady: the caches were "
            "shared with other work, and memory-bound timed figures move with them"]
