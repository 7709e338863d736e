"""``superlinear usl fit|predict``: read measurements from a CSV file, fit the USL, report, plot."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from superlinear.common.args import floats
from superlinear.common.errors import note
from superlinear.common.input_files import read_input_text
from superlinear.output.figures import save_figure
from superlinear.output.paths import output_file, refuse_stdout

if TYPE_CHECKING:  # numpy and scipy load only when a fit runs, not for every CLI start
    from superlinear.analysis.usl import USLFit


class USLInputError(ValueError):
    """A measurements file or option that cannot be used; the message names the file and line."""

X_CANDIDATES = ("p", "k", "nodes", "n", "workers", "threads", "load", "cores")
Y_CANDIDATES = ("speedup", "throughput", "x", "speedup_projected", "y", "rps")


def _parse_where(text: str | None) -> list[tuple[str, str]]:
    if text is None:
        return []
    if not text.strip():
        raise USLInputError("--where: empty (give COL=VALUE[,COL=VALUE...], or leave the option out)")
    conds = []
    for part in text.split(","):
        if "=" not in part:
            raise USLInputError(f"--where expects COL=VALUE[,COL=VALUE...], got {part!r}")
        col, val = part.split("=", 1)
        conds.append((col.strip(), val.strip()))
    return conds


def _number(cell: str) -> float:
    """A CSV cell's number: Python's ``float`` also takes ``2_0`` (20), which no CSV writer means."""
    if "_" in cell:
        raise ValueError(cell)
    return float(cell)


def _is_number(cell: str) -> bool:
    try:
        _number(cell)
    except ValueError:
        return False
    return True


def read_measurements(path: Path, x: str | None, y: str | None, where: str | None,
                      yerr: str | None = None) -> tuple[list[float], list[float], list[float] | None, str, str]:
    """Reads (p, y) pairs; every problem names the file, and the line and column where it is."""
    text = read_input_text(path, "the measurements", pipe_ok=True)  # read once: `cat x.csv | usl fit /dev/stdin`
    try:
        return _read_measurements(path, text, x, y, where, yerr)
    except csv.Error as e:  # a field over the csv module's limit, a NUL byte
        raise USLInputError(f"{path}: not a CSV file the fit can read ({e})") from None


def _read_measurements(path: Path, text: str, x: str | None, y: str | None, where: str | None,
                       yerr: str | None) -> tuple[list[float], list[float], list[float] | None, str, str]:
    with io.StringIO(text, newline="") as f:
        reader = csv.reader(f)
        header = [h.strip() for h in next(reader, [])]
        if not any(header):
            raise USLInputError(f"{path}: empty file (expected a header line naming the columns)")
        if all(_is_number(h) for h in header):
            raise USLInputError(f"{path}:1: the first line holds numbers, not column names (add a header line, "
                                f"e.g. p,speedup)")
        if len(header) == 1 and (other := next((d for d in ";\t|" if d in header[0]), None)):
            # One column whose name holds ';' (a spreadsheet's export where ',' is the decimal mark).
            raise USLInputError(f"{path}:1: one column only, {header[0]!r}: its fields are separated by "
                                f"{other!r}; usl fit reads comma-separated values (save it as CSV with ',')")
        lower = {h.lower(): h for h in header}

        def pick(explicit: str | None, candidates: tuple[str, ...], what: str, index: int) -> str:
            if explicit:
                if explicit not in header:
                    raise USLInputError(f"{path}: no column {explicit!r} (columns: {', '.join(header)})")
                return explicit
            for c in candidates:
                if c in lower:
                    return lower[c]
            if len(header) > index:
                return header[index]
            raise USLInputError(f"{path}: cannot tell which column is {what}; name it with --{what}")

        xcol = pick(x, X_CANDIDATES, "x", 0)
        ycol = pick(y, Y_CANDIDATES, "y", 1)
        if xcol == ycol:
            raise USLInputError(f"{path}: column {xcol!r} is both x and y (name the other with --x or --y)")
        if yerr is not None and yerr not in header:
            raise USLInputError(f"{path}: no column {yerr!r} (columns: {', '.join(header)})")
        conds = _parse_where(where)
        for col, _ in conds:
            if col not in header:
                raise USLInputError(f"{path}: --where names no column {col!r} (columns: {', '.join(header)})")
        # A row is read by column name: a name the fit uses must name one column.
        used = [xcol, ycol, *([yerr] if yerr is not None else []), *(c for c, _ in conds)]
        for col in used:
            if sum(h.lower() == col.lower() for h in header) > 1:
                raise USLInputError(f"{path}:1: column {col!r} named twice in the header (names are compared "
                                    f"ignoring case)")
        ps: list[float] = []
        ys: list[float] = []
        es: list[float] = []
        # The text cells of the other columns at each p: two values at one p are two series.
        labels: dict[float, dict[str, set[str]]] = {}
        empty_y: list[int] = []
        for cells in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                raise USLInputError(f"{path}:{line}: {len(cells)} field(s), the header has {len(header)}")
            row = {k: v.strip() for k, v in zip(header, cells, strict=True)}
            if any(row.get(c) != v for c, v in conds):
                continue
            if row.get(ycol, "") == "":
                # A missing measurement (a result.csv's measured speedup above the cores): left out, and said.
                empty_y.append(line)
                continue
            try:
                pv = _number(row[xcol])
            except (TypeError, ValueError):
                raise USLInputError(f"{path}:{line}: column {xcol!r} is not a number: {row.get(xcol)!r}") from None
            try:
                yv = _number(row[ycol])
            except (TypeError, ValueError):
                raise USLInputError(f"{path}:{line}: column {ycol!r} is not a number: {row.get(ycol)!r}") from None
            if not (math.isfinite(pv) and math.isfinite(yv)):
                raise USLInputError(f"{path}:{line}: non-finite value")
            if yerr is not None:
                try:
                    se = _number(row[yerr])
                except (TypeError, ValueError):
                    raise USLInputError(f"{path}:{line}: column {yerr!r} is not a number: {row.get(yerr)!r}") from None
                if not (math.isfinite(se) and se > 0):
                    raise USLInputError(f"{path}:{line}: column {yerr!r} is a standard error and must be a finite "
                                        f"number > 0 (the fit weighs each point by 1/se), got {row[yerr]!r}")
                es.append(se)
            ps.append(pv)
            ys.append(yv)
            at = labels.setdefault(pv, {})
            for col, cell in row.items():
                if col not in used and cell and not _is_number(cell):
                    at.setdefault(col, set()).add(cell)
    mixed = sorted({col for at in labels.values() for col, values in at.items() if len(values) > 1})
    if mixed:
        # Repeats at one p are averaged: rows of several series (a reproduce's result.csv) were
        # averaged into one curve without a word.
        col = mixed[0]
        values = sorted({v for at in labels.values() for v in at.get(col, ())})
        shown = ", ".join(values[:4]) + (", ..." if len(values) > 4 else "")
        raise USLInputError(f"{path}: the rows{' matching --where' if where else ''} hold several series (column "
                            f"{col!r}: {shown}): pick one with --where {col}={values[0]}")
    if not ps:
        matching = " matching --where" if where else ""
        raise USLInputError(f"{path}: no rows with values in {xcol!r} and {ycol!r}{matching}")
    if empty_y:
        lines = ", ".join(map(str, empty_y[:5])) + (", ..." if len(empty_y) > 5 else "")
        note(f"{path}: {len(empty_y):,} row{'s' if len(empty_y) > 1 else ''} with no value in {ycol!r} left out of "
             f"the fit (line{'s' if len(empty_y) > 1 else ''} {lines})")
    return ps, ys, (es if yerr is not None else None), xcol, ycol


def runtimes_to_speedup(ps: list[float], ys: list[float], es: list[float] | None = None
                        ) -> tuple[list[float], list[float] | None]:
    """Speedup T(p_min)/T(p) from runtimes; the baseline is the mean runtime at the smallest p.
    Standard errors propagate as relative errors in quadrature (the baseline's included)."""
    from superlinear.analysis.usl import USLError

    if any(y <= 0 for y in ys):
        raise USLError("runtimes must be positive (--runtime turns each into T(p_min)/T(p))")
    p0 = min(ps)
    base = [y for p, y in zip(ps, ys, strict=True) if p == p0]
    t1 = sum(base) / len(base)
    speedups = [t1 / y for y in ys]
    if es is None:
        return speedups, None
    e1 = next(e for p, e in zip(ps, es, strict=True) if p == p0)
    errs = [s * math.sqrt((e1 / t1) ** 2 + (e / y) ** 2) if p != p0 else e1 / t1
            for p, s, y, e in zip(ps, speedups, ys, es, strict=True)]
    return speedups, errs


def report(result: USLFit, xcol: str, ycol: str) -> str:
    lines = [f"USL fit of {ycol} against {xcol}: X(p) = γ·p / (1 + σ(p−1) + κ·p(p−1))"
             + (" (weighted by 1/SE²)" if result.weighted else "")]
    lines.append(f"{'coef':>6} {'estimate':>12} {'std.err':>10} {'t':>8} {'p':>8}   95% CI")
    for name, e in (("σ", result.sigma), ("κ", result.kappa), ("γ", result.gamma)):
        se = f"{e.stderr:10.4g}" if e.stderr is not None else f"{'—':>10}"
        t = f"{e.t:8.3g}" if e.t is not None else f"{'—':>8}"
        pv = f"{e.p_value:8.3g}" if e.p_value is not None else f"{'—':>8}"
        ci = f"[{e.ci95[0]:.4g}, {e.ci95[1]:.4g}]" if e.ci95 else "—"
        lines.append(f"{name:>6} {e.value:12.5g} {se} {t} {pv}   {ci}")
    rse = f"{result.residual_standard_error:.4g}" if result.residual_standard_error is not None else "—"
    lines.append(f"residual standard error {rse} on {result.dof} degrees of freedom")
    lines.append(f"{'p':>8} {'mean':>12} {'± SE':>10} {'r.e.':>7} {'n':>3} {'efficiency':>10}")
    for pt, eff in zip(result.points, result.efficiency, strict=True):
        se = f"{pt.stderr:10.4g}" if pt.stderr is not None else f"{'—':>10}"
        re_ = f"{100 * pt.relative_error:6.1f}%" if pt.relative_error is not None else f"{'—':>7}"
        lines.append(f"{pt.p:8.4g} {pt.mean:12.5g} {se} {re_} {pt.n:3d} {eff:10.3f}")
    d = result.derived
    for key, label in (("amdahl_ceiling", "Amdahl ceiling γ/σ"), ("peak_p", "peak at p*"), ("peak_x", "peak X(p*)"),
                       ("crossover_p", "crossover into payback p_x = ⌈|σ|/κ⌉")):
        if key in d and not (key in ("peak_p", "peak_x") and d.get("falls_from_p1")):
            lines.append(f"{label}: {d[key]:.4g}")
    if d.get("falls_from_p1"):
        # The model's own p* lies below p = 1: no node count peaks; the highest X is at p = 1.
        lines.append(f"peak: none at p > 1 (throughput falls from p = 1 on; X(1) = {d['peak_x']:.4g})")
    lines.append(d["summary"])
    return "\n".join(lines)


def plot(result: USLFit, xcol: str, ycol: str, out: Path) -> list[Path]:
    import matplotlib

    from superlinear.analysis.usl import usl

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    s, k, g = result.coefficients()
    p_data = [pt.p for pt in result.points]
    p_hi = max(p_data) * 1.5
    if "crossover_p" in result.derived:
        p_hi = max(p_hi, result.derived["crossover_p"] * 1.3)
    if "peak_p" in result.derived:
        p_hi = max(p_hi, min(result.derived["peak_p"] * 1.3, max(p_data) * 20))
    grid = np.linspace(min(1.0, min(p_data)), p_hi, 300)
    pred = result.predict(list(grid))
    fig, ax = plt.subplots(figsize=(6, 4.4))
    ax.plot(grid, g * grid, "k--", lw=1, label="linear bound γ·p")
    if pred[0]["ci_low"] is not None:
        ax.fill_between(grid, [float(r["ci_low"] or 0.0) for r in pred], [float(r["ci_high"] or 0.0) for r in pred],
                        color="C0", alpha=0.2,
                        label="95% confidence band")
    # A fit with σ or κ below zero can reach a zero or negative denominator on the grid: the
    # model means nothing there, so the curve leaves those points out.
    with np.errstate(divide="ignore", invalid="ignore"):
        curve = np.asarray(usl(grid, s, k, g), dtype=float)
    curve[~np.isfinite(curve) | (np.sign(curve) != np.sign(g))] = np.nan
    ax.plot(grid, curve, "C0-", label=f"USL σ={s:.4g}, κ={k:.3g}, γ={g:.4g}")
    ax.errorbar(p_data, [pt.mean for pt in result.points], yerr=[pt.stderr or 0.0 for pt in result.points],
                fmt="o", color="C3", capsize=3, label="data (mean ± SE)")
    if "crossover_p" in result.derived:
        px = result.derived["crossover_p"]
        ax.axvspan(px, p_hi, color="C1", alpha=0.12, label=f"payback region (p ≥ {px})")
    ax.set_xlabel(xcol)
    ax.set_ylabel(ycol)
    ax.set_title(result.derived["summary"], fontsize=8)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.2)
    fig.tight_layout()
    return [save_figure(fig, out)]


