"""Ctrl-C for long native calls: the call runs on a helper thread while the main thread waits in
short slices, so the interrupt arrives at once; it then sets the native stop flag
(``superlinear_core::cancel``), which every long Rust loop reads between slices of work, waits
for the call to return, and re-raises ``KeyboardInterrupt`` (the CLI prints one line and exits
130). What a command had finished before (rows of a sweep or a reproduction) is kept by its caller.

SIGTERM (``kill``, ``timeout``) and SIGHUP (a closed terminal) stop a command the same way, so
that the same cleanup runs (servers the command started are stopped, finished rows kept); the
exit status is then 128 + the signal's number (143, 129) and the line says which signal it was.

A second Ctrl-C while the command stops (an impatient user, or ``timeout -s INT``, which signals
the process and then its group) must not cut the stop short: the interpreter would shut down
under a native call that still runs, and a thread that cannot re-enter it then aborts the
process. The command's process therefore takes only the first SIGINT
(:func:`stop_on_first_interrupt`), and the wait here outlasts further KeyboardInterrupts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

from superlinear import _native
from superlinear.output.paths import remove_empty_created

T = TypeVar("T")
#: How long a cancelled call may take to return; loops that read the flag return within tens of
#: milliseconds. Calls that cannot read it (SciPy's LP solver) are not waited for longer: the
#: process then ends with exit 130 (the interpreter must not shut down under a native call that
#: still runs), still within a second of the Ctrl-C.
STOP_WAIT_S = 0.75


def interruptible(call: Callable[[], T]) -> T:
    """The result of ``call()`` (a native call that releases the GIL), stoppable by Ctrl-C."""
    _native.cancel_clear()
    outcome: dict[str, object] = {}
    # An Event, not Thread.join: a join that a signal interrupts can return at once afterwards
    # (CPython 3.11), which would let the interpreter exit under a native call still running.
    done = threading.Event()

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as e:  # handed to the main thread below
            outcome["error"] = e
        finally:
            done.set()

    try:
        # Started inside the try: a Ctrl-C that lands while the thread starts must stop it too.
        threading.Thread(target=target, name="native-call", daemon=True).start()
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        stop_native_calls(done.is_set)
        raise
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def stop_native_calls(finished: Callable[[], bool], cause: BaseException | None = None) -> None:
    """After a Ctrl-C (or the error ``cause``): asks the running native calls to stop and waits up
    to :data:`STOP_WAIT_S` for ``finished()``, through further Ctrl-Cs; if they have not returned
    by then, the process ends here (exit 130, or 1 after an error), since the interpreter must not
    shut down under them."""
    _native.cancel_request()
    deadline = time.monotonic() + STOP_WAIT_S
    while not finished():
        if time.monotonic() >= deadline:
            stopped = cause is None or isinstance(cause, KeyboardInterrupt)
            for hook in reversed(_before_forced_exit if stopped else []):
                with contextlib.suppress(Exception):
                    hook()
            # As main() does on the way out this exit skips: an output folder the command made
            # and left empty goes.
            with contextlib.suppress(Exception):
                remove_empty_created()
            print(stopped_line() if stopped else f"superlinear: error: {cause}", file=sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(stopped_exit_code() if stopped else 1)
        try:
            time.sleep(0.005)
        except KeyboardInterrupt:
            continue
    # The next native call outside `interruptible` (an in-process caller's) must not see it.
    _native.cancel_clear()


#: The signals that stop a command as a Ctrl-C does.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: The first of them this process received (none yet: empty).
_received: list[int] = []


def _stop_signal() -> int:
    """The signal that stopped the command: the first received, else SIGINT (a KeyboardInterrupt
    raised before the handlers were in place)."""
    return _received[0] if _received else signal.SIGINT


def stopped_exit_code() -> int:
    """The exit status of a command that a signal stopped: 130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + _stop_signal()


def stopped_line() -> str:
    """The one line a stopped command ends with."""
    signum = _stop_signal()
    return "superlinear: interrupted" if signum == signal.SIGINT else \
        f"superlinear: terminated by {signal.Signals(signum).name}"


#: What to do before the process ends under a native call that did not stop (innermost last).
_before_forced_exit: list[Callable[[], None]] = []


@contextmanager
def before_forced_exit(hook: Callable[[], None]) -> Iterator[None]:
    """Inside the block, ``hook`` runs (on the main thread, where writing files is safe) before
    :func:`stop_native_calls` ends the process under a native call that did not stop: a study
    keeps what it had finished even then."""
    _before_forced_exit.append(hook)
    try:
        yield
    finally:
        _before_forced_exit.remove(hook)


def _drop(signum: int, frame: FrameType | None) -> None:
    """A stop signal after the first, while the command stops: nothing to do."""


def stop_on_first_interrupt() -> None:
    """Makes the first SIGINT, SIGTERM or SIGHUP raise ``KeyboardInterrupt`` and ignores every
    later one, for the process of one command (not for a caller that runs ``main`` in its own
    process)."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # The later ones go to a handler that does nothing, not to SIG_IGN: a second SIGINT
        # already pending when the handler changed would then print CPython's "Signal 2 ignored
        # due to race condition" with a traceback.
        for sig in STOP_SIGNALS:
            signal.signal(sig, _drop)
        _received.append(signum)
        raise KeyboardInterrupt

    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
