"""``superlinear predict`` (the working-set law for one dispatcher) and ``superlinear advise``
(the locality advisor over every dispatcher): tables, result files and plots."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from superlinear.analysis.advisor import Advice, advise, plot_advice
from superlinear.analysis.predict import Prediction, parse_ks, plot_prediction, predict
from superlinear.common.args import non_negative_int, positive_int
from superlinear.common.listing import known
from superlinear.common.scope import generator_scope
from superlinear.common.study import Outcome, Study, add_study_options, console
from superlinear.common.study import Progress as ProgressLine
from superlinear.engine.runs import SuperlinearError, Workload

KINDS = ("predicted = the working-set law on this stream (paper App. A), exact in the engine's work units; "
         "engine work = operation counts of real engine runs (kind work); engine projected = dispatcher CPU time + "
         "slowest worker's CPU time (kind projected). No number here is a measured wall-clock speedup.")
DEFAULT_GENERATED_REQUESTS = 1_000_000


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int, str], None] | None]:
    if not enabled:
        yield None
        return
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=None)

        def update(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=what)

        yield update


def _workload(args: argparse.Namespace) -> tuple[Workload, int]:
    if args.trace:
        return Workload("trace", 0, args.alpha, args.trace), args.requests or 0
    return Workload(args.workload, args.m, args.alpha), args.requests or DEFAULT_GENERATED_REQUESTS


def _fmt(v: float | None, digits: int = 2) -> str:
    if v is None:
        return "—"
    return f"{v:,.{digits}f}" if abs(v) < 1e6 else f"{v:.3g}"


def prediction_table(pred: Prediction) -> Table:
    t = Table(title=f"working-set law: {pred.algo} + {pred.dispatch}, {pred.workload.label()}, m = {pred.m:,}, "
                    f"{pred.requests:,} requests, s = {pred.s:g}",
              caption=KINDS, caption_justify="left")
    cols = ["k", "ℓ(k)", "q(k)", "q·ℓ predicted", f"S law (s={pred.s:g})", "mean |W|", "imbalance"]
    if pred.algo.startswith("lru"):
        cols.append("hit rate")
    if pred.engine:
        cols += ["engine work ×", "pred/engine", "exact", "engine projected ×"]
    for col in cols:
        t.add_column(col, justify="right")
    checks = {c.k: c for c in pred.engine or ()}
    for p, row in zip(pred.points, pred.rows(), strict=True):
        cells = [str(p.k), _fmt(p.ell), _fmt(p.q), _fmt(p.speedup_work_predicted), _fmt(p.speedup_law),
                 _fmt(row["mean_working_set"], 1), _fmt(p.load_imbalance, 3)]
        if pred.algo.startswith("lru"):
            cells.append(_fmt(p.hit_rate, 3))
        if pred.engine:
            c = checks[p.k]
            cells += [_fmt(c.speedup_work), f"{c.predicted_over_engine:.4f}", "yes" if c.exact else "NO",
                      _fmt(c.speedup_projected)]
        t.add_row(*cells)
    return t


class Predict(Study[argparse.Namespace]):
    """``predict``: the working-set law's ℓ(k), q(k) and S(k), optionally checked against the engine."""

    experiment = "predict"

    def run(self, config: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
        return _predict(config, progress is not None)

    def plot(self, out: Path, config: argparse.Namespace, outcome: Outcome) -> list[Path]:
        return plot_prediction(outcome.extra, out)

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        pred = outcome.extra
        console.print(prediction_table(pred))
        console.print(f"law computed in {pred.seconds:,.2f} s (wall clock, one core of this machine)")
        if pred.engine:
            exact = all(c.exact for c in pred.engine)
            console.print("engine comparison: " + ("every worker's predicted work equals the engine's exactly"
                                                   if exact else "MISMATCH between predicted and engine work"))

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"results: {path} and {out / 'result.csv'}; plots: {plots[0]} (and .svg)"]


def _predict(args: argparse.Namespace, show: bool) -> Outcome:
    workload, requests = _workload(args)
    ks = parse_ks(args.k)
    with _progress(show) as progress:
        pred = predict(workload, algo=args.algo, dispatch=args.dispatch, ks=ks, requests=requests, s=args.s,
                       seed=args.seed, rho=args.rho, compare=args.compare, progress=progress)
    config = {"algo": pred.algo, "dispatch": pred.dispatch, "workload": workload.__dict__, "requests": pred.requests,
              "m": pred.m, "k": ks, "s": pred.s, "rho": pred.rho, "seed": pred.seed, "compare": args.compare,
              "law_seconds_wall_one_core": pred.seconds, "kinds": KINDS}
    return Outcome(pred.rows(), config, extra=pred)


