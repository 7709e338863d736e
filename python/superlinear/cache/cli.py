"""``superlinear cache up|down|status|load|bench``: the Memcached + PostgreSQL cache tier (paper App. B).

``up``/``down``/``status`` manage servers started from the Debian binaries (:mod:`superlinear.cache.services`);
``load`` fills the table with COPY; ``bench`` runs the multithreaded cache-aside client. External
servers are first-class: ``--memcached host:port,...`` and ``--postgres DSN`` use what you run.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.table import Table

from superlinear import _native
from superlinear.cache.client import bench_row, client_config
from superlinear.cache.services import Services
from superlinear.common.args import positive_int
from superlinear.common.defaults import config_defaults, field_default, with_default
from superlinear.common.errors import SuperlinearError
from superlinear.common.listing import Listing, known, name_table

console = Console()

KINDS = ("measured = wall clock of this run on this machine; projected = the busiest participant's CPU time "
         "(client thread, memcached replica or PostgreSQL backend), i.e. one ideal core each, no contention.")


def resolve_servers(args: argparse.Namespace, need_pg: bool = True, need_mc: bool = True) -> tuple[list[str], str]:
    """Memcached addresses and the DSN: ``--memcached``/``--postgres`` or the running services."""
    replicas: list[str] = []
    dsn = ""
    if getattr(args, "memcached", None):
        replicas = [a.strip() for a in args.memcached.split(",") if a.strip()]
    if getattr(args, "postgres", None):
        dsn = args.postgres
    if (need_mc and not replicas) or (need_pg and not dsn):
        state = Services(args.dir).state()
        if state is None:
            raise SuperlinearError("no servers: run `superlinear cache up --replicas K --pg` first, "
                                   "or name yours with --memcached HOST:PORT,... and --postgres DSN")
        if need_mc and not replicas:
            replicas = state.addresses()
            if not replicas:
                raise SuperlinearError("no memcached replicas: run `superlinear cache up --replicas K`")
        if need_pg and not dsn:
            if state.postgres is None:
                raise SuperlinearError("no PostgreSQL: run `superlinear cache up --pg` or pass --postgres DSN")
            dsn = state.postgres.dsn()
    k = getattr(args, "replicas", None)
    if k is not None and k > 0:
        if k > len(replicas):
            raise SuperlinearError(f"--replicas {k}: only {len(replicas)} memcached replicas are available")
        replicas = replicas[:k]
    return replicas, dsn


def cmd_up(args: argparse.Namespace) -> int:
    state = Services(args.dir).up(args.replicas, args.memory_mb, pg=args.pg, unix=args.unix, threads=args.threads)
    if args.json:
        print(json.dumps(state.to_json(), indent=1))
        return 0
    for m in state.memcached:
        console.print(f"memcached  {m.address():<28} pid {m.pid}  {m.memory_mb} MB, {m.threads} thread(s)")
    if state.postgres is not None:
        p = state.postgres
        console.print(f"postgresql {p.dsn()}  pid {p.pid}  (v{p.version}, data {p.datadir}"
                      + (f", running as {p.run_as}" if p.run_as else "") + ")")
    console.print(f"state: {Services(args.dir).state_file}; stop with `superlinear cache down`")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    stopped = Services(args.dir).down(purge=args.purge)
    if args.json:
        print(json.dumps({"stopped": stopped}))
    else:
        console.print("stopped" if stopped else "nothing was running")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    st = Services(args.dir).status()
    if args.json:
        print(json.dumps(st, indent=1))
        return 0
    if not st["running"]:
        console.print(f"nothing running ({st['dir']})")
        return 0
    t = Table(title=f"cache tier in {st['dir']}")
    for col in ("server", "address", "pid", "alive", "answers"):
        t.add_column(col)
    for m in st["memcached"]:
        t.add_row("memcached", m["address"], str(m["pid"]), str(m["alive"]), str(m["reachable"]))
    if st["postgres"]:
        p = st["postgres"]
        t.add_row(f"postgresql {p['version']}", p["dsn"], str(p["pid"]), str(p["alive"]), str(p["reachable"]))
    console.print(t)
    return 0 if st["healthy"] else 1


def cmd_load(args: argparse.Namespace) -> int:
    _, dsn = resolve_servers(args, need_mc=False)
    with console.status(f"loading {args.rows:,} rows into {args.table} with COPY", spinner="dots") \
            if not args.json else _nullcontext():
        report = _native.cache_load(dsn, args.rows, args.table, args.force)
    if args.json:
        print(json.dumps(report))
    else:
        what = "loaded" if report["loaded"] else "already loaded (nothing to do; --force reloads)"
        console.print(f"{args.table}: {report['rows']:,} rows {what}")
    return 0


class _nullcontext:  # noqa: N801 - mirrors contextlib.nullcontext, typed for mypy
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def cmd_bench(args: argparse.Namespace) -> int:
    replicas, dsn = resolve_servers(args)
    k = len(replicas)
    threads = args.threads or 4 * k
    cfg = client_config(replicas, dsn, args.router, args.db_connections or threads, args.table,
                        coalesce=not args.no_coalesce, seed=args.seed)
    client = _native.CacheClient(cfg)
    if args.flush:
        client.flush_all()
    if args.prefill:
        client.prefill(args.rows, args.seed)
    bench = {"threads": threads, "rows": args.rows, "dist": args.dist, "seed": args.seed,
             "max_seconds": args.max_seconds, "write_fraction": args.write_fraction}
    if args.warmup:
        client.bench({**bench, "requests": args.warmup, "seed": args.seed + 1000})
    with console.status(f"{args.requests:,} requests, {threads} threads, {k} replicas, {args.router} routing",
                        spinner="dots") if not args.json else _nullcontext():
        report = client.bench({**bench, "requests": args.requests})
    row = bench_row(report, k, _native.available_cores())
    row.update(router=args.router, threads=threads, db_connections=cfg["db_connections"], dist=args.dist)
    if args.json:
        print(json.dumps({"row": row, "report": report}, indent=1))
        return 0 if row["wrong_values"] == 0 else 1
    t = Table(title=f"cache-aside benchmark: {k} replicas, {args.router} routing, {threads} threads, {args.dist}",
              caption=KINDS, caption_justify="left")
    t.add_column("figure")
    t.add_column("value", justify="right")
    t.add_column("kind")
    t.add_row("requests", f"{row['requests']:,}", "count")
    t.add_row("hit rate", f"{row['hit_rate']:.3f}", "count")
    t.add_row("delayed hits (coalesced misses)", f"{row['delayed_hits']:,}", "count")
    t.add_row("database reads", f"{row['db_reads']:,}", "count")
    t.add_row("throughput, req/s", f"{row['throughput_rps_measured']:,.0f}", "measured")
    t.add_row("throughput, req/s", f"{row['throughput_rps_projected']:,.0f}" if row["throughput_rps_projected"]
              else "—", "projected")
    t.add_row("latency p50 / p99, µs", f"{row['latency_p50_us_measured']:,.0f} / "
              f"{row['latency_p99_us_measured']:,.0f}", "measured")
    t.add_row("max/mean replica load", f"{row['max_over_mean_load']:.2f}", "count")
    t.add_row("machine utilisation", f"{row['machine_utilisation']:.2f}", "measured")
    t.add_row("wrong values", str(row["wrong_values"]), "count")
    t.add_row("errors", str(row["errors"]) + (f" ({row['first_error']})" if row["first_error"] else ""), "count")
    console.print(t)
    return 0 if row["wrong_values"] == 0 else 1


def _show_routers(routers: list[dict[str, Any]]) -> None:
    console.print(name_table("routers (--router)", routers, [("key-affine", "key_affine")]))


LISTING = Listing("cache", "routers of the cache tier's client", _native.cache_routers, _show_routers)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", metavar="DIR", help="services directory (default .superlinear/services or "
                   "$SUPERLINEAR_SERVICES)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _servers(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memcached", metavar="HOST:PORT,...", help="use these memcached servers (or unix socket paths)")
    p.add_argument("--postgres", metavar="DSN", help="use this database (postgresql://user@host:port/db or key=value)")
    p.add_argument("--table", default=field_default("cache_client", "table"),
                   help=with_default("table name", "cache_client", "table"))


def register(sub: Any) -> None:
    """Adds ``cache`` to the top-level subcommands, and routes service-backed reproductions
    (``reproduce fig11``, ``reproduce cache-skew``) to their driver."""
    c = sub.add_parser("cache", help="the Memcached + PostgreSQL cache tier: up, down, status, load, bench",
                       description="A real cache tier (paper App. B, Fig. 11): memcached replicas in front of "
                       "PostgreSQL, routed by key hash, randomly or by DistCache. " + KINDS)
    routers = known(r["name"] for r in _native.cache_routers())
    cs = c.add_subparsers(dest="cache_command", required=True, metavar="ACTION")

    up = cs.add_parser("up", help="start memcached replicas and a PostgreSQL cluster")
    up.add_argument("--replicas", type=int, default=1, help="memcached processes (default 1)")
    up.add_argument("--memory-mb", type=positive_int, default=4,
                    help="memory per replica in MB (default 4, as the paper)")
    up.add_argument("--threads", type=positive_int, default=1, help="worker threads per memcached (default 1)")
    up.add_argument("--pg", action=argparse.BooleanOptionalAction, default=True,
                    help="also start PostgreSQL (default on; --no-pg for memcached only)")
    up.add_argument("--unix", action="store_true", help="listen on unix sockets instead of loopback ports")
    _common(up)
    up.set_defaults(func=cmd_up)

    down = cs.add_parser("down", help="stop what `up` started")
    down.add_argument("--purge", action="store_true", help="also delete the data directory")
    _common(down)
    down.set_defaults(func=cmd_down)

    st = cs.add_parser("status", help="show the servers and whether they answer")
    _common(st)
    st.set_defaults(func=cmd_status)

    ld = cs.add_parser("load", help="load N key/value rows with COPY (idempotent)")
    bench_defaults, client_defaults = config_defaults("cache_bench"), config_defaults("cache_client")
    ld.add_argument("--rows", type=positive_int, default=bench_defaults["rows"],
                    help=f"rows (default {bench_defaults['rows']:,})")
    ld.add_argument("--force", action="store_true", help="reload even if the table already holds the data set")
    _servers(ld)
    _common(ld)
    ld.set_defaults(func=cmd_load)

    b = cs.add_parser("bench", help="run the multithreaded cache-aside benchmark",
                      description="Closed-loop cache-aside reads (and optional writes), bounded in requests and "
                      "time. " + KINDS)
    b.add_argument("--router", default=client_defaults["router"], help=with_default(routers, "cache_client", "router"))
    b.add_argument("--replicas", type=int, help="use only the first K replicas")
    b.add_argument("--threads", type=int, default=0, help="client threads (default 4 per replica)")
    b.add_argument("--db-connections", type=int, default=0, help="PostgreSQL connections (default: one per thread)")
    b.add_argument("--requests", type=positive_int, default=100_000, help="requests in all (default 100,000)")
    b.add_argument("--rows", type=positive_int, default=bench_defaults["rows"],
                   help=f"rows in the table (default {bench_defaults['rows']:,})")
    b.add_argument("--dist", default=bench_defaults["dist"],
                   help=with_default("uniform or zipf:ALPHA", "cache_bench", "dist"))
    b.add_argument("--write-fraction", type=float, default=bench_defaults["write_fraction"],
                   help=with_default("fraction of writes", "cache_bench", "write_fraction"))
    b.add_argument("--warmup", type=int, default=0, help="requests before the measured phase (default 0)")
    b.add_argument("--flush", action="store_true", help="flush the replicas first (a cold start)")
    b.add_argument("--prefill", action="store_true", help="pre-fill the replicas from the table (steady state)")
    b.add_argument("--no-coalesce", action="store_true", help="do not coalesce concurrent misses (no delayed hits)")
    b.add_argument("--max-seconds", type=float, default=120.0, help="stop after this long (default 120)")
    b.add_argument("--seed", type=int, default=bench_defaults["seed"])
    _servers(b)
    _common(b)
    b.set_defaults(func=cmd_bench)
