"""The one error type users see: raised by the Rust core and by the Python front alike; the CLI
prints it as one ``superlinear: error: …`` line and exits with status 2. And the one other line
a command may add on stderr, a ``superlinear: note: …`` (:func:`note`)."""

from __future__ import annotations

import sys

from superlinear._native import SuperlinearError

__all__ = ["SuperlinearError", "note"]


def note(text: str) -> None:
    """Says on stderr what the user should know of a run that goes ahead: an option taken as asked
    that does less than it seems, or a part left out."""
    print(f"superlinear: note: {text}", file=sys.stderr)
