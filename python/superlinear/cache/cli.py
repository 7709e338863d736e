"""``superlinear cache up|down|status|load|bench``: the Memcached + PostgreSQL cache tier (paper App. B).

``up``/``down``/``status`` manage servers started from the Debian binaries (:mod:`superlinear.cache.services`);
``load`` fills the table with COPY; ``bench`` runs the multithreaded cache-aside client. External
servers are first-class: ``--memcached host:port,...`` and ``--postgres DSN`` use what you run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from superlinear import _native
from superlinear.cache.client import aggregate_rounds, bench_row, client_config
from superlinear.cache.services import (
    Services,
    address_problem,
    check_replica_bounds,
    check_replica_limits,
    server_answers,
)
from superlinear.common.args import (
    duration_seconds,
    fraction,
    non_negative_int,
    positive_int,
    positive_int_at_most,
    repeat_count,
)
from superlinear.common.bounds import check_at_most, check_memory, size_text
from superlinear.common.defaults import config_defaults, field_default, with_default
from superlinear.common.errors import SuperlinearError, note
from superlinear.common.interrupt import interruptible
from superlinear.common.listing import Listing, known, name_table
from superlinear.common.rows import row_spread
from superlinear.common.scope import conditional_scope

if TYPE_CHECKING:
    from superlinear._native import CacheBenchRecord

console = Console()

KINDS = ("measured = wall clock of this run on this machine; projected = CPU time on ideal cores (one per "
         "participant, no contention): the busiest participant's (client thread, memcached replica or PostgreSQL "
         "backend), or the client threads' mean request path (each waits for its get, query and fill), whichever "
         "is longer.")


def memcached_address(text: str) -> str:
    """One ``--memcached`` entry: HOST:PORT (port 1 to 65,535) or a unix socket's absolute path."""
    if text.startswith("/"):
        return text
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65_536:
        raise SuperlinearError(f"--memcached: expected HOST:PORT (port 1 to 65,535) or a socket path, got {text!r}")
    return text


def memcached_addresses(text: str) -> list[str]:
    """``--memcached``: its comma-separated entries, each server once (a server named twice would
    be counted as two replicas)."""
    addresses = [memcached_address(a.strip()) for a in text.split(",")]
    seen: dict[str, str] = {}
    for a in addresses:
        same = _server_identity(a)
        if same in seen:
            twice = a if seen[same] == a else f"{seen[same]} and {a}"
            raise SuperlinearError(f"--memcached: {twice} named twice (each replica once)")
        seen[same] = a
    return addresses


def _server_identity(address: str) -> str:
    """What two spellings of one server share: the normalised socket path, or the host in lower
    case with the port as a number."""
    if address.startswith("/"):
        return os.path.normpath(address)
    host, _, port = address.rpartition(":")
    return f"{host.lower()}:{int(port)}"


