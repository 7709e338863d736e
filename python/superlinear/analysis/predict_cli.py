"""``superlinear predict`` (the working-set law for one dispatcher) and ``superlinear advise``
(the locality advisor over every dispatcher): tables, result files and plots."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.table import Table

from superlinear.analysis.advisor import Advice, advise, plot_advice
from superlinear.analysis.classifier_model import (
    DEFAULT_SAMPLE,
    ClassifierAdvice,
    WorkPoint,
    advise_classifier,
    plot_classifier_advice,
    predict_point,
    verify,
)
from superlinear.analysis.predict import ENGINE_ROUNDS, Prediction, parse_ks, plot_prediction, predict
from superlinear.common.args import comma_list, non_negative_finite, non_negative_int, positive_int
from superlinear.common.errors import note
from superlinear.common.listing import known
from superlinear.common.progress import progress_bar
from superlinear.common.scope import OptionScope, alpha_scope, generator_scope
from superlinear.common.study import Outcome, Study, add_study_options, console
from superlinear.common.study import Progress as ProgressLine
from superlinear.engine.cli import worker_cycles
from superlinear.engine.runs import RunSpec, SuperlinearError, Workload, check_run_size

KINDS = ("predicted = the working-set law on this stream (paper App. A; mtf, lru:C) or, for workers without one "
         "(splay), the exact simulation of the engine's worker on each worker's dispatched stream; both exact in the "
         "engine's work units; "
         "engine work = operation counts of real engine runs (kind work); engine projected = dispatcher CPU time + "
         "slowest worker's CPU time (kind projected). No number here is a measured wall-clock speedup.")
DEFAULT_GENERATED_REQUESTS = 1_000_000


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int, str], None] | None]:
    if not enabled:
        yield None
        return
    with progress_bar(True) as bar:
        task = bar.add_task("", total=None)

        def update(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=what)

        yield update


def _workload(args: argparse.Namespace) -> tuple[Workload, int]:
    if args.trace:
        return Workload("trace", 0, args.alpha, args.trace), args.requests or 0
    return Workload(args.workload, args.m, args.alpha), args.requests or DEFAULT_GENERATED_REQUESTS


def _check_size(args: argparse.Namespace, workload: Workload, requests: int, ks: list[int]) -> None:
    """Refuses a prediction whose streams (and, with --compare or --verify, engine runs) would not
    fit in memory, before anything is generated."""
    spec = RunSpec(algo=args.algo or "mtf", dispatch=getattr(args, "dispatch", None) or "hash", k=max(ks),
                   workload=workload, requests=requests)
    # Every flag that sizes it: a cache's capacity (--algo lru:C) held per worker too.
    check_run_size(spec, (f"--algo {args.algo} " if args.algo else "") + ("" if args.trace else f"--m {args.m:,} ")
                   + f"--requests {requests:,} at k = {max(ks):,}")


def _fmt(v: float | None, digits: int = 2) -> str:
    if v is None:
        return "—"
    return f"{v:,.{digits}f}" if abs(v) < 1e6 else f"{v:.3g}"


def prediction_table(pred: Prediction) -> Table:
    t = Table(title=f"{pred.model}: {pred.algo} + {pred.dispatch}, {pred.workload.label()}, m = {pred.m:,}, "
                    f"{pred.requests:,} requests, s = {pred.s:g}",
              caption=KINDS, caption_justify="left")
    # S: Theorem A.3's serial fraction s applied to q·ℓ, whether q·ℓ comes from the law or, for a
    # worker without one, from the exact simulation; the imbalance is of requests, not work.
    cols = ["k", "ℓ(k)", "q(k)", "q·ℓ predicted", f"S, Thm A.3 (s={pred.s:g})", "mean |W|", "imbalance (requests)"]
    if pred.algo.startswith("lru"):
        cols.append("hit rate")
    if pred.engine:
        cols += ["engine work ×", "pred/engine", "exact", f"engine projected × (median, range of {ENGINE_ROUNDS})"]
    for col in cols:
        # A median [range] cell is never cut (rich would end it in "…" in a narrow terminal or
        # a pipe): the headers wrap instead.
        t.add_column(col, justify="right", no_wrap=col.startswith("engine projected"))
    checks = {c.k: c for c in pred.engine or ()}
    for p, row in zip(pred.points, pred.rows(), strict=True):
        cells = [str(p.k), _fmt(p.ell), _fmt(p.q), _fmt(p.speedup_work_predicted), _fmt(p.speedup_law),
                 _fmt(row["mean_working_set"], 1), _fmt(p.load_imbalance, 3)]
        if pred.algo.startswith("lru"):
            cells.append(_fmt(p.hit_rate, 3))
        if pred.engine:
            c = checks[p.k]
            cells += [_fmt(c.speedup_work), f"{c.predicted_over_engine:.4f}", "yes" if c.exact else "NO",
                      f"{_fmt(c.speedup_projected)} [{_fmt(c.speedup_projected_lo)}–{_fmt(c.speedup_projected_hi)}]"]
        t.add_row(*cells)
    return t


class Predict(Study[argparse.Namespace]):
    """``predict``: the working-set law's ℓ(k), q(k) and S(k), optionally checked against the engine."""

    experiment = "predict"

    def run(self, config: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
        return _predict(config, progress is not None)

    def plot(self, out: Path, config: argparse.Namespace, outcome: Outcome) -> list[Path]:
        if isinstance(outcome.extra, ClassifierAdvice):
            return []
        return plot_prediction(outcome.extra, out)

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        pred = outcome.extra
        if isinstance(pred, ClassifierAdvice):
            console.print(classifier_table(pred, "predict"))
            if pred.verified:
                console.print(verified_table(pred))
            warning = pred.band_warning()
            if warning:
                console.print(warning, style="yellow", markup=False)
            return
        console.print(prediction_table(pred))
        console.print(f"model: {pred.model}; computed in {pred.seconds:,.2f} s (wall clock, one core of this machine)")
        if pred.engine:
            exact = all(c.exact for c in pred.engine)
            console.print("engine comparison: " + ("every worker's predicted work equals the engine's exactly"
                                                   if exact else "MISMATCH between predicted and engine work"))

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        if isinstance(outcome.extra, ClassifierAdvice):
            return [f"results: {path} and {out / 'result.csv'}"]
        return [f"results: {path} and {out / 'result.csv'}; plots: {plots[0]} (and .svg)"]


def _predict_packets(args: argparse.Namespace, ks: list[int], show: bool) -> Outcome:
    """``predict --rules``: one dispatcher, the run's classifier simulated at every k."""
    w = _packet_workload(args)
    algo = _classifier_algo(args)
    dispatch = args.dispatch or "rule"
    points: list[WorkPoint] = []
    with _progress(show) as progress:
        for i, k in enumerate(ks):
            if progress is not None:
                progress(i, len(ks), f"{dispatch} at k = {k}")
            points.append(predict_point(w, algo, dispatch, k, sample=args.sample, seed=args.seed))
    info = w.info()
    pred = ClassifierAdvice(algo=algo, workload=f"packets {args.trace}", rules=int(info["rules"]),
                            packets=int(info["packets"]), ks=tuple(ks), points=tuple(points))
    if args.compare:
        pred = replace(pred, verified=tuple(verify(w, algo, points, args.seed)))
    config = {"algo": algo, "dispatch": dispatch, "rules": args.rules, "trace": args.trace, "k": ks,
              "sample": args.sample, "seed": args.seed, "compare": args.compare, "kinds": CLASSIFIER_KINDS,
              "band_warning": pred.band_warning()}
    return Outcome(pred.rows(), config, extra=pred)


def _predict(args: argparse.Namespace, show: bool) -> Outcome:
    ks = parse_ks(args.k)
    if args.rules:
        return _predict_packets(args, ks, show)
    workload, requests = _workload(args)
    _check_size(args, workload, requests, ks)
    with _progress(show) as progress:
        pred = predict(workload, algo=args.algo or "mtf", dispatch=args.dispatch or "hash", ks=ks, requests=requests,
                       s=args.s, seed=args.seed, rho=args.rho, compare=args.compare, progress=progress)
    config = {"algo": pred.algo, "dispatch": pred.dispatch, "workload": workload.__dict__, "requests": pred.requests,
              "m": pred.m, "k": ks, "s": pred.s, "rho": pred.rho, "seed": pred.seed, "compare": args.compare,
              "law_seconds_wall_one_core": pred.seconds, "model": pred.model, "kinds": KINDS}
    return Outcome(pred.rows(), config, extra=pred)


def advice_table(advice: Advice) -> Table:
    t = Table(title=f"locality advisor: {advice.algo}, {advice.workload}, m = {advice.m:,}, "
                    f"{advice.requests:,} requests — q(k)·ℓ(k) (predicted work speedup; > k is superlinear)",
              caption=f"ℓ: work reduction, q: parallelizability (paper App. A); all numbers predicted by the "
                      f"{advice.model}.",
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


CALIBRATION = 100_000
"""Packets that calibrate the rule-aware dispatcher, as ``superlinear classify``'s default, so
that the ``rule`` candidate is the dispatcher a classify run uses."""

CLASSIFIER_KINDS = ("predicted = the run's own classifier simulated exactly on a sample of the trace behind each "
                    "dispatcher (model and sample size per row; exact when the sample is the whole trace, else "
                    "extrapolated, with a band from each half of the sample carried to the whole trace); obtained = "
                    "a real classify run over the whole trace (kind work); projected = "
                    "dispatcher CPU + busiest worker's work × CPU per work unit, timed on this machine.")


def _packet_workload(args: argparse.Namespace) -> Any:
    """The rules and the packet trace of ``--rules``/``--trace``, calibrated as ``classify`` does."""
    from superlinear import _native
    from superlinear.classify.workload import check_packet_count

    if not args.trace:
        raise SuperlinearError("--rules needs --trace (a packet trace: ClassBench, pcap, pcapng, binary)")
    if args.requests:
        check_packet_count(args.requests, flag="--requests")
    w = _native.PacketWorkload.load(args.rules, args.trace, {"actions": args.actions})
    if args.requests:
        w.replay(args.requests)
    w.calibrate(CALIBRATION)
    return w


def _classifier_algo(args: argparse.Namespace) -> str:
    from superlinear import _native

    algo = args.algo or "mrf"
    names = [a["name"] for a in _native.classify_algorithms()]
    if algo not in names:
        raise SuperlinearError(f"--algo {algo!r}: with --rules the worker is a classifier ({', '.join(names)})")
    return algo


def _packet_advice(args: argparse.Namespace, ks: list[int], progress: Any) -> ClassifierAdvice:
    """Packets: every candidate scored by simulating the run's classifier behind it."""
    w = _packet_workload(args)
    algo = _classifier_algo(args)
    # RSS field lists hold commas, so packet candidates are separated by ';'.
    names = _candidates(args.candidates, ";") or list(PACKET_CANDIDATES)
    for n in names:
        w.describe_dispatch(n, 2)
    advice = advise_classifier(w, names, ks, algo=algo, sample=args.sample, seed=args.seed,
                               workload=f"packets {args.trace}", progress=progress)
    if args.verify:
        if args.verify > len(names):
            note(f"--verify {args.verify:,}: there are {len(names)} candidates, each is run")
        top = [p for k in ks for p in advice.top(k, args.verify)]
        advice = replace(advice, verified=tuple(verify(w, algo, top, args.seed)))
    return advice


def classifier_table(advice: ClassifierAdvice, command: str = "dispatch advisor") -> Table:
    """The predicted points of ``advice``; ``command`` names what made them (predict, the advisor)."""
    models = ", ".join(dict.fromkeys(p.model for p in advice.points))
    t = Table(title=f"{command}: {advice.algo} workers, {advice.workload}, {advice.rules:,} rules, "
                    f"{advice.packets:,} packets — predicted work speedup (> k is superlinear); model: {models}",
              caption=CLASSIFIER_KINDS, caption_justify="left")
    for col in ("candidate", "k", "predicted work ×", "band", "busiest share", "imbalance", "dispatch ns/pkt",
                "projected ×"):
        t.add_column(col, justify="left" if col == "candidate" else "right")
    for p in sorted(advice.points, key=lambda p: (p.k, -p.predicted)):
        name = p.candidate if p.dispatch == p.candidate else f"{p.candidate} ({p.dispatch})"
        t.add_row(name, str(p.k), f"{_fmt(p.predicted)}{'*' if p.predicted > p.k else ''}",
                  f"{_fmt(p.band[0])} – {_fmt(p.band[1])}", f"{p.busiest_share:.3f}",
                  f"{p.load_imbalance:.2f}", f"{p.dispatch_ns_per_packet:,.1f}", _fmt(advice.projected(p)))
    return t


def verified_table(advice: ClassifierAdvice) -> Table:
    t = Table(title="verify: the real classifier (classify --no-measure: k workers and one worker over the whole "
                    "trace), work speedup", caption="error = predicted / obtained − 1", caption_justify="left")
    for col in ("candidate", "k", "predicted ×", "obtained ×", "error", "busiest worker's work", "imbalance"):
        t.add_column(col, justify="left" if col == "candidate" else "right")
    for v in advice.verified:
        t.add_row(v.candidate, str(v.k), _fmt(v.predicted), _fmt(v.obtained), f"{v.error:+.1%}", f"{v.work_span:,}",
                  f"{v.load_imbalance:.2f}")
    return t


def _print_classifier_advice(advice: ClassifierAdvice) -> None:
    console.print(classifier_table(advice))
    if advice.verified:
        console.print(verified_table(advice))
        worst = max(abs(v.error) for v in advice.verified)
        console.print(f"largest prediction error over the runs verified: {worst:.1%}")
    best = advice.recommended
    console.print(f"recommended: [bold]{best}[/bold] (highest geometric mean of predicted work speedup over k; "
                  f"model: {advice.at(best, max(advice.ks)).model})")
    for k in advice.ks:
        p = advice.at(best, k)
        console.print(f"  k = {k}: predicted {_fmt(p.predicted)}× [{_fmt(p.band[0])} – {_fmt(p.band[1])}], "
                      f"busiest worker {p.busiest_share:.1%} of the work, dispatcher "
                      f"{p.dispatch_ns_per_packet:,.1f} ns/packet serial, projected {_fmt(advice.projected(p))}×")
    warning = advice.band_warning()
    if warning:
        console.print(warning, style="yellow", markup=False)
    note = advice.disagreement()
    by_time = advice.recommended_by_projected
    console.print(note or ("the projected-time ranking (work-span + dispatcher cost) agrees: " + by_time
                           if by_time == best else
                           f"the projected-time ranking (work-span + dispatcher cost) puts {by_time} first, within "
                           f"the timing margin of {best}: no reason to prefer it"))


def _candidates(text: str | None, separator: str) -> list[str] | None:
    """``--candidates`` as a list; None when not given (all of them). Given but empty is an error,
    not the default."""
    if text is None:
        return None
    return comma_list("--candidates", text, separator,
                      empty=f"--candidates: no dispatcher named in {text!r} (leave the option out for all of them)")


class Advise(Study[argparse.Namespace]):
    """``advise``: every dispatch candidate scored by the working-set law, the best recommended."""

    experiment = "advise"

    def run(self, config: argparse.Namespace, progress: ProgressLine | None) -> Outcome:
        return _advise(config, progress is not None)

    def plot(self, out: Path, config: argparse.Namespace, outcome: Outcome) -> list[Path]:
        if isinstance(outcome.extra, ClassifierAdvice):
            return plot_classifier_advice(outcome.extra, out)
        return plot_advice(outcome.extra, out)

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        advice = outcome.extra
        if isinstance(advice, ClassifierAdvice):
            _print_classifier_advice(advice)
            return
        console.print(advice_table(advice))
        best = next(c for c in advice.candidates if c.name == advice.recommended)
        superlinear = [p.k for p in best.points if p.q_ell > p.k]
        console.print(f"recommended: [bold]{advice.recommended}[/bold] (highest geometric mean of q·ℓ over k)"
                      + (f"; superlinear (q·ℓ > k) at k = {', '.join(map(str, superlinear))}" if superlinear else ""))

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        if isinstance(outcome.extra, ClassifierAdvice):
            return [f"results: {path} and {out / 'result.csv'}; plots: {plots[0]} (and .svg)"]
        return [f"evaluated in {outcome.extra.seconds:,.2f} s (wall clock, one core); results: {path}; "
                f"plots: {plots[0]} (and .svg)"]


def _advise(args: argparse.Namespace, show: bool) -> Outcome:
    ks = parse_ks(args.k)
    if args.rules:
        with _progress(show) as progress:
            packets = _packet_advice(args, ks, progress)
        pconfig: dict[str, Any] = {"algo": packets.algo, "rules": args.rules, "trace": args.trace,
                                   "requests": packets.packets, "m": packets.rules, "k": ks, "seed": args.seed,
                                   "sample": args.sample, "candidates": packets.candidates,
                                   "recommended": packets.recommended,
                                   "recommended_by_projected": packets.recommended_by_projected,
                                   "rule": "highest geometric mean of the predicted work speedup over k",
                                   "disagreement": packets.disagreement(), "kinds": CLASSIFIER_KINDS,
                                   "band_warning": packets.band_warning(),
                                   "verified": [{"candidate": v.candidate, "k": v.k, "predicted": v.predicted,
                                                 "obtained": v.obtained, "error": v.error}
                                                for v in packets.verified]}
        return Outcome(packets.rows(), pconfig, extra=packets)
    workload, requests = _workload(args)
    _check_size(args, workload, requests, ks)
    candidates = _candidates(args.candidates, ",")
    with _progress(show) as progress:
        advice = advise(workload, ks=ks, algo=args.algo or "mtf", rho=args.rho, requests=requests, seed=args.seed,
                        candidates=candidates, progress=progress)
    config: dict[str, Any] = {"algo": advice.algo, "workload": workload.__dict__, "requests": advice.requests,
                              "m": advice.m, "k": ks, "rho": args.rho, "seed": args.seed,
                              "candidates": [c.name for c in advice.candidates], "recommended": advice.recommended,
                              "rule": "highest geometric mean of q(k)·ℓ(k) over k", "model": advice.model,
                              "law_seconds_wall_one_core": advice.seconds}
    return Outcome(advice.rows(), config, extra=advice)


#: Options of a generated key workload: refused with --trace, which they would not change.
GENERATOR_OPTIONS = ("workload", "m", "alpha")
#: Options of the key-stream law (without --rules) and of the classifier simulation (with it):
#: each mode refuses the other's (``predict --rules R --trace T --rho 5`` would run as without --rho).
KEY_OPTIONS = {"rho": "it is the work per cache miss of a key workload's --algo lru:C",
               "s": "it is the serial fraction of the key-stream law"}
PACKET_OPTIONS = {"actions": "it names the actions of ClassBench filters given with --rules",
                  "sample": "it sizes the classifier simulation of --rules",
                  "verify": "it runs the classifier of --rules for the best candidates"}


def _mode_scope(parser: argparse.ArgumentParser, one_dispatcher: bool) -> None:
    """Refuses the options of the other mode (``KEY_OPTIONS`` with --rules, ``PACKET_OPTIONS``
    without), --rho beside a worker without misses and, with ``one_dispatcher`` (predict's
    --dispatch), --seed where that dispatcher and the trace draw nothing; then --alpha without
    the zipf workload (:func:`alpha_scope`) and --actions beside rules that carry their own
    (:func:`actions_scope`). Call after the parser's ``func`` is set; it wraps it."""
    from superlinear.classify.cli import actions_scope, refuse_unseeded_dispatch
    from superlinear.engine.cli import refuse_unused_seed
    from superlinear.engine.runs import WORKER_PARAMETERS

    scope = OptionScope(parser, only=(*KEY_OPTIONS, *PACKET_OPTIONS, "seed"))
    inner: Callable[[argparse.Namespace], int] = parser.get_default("func")

    def func(args: argparse.Namespace) -> int:
        if args.rules:
            scope.check(args, {*PACKET_OPTIONS, "seed"}, "with --rules", KEY_OPTIONS)
            if one_dispatcher and OptionScope.given(args, "seed"):
                dispatch = args.dispatch or "rule"
                refuse_unseeded_dispatch(dispatch, f"with --rules and --dispatch {dispatch}"
                                         + ("" if args.dispatch else ", the default"))
        else:
            scope.check(args, {*KEY_OPTIONS, "seed"}, "without --rules", PACKET_OPTIONS)
            if one_dispatcher:
                refuse_unused_seed(args.trace, args.dispatch or "hash", OptionScope.given(args, "seed"))
            algo = args.algo or "mtf"
            if args.rho and algo.split(":", 1)[0] not in WORKER_PARAMETERS["rho"][1]:
                raise SuperlinearError(f"--rho {args.rho} has no effect with --algo {algo}"
                                       + ("" if args.algo else ", the default")
                                       + " (it is the work per cache miss, for --algo lru:C and the other caches)")
        scope.fill(args)
        return inner(args)

    parser.set_defaults(func=func)
    alpha_scope(parser, "uniform")
    actions_scope(parser)


def _add_workload_args(p: argparse.ArgumentParser, requests_help: str, rho_note: str = "") -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--trace", metavar="FILE", help="key trace (text: one unsigned integer key per line, # comments; "
                     "or binary SLKT)")
    src.add_argument("--workload", choices=["uniform", "zipf"], default="uniform",
                     help="generated keys when no --trace (default uniform)")
    p.add_argument("--m", type=positive_int, default=10_000, help="items of a generated workload (default 10000)")
    p.add_argument("--alpha", type=non_negative_finite, default=1.01, help="zipf exponent (default 1.01)")
    p.add_argument("--requests", type=positive_int, default=None, help=requests_help)
    p.add_argument("--algo", default=None, help="worker structure: mtf or lru:C (the working-set law; default "
                   "mtf), or another engine worker such as splay (exact simulation of the worker); with --rules a "
                   "classifier: mrf, mrf-swap or static (default mrf)")
    p.add_argument("--rho", type=worker_cycles, default=0,
                   help=f"work units per LRU miss, as the engine's --rho (default 0{rho_note})")
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
    _add_workload_args(p, req_help, "; with --compare the engine also burns ρ cycles per miss")
    p.add_argument("--dispatch", default=None, help=f"dispatcher: {dispatchers} (default hash); with --rules a "
                   "packet dispatcher (rss:FIELDS, rule, rr, random; default rule)")
    p.add_argument("--k", "-k", default="1,2,4,8,16,32,64", help="comma-separated k (default 1,2,4,...,64)")
    p.add_argument("--s", type=float, default=0.0, help="serial fraction s for the general law (default 0)")
    p.add_argument("--compare", action="store_true",
                   help="also run the engine (with --rules: the classifier) at every k and k = 1 and compare its "
                   "work speedup (the engine's projected speedup: median [range] of 3 interleaved rounds)")
    p.add_argument("--rules", metavar="FILE", help="packets: rule file; --trace is then a packet trace and the "
                   "prediction simulates the classifier (--algo mrf|mrf-swap|static) behind --dispatch")
    p.add_argument("--actions", default="random:0.5:1", help="with --rules: actions of ClassBench filters")
    p.add_argument("--sample", type=positive_int, default=DEFAULT_SAMPLE,
                   help=f"with --rules: packets of the trace simulated (default {DEFAULT_SAMPLE:,}; the whole trace "
                   "when shorter)")
    add_study_options(p, Predict(), "results/predict")
    generator_scope(p, GENERATOR_OPTIONS)
    _mode_scope(p, one_dispatcher=True)

    a = sub.add_parser("advise", help="locality advisor: which dispatcher boosts locality most",
                       description="Score every dispatch candidate with the working-set law (q(k)·ℓ(k) per k) "
                       "and recommend the best.")
    _add_workload_args(a, req_help)
    a.add_argument("--k", "-k", default="2,4,8,16,32,64", help="comma-separated k (default 2,4,...,64)")
    a.add_argument("--candidates", metavar="LIST", help="comma-separated dispatchers (default: all of the registry; "
                   "with --rules, separated by ';': " + ";".join(PACKET_CANDIDATES) + ")")
    a.add_argument("--rules", metavar="FILE", help="packets: rule file; --trace is then a packet trace, items are "
                   "first-match rules and candidates are packet dispatchers (paper Fig. 9d)")
    a.add_argument("--actions", default="random:0.5:1", help="with --rules: actions of ClassBench filters")
    a.add_argument("--sample", type=positive_int, default=DEFAULT_SAMPLE,
                   help=f"with --rules: packets of the trace simulated (default {DEFAULT_SAMPLE:,}; the whole trace "
                   "when shorter)")
    a.add_argument("--verify", type=positive_int, nargs="?", const=3, default=0, metavar="N",
                   help="with --rules: run the real classifier (k workers and one, the whole trace) for the N best "
                   "candidates at each k (default 3) and print predicted against obtained")
    add_study_options(a, Advise(), "results/advise")
    generator_scope(a, GENERATOR_OPTIONS)
    _mode_scope(a, one_dispatcher=False)
