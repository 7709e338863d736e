"""Saving a finished figure the project's one way: PNG at 130 dpi and SVG side by side,
the folder made if missing, the figure closed (plots are made in loops; open figures pile up)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from superlinear.output.paths import written_atomically


def save_figure(fig: Any, stem: Path) -> Path:
    """Writes ``stem.png`` and ``stem.svg`` (any suffix of ``stem`` is replaced); returns the PNG's
    path (the SVG's is the same with ``.svg``)."""
    import matplotlib.pyplot as plt

    stem.parent.mkdir(parents=True, exist_ok=True)
    png, svg = stem.with_suffix(".png"), stem.with_suffix(".svg")
    try:
        for path in (png, svg):
            with written_atomically(path) as tmp:
                fig.savefig(tmp, dpi=130, format=path.suffix[1:])
    finally:
        plt.close(fig)
    return png
