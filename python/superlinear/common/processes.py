"""Running another program to the end, or not at all: a command that is cut short (its timeout,
a Ctrl-C) leaves none of its processes behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time


def run_in_own_group(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``cmd`` run in a process group of its own, its output captured; cut short (its timeout, a
    Ctrl-C), the whole group is killed and waited for, children included (initdb's bootstrap
    backend, a peer script's own programs), so that nothing it started still runs or writes where
    the caller is about to clean up. Raises :class:`subprocess.TimeoutExpired` on the timeout."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.01)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
