"""The one error type users see: raised by the Rust core and by the Python front alike; the CLI
prints it as one ``superlinear: error: …`` line and exits with status 2."""

from __future__ import annotations

from superlinear._native import SuperlinearError

__all__ = ["SuperlinearError"]
