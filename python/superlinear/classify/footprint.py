"""Memory per classifier worker and where its hot state fits in the cache hierarchy
(issue 17, ``reproduce million-flows``).

Three kinds of number, each row field named for its kind:

* exact counts (``own_bytes``, ``shared_bytes``, ``hot_bytes_max``, ``hot_items_max``, ...):
  bytes of the worker's own data structures and of the part its stream touches, from the crate's
  ``footprint`` (``crates/classify/src/footprint.rs``: allocated lengths × element sizes, and
  the exact distinct rules and flows of every worker's stream under the run's routing);
* predicted (``law_*``): the working-set law (paper App. A, ``superlinear predict``) on the same
  item stream and routing: the largest mean working set of a worker (distinct items between two
  requests of one item), the work speedup q(k)·ℓ(k) of move-to-front workers over the rule
  stream (MRF), and the hit rate of an LRU cache of the flow cache's size over the flow stream;
* the cache sizes of this machine (``/sys/devices/system/cpu/cpu0/cache``): which level first
  holds the hot state (``hot_fits``, from the count; ``law_fits``, from the law).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from superlinear.common.rows import Row

__all__ = ["SYSFS_CACHE", "cache_levels", "fits", "footprint_row", "level_size"]

SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")


def level_size(text: str) -> int:
    """A sysfs cache size (``32K``, ``512K``, ``32768K``, ``1M``) in bytes."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale


def cache_levels(root: Path = SYSFS_CACHE) -> dict[str, int]:
    """Data and unified caches of CPU 0, smallest first: ``{"L1d": 32768, "L2": ..., "L3": ...}``
    (empty where sysfs does not say)."""
    levels: dict[str, int] = {}
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = level_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        levels[f"L{level}" + ("d" if kind == "Data" else "")] = size
    return dict(sorted(levels.items(), key=lambda kv: kv[1]))


def fits(size: float | None, levels: dict[str, int]) -> str | None:
    """The smallest cache level that holds ``size`` bytes, ``DRAM`` beyond the largest, None
    without a size or without cache sizes."""
    if size is None or not levels:
        return None
    return next((name for name, cap in levels.items() if size <= cap), "DRAM")


_CACHE: dict[tuple[Any, ...], Row] = {}
_MODELS: dict[tuple[int, str, str], Any] = {}


def _law(w: Any, kind: str, algo: str) -> Any:
    """The law's model over the rule or flow stream of ``w`` (built once)."""
    from superlinear import _native

    key = (id(w), kind, algo)
    if key not in _MODELS:
        if kind == "rules":
            items, m = w.items(), int(w.rules)
        else:
            items = w.flow_ids()
            m = max(items, default=-1) + 1
        if len(_MODELS) > 8:
            _MODELS.clear()
        _MODELS[key] = _native.LawModel.from_items(items, m, algo, 0)
    return _MODELS[key]


def footprint_row(w: Any, algo: str, dispatch: str, k: int, seed: int = 1) -> Row:
    """Row fields of memory per worker for ``algo`` behind ``dispatch`` at k on workload ``w``
    (a ``_native.PacketWorkload``): exact counts, the law's prediction and the cache levels."""
    key = (id(w), algo, dispatch, k, seed)
    if key in _CACHE:
        return dict(_CACHE[key])
    levels = cache_levels()
    f = w.footprint(algo, dispatch, k, seed)
    busiest = max(f["workers"], key=lambda x: x["hot_bytes"])
    row: Row = {
        "own_bytes": f["own_bytes"],
        "shared_bytes": f["shared_bytes"],
        "state_bytes": f["own_bytes"] + f["shared_bytes"],
        "hot_state": f["hot"],
        "hot_item_bytes": f["item_bytes"],
        "flow_cache_entries": f["flow_entries"],
        "hot_bytes_max": busiest["hot_bytes"],
        "hot_bytes_mean": sum(x["hot_bytes"] for x in f["workers"]) / len(f["workers"]),
        "rules_per_worker_max": max(x["rules"] for x in f["workers"]),
        "flows_per_worker_max": max(x["flows"] for x in f["workers"]),
        "hot_fits": fits(busiest["hot_bytes"], levels),
        "cache_levels": ",".join(f"{name}={size}" for name, size in levels.items()),
        "law_items": f["law_items"],
        "law_working_set_max": None, "law_hot_bytes": None, "law_fits": None, "law_speedup_work": None,
        "law_hit_rate": None,
    }
    # The law's item stream (what the hot state is made of) comes from the classifier's
    # footprint model in the crate: rules, flows, or none.
    kind = f["law_items"]
    if kind is not None:
        workers = w.assign(dispatch, k, seed)
        point = _law(w, kind, "mtf").point_assigned(workers, k, 0.0)
        sets = [x["mean_working_set"] for x in point["workers"] if x["mean_working_set"] is not None]
        ws = max(sets, default=0.0)
        row["law_working_set_max"] = ws
        row["law_hot_bytes"] = ws * f["item_bytes"]
        if kind == "rules":
            row["law_speedup_work"] = point["work_speedup"]
        else:
            lru = _law(w, kind, f"lru:{f['flow_entries']}").point_assigned(workers, k, 0.0)
            row["law_hit_rate"] = lru["hit_rate"]
        row["law_fits"] = fits(row["law_hot_bytes"], levels)
    if len(_CACHE) > 512:
        _CACHE.clear()
    _CACHE[key] = row
    return dict(row)
