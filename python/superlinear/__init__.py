"""superlinear: build distributed self-adjusting systems that scale faster than linearly, and
prove it honestly.

The Rust core (``superlinear._native``) runs dispatchers and self-adjusting workers; this package
owns the user-facing API, the ``superlinear`` CLI, the experiments and the plots, one subpackage
per domain (engine, classify, nft, cache, latency, attack, analysis, experiments, output) and
``common`` for what they share.
"""

from __future__ import annotations

from superlinear.common.errors import SuperlinearError

# Not typing.TYPE_CHECKING: importing typing alone takes ~20 ms of the command's start (mypy
# reads any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from superlinear.engine import RunSpec, run

__all__ = ["RunSpec", "SuperlinearError", "run"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The engine loads on first use (PEP 562): the `superlinear` command imports this package
    # before it can take a Ctrl-C in one line, so the package itself stays light.
    if name in ("RunSpec", "run"):
        from superlinear import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'superlinear' has no attribute {name!r}")