def resolve_servers(args: argparse.Namespace, need_pg: bool = True, need_mc: bool = True) -> tuple[list[str], str]:
    """Memcached addresses and the DSN: ``--memcached``/``--postgres`` or the running services."""
    replicas: list[str] = []
    dsn = ""
    if getattr(args, "memcached", None) is not None:
        replicas = memcached_addresses(args.memcached)
        if need_pg and not getattr(args, "postgres", None):
            # Your cache in front of the database `cache up` started would be a silent mix.
            raise SuperlinearError("--memcached needs --postgres DSN too (your servers, both named), or neither "
                                   "(the servers `superlinear cache up` started)")
    if getattr(args, "postgres", None):
        dsn = args.postgres
        if need_mc and not replicas:
            raise SuperlinearError("--postgres needs --memcached HOST:PORT,... too (your servers, both named), or "
                                   "neither (the servers `superlinear cache up` started): the tier's cache in front "
                                   "of another database would be a silent mix")
    if getattr(args, "dir", None) is not None and not ((need_mc and not replicas) or (need_pg and not dsn)):
        named = " and ".join(f for f, needed in (("--memcached", need_mc), ("--postgres", need_pg)) if needed)
        raise SuperlinearError(f"--dir has no effect with {named} (it is the folder of the servers "
                               "`superlinear cache up` started)")
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
    if args.replicas == 0 and not args.pg:
        raise SuperlinearError("--replicas 0 with --no-pg: nothing to start")
    if not args.allow_many:
        check_replica_bounds(args.replicas, args.memory_mb)
    check_replica_limits(args.replicas, args.threads, args.unix)
    services = Services(args.dir)
    with services.locked("up"):
        state = services.up(args.replicas, args.memory_mb, pg=args.pg, unix=args.unix, threads=args.threads)
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
    services = Services(args.dir)
    tier = services.holds_tier()
    with services.locked("down"), (console.status(f"stopping the servers in {services.dir}", spinner="dots")
                                   if not args.json else _nullcontext()):
        stopped = services.down(purge=args.purge)
    if args.json:
        print(json.dumps({"stopped": stopped}))
    else:
        # A folder with no tier is said, not an error: as `status` on it.
        console.print("stopped" if stopped else "nothing was running" if tier else f"no cache tier in {services.dir}")
    return 0


def cmd_restart(args: argparse.Namespace) -> int:
    """Starts replica REPLICA again, or every replica (and PostgreSQL) that does not answer."""
    services = Services(args.dir)
    if not services.holds_tier():
        raise SuperlinearError(f"no cache tier in {services.dir}: start one with `superlinear cache up`")
    with services.locked("restart"):
        st = services.status()
        if not st["running"]:
            raise SuperlinearError(f"nothing runs in {st['dir']}: use `superlinear cache up`")
        n = len(st["memcached"])
        if args.replica is not None and not 0 <= args.replica < n:
            raise SuperlinearError(f"REPLICA {args.replica}: the tier has replicas 0..{n - 1}")
        which = [args.replica] if args.replica is not None else \
            [i for i, m in enumerate(st["memcached"]) if not m["reachable"]]
        restarted = [f"memcached {services.restart_replica(i).address()}" for i in which]
        if args.replica is None and st["postgres"] is not None and not st["postgres"]["reachable"]:
            services.stop_postgres()
            restarted.append(f"postgresql {services.start_postgres().dsn()}")
    if args.json:
        print(json.dumps({"restarted": restarted}))
    else:
        console.print("restarted " + ", ".join(restarted) if restarted else "every server answers; nothing to do")
    return 0


def _table_held(address: str) -> str | None:
    """The table a replica holds entries of, as its mark says; None without a mark or an answer."""
    try:
        return _native.cache_table_mark(address)
    except SuperlinearError:
        return None


def cmd_status(args: argparse.Namespace) -> int:
    st = Services(args.dir).status()
    failed = 1 if st["running"] and not st["healthy"] else 0
    for m in st["memcached"]:
        m["table"] = _table_held(m["address"]) if m["reachable"] else None
    if args.json:
        print(json.dumps(st, indent=1))
        return failed
    if not st["running"]:
        console.print(f"nothing running ({st['dir']})")
        return 0
    t = Table(title=f"cache tier in {st['dir']}")
    for col in ("server", "address", "pid", "alive", "answers", "holds table"):
        # A DSN is long; fold it rather than cut it, it is meant to be copied.
        t.add_column(col, overflow="fold")
    for m in st["memcached"]:
        t.add_row("memcached", m["address"], str(m["pid"]), str(m["alive"]), str(m["reachable"]),
                  escape(m["table"]) if m["table"] is not None else "—")
    if st["postgres"]:
        p = st["postgres"]
        t.add_row(f"postgresql {p['version']}", p["dsn"], str(p["pid"]), str(p["alive"]), str(p["reachable"]), "")
    console.print(t)
    return failed


