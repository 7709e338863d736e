"""Shared helpers: run the real CLI in a subprocess, as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "superlinear", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False,
    )


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli
