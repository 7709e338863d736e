"""How fast the machine served memory while a timed run ran: a short probe before every point,
summarised at the end of the run next to the stability line.

The workers of the paper's experiments walk lists and trees, so their times follow the speed of
the caches, which a shared or virtual machine shares with tenants we cannot see (an SMT sibling
shares a core's L1 and L2). The probe (``_native.MemoryProbe``) walks a random cycle over three
quarters of one core's L2 and then runs a dependent multiply chain, 10 ms each: a walk far above
its least while the chain holds steady says the caches were taken, which no estimator of ours can
undo, and tells the reader why a range is wide. It is a record, not a correction: no figure is
scaled by it.
"""

from __future__ import annotations

import statistics
from typing import Any

#: Milliseconds each probe walks (and as long again multiplies): about 1 % of a point's 1 s window.
WINDOW_MS = 10.0


def _spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"least": ordered[0], "median": float(statistics.median(ordered)),
            "p90": ordered[min(len(ordered) - 1, (9 * len(ordered)) // 10)], "most": ordered[-1]}


class MachineNoise:
    """The probe's samples of one run; the probe is built at the first sample."""

    def __init__(self) -> None:
        self._probe: Any = None
        self.walk_ns: list[float] = []
        self.alu_ns: list[float] = []

    def sample(self) -> None:
        """One sample, taken just before a point runs."""
        if self._probe is None:
            from superlinear import _native

            self._probe = _native.MemoryProbe()
        walk, alu = self._probe.sample(WINDOW_MS)
        self.walk_ns.append(walk)
        self.alu_ns.append(alu)

    def summary(self) -> dict[str, Any] | None:
        """The samples' spread (least, median, 90th percentile, most), or None without samples."""
        if not self.walk_ns:
            return None
        return {"walk_bytes": self._probe.bytes, "walk_sized_by_l2": self._probe.sized_by_l2, "window_ms": WINDOW_MS,
                "samples": len(self.walk_ns), "walk_ns": _spread(self.walk_ns), "alu_ns": _spread(self.alu_ns)}


def _ns(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def machine_noise_lines(summary: dict[str, Any] | None) -> list[str]:
    """The summary in words: one line, or none without samples."""
    if not summary:
        return []
    walk, alu = summary["walk_ns"], summary["alu_ns"]
    size = f"{summary['walk_bytes'] / 1024:,.0f} KiB"
    if summary["walk_sized_by_l2"]:
        size += " (¾ of this CPU's L2)"
    median, p90 = walk["median"] / walk["least"], walk["p90"] / walk["least"]
    return [f"machine noise ({summary['samples']} probes of {summary['window_ms']:g} ms, one before each point): a "
            f"random walk over {size} took {_ns(walk['least'])}–{_ns(walk['most'])} ns per step, median "
            f"{median:.2f}× its least and slowest tenth ≥ {p90:.2f}×; a "
            f"multiply chain {_ns(alu['least'])}–{_ns(alu['most'])} ns, median {alu['median'] / alu['least']:.2f}× its "
            "least. A walk far above its least while the chain holds steady: the caches were shared with other work, "
            "and memory-bound timed figures move with them"]