#: Most rows ``load`` makes: a key is ``k`` and 15 decimal digits (crates/cachetier store.rs, ``MAX_ROWS``).
MAX_ROWS = 10**15
#: Disk a loaded row takes in PostgreSQL, table and primary key (150 bytes measured for 1,000,000
#: rows of 16-byte keys and 48-byte values), and the write-ahead log a load writes beside it
#: (``max_wal_size`` is 1 GB by default; the log may pass it during one long COPY).
PG_BYTES_PER_ROW = 160
PG_WAL_BYTES = 2e9


def local_data_directory(dsn: str) -> Path | None:
    """The server's data directory where it is on this machine (it holds the running server's
    ``postmaster.pid``); None for a remote server, or one that does not tell a plain user."""
    try:
        found = interruptible(partial(_native.cache_sql, dsn, "SHOW data_directory"))
    except SuperlinearError:
        return None
    path = Path(found[0][0]) if found and found[0] and found[0][0] else None
    return path if path is not None and (path / "postmaster.pid").is_file() else None


def check_load_disk(dsn: str, rows: int) -> None:
    """Refuses a load that would not fit the free space of a local server's disk, before it starts
    (a load fills the disk for as long as it runs, and is rolled back only at its end)."""
    data = local_data_directory(dsn)
    if data is None:
        return
    st = os.statvfs(data)
    free = st.f_bavail * st.f_frsize
    needed = rows * PG_BYTES_PER_ROW + PG_WAL_BYTES
    if needed > free:
        raise SuperlinearError(f"--rows {rows:,}: the table would take about {size_text(needed)} of disk in {data}, "
                               f"which has {size_text(free)} free")


def cmd_load(args: argparse.Namespace) -> int:
    if args.memcached is not None:
        raise SuperlinearError("--memcached has no effect on cache load (it loads the PostgreSQL table only)")
    _, dsn = resolve_servers(args, need_mc=False)
    check_table_name(dsn, args.table)
    before = loaded_rows(dsn, args.table)
    if args.force or before != args.rows:
        check_load_disk(dsn, args.rows)
    with console.status(f"loading {args.rows:,} rows into {args.table} with COPY (Ctrl-C stops it and keeps the "
                        "table as it was)", spinner="dots") if not args.json else _nullcontext():
        report = interruptible(partial(_native.cache_load, dsn, args.rows, args.table, args.force))
    flushed, flush_error = _flush_the_tier_after(args, dsn) if report["loaded"] and before else (None, None)
    if args.json:
        print(json.dumps({**report, "flushed_replicas": flushed}))
    else:
        what = "loaded" if report["loaded"] else "already loaded (nothing to do; --force reloads)"
        replaced = f" (replaced the {before:,} rows it held)" if report["loaded"] and before else ""
        console.print(f"{args.table}: {report['rows']:,} rows {what}{replaced}"
                      + (f"; flushed the tier's {flushed} memcached replicas" if flushed else ""))
    if flush_error is not None:
        print(f"superlinear: error: cache load: the table is loaded, but {flush_error}: they may serve the old "
              "rows' values as hits; start the next bench with --flush", file=sys.stderr)
        return 1
    if report["loaded"] and before and flushed is None:
        note(f"memcached servers in front of this database may hold entries of the {before:,} rows replaced: "
             "start the next bench with --flush")
    return 0


def _flush_the_tier_after(args: argparse.Namespace, dsn: str) -> tuple[int | None, str | None]:
    """After a reload, the replicas of the tier `cache up` started in front of this database hold
    the old rows' values, which a bench would count as hits of right values (each is a right value
    of its key, only older): flushes them. Returns how many were flushed (None: no such tier) and
    the error that stopped the flush."""
    try:
        state = Services(args.dir).state()
    except SuperlinearError:
        return None, None  # a broken state file: `cache status` names it
    if state is None or state.postgres is None or state.postgres.dsn() != dsn or not state.addresses():
        return None, None
    replicas = state.addresses()
    # A plain flush_all, not the client's: that one marks the replicas as this table's, and a
    # bench of another table would then refuse them though they hold nothing.
    failed = [a for a in replicas if not server_answers(a, (b"flush_all\r\n", (b"OK\r\n",)), timeout=2.0)]
    if failed:
        return None, f"flushing the tier's memcached {', '.join(failed)} failed (no OK to flush_all)"
    return len(replicas), None


