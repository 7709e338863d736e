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


class Bench(Study[argparse.Namespace]):
    """``bench``: lookups per second of every structure and the dispatchers' ns per request."""

    experiment = "bench"

    def run(self, config: argparse.Namespace, progress: Progress | None) -> Outcome:
        recorded = {"quick": config.quick, "repeats": config.repeats}
        rounds: dict[tuple[str, str, int], tuple[Row, list[float]]] = {}
        with keeping(lambda: Outcome(_rows(rounds), recorded)):
            bench_rounds(config.quick, config.repeats, rounds)
        return Outcome(_rows(rounds), recorded)

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


def bench_rounds(quick: bool, repeats: int, rounds: dict[tuple[str, str, int], tuple[Row, list[float]]]) -> None:
    """Runs every benchmark once per round, ``repeats`` rounds (interleaved, so a slow stretch of
    the machine touches each alike), adding each figure to ``rounds`` as it is measured: one
    entry per structure (lookups/s) and per dispatcher and k (ns/request); measured."""
    scale = 1 if quick else 5
    for _ in range(repeats):
        for algo, m, w, rho in STRUCTURES:
            lookups = scale * (20_000 if m >= 50_000 and algo in ("static", "mtf") else 2_000_000)
            rate = interruptible(partial(_native.bench_structure, algo, m, lookups, w, rho))
            rounds.setdefault(("structure", algo, m), ({"bench": "structure", "algo": algo, "m": m,
                                                        "lookups": lookups}, []))[1].append(rate)
        for name in ("rr", "random", "hash"):
            for k in DISPATCH_KS:
                ns = interruptible(partial(_native.bench_dispatcher, name, k, scale * 2_000_000))
                rounds.setdefault(("dispatcher", name, k), ({"bench": "dispatcher", "dispatch": name, "k": k},
                                                            []))[1].append(ns)


def _rows(rounds: dict[tuple[str, str, int], tuple[Row, list[float]]]) -> list[Row]:
    """One row per benchmark measured so far: the median of its rounds, with their range."""
    out = []
    for key, (row, values) in rounds.items():
        field = "lookups_per_s" if key[0] == "structure" else "ns_per_request"
        out.append({**row, **ranged(field, values), "repeats": len(values)})
    return out

