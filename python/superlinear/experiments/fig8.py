"""Paper Fig. 8 (§4.3, macrobenchmarks): static list vs MRF behind RSS on ClassBench acl1, ipc1,
fw1 (5k rules) and on synthetic independent rule sets of about 2k, 5k and 10k rules (prime
sizes), uniform flows; beside them the tuple-space classifier, its rule-cache front and its flow
cache. Two rows per panel: speedup against the same algorithm at k = 1, and raw packet rate
against the static list."""

from __future__ import annotations

from pathlib import Path

from superlinear.experiments.packets import (
    KS_FULL,
    KS_QUICK,
    RSS5,
    classbench,
    find_data,
    packet_panel,
    series,
    synthetic,
)
from superlinear.experiments.spec import Experiment

__all__ = ["experiment"]

#: Primes close to 2k, 5k and 10k rules (the paper's "close prime" sizes).
RULE_SIZES = (1999, 4999, 9973)


def experiment(quick: bool = False, data: Path | None = None) -> Experiment:
    ks = KS_QUICK if quick else KS_FULL
    panels = []
    root = find_data(data)
    if root is not None:
        # Beside the paper's two lists: the tuple-space classifier (a fast static baseline) and the
        # self-adjusting levels in front of it, a rule-cache front and an exact-match flow cache,
        # whose hot state RSS shrinks as k grows (issue 17).
        algos = [("static", RSS5), ("mrf", RSS5), ("mrf", "rule"), ("tuple-merge", RSS5), ("rule-cache", RSS5),
                 ("flow-cache", RSS5)] \
            + ([] if quick else [("mrf-swap", RSS5)])
        for name, letter in (("acl1", "a"), ("ipc1", "b"), ("fw1", "c")):
            panels.append(packet_panel(letter, f"ClassBench {name} 5k, RSS", classbench(root, name, "5k", quick),
                                       series(*algos), ks))
    for label, n in zip(("d2k", "d5k", "d10k"), RULE_SIZES, strict=True):
        panels.append(packet_panel(label, f"synthetic, {n:,} independent rules, 1 flow/rule", synthetic(n, quick),
                                   series(("static", RSS5), ("mrf", RSS5), ("tuple-merge", RSS5), ("rule-cache", RSS5),
                                          ("flow-cache", RSS5)),
                                   ks))
    return Experiment(
        name="fig8",
        description="Paper Fig. 8: MRF vs static first-match list, RSS dispatch (speedup above, Mpps below)"
        + (" (quick: fewer packets and k)" if quick else ""),
        panels=tuple(panels),
    )
