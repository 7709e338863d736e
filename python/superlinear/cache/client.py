"""The cache tier's client side, apart from any command line: the native client's config dict and
the figures derived from one benchmark report (used by ``cache bench`` and the Fig. 11 driver)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from superlinear.common.defaults import config_defaults

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
