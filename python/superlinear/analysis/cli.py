"""``superlinear law|usl|predict|advise``: the paper's analytic laws, USL fits, the working-set
law's predictions and the locality advisor."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from superlinear.analysis import predict_cli, usl_cli
from superlinear.common.args import fraction, int_list, non_negative_finite
from superlinear.common.bounds import MAX_WORKERS
from superlinear.common.study import console
from superlinear.output.paths import output_dir

#: Largest ρ the law takes: beyond it a speedup is 0 to double precision (and its plot breaks).
MAX_RHO = 1_000_000


def _miss_cost(text: str) -> float:
    rho = non_negative_finite(text)
    if rho > MAX_RHO:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_RHO:,}, got {text}")
    return rho


def cmd_law(args: argparse.Namespace) -> int:
    from superlinear.analysis.law import law_table, plot_laws

    ks = list(int_list("--k", args.k, maximum=MAX_WORKERS)) if args.k is not None else [1, 2, 4, 8, 16, 32, 48, 64]
    rows = law_table(ks, args.s, args.s_cache, args.delta, args.rho)
    out = output_dir(args.out)
    paths = plot_laws(out, args.s, args.s_cache, args.delta, args.rho, max(ks))
    if args.json:
        print(json.dumps({"s": args.s, "s_cache": args.s_cache, "delta": args.delta, "rho": args.rho, "rows": rows},
                         indent=1))
        return 0
    table = Table(title="Analytic scaling laws (speedup)")
    for col in rows[0]:
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(*(f"{v:,.2f}" if isinstance(v, float) else str(v) for v in r.values()))
    console.print(table)
    console.print(f"amdahl, mtf_uniform_k2: s = {args.s}; cache laws: s = {args.s_cache}, δ = {args.delta}, "
                  f"ρ = {args.rho}")
    console.print("plots: " + ", ".join(str(p) for p in paths))
    return 0


def register(sub: Any) -> None:
    """Adds ``law``, ``usl``, ``predict`` and ``advise``."""
    law = sub.add_parser("law", help="analytic laws: Amdahl (Eq. 1), k² (Eq. 2), distributed cache (Eq. 3)",
                         description="Print and plot the paper's analytic scaling laws (Fig. 1 and Fig. 10).")
    law.add_argument("--s", type=fraction, default=0.01, help="serial fraction for Eqs. 1-2 (default 0.01, Fig. 1)")
    law.add_argument("--s-cache", type=fraction, default=0.1, help="serial fraction for Eq. 3 (default 0.1, Fig. 10)")
    law.add_argument("--delta", type=fraction, default=0.1, help="single-cache hit rate δ (default 0.1)")
    law.add_argument("--rho", type=_miss_cost, default=10.0,
                     help=f"miss cost relative to a hit ρ (default 10, at most {MAX_RHO:,})")
    law.add_argument("--k", "-k", help="comma-separated k values for the table (default 1,2,4,...,64)")
    law.add_argument("--out", default="results/law", help="folder for the plots (default results/law)")
    law.add_argument("--json", action="store_true",
                     help="print the parameters and the table as JSON instead of the table (the plots are still "
                     "written)")
    law.set_defaults(func=cmd_law)

    usl_cli.register(sub)
    predict_cli.register(sub)
