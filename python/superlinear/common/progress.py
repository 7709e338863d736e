"""Progress of long runs, one way for every command: a bar on a terminal; where stderr is not one
(a log file, ``nohup``, a pipe), a plain line at most every :data:`LINE_EVERY_S` seconds, so a
redirected run still shows that it is alive and how far it got, without filling the log."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

#: Least seconds between two progress lines where stderr is not a terminal.
LINE_EVERY_S = 30.0


class _Interval:
    """Whether a line is due: at most one every :data:`LINE_EVERY_S` seconds since the last, or
    since the start."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def due(self) -> bool:
        now = time.monotonic()
        if now - self.last < LINE_EVERY_S:
            return False
        self.last = now
        return True


class PeriodicLines:
    """The part of :class:`rich.progress.Progress` the commands use (``add_task``, ``update``,
    ``advance``), written as a line on stderr at most every :data:`LINE_EVERY_S` seconds."""

    def __init__(self) -> None:
        self._tasks: dict[int, dict[str, Any]] = {}
        self._started = time.monotonic()
        self._interval = _Interval()

    def __enter__(self) -> PeriodicLines:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        self._tasks[len(self._tasks)] = {"description": description, "total": total, "completed": 0.0}
        return len(self._tasks) - 1

    def update(self, task: int, *, description: str | None = None, completed: float | None = None,
               total: float | None = None, advance: float | None = None, **_: Any) -> None:
        t = self._tasks[task]
        if description is not None:
            t["description"] = description
        if total is not None:
            t["total"] = total
        if completed is not None:
            t["completed"] = completed
        if advance is not None:
            t["completed"] += advance
        self._maybe_print(t)

    def advance(self, task: int, advance: float = 1) -> None:
        self.update(task, advance=advance)

    def _maybe_print(self, t: dict[str, Any]) -> None:
        if not self._interval.due():
            return
        done = f" {t['completed']:,.0f}/{t['total']:,.0f}" if t["total"] else ""
        elapsed = int(self._interval.last - self._started)
        print(f"  … {t['description']}{done} ({elapsed // 60}:{elapsed % 60:02d} elapsed)", file=sys.stderr,
              flush=True)


def progress_bar(enabled: bool) -> Any:
    """What shows a long run's progress: nothing unless ``enabled`` (the user did not ask for
    ``--json``), a transient bar on stderr where it is a terminal, else periodic lines. Either
    takes ``add_task``, ``update`` and ``advance`` as :class:`rich.progress.Progress` does."""
    if enabled and not sys.stderr.isatty():
        return PeriodicLines()
    # Not rich markup: "[c] ..." (panel c) would be taken for a style and hide the line.
    return Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True, disable=not enabled)


_lines = _Interval()  # the first step line comes LINE_EVERY_S after the start


def restart_lines() -> None:
    """Starts the interval of :func:`line_progress` again (a command starts: in-process callers
    run several)."""
    _lines.last = time.monotonic()


def line_progress(message: str) -> None:
    """One step of a study, on stderr: every step on a terminal; elsewhere at most one line every
    :data:`LINE_EVERY_S` seconds."""
    if sys.stderr.isatty() or _lines.due():
        print(f"  … {message}", file=sys.stderr, flush=True)
