"""superlinear: build distributed self-adjusting systems that scale faster than linearly, and
prove it honestly.

The Rust core (``superlinear._native``) runs dispatchers and self-adjusting workers; this package
owns the user-facing API, the ``superlinear`` CLI, the experiments and the plots, one subpackage
per domain (engine, classify, nft, cache, latency, attack, analysis, experiments, output) and
``common`` for what they share.
"""

# Every import here is time in which a Ctrl-C ends the command's start with a traceback: no
# `from __future__ import annotations` (the one annotation below is a string), and not
# typing.TYPE_CHECKING (importing typing alone takes ~20 ms; mypy reads any name TYPE_CHECKING
# as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from superlinear.common.errors import SuperlinearError
    from superlinear.engine import RunSpec, run

__all__ = ["RunSpec", "SuperlinearError", "run"]
__version__ = "0.1.0"


def __getattr__(name: str) -> "Any":
    # The engine and the native library load on first use (PEP 562): the `superlinear` command
    # imports this package before it can take a Ctrl-C in one line, so the package stays light.
    if name in ("RunSpec", "run"):
        from superlinear import engine

        return getattr(engine, name)
    if name == "SuperlinearError":
        from superlinear.common.errors import SuperlinearError

        return SuperlinearError
    raise AttributeError(f"module 'superlinear' has no attribute {name!r}")
