"""Sizes a user types, checked against this machine before anything starts: the memory a run
would need against what is available, with one line naming the flag when it does not fit
(commands that can mean it offer an override flag)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from superlinear.common.errors import SuperlinearError

#: The most workers any run takes: the engine's batches and the classifiers' RSS indirection
#: table name workers with 16 bits (crates/core config.rs, ``MAX_WORKERS``).
MAX_WORKERS = 65_535

#: Share of the available memory a run may plan to use (the rest is the interpreter, the
#: allocator's slack and everything else on the machine).
USABLE = 0.8


def mem_available_bytes() -> int | None:
    """MemAvailable of /proc/meminfo, in bytes (None where it cannot be read)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


def size_text(n: float) -> str:
    """A byte count as a user reads it (kB, MB, GB, TB)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n / 1e3:,.0f} kB"


def check_memory(what: str, needed: float, override: str | None = None) -> None:
    """Refuses ``what`` (the flags, as the user typed them) when it needs more than the usable
    share of the available memory; ``override`` names a flag that skips the check."""
    avail = mem_available_bytes()
    if avail is None or needed <= USABLE * avail:
        return
    hint = f"; pass {override} if you mean it" if override else ""
    raise SuperlinearError(f"{what} needs about {size_text(needed)} of memory, but only {size_text(avail)} "
                           f"are available{hint}")


def check_at_most(flag: str, value: float, maximum: float, why: str) -> None:
    """Refuses ``flag value`` beyond a documented maximum, for counts that cost time rather than
    memory (a run that would go on for days looks like a hang)."""
    if value > maximum:
        shown = f"{value:,}" if isinstance(value, int) else f"{value:g}"
        raise SuperlinearError(f"{flag} {shown}: at most {maximum:,} ({why})")


def beyond_trace(requests: int, trace: str | Path, served: int, warmup: int = 0) -> SuperlinearError:
    """The refusal of ``--requests`` beyond a key trace, which holds ``served`` keys after its
    ``warmup`` ones: the readers serve all of a shorter trace, so such a run did less than asked."""
    return SuperlinearError(
        f"--requests {requests:,}" + (f" after --warmup {warmup:,}" if warmup else "")
        + f": {trace} holds only {served + warmup:,} keys (give --requests {served:,} or fewer, or a longer trace)")