def check_table_name(dsn: str, table: str) -> None:
    """Refuses a ``--table`` that is a reserved word of the server's SQL: the loader names its
    table unquoted, and the server answered "syntax error at or near" the name."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table):
        return  # the loader names the problem (and only such a name goes into the query below)
    rows = interruptible(partial(_native.cache_sql, dsn, "SELECT count(*) FROM pg_get_keywords() "
                                 f"WHERE word = '{table.lower()}' AND catcode IN ('R', 'T')"))
    if rows and rows[0][0] != "0":
        raise SuperlinearError(f"--table {table}: a reserved word of PostgreSQL's SQL, which a table cannot be "
                               "named; name another")


def loaded_rows(dsn: str, table: str) -> int | None:
    """Rows `cache load` recorded in ``table``'s comment, or None if it did not load it."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table):
        return None  # the loader names the problem
    rows = interruptible(partial(_native.cache_sql, dsn, f"SELECT obj_description(to_regclass('{table}'), 'pg_class')"))
    found = re.match(r"superlinear kv rows=(\d+) ", (rows[0][0] or "") if rows and rows[0] else "")
    return int(found.group(1)) if found else None


class _nullcontext:  # noqa: N801 - mirrors contextlib.nullcontext, typed for mypy
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


#: Worker threads per memcached at most (memcached itself warns above 64; a million ran it out
#: of file descriptors).
MAX_MEMCACHED_THREADS = 256

#: Client threads (and PostgreSQL connections) one bench starts at most: each is an OS thread.
MAX_BENCH_THREADS = 4096


