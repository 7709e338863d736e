"""Shared helpers: run the real CLI in a subprocess, as a user would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

# The tests check counts, shapes and errors, not timings: every experiment they run (in process
# or through the CLI, which inherits this) times each point once instead of over the 1 s / 3 s
# windows users' figures get. tests/test_repeats.py checks that the windows are applied.
os.environ.setdefault("SUPERLINEAR_TIMED_WINDOW", "0")

# Started in the background of a shell without job control (`nohup make test &` in a script),
# the test run inherits SIGINT ignored, and so would every CLI it starts: the Ctrl-C tests would
# fail for the harness's sake. A handler (reset to the default on exec) lets the children take
# SIGINT as a user's terminal delivers it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "superlinear", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False,
    )


def start(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    """The real CLI started in a subprocess, to be interrupted."""
    return subprocess.Popen([sys.executable, "-m", "superlinear", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)


def interrupt_after(p: subprocess.Popen[str], seconds: float) -> tuple[int, float, str]:
    """SIGINT after ``seconds``; (exit code, seconds until it exited, stderr)."""
    time.sleep(seconds)
    assert p.poll() is None, "the run ended before the interrupt: make it longer"
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    return p.returncode, time.monotonic() - t0, err


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli


@pytest.fixture
def one_line_mistake(capsys: pytest.CaptureFixture[str]) -> Callable[..., None]:
    """Runs the CLI in-process on an argv list (the subprocess tests cover the entry point itself)
    and checks the answer to a mistake: exit 2, one line on stderr holding every fragment, no
    traceback."""
    from superlinear.cli import main

    def check(args: list[str], *fragments: str) -> None:
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        lines = [line for line in err.strip().splitlines() if line]
        assert len(lines) == 1, err
        for f in fragments:
            assert f in lines[0], lines[0]

    return check
