"""Paper Fig. 9 (§4.3, microbenchmarks): (a) mean per-packet time on ClassBench acl1 5k; (b)
dependency depth d = 1, 2, 4, 8 (each of 5k base rules becomes a chain of d + 1 rules, traffic to
the chain tails); (c) flow diversity 1, 5, 50, 500 flows per rule (5k independent rules, 5-tuple
RSS); (d) hash functions at 500 flows per rule: source IP only, 5-tuple, destination port, and
the rule-aware dispatcher; (e–g) the same dispatcher comparison on ClassBench acl1, ipc1, fw1, with
the two-choice balancing dispatcher and heavy-flow spraying beside them; (a) also shows the tuple-space classifiers."""

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
from superlinear.experiments.spec import Experiment, Panel

__all__ = ["experiment"]

DISPATCHERS = ("rss:sip", RSS5, "rss:sip,dip", "rss:dip", "rss:dport", "rule",
               "two-choice:" + RSS5.removeprefix("rss:"), "spray:" + RSS5.removeprefix("rss:"))


def experiment(quick: bool = False, data: Path | None = None) -> Experiment:
    ks = KS_QUICK if quick else KS_FULL
    base = 997 if quick else 4999
    panels: list[Panel] = []
    root = find_data(data)
    if root is not None:
        acl1 = classbench(root, "acl1", "5k", quick)
        panels.append(packet_panel("a", "mean time per packet, ClassBench acl1 5k", acl1,
                                   series(("static", RSS5), ("mrf", RSS5), ("tuple-merge", RSS5), ("rule-cache", RSS5),
                                          ("flow-cache", RSS5)),
                                   ks, metric="latency"))
    for d in (1, 2, 4, 8):
        panels.append(packet_panel(f"b{d}", f"dependency depth d = {d} ({base:,} chains of {d + 1})",
                                   synthetic(base, quick, depth=d, packets=100_000 if quick else 500_000),
                                   series(("mrf", RSS5)), ks))
    for f in (1, 5, 50, 500):
        panels.append(packet_panel(f"c{f}", f"{f} flows per rule ({base:,} independent rules), 5-tuple RSS",
                                   synthetic(base, quick, flows=f), series(("mrf", RSS5)), ks))
    hashes = series(*(("mrf", h) for h in ("rss:sip", RSS5, "rss:dport", "rule")))
    panels.append(packet_panel("d", f"hash functions, 500 flows per rule ({base:,} independent rules)",
                               synthetic(base, quick, flows=500), hashes, ks))
    if root is not None:
        for name, letter in (("acl1", "e"), ("ipc1", "f"), ("fw1", "g")):
            trace = classbench(root, name, "5k", quick)
            panels.append(packet_panel(letter, f"dispatchers, ClassBench {name} 5k", trace,
                                       series(*(("mrf", h) for h in DISPATCHERS)), KS_QUICK))
    return Experiment(
        name="fig9",
        description="Paper Fig. 9: latency, dependency depth, flow diversity and dispatch hash (MRF)"
        + (" (quick: 997 base rules, fewer packets and k)" if quick else ""),
        panels=tuple(panels),
    )