def advice_table(advice: Advice) -> Table:
    t = Table(title=f"locality advisor: {advice.algo}, {advice.workload}, m = {advice.m:,}, "
                    f"{advice.requests:,} requests — q(k)·ℓ(k) (predicted work speedup; > k is superlinear)",
              caption="ℓ: work reduction, q: parallelizability (paper App. A); all numbers predicted by the law.",
              caption_justify="left")
    t.add_column("k", justify="right")
    for c in advice.candidates:
        t.add_column(f"{c.name} q·ℓ (ℓ, q)", justify="right")
    t.add_column("best", justify="left")
    for k in advice.ks:
        best = advice.best_at(k)
        cells = []
        for c in advice.candidates:
            p = c.at(k)
            mark = "*" if p.q_ell > k else " "
            cells.append(f"{_fmt(p.q_ell)}{mark} ({_fmt(p.ell)}, {_fmt(p.q)})")
        t.add_row(str(k), *cells, best)
    t.add_row("geo-mean", *(_fmt(c.score) for c in advice.candidates), advice.recommended)
    return t


#: Packet dispatch candidates of ``advise --rules`` (paper Fig. 9d): RSS field sets and the
#: rule-aware dispatcher.
PACKET_CANDIDATES = ("rss:sip", "rss:dip", "rss:sip,dip", "rss:dport", "rss:sip,dip,sport,dport,proto", "rule")


def _packet_advice(args: argparse.Namespace, ks: list[int], progress: Any) -> Advice:
    """Packets: the item of a packet is its first-match rule, candidates are packet dispatchers."""
    from superlinear import _native
    from superlinear.analysis.advisor import advise_assigned

    if not args.trace:
        raise SuperlinearError("advise --rules needs --trace (a packet trace: ClassBench, pcap, pcapng, binary)")
    if args.algo != "mtf":
        raise SuperlinearError("advise --rules scores MRF workers with the MTF cost (exact for independent rules); "
                               "--algo must be mtf")
    w = _native.PacketWorkload.load(args.rules, args.trace, {"actions": args.actions})
    if args.requests:
        w.replay(args.requests)
    w.calibrate(20_000)
    # RSS field lists hold commas, so packet candidates are separated by ';'.
    names = _candidates(args.candidates, ";") or list(PACKET_CANDIDATES)
    for n in names:
        w.describe_dispatch(n, 2)
    assign = {n: (lambda k, n=n: w.assign(n, k, args.seed)) for n in names}
    return advise_assigned(w.items(), w.rules, assign, ks=ks, algo="mtf", workload=f"packets {args.trace}",
                           progress=progress)


def _candidates(text: str | None, separator: str) -> list[str] | None:
    """``--candidates`` as a list; None when not given (all of them). Given but empty is an error,
    not the default."""
    if text is None:
        return None
    names = [c.strip() for c in text.split(separator) if c.strip()]
    if not names:
        raise SuperlinearError(f"--candidates: no dispatcher named in {text!r} (leave the option out for all of them)")
    return names


class Advise(Study[argparse.Namespace]):
    """``advise``: every dispatch candidate scored by the working-set law, the best recommended."""

    experiment = "advise"

    def run(self, config: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
        return _advise(config, progress is not None)

    def plot(self, out: Path, config: argparse.Namespace, outcome: Outcome) -> list[Path]:
        return plot_advice(outcome.extra, out)

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        advice = outcome.extra
        console.print(advice_table(advice))
        best = next(c for c in advice.candidates if c.name == advice.recommended)
        superlinear = [p.k for p in best.points if p.q_ell > p.k]
        console.print(f"recommended: [bold]{advice.recommended}[/bold] (highest geometric mean of q·ℓ over k)"
                      + (f"; superlinear (q·ℓ > k) at k = {', '.join(map(str, superlinear))}" if superlinear else ""))

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"evaluated in {outcome.extra.seconds:,.2f} s (wall clock, one core); results: {path}; "
                f"plots: {plots[0]} (and .svg)"]


