"""Shared pieces of the packet-classifier experiments (Figs. 8 and 9): where the ClassBench data
is, the grid sizes, and the series."""

from __future__ import annotations

import os
from pathlib import Path

from superlinear.classify.workload import PacketWorkloadSpec
from superlinear.common.errors import SuperlinearError, note
from superlinear.experiments.spec import Panel, Series

KS_FULL = (1, 2, 4, 8, 16, 32)
KS_QUICK = (1, 2, 8, 32)
#: Packets per run: ClassBench traces (about 46,000 headers) are replayed to this length, as
#: a traffic generator loops a capture; synthetic traces are generated this long.
PACKETS_FULL = 1_000_000
PACKETS_QUICK = 200_000
#: Steady state (``--exclude-warmup``): a quarter of the counted packets again is served first.
#: That is over five passes of a ClassBench trace, and over the coupon-collector bound
#: n·(ln n + 2) for every rule of a 10k-rule set to reach a k = 1 worker's order.
WARMUP_FRACTION = 4
#: The 5-tuple RSS of the paper's testbed.
RSS5 = "rss:sip,dip,sport,dport,proto"
#: Where ``--data`` is looked for when not given.
DEFAULT_DATA = (Path("../shared/data/classbench"), Path("shared/data/classbench"), Path("data/classbench"))


def find_data(data: Path | None) -> Path | None:
    """The ClassBench folder: ``--data``, ``$SUPERLINEAR_DATA`` or a default location; one that
    is not a folder is refused, naming where it came from."""
    env = os.environ.get("SUPERLINEAR_DATA")
    given = data if data is not None else Path(env) if env else None
    if given is not None:
        source = "--data" if data is not None else "$SUPERLINEAR_DATA"
        if not given.exists():
            raise SuperlinearError(f"{given}: no such folder ({source} names the folder holding acl1_5k, "
                                   "acl1_5k_trace, ...)")
        if not given.is_dir():
            raise SuperlinearError(f"{given}: {source} must be a folder holding acl1_5k, acl1_5k_trace, ...")
        return given
    found = next((d for d in DEFAULT_DATA if (d / "acl1_5k").exists()), None)
    if found is not None:
        # Found relative to the working folder, not asked for: said, so that a run from
        # elsewhere, which reads other files or none, is no surprise.
        note(f"ClassBench data: {found.resolve()} (found beside the working folder; --data DIR names another)")
    return found


def classbench(data: Path, name: str, size: str, quick: bool) -> PacketWorkloadSpec:
    """ClassBench set ``name`` (acl1, ipc1, fw1) of ``size`` (1k, 5k, 10k), its trace replayed."""
    rules = data / f"{name}_{size}"
    return PacketWorkloadSpec(kind="files", name=f"ClassBench {name} {size}", rules=str(rules),
                              trace=str(rules) + "_trace", packets=PACKETS_QUICK if quick else PACKETS_FULL)


def synthetic(rules: int, quick: bool, depth: int = 0, flows: int = 1, catch_all: float = 0.0,
              packets: int | None = None) -> PacketWorkloadSpec:
    """A synthetic workload of the paper (uniform flows)."""
    n = packets or (PACKETS_QUICK if quick else PACKETS_FULL)
    return PacketWorkloadSpec(kind="synthetic", synthetic_rules=rules, depth=depth, flows_per_rule=flows,
                              catch_all=catch_all, packets=n)


def series(*pairs: tuple[str, str]) -> tuple[Series, ...]:
    return tuple(Series(algo, dispatch) for algo, dispatch in pairs)


def packet_panel(name: str, title: str, workload: PacketWorkloadSpec, series: tuple[Series, ...],
                 ks: tuple[int, ...], metric: str = "packets") -> Panel:
    """A packet panel against the static list, with its steady-state warm-up declared."""
    return Panel(name=name, title=title, workload=workload, series=series, ks=ks, requests=0, metric=metric,
                 static_baseline="static", warmup=workload.packets // WARMUP_FRACTION)
