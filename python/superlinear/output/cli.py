"""``superlinear report``: one HTML page with every plot and table under a results folder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from superlinear.common.study import console


def cmd_report(args: argparse.Namespace) -> int:
    from superlinear.output.report import write_report

    path, experiments = write_report(Path(args.results), args.out)
    console.print(f"report: {path} ({experiments} experiment{'' if experiments == 1 else 's'})")
    return 0


def register(sub: Any) -> None:
    """Adds ``report``."""
    rep = sub.add_parser("report", help="one HTML page with every plot and table under a results folder",
                         description="Collect every result.json under RESULTS_DIR (with its PNG plots) into one "
                         "self-contained HTML page.")
    rep.add_argument("results", nargs="?", default="results", help="results folder (default results)")
    rep.add_argument("--out", metavar="FILE", help="page to write (default RESULTS_DIR/index.html)")
    rep.set_defaults(func=cmd_report)
