"""``superlinear bench``: single-thread lookups per second of every structure and the
dispatcher's cost per request. Timings belong here, never in pass/fail tests."""

from __future__ import annotations

import argparse
import json
from functools import partial
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from superlinear import _native
from superlinear.common.interrupt import interruptible
from superlinear.common.rows import Row, ranged, row_spread
from superlinear.common.study import Outcome, Progress, Study, console, keeping
from superlinear.experiments.repeats import interleaved_rounds

#: (algo, m, compare cycles, miss cycles): the Fig. 5 structures at their panel sizes. The no-cache
#: baseline is left out: with ρ = 0 it does no work at all, and with ρ > 0 it measures the busy loop.
STRUCTURES = [
    ("static", 100_000, 0, 0),
    ("mtf", 100_000, 0, 0),
    ("static", 10_000, 0, 0),
    ("mtf", 10_000, 0, 0),
    ("tree", 500, 0, 0),
    ("splay", 500, 0, 0),
    ("lru:2500", 50_000, 0, 0),
    ("hashmap", 100_000, 0, 0),
]
DISPATCH_KS = (1, 2, 48)
#: Every benchmark as (kind, name, size): a structure and its m, a dispatcher and its k.
Point = tuple[str, str, int]
POINTS: list[Point] = ([("structure", algo, m) for algo, m, _, _ in STRUCTURES]
                       + [("dispatcher", name, k) for name in ("rr", "random", "hash") for k in DISPATCH_KS])


def _lookups(algo: str, m: int, quick: bool) -> int:
    """Lookups timed per structure run (fewer for the linear scans over large m)."""
    return (1 if quick else 5) * (20_000 if m >= 50_000 and algo in ("static", "mtf") else 2_000_000)


class Bench(Study[argparse.Namespace]):
    """``bench``: lookups per second of every structure and the dispatchers' ns per request."""

    experiment = "bench"

    def run(self, config: argparse.Namespace, progress: Progress | None) -> Outcome:
        recorded = {"quick": config.quick, "repeats": config.repeats}
        rounds: dict[Point, list[float]] = {}
        with keeping(lambda: Outcome(_rows(rounds, config.quick), recorded)):
            bench_rounds(config.quick, config.repeats, rounds)
        return Outcome(_rows(rounds, config.quick), recorded)

    def table(self, config: argparse.Namespace, outcome: Outcome) -> None:
        rows = outcome.rows
        runs = (f"median [min–max] of {config.repeats} interleaved rounds" if config.repeats > 1 else "one round")
        t = Table(title=escape(f"Single-thread lookups/s (uniform keys, thread CPU time, w = ρ = 0; {runs})"))
        for c in ("structure", "m", "lookups/s"):
            t.add_column(c, justify="right")
        for r in rows:
            if r["bench"] == "structure":
                t.add_row(r["algo"], f"{r['m']:,}", row_spread(r, "lookups_per_s", ",.0f"))
        console.print(t)
        t = Table(title=escape(f"Dispatcher cost: route + append to per-worker batch ({runs})"))
        for c in ("dispatcher", "k", "ns/request"):
            t.add_column(c, justify="right")
        for r in rows:
            if r["bench"] == "dispatcher":
                t.add_row(r["dispatch"], str(r["k"]), row_spread(r, "ns_per_request", ".2f"))
        console.print(t)

    def json_text(self, path: Path, outcome: Outcome) -> str:
        return json.dumps(outcome.rows, indent=1)

    def footer(self, out: Path, path: Path, plots: list[Path], outcome: Outcome) -> list[str]:
        return [f"results: {path}"]


def bench_rounds(quick: bool, repeats: int, rounds: dict[Point, list[float]]) -> None:
    """Runs every benchmark once per round, ``repeats`` interleaved rounds, adding each figure to
    ``rounds`` as it is measured: per structure lookups/s, per dispatcher and k ns/request;
    measured."""
    cycles = {(algo, m): (w, rho) for algo, m, w, rho in STRUCTURES}

    def measure(point: Point) -> float:
        kind, name, n = point
        if kind == "structure":
            bench = partial(_native.bench_structure, name, n, _lookups(name, n, quick), *cycles[(name, n)])
        else:
            bench = partial(_native.bench_dispatcher, name, n, (1 if quick else 5) * 2_000_000)
        return float(interruptible(bench))

    interleaved_rounds(POINTS, repeats, measure, into=rounds)


def _rows(rounds: dict[Point, list[float]], quick: bool) -> list[Row]:
    """One row per benchmark measured so far: the median of its rounds, with their range."""
    out = []
    for (kind, name, n), values in rounds.items():
        row: Row = ({"bench": "structure", "algo": name, "m": n, "lookups": _lookups(name, n, quick)}
                    if kind == "structure" else {"bench": "dispatcher", "dispatch": name, "k": n})
        field = "lookups_per_s" if kind == "structure" else "ns_per_request"
        out.append({**row, **ranged(field, values), "repeats": len(values)})
    return out