#: The largest p `usl predict` takes.
MAX_AT = 1e9


def cmd_usl(args: argparse.Namespace) -> int:
    from superlinear.analysis.usl import USLError, fit
    path = Path(args.data)
    if args.action == "predict":
        if not args.at:
            raise USLInputError("usl predict needs --at P[,P...] (the p values to predict at)")
        at = list(floats("--at", args.at) or ())
        if not all(math.isfinite(v) for v in at):
            raise USLInputError(f"--at: values must be finite, got {args.at}")
        if max(at, default=0.0) > MAX_AT:
            # p² overflows past about 1e154; node counts stop long before.
            raise USLInputError(f"--at: at most {MAX_AT:g} (a number of nodes), got {max(at):g}")
    elif args.at:
        raise USLInputError("--at has no effect in usl fit (it is for usl predict)")
    if args.fix_gamma is not None and not (math.isfinite(args.fix_gamma) and args.fix_gamma > 0):
        raise USLInputError(f"--fix-gamma: must be a finite number > 0, got {args.fix_gamma:g}")
    if args.no_plot and args.out is not None:
        raise USLInputError("--out has no effect with --no-plot (it names the plot file)")
    refuse_stdout(args.out, "--out", "it names the plot files (STEM.png and STEM.svg), which do not go to standard "
                  "output; --json prints every number there")
    out = None
    if not args.no_plot:
        if args.out is None and path.exists() and not (path.is_file() or path.is_dir()):
            # The plots go beside the measurements by default: there is no "beside" a pipe.
            raise USLInputError(f"{path}: not a file the plots can go beside: give --out STEM (or --no-plot)")
        out = output_file(args.out) if args.out is not None else path.with_name(path.stem + "_usl")
    ps, ys, es, xcol, ycol = read_measurements(path, args.x, args.y, args.where, args.yerr)
    try:
        if args.runtime:
            if "speedup" in ycol.lower():
                # Its name says it is a speedup already: inverting it gives 1/speedup.
                note(f"--runtime turns column {ycol!r} from a runtime into a speedup, but its name says it is one "
                     "(leave --runtime out if so)")
            ys, es = runtimes_to_speedup(ps, ys, es)
            ycol = f"speedup from {ycol}"
        result = fit(ps, ys, es, args.fix_gamma)
    except USLError as e:
        raise USLInputError(f"{path}: {e}") from None
    doc: dict[str, Any] = {"data": str(path), "x": xcol, "y": ycol, **result.to_dict()}
    if args.action == "predict":
        doc["predictions"] = result.predict(at)
    plots: list[Path] = []
    if out is not None:
        plots = plot(result, xcol, ycol, out)
        doc["plots"] = [str(p) for p in plots]
    if args.json:
        print(json.dumps(doc, indent=1, default=float))
        return 0
    print(report(result, xcol, ycol))
    if args.action == "predict":
        print(f"{'p':>8} {'X(p)':>12} {'95% CI':>26} {'95% prediction interval':>28}")
        for r in doc["predictions"]:
            ci = f"[{r['ci_low']:.4g}, {r['ci_high']:.4g}]" if r["ci_low"] is not None else "—"
            pi = f"[{r['pi_low']:.4g}, {r['pi_high']:.4g}]" if r["pi_low"] is not None else "—"
            print(f"{r['p']:8.4g} {r['x']:12.5g} {ci:>26} {pi:>28}")
    for p in plots:
        print(f"plot: {p} (and .svg)")
    return 0