def cmd_bench(args: argparse.Namespace) -> int:
    # The flags first, so that a typo is named before any server is contacted: the router
    # simulation with no requests parses the router and the key distribution.
    # (Against the most rows a table can hold: the table's own count is checked once it is known.)
    _check_key_choice(args.router, args.dist, MAX_ROWS)
    for flag, n in (("--threads", args.threads), ("--db-connections", args.db_connections)):
        check_at_most(flag, n or 0, MAX_BENCH_THREADS, "each is an OS thread")
    # Each request's latency is kept (a 4-byte count) for the percentiles.
    check_memory(f"--requests {args.requests:,}", 4 * args.requests)
    replicas, dsn = resolve_servers(args)
    # 4 s: a healthy replica on a busy machine can take more than a second to answer (a dead or
    # refused port fails at once).
    down = [a for a in replicas if not server_answers(a, timeout=4.0)]
    for address in down:
        if (problem := address_problem(address)) is not None:
            raise SuperlinearError(f"memcached {address}: {problem}")
    if down:
        raise SuperlinearError(f"memcached {', '.join(down)} does not answer: the cache is down or the address is "
                               "wrong (for replicas `superlinear cache up` started, `superlinear cache restart` "
                               "brings back a crashed one)")
    loaded = loaded_rows(dsn, args.table)
    if loaded is None:
        raise SuperlinearError(f"table {args.table} was not loaded by `superlinear cache load`; run it first")
    if args.rows is None:
        args.rows = loaded
    elif args.rows > loaded:
        raise SuperlinearError(f"--rows {args.rows:,}: table {args.table} holds {loaded:,} rows; "
                               f"run `superlinear cache load --rows {args.rows}` first")
    _check_key_choice(args.router, args.dist, args.rows)
    k = len(replicas)
    threads = args.threads or 4 * k
    if args.db_connections is not None and args.db_connections > threads:
        raise SuperlinearError(f"--db-connections {args.db_connections:,}: at most the {threads:,} threads "
                               "(a thread holds one connection at a time: more would stay idle)")
    check_database_connections(dsn, args.db_connections or threads,
                               "--db-connections" if args.db_connections else "--threads")
    cfg = client_config(replicas, dsn, args.router, args.db_connections or threads, args.table,
                        coalesce=not args.no_coalesce, seed=args.seed)
    # Connects (a hanging server is waited on in slices, so Ctrl-C stops it there too).
    client = interruptible(partial(_native.CacheClient, cfg))
    if not args.flush:
        _refuse_another_tables_entries(client, replicas, args.table)
    bench = {"threads": threads, "rows": args.rows, "dist": args.dist, "seed": args.seed,
             "max_seconds": args.max_seconds, "write_fraction": args.write_fraction}
    runs: list[dict[str, Any]] = []
    reports: list[CacheBenchRecord] = []
    try:
        for rnd in range(args.repeats):
            # Each run is prepared alike (flush, pre-fill, warm-up); without them a run starts from
            # the cache the run before it left.
            if args.flush:
                interruptible(client.flush_all)
            if args.prefill:
                interruptible(partial(client.prefill, args.rows, args.seed, args.dist))
            if args.warmup:
                _check_warmup(interruptible(lambda: client.bench({**bench, "requests": args.warmup,
                                                                   "seed": args.seed + 1000})), args)
            what = (f"{args.requests:,} requests, {threads} threads, {k} replicas, {args.router} routing"
                    + (f", run {rnd + 1}/{args.repeats}" if args.repeats > 1 else ""))
            with console.status(what, spinner="dots") if not args.json else _nullcontext():
                report = interruptible(lambda: client.bench({**bench, "requests": args.requests}))
            run = bench_row(report, k, _native.available_cores())
            run.update(panel="bench", dispatch=args.router, round=rnd,
                       replica_errors=report["stats"]["replica_errors"], gave_up=report["gave_up"])
            runs.append(run)
            reports.append(report)
            if run["timed_out"] or run["gave_up"]:
                break  # the bench has failed already; the runs left would fail alike
    except KeyboardInterrupt:
        # What finished is shown (the runs before the one stopped), then the stop goes on: a
        # Ctrl-C in the third run threw the first two away.
        if runs:
            _bench_result(args, runs, reports, k, threads, cfg["db_connections"],
                          stopped=f"stopped after {len(runs)} of {args.repeats} runs: the figures are theirs")
        raise
    return _bench_result(args, runs, reports, k, threads, cfg["db_connections"])


def _bench_result(args: argparse.Namespace, runs: list[dict[str, Any]], reports: list[CacheBenchRecord], k: int,
                  threads: int, db_connections: int, stopped: str | None = None) -> int:
    """Shows the runs' row (and, with ``--json``, each run); returns the exit code. ``stopped``:
    why the runs shown are fewer than asked for (a Ctrl-C), said beside them; the stop's own line
    and exit code follow."""
    (row,) = aggregate_rounds(runs)
    row.update(router=args.router, threads=threads, db_connections=db_connections, dist=args.dist,
               rows=args.rows, gave_up=runs[-1]["gave_up"])
    failures = bench_failures(row, args.max_seconds)
    if args.json:
        print(json.dumps({"row": row, "runs": runs, "reports": reports, "failures": failures,
                          **({"stopped": stopped} if stopped else {})}, indent=1))
    else:
        _show_bench(row, k, args, threads)
        if stopped:
            console.print(stopped, highlight=False, markup=False)
    if not stopped:  # (a stopped bench's failures are in what it shows: the stop is its one line)
        for f in failures:
            print(f"superlinear: error: cache bench: {f}", file=sys.stderr)
    return 1 if failures else 0


