"""Ctrl-C for long native calls: the call runs on a helper thread while the main thread waits in
short slices, so the interrupt arrives at once; it then sets the native stop flag
(``superlinear_core::cancel``), which every long Rust loop reads between slices of work, waits
for the call to return, and re-raises ``KeyboardInterrupt`` (the CLI prints one line and exits
130). What a command had finished before (rows of a sweep or a reproduction) is kept by its caller.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from superlinear import _native

T = TypeVar("T")
#: How long a cancelled call may take to return. Loops that do not read the flag (trace
#: generation, simulators) are not waited for: the process ends at once with exit 130, since an
#: interpreter must not shut down under a native call that still runs.
STOP_WAIT_S = 1.0


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

    threading.Thread(target=target, name="native-call", daemon=True).start()
    try:
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        _native.cancel_request()
        if not done.wait(STOP_WAIT_S):
            print("superlinear: interrupted", file=sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(130)
        raise
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
