"""The cache tier's client side, apart from any command line: the native client's config dict,
the figures derived from one benchmark report, and several runs' figures folded into median
[range] and sums (used by ``cache bench`` and the Fig. 11 driver)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from superlinear.common.defaults import config_defaults
from superlinear.common.rows import Row, ranged

if TYPE_CHECKING:
    from superlinear._native import CacheBenchRecord

#: The client config's defaults (crates/cachetier), asked of Rust.
_CLIENT = config_defaults("cache_client")


def client_config(replicas: list[str], dsn: str, router: str, db_connections: int, table: str,
                  coalesce: bool = _CLIENT["coalesce"], seed: int = _CLIENT["seed"],
                  timeout_s: float = _CLIENT["timeout_s"]) -> dict[str, Any]:
    """The native client's config dict. The timeout bounds each connect, read and write (the wire
    config's default allows a few seconds: a loaded machine can delay a healthy server's answer)."""
    return {"replicas": replicas, "dsn": dsn, "router": router, "db_connections": db_connections,
            "table": table, "coalesce": coalesce, "seed": seed, "timeout_s": timeout_s}


def bench_row(report: CacheBenchRecord, k: int, cores: int) -> dict[str, Any]:
    """Derived figures of one benchmark report, each with its kind in its name."""
    wall = report["wall_ns"]
    proj = report["projected_ns"]
    reqs = report["requests"]
    cpu_total = (sum(report["thread_cpu_ns"]) + sum(c or 0 for c in report["replica_cpu_ns"])
                 + sum(report["db_backend_cpu_ns"]))
    loads = report["replica_requests"]
    mean = sum(loads) / max(len(loads), 1)
    return {
        "k": k,
        "requests": reqs,
        "hit_rate": report["hit_rate"],
        "throughput_rps_measured": reqs * 1e9 / wall if wall else None,
        "throughput_rps_projected": reqs * 1e9 / proj if proj else None,
        "wall_ns": wall,
        "projected_ns": proj,
        "max_client_thread_cpu_ns": max(report["thread_cpu_ns"] or [0]),
        "max_replica_cpu_ns": max((c or 0) for c in report["replica_cpu_ns"]) if report["replica_cpu_ns"] else 0,
        "max_db_backend_cpu_ns": max(report["db_backend_cpu_ns"] or [0]),
        "cpu_total_ns": cpu_total,
        "client_cpu_ns": sum(report["thread_cpu_ns"]),
        # The part of it spent past the cache (queries, fills), so that hits and misses can be costed apart.
        "client_miss_cpu_ns": report["stats"]["miss_cpu_ns"],
        "reads_past_cache": report["stats"]["reads"] - report["stats"]["hits"],
        # The two bounds of the projection: the busiest participant and the client threads' mean path.
        "projected_busiest_ns": report["projected_busiest_ns"],
        "projected_client_path_ns": report["projected_client_path_ns"],
        "replica_cpu_sum_ns": sum(c or 0 for c in report["replica_cpu_ns"]),
        "db_backend_cpu_sum_ns": sum(report["db_backend_cpu_ns"]),
        "cpu_per_request_ns": cpu_total / max(reqs, 1),
        # How much of the machine the run used: near 1 means the cores, not the tier, set the pace.
        "machine_utilisation": cpu_total / (wall * cores) if wall else None,
        "max_over_mean_load": max(loads) / mean if mean else None,
        "db_reads": report["stats"]["db_reads"],
        "reads": report["stats"]["reads"],
        "writes": report["stats"]["writes"],
        "delayed_hits": report["stats"]["delayed_hits"],
        "bypass": report["stats"]["bypass"],
        "errors": report["errors"],
        "first_error": report["first_error"],
        "wrong_values": report["wrong_values"],
        "stale_values": report["stale_values"],
        "missing": report["missing"],
        "latency_p50_us_measured": report["latency_p50_ns"] / 1e3,
        "latency_p99_us_measured": report["latency_p99_ns"] / 1e3,
        "timed_out": report["timed_out"],
        "replica_requests": loads,
        "replica_fills": report["replica_fills"],
    }


#: Figures of a cache row whose median and range over the rounds a row carries.
CACHE_RANGED = ("speedup_work", "speedup_work_busiest", "speedup_work_one_memcached_cost", "speedup_projected",
                "speedup_measured", "speedup_eq3", "hit_rate",
                "throughput_rps_measured", "throughput_rps_projected", "throughput_rps_work", "miss_penalty_rho",
                "max_over_mean_load", "machine_utilisation", "latency_p50_us_measured", "latency_p99_us_measured")
#: Counts summed over the rounds.
CACHE_SUMMED = ("requests", "wrong_values", "stale_values", "errors", "missing", "db_reads", "calibration_requests",
                "calibration_wrong_values", "reads_past_cache", "reads", "writes", "delayed_hits", "bypass",
                "replica_errors")
#: Counts per replica, summed replica by replica over the rounds (so they add up to ``requests``).
CACHE_SUMMED_PER_REPLICA = ("replica_requests", "replica_fills")


def aggregate_rounds(rows: list[Row]) -> list[Row]:
    """One row per (panel, router, k): the median of every figure in :data:`CACHE_RANGED` over the
    rounds, its range as ``FIELD_lo`` / ``FIELD_hi`` and the rounds' values as ``FIELD_runs``;
    counts in :data:`CACHE_SUMMED` and :data:`CACHE_SUMMED_PER_REPLICA` summed (``requests`` is then
    every round's reads); ``timed_out`` if any round was, ``first_error`` the first round's that
    has one; the raw CPU times are the first round's."""
    groups: dict[tuple[str, str, int], list[Row]] = {}
    for r in rows:
        groups.setdefault((r["panel"], r["dispatch"], r["k"]), []).append(r)
    out: list[Row] = []
    for rounds in groups.values():
        row = dict(rounds[0])
        row.pop("round", None)
        row["repeats"] = len(rounds)
        for field in CACHE_RANGED:
            values = [float(r[field]) for r in rounds if r.get(field) is not None]
            if values:
                row.update(ranged(field, values))
        for field in CACHE_SUMMED:
            row[field] = sum(r.get(field) or 0 for r in rounds)
        for field in CACHE_SUMMED_PER_REPLICA:
            if all(field in r for r in rounds):
                row[field] = [sum(column) for column in zip(*(r[field] for r in rounds), strict=True)]
        if any("timed_out" in r for r in rounds):
            row["timed_out"] = any(r.get("timed_out") for r in rounds)
        if any("first_error" in r for r in rounds):
            row["first_error"] = next((r["first_error"] for r in rounds if r.get("first_error")), None)
        out.append(row)
    return out