def check_database_connections(dsn: str, wanted: int, flag: str) -> None:
    """Refuses a run that would open more PostgreSQL connections than the server takes beside
    those it has (it refuses them with "too many clients" once the run has started), naming the
    flag that sets how many."""
    rows = interruptible(partial(_native.cache_sql, dsn, (
        "SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int"
        " - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')")))
    free = int(rows[0][0] or 0) + 1  # this query's own connection ends before the run opens its own
    if wanted > free:
        raise SuperlinearError(f"{flag} {wanted:,}: the run opens {wanted:,} PostgreSQL connections and the server "
                               f"takes {max(free, 0):,} more (max_connections less those reserved and in use)")


def _check_warmup(report: CacheBenchRecord, args: argparse.Namespace) -> None:
    """Refuses to measure after a warm-up that did not finish: the run would measure a colder
    cache than asked for."""
    if report["requests"] >= args.warmup:
        return
    done = f"after {report['requests']:,} requests"
    if report["timed_out"]:
        raise SuperlinearError(f"--warmup {args.warmup:,}: --max-seconds {args.max_seconds:g} stopped the warm-up "
                               f"{done} (it has a --max-seconds of its own); lower --warmup or raise --max-seconds")
    raise SuperlinearError(f"--warmup {args.warmup:,}: the warm-up gave up {done}, its requests failing "
                           f"(first: {report['first_error']})")


def _refuse_another_tables_entries(client: Any, replicas: list[str], table: str) -> None:
    """Refuses a bench without ``--flush`` on replicas holding another table's entries: every
    table has the same keys, so they would serve its hits and the hit rate would not be this
    table's (the mark a bench, pre-fill or flush leaves on each replica names the table)."""
    for address, other in zip(replicas, client.other_tables(), strict=True):
        if other is not None:
            raise SuperlinearError(f"memcached {address} holds entries of table {other} from an earlier run; "
                                   f"pass --flush to start table {table} cold (or --table {other})")


def _check_key_choice(router: str, dist: str, rows: int) -> None:
    """Refuses an unknown ``--router`` or a ``--dist`` that ``rows`` rows cannot hold (one line,
    naming the flag): the router simulation with no requests parses both."""
    for flag, r, d in (("--router", router, "uniform"), ("--dist", "hash", dist)):
        try:
            _native.cache_route_sim(r, 1, d, rows, 0)
        except SuperlinearError as e:
            raise SuperlinearError(f"{flag}: {e}") from None


def bench_failures(row: dict[str, Any], max_seconds: float) -> list[str]:
    """What went wrong in a bench, one line each (empty for a clean run)."""
    out = []
    if row["timed_out"]:
        out.append(f"stopped by --max-seconds {max_seconds:g} after {row['requests']:,} requests")
    if row["wrong_values"]:
        out.append(f"{row['wrong_values']:,} wrong values")
    if row["stale_values"]:
        out.append(f"{row['stale_values']:,} stale values (older than the bench's last finished write of the key)")
    if row["errors"] or row["gave_up"]:
        gave_up = ", the last ones in a row: the run gave up before its --requests were done" if row["gave_up"] else ""
        out.append(f"{row['errors']:,} failed requests{gave_up} (first: {row['first_error']})")
    if row["missing"]:
        out.append(f"{row['missing']:,} keys missing from the table")
    if row["replica_errors"] or row["bypass"]:
        # A read that bypassed the cache found no replica to ask (all marked down, or none
        # answered from the start): the bench did not measure the cache.
        out.append(f"{row['replica_errors']:,} replica errors ({row['bypass']:,} reads bypassed the cache)")
    return out


