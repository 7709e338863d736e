"""superlinear: build distributed self-adjusting systems that scale faster than linearly, and
prove it honestly.

The Rust core (``superlinear._native``) runs dispatchers and self-adjusting workers; this package
owns the user-facing API, the ``superlinear`` CLI, the experiments and the plots, one subpackage
per domain (engine, classify, nft, cache, latency, attack, analysis, experiments, output) and
``common`` for what they share.
"""

from superlinear.common.errors import SuperlinearError
from superlinear.engine import RunSpec, run

__all__ = ["RunSpec", "SuperlinearError", "run"]
__version__ = "0.1.0"
