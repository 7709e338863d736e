"""CPU time of the kernel's receive path, for nft-bench's CPU-time rates.

On a veth pair the receiving side runs as a softirq on the sending CPU: mostly inline, when the
sender's ``sendmmsg`` re-enables bottom halves (then it is charged to the sender thread), and
otherwise in that CPU's ``ksoftirqd/N`` thread. So the CPU time that sending and classifying a
packet costs is the sender thread's CPU time plus ``ksoftirqd/N``'s over the same span, plus,
where the kernel accounts interrupt time separately (``CONFIG_IRQ_TIME_ACCOUNTING=y``: softirq
time is then *not* charged to the interrupted thread), the CPU's softirq time from
``/proc/stat``. Unlike wall-clock rates, this stays right when other processes share the core.
"""

from __future__ import annotations

import gzip
import os
import platform
from pathlib import Path

_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def irq_time_accounting() -> bool | None:
    """Whether this kernel accounts IRQ time separately (``None``: its config is not readable)."""
    candidates = [Path("/proc/config.gz"), Path(f"/boot/config-{platform.release()}")]
    for path in candidates:
        try:
            raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except OSError:
            continue
        text = raw.decode("utf-8", "replace")
        return "CONFIG_IRQ_TIME_ACCOUNTING=y" in text
    return None


def _ksoftirqd_pids(cpu: int | None) -> list[int]:
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            name = comm.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if name.startswith("ksoftirqd/") and (cpu is None or name == f"ksoftirqd/{cpu}"):
            pids.append(int(comm.parent.name))
    return pids


def _thread_ns(pid: int) -> int:
    try:  # the scheduler's exact runtime, nanoseconds
        return int(Path(f"/proc/{pid}/schedstat").read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        pass
    try:  # utime + stime in clock ticks
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        return int((int(fields[11]) + int(fields[12])) * _TICK_NS)
    except (OSError, ValueError, IndexError):
        return 0


def _softirq_ns(cpu: int | None) -> int:
    key = "cpu" if cpu is None else f"cpu{cpu}"
    try:
        with open("/proc/stat", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if parts and parts[0] == key:
                    return int(int(parts[7]) * _TICK_NS)
    except (OSError, ValueError, IndexError):
        pass
    return 0


class ReceivePathClock:
    """Snapshots of the CPU time spent on the receive path outside the sender thread."""

    def __init__(self, cpu: int | None) -> None:
        self.cpu = cpu
        self.pids = _ksoftirqd_pids(cpu)
        self.irq_accounting = irq_time_accounting()

    def read(self) -> tuple[int, int]:
        """(ksoftirqd CPU ns, softirq ns where accounted separately, else 0)."""
        ksoft = sum(_thread_ns(p) for p in self.pids)
        return ksoft, (_softirq_ns(self.cpu) if self.irq_accounting else 0)