def _show_bench(row: dict[str, Any], k: int, args: argparse.Namespace, threads: int) -> None:
    n = row["repeats"]
    runs = f"{n} runs: timed figures are their median [min–max], counts their sum" if n > 1 else "one run"
    t = Table(title=escape(f"cache-aside benchmark: {k} replicas, {args.router} routing, {threads} threads, "
                           f"{args.dist}; {runs}"), caption=KINDS, caption_justify="left")
    t.add_column("figure")
    t.add_column("value", justify="right")
    t.add_column("kind")

    t.add_row("requests", f"{row['requests']:,}", "count")
    t.add_row("reads / writes", f"{row['reads']:,} / {row['writes']:,}", "count")
    t.add_row("hit rate", row_spread(row, "hit_rate", ".3f") if row["reads"] else "— (no reads)", "count")
    t.add_row("delayed hits (coalesced misses)", f"{row['delayed_hits']:,}", "count")
    t.add_row("database reads", f"{row['db_reads']:,}", "count")
    t.add_row("throughput, req/s", row_spread(row, "throughput_rps_measured", ",.0f"), "measured")
    t.add_row("throughput, req/s", row_spread(row, "throughput_rps_projected", ",.0f"), "projected")
    t.add_row("latency p50 / p99, µs", f"{row_spread(row, 'latency_p50_us_measured', ',.0f')} / "
              f"{row_spread(row, 'latency_p99_us_measured', ',.0f')}", "measured")
    t.add_row("max/mean replica load", row_spread(row, "max_over_mean_load", ".2f"), "count")
    t.add_row("machine utilisation", row_spread(row, "machine_utilisation", ".2f"), "measured")
    t.add_row("wrong values", str(row["wrong_values"]), "count")
    t.add_row("stale values", f"{row['stale_values']:,}" if args.write_fraction else "— (no writes)", "count")
    t.add_row("missing keys", f"{row['missing']:,}", "count")
    t.add_row("replica errors / bypassed reads", f"{row['replica_errors']:,} / {row['bypass']:,}", "count")
    t.add_row("errors", str(row["errors"]) + (f" ({row['first_error']})" if row["first_error"] else ""), "count")
    t.add_row("stopped by --max-seconds", "yes" if row["timed_out"] else "no", "count")
    console.print(t)


def _show_routers(routers: list[dict[str, Any]]) -> None:
    console.print(name_table("routers (--router)", routers, [("key-affine", "key_affine")]))


LISTING = Listing("cache", "routers of the cache tier's client", _native.cache_routers, _show_routers)