def register(sub: Any) -> None:
    u = sub.add_parser("usl", help="fit the Universal Scalability Law to measurements (σ < 0: superlinear)",
                       description="Fit X(p) = γp/(1 + σ(p−1) + κp(p−1)) to a CSV of measurements. "
                       "Repeated rows at the same p are averaged (mean ± SE) and fitted with weights.")
    u.add_argument("action", choices=["fit", "predict"], help="fit: report the model; predict: also predict at --at")
    u.add_argument("data", help="CSV file with a header line")
    u.add_argument("--x", help="column of p (default: p, k, nodes, ... or the first column)")
    u.add_argument("--y", help="column of throughput or speedup (default: speedup, throughput, ... or the second)")
    u.add_argument("--where", help="keep rows where COL=VALUE[,COL=VALUE...] (e.g. algo=mtf,dispatch=hash)")
    u.add_argument("--yerr", help="column of standard errors of y (one row per p: pre-aggregated means)")
    u.add_argument("--runtime", action="store_true", help="y is a runtime: convert to speedup T(p_min)/T(p)")
    u.add_argument("--fix-gamma", type=float, metavar="G", help="pin γ (e.g. 1 for speedups with S(1) = 1)")
    u.add_argument("--at", help="predict: comma-separated p values")
    u.add_argument("--out", help="plot file stem (default: next to the data, DATA_usl.png)")
    u.add_argument("--no-plot", action="store_true", help="write no plot (by default: DATA_usl.png and .svg, or --out)")
    u.add_argument("--json", action="store_true", help="print every number as JSON")
    u.set_defaults(func=cmd_usl)