def _advise(args: argparse.Namespace, show: bool) -> Outcome:
    workload, requests = _workload(args)
    ks = parse_ks(args.k)
    candidates = None if args.rules else _candidates(args.candidates, ",")
    with _progress(show) as progress:
        if args.rules:
            advice = _packet_advice(args, ks, progress)
        else:
            advice = advise(workload, ks=ks, algo=args.algo, rho=args.rho, requests=requests, seed=args.seed,
                            candidates=candidates, progress=progress)
    config: dict[str, Any] = {"algo": advice.algo, "workload": workload.__dict__, "requests": advice.requests,
                              "m": advice.m, "k": ks, "rho": args.rho, "seed": args.seed,
                              "candidates": [c.name for c in advice.candidates], "recommended": advice.recommended,
                              "rule": "highest geometric mean of q(k)·ℓ(k) over k",
                              "law_seconds_wall_one_core": advice.seconds}
    return Outcome(advice.rows(), config, extra=advice)


#: Options of a generated key workload: refused with --trace, which they would not change.
GENERATOR_OPTIONS = ("workload", "m", "alpha")


def _add_workload_args(p: argparse.ArgumentParser, requests_help: str) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--trace", metavar="FILE", help="key trace (text: one key per line, or binary SLKT)")
    src.add_argument("--workload", choices=["uniform", "zipf"], default="uniform",
                     help="generated keys when no --trace (default uniform)")
    p.add_argument("--m", type=positive_int, default=10_000, help="items of a generated workload (default 10000)")
    p.add_argument("--alpha", type=float, default=1.01, help="zipf exponent (default 1.01)")
    p.add_argument("--requests", type=positive_int, default=None, help=requests_help)
    p.add_argument("--algo", default="mtf", help="worker structure: mtf or lru:C (default mtf)")
    p.add_argument("--rho", type=non_negative_int, default=0,
                   help="work units per LRU miss, as the engine's --rho (default 0; with --compare the engine also "
                   "burns ρ cycles per miss)")
    p.add_argument("--seed", type=non_negative_int, default=1,
                   help="workload and dispatcher seed, as the engine's (default 1)")


def register(sub: Any) -> None:
    """Adds ``predict`` and ``advise``."""
    from superlinear import _native

    dispatchers = known(d["name"] for d in _native.dispatchers())
    req_help = (f"requests (default: the whole trace, or {DEFAULT_GENERATED_REQUESTS:,} generated); "
                "a trace is cut to its first N keys")
    p = sub.add_parser("predict", help="predict ℓ(k), q(k) and S(k) from a request stream (paper App. A)",
                       description="The working-set law: per-request working sets on one worker and on each "
                       "worker's own stream, ℓ(k), q(k), predicted S(k), exact in the engine's work units. "
                       + KINDS)
    _add_workload_args(p, req_help)
    p.add_argument("--dispatch", default="hash", help=f"dispatcher: {dispatchers} (default hash)")
    p.add_argument("--k", default="1,2,4,8,16,32,64", help="comma-separated k (default 1,2,4,...,64)")
    p.add_argument("--s", type=float, default=0.0, help="serial fraction s for the general law (default 0)")
    p.add_argument("--compare", action="store_true",
                   help="also run the engine at every k (and k = 1) and compare its work speedup")
    add_study_options(p, Predict(), "results/predict")
    generator_scope(p, GENERATOR_OPTIONS)

    a = sub.add_parser("advise", help="locality advisor: which dispatcher boosts locality most",
                       description="Score every dispatch candidate with the working-set law (q(k)·ℓ(k) per k) "
                       "and recommend the best.")
    _add_workload_args(a, req_help)
    a.add_argument("--k", default="2,4,8,16,32,64", help="comma-separated k (default 2,4,...,64)")
    a.add_argument("--candidates", metavar="LIST", help="comma-separated dispatchers (default: all of the registry; "
                   "with --rules, separated by ';': " + ";".join(PACKET_CANDIDATES) + ")")
    a.add_argument("--rules", metavar="FILE", help="packets: rule file; --trace is then a packet trace, items are "
                   "first-match rules and candidates are packet dispatchers (paper Fig. 9d)")
    a.add_argument("--actions", default="random:0.5:1", help="with --rules: actions of ClassBench filters")
    add_study_options(a, Advise(), "results/advise")
    generator_scope(a, GENERATOR_OPTIONS)