def services_folder(text: str) -> str:
    """``--dir``: a folder name, not empty (an empty one would fall back to the default folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a folder, got an empty name")
    return text


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", metavar="DIR", type=services_folder,
                   help="services directory (default .superlinear/services or $SUPERLINEAR_SERVICES)")
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

    up = cs.add_parser("up", help="start memcached replicas and a PostgreSQL cluster",
                       description="Start memcached replicas and a local PostgreSQL cluster under the services "
                       "directory.")
    up.add_argument("--replicas", type=non_negative_int, default=1, help="memcached processes (default 1)")
    up.add_argument("--allow-many", action="store_true",
                    help="start more than 64 replicas, or more memory than is available")
    up.add_argument("--memory-mb", type=positive_int, default=4,
                    help="memory per replica in MB (default 4, as the paper)")
    up.add_argument("--threads", type=positive_int_at_most(MAX_MEMCACHED_THREADS, "threads per memcached: each is an "
                                                           "OS thread with its own descriptors"),
                    default=1, help=f"worker threads per memcached (default 1, at most {MAX_MEMCACHED_THREADS})")
    up.add_argument("--pg", action=argparse.BooleanOptionalAction, default=True,
                    help="also start PostgreSQL (default on; --no-pg for memcached only)")
    up.add_argument("--unix", action="store_true", help="listen on unix sockets instead of loopback ports")
    _common(up)
    up.set_defaults(func=cmd_up)
    # With no replicas these would shape nothing (`cache up --replicas 0 --memory-mb 64` once
    # started PostgreSQL alone and said nothing of the 64).
    conditional_scope(up, ("memory_mb", "threads", "allow_many"),
                      lambda args: "with --replicas 0" if args.replicas == 0 else None,
                      "it is for the memcached replicas")

    down = cs.add_parser("down", help="stop what `up` started",
                         description="Stop the servers `cache up` started (--purge also deletes their data).")
    down.add_argument("--purge", action="store_true", help="also delete the data directory")
    _common(down)
    down.set_defaults(func=cmd_down)

    rs = cs.add_parser("restart", help="start a crashed replica again (or every server that does not answer)",
                       description="Start a crashed replica again, or every server that does not answer.")
    rs.add_argument("replica", metavar="REPLICA", type=non_negative_int, nargs="?",
                    help="replica index (default: every server that does not answer)")
    _common(rs)
    rs.set_defaults(func=cmd_restart)

    st = cs.add_parser("status", help="show the servers and whether they answer",
                       description="Show the servers `cache up` started and whether each answers.")
    _common(st)
    st.set_defaults(func=cmd_status)

    ld = cs.add_parser("load", help="load N key/value rows with COPY (idempotent)",
                       description="Load --rows key/value rows into the PostgreSQL table with COPY; a table that "
                       "already holds them is left as it is (--force reloads).")
    bench_defaults, client_defaults = config_defaults("cache_bench"), config_defaults("cache_client")
    ld.add_argument("--rows", type=positive_int_at_most(MAX_ROWS, "rows (keys are k and 15 digits)"),
                    default=bench_defaults["rows"],
                    help=f"rows (default {bench_defaults['rows']:,}); a local server's free disk is checked first, "
                    f"at about {PG_BYTES_PER_ROW} bytes a row")
    ld.add_argument("--force", action="store_true", help="reload even if the table already holds the data set")
    _servers(ld)
    _common(ld)
    ld.set_defaults(func=cmd_load)

    b = cs.add_parser("bench", help="run the multithreaded cache-aside benchmark",
                      description="Closed-loop cache-aside reads (and optional writes), bounded in requests and "
                      "time. " + KINDS)
    b.add_argument("--router", default=client_defaults["router"], help=with_default(routers, "cache_client", "router"))
    b.add_argument("--replicas", type=positive_int, help="use only the first K replicas")
    b.add_argument("--threads", type=positive_int, help="client threads (default 4 per replica)")
    b.add_argument("--db-connections", type=positive_int, help="PostgreSQL connections (default: one per thread)")
    b.add_argument("--requests", type=positive_int, default=100_000, help="requests in all (default 100,000)")
    b.add_argument("--rows", type=positive_int,
                   help="rows to draw keys from (default: all that `cache load` loaded; no more than that)")
    b.add_argument("--dist", default=bench_defaults["dist"],
                   help=with_default("uniform, zipf:ALPHA, hot:H (uniform over H hot rows) or hot:H:zipf:ALPHA",
                                     "cache_bench", "dist"))
    b.add_argument("--write-fraction", type=fraction, default=bench_defaults["write_fraction"],
                   help=with_default("fraction of writes", "cache_bench", "write_fraction"))
    b.add_argument("--warmup", type=non_negative_int, default=0, help="requests before the measured phase (default 0)")
    b.add_argument("--flush", action="store_true", help="flush the replicas first (a cold start)")
    b.add_argument("--prefill", action="store_true", help="pre-fill the replicas from the table (steady state)")
    b.add_argument("--no-coalesce", action="store_true", help="do not coalesce concurrent misses (no delayed hits)")
    b.add_argument("--max-seconds", type=duration_seconds, default=120.0,
                   help="stop after this long, at most 3600 (default 120; a bench it stops fails)")
    b.add_argument("--seed", type=non_negative_int, default=bench_defaults["seed"],
                   help=with_default("seed of the key draws and the routers", "cache_bench", "seed"))
    b.add_argument("--repeats", type=repeat_count, default=3, metavar="N",
                   help="runs, each after the same --flush/--prefill/--warmup: timed figures are their median "
                   "[range], counts their sum (default 3)")
    _servers(b)
    _common(b)
    b.set_defaults(func=cmd_bench)

    from superlinear.cache import advise_cli

    advise_cli.register(cs)
