"""The cache tier on real servers: memcached replicas and PostgreSQL started by the project's own
services code, stopped at the end. Skipped only where the binaries are not installed (CI installs
them with apt)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import interrupt_after, start

from superlinear import _native
from superlinear.cache.services import Services, binaries_available
from superlinear.common.errors import SuperlinearError

HAVE, WHY = binaries_available()
pytestmark = pytest.mark.skipif(not HAVE, reason=f"cache tier tests need real servers: {WHY}")

ROWS = 5_000
REPLICAS = 3
#: Every router the registry holds (a new one is covered without editing the tests).
ROUTERS = [r["name"] for r in _native.cache_routers()]


def _key(i: int) -> str:
    return f"k{i:015d}"


@pytest.fixture(scope="module")
def tier() -> Iterator[dict[str, Any]]:
    # Under /tmp and world-searchable: as root, PostgreSQL runs as 'nobody' and must reach it.
    d = tempfile.mkdtemp(prefix="sl-cachetier-", dir="/tmp")
    os.chmod(d, 0o755)
    services = Services(d)
    try:
        state = services.up(REPLICAS, memory_mb=16, pg=True)
        assert state.postgres is not None
        dsn = state.postgres.dsn()
        _native.cache_load(dsn, ROWS, "superlinear_kv", False)
        yield {"services": services, "dir": d, "dsn": dsn, "replicas": state.addresses()}
    finally:
        services.down(purge=True)


def _client(tier: dict[str, Any], router: str = "hash", **extra: Any) -> Any:
    cfg = {"replicas": tier["services"].state().addresses(), "dsn": tier["dsn"], "router": router,
           "db_connections": 4, "timeout_s": 0.5, **extra}
    return _native.CacheClient(cfg)


def test_services_status_and_idempotent_up(tier: dict[str, Any], cli: Any) -> None:
    st = tier["services"].status()
    assert st["healthy"] and len(st["memcached"]) == REPLICAS and st["postgres"]["reachable"]
    # Same request again: nothing new starts.
    again = tier["services"].up(REPLICAS, memory_mb=16, pg=True)
    assert again.addresses() == tier["replicas"]
    r = cli("cache", "status", "--dir", tier["dir"], "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["healthy"] is True
    r = cli("cache", "up", "--replicas", "5", "--dir", tier["dir"])
    assert r.returncode == 2 and "cache down" in r.stderr and "Traceback" not in r.stderr


def test_loader_is_idempotent(tier: dict[str, Any], cli: Any) -> None:
    again = _native.cache_load(tier["dsn"], ROWS, "superlinear_kv", False)
    assert again == {"rows": ROWS, "loaded": False, "table": "superlinear_kv"}
    rows = _native.cache_sql(tier["dsn"], "SELECT count(*), min(length(k)), min(length(v)) FROM superlinear_kv")
    assert rows == [[str(ROWS), "16", "48"]]
    r = cli("cache", "load", "--rows", "300", "--table", "small_kv", "--dir", tier["dir"], "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["loaded"] is True
    r = cli("cache", "load", "--rows", "300", "--table", "small_kv", "--dir", tier["dir"], "--json")
    assert json.loads(r.stdout)["loaded"] is False


@pytest.mark.parametrize("router", ROUTERS)
def test_cache_aside_reads(tier: dict[str, Any], router: str) -> None:
    c = _client(tier, router)
    c.flush_all()
    c.reset_stats()
    key = _key(123)
    value, version, outcome = c.get(key)
    assert outcome == "miss" and value.startswith("v0000000001.000000000000123.") and version == 1
    if router == "hash":
        assert c.get(key)[2] == "hit"
    if router == "distcache":
        # Two-choice: the next read goes to the other (less-loaded) layer's candidate, which
        # misses and fills it; after that both layers hold a copy.
        assert c.get(key)[2] == "miss"
        assert c.get(key)[2] == "hit"
    assert c.get("k999999999999999") is None  # no such row: nothing cached, no error
    s = c.stats()
    assert s["reads"] == s["hits"] + s["misses"] + s["delayed_hits"] + s["bypass"]
    assert s["db_reads"] == s["misses"] + s["bypass"]
    assert len(c.copies(key)) == {"hash": 1, "random": REPLICAS, "distcache": 2}[router]


def test_bench_hit_rate_and_no_wrong_values(tier: dict[str, Any]) -> None:
    c = _client(tier, "hash", db_connections=8)
    c.flush_all()
    assert c.prefill(ROWS, 1) == ROWS
    report = c.bench({"threads": 8, "requests": 4000, "rows": ROWS, "max_seconds": 60})
    assert report["wrong_values"] == 0 and report["errors"] == 0 and report["missing"] == 0
    assert report["requests"] == 4000
    # 16 MB per replica holds all 5,000 rows: every read hits after the pre-fill.
    assert report["hit_rate"] > 0.99
    assert sum(report["replica_requests"]) == 4000
    assert len(report["thread_cpu_ns"]) == 8 and report["projected_ns"] > 0
    # The client's CPU past the cache is counted exactly where reads leave it: none when all hit.
    st = report["stats"]
    assert (st["miss_cpu_ns"] == 0) == (st["reads"] == st["hits"])
    c.flush_all()
    cold = c.bench({"threads": 2, "requests": 400, "rows": ROWS, "max_seconds": 60, "seed": 9})
    assert cold["stats"]["hits"] < cold["stats"]["reads"] and cold["stats"]["miss_cpu_ns"] > 0
    assert cold["stats"]["miss_cpu_ns"] < sum(cold["thread_cpu_ns"])


def _hammer(c: Any, router: str, hot: list[str], seconds: float) -> list[str]:
    """3 writers and 5 readers on the hot keys; returns the violations seen."""
    acked: dict[str, int] = dict.fromkeys(hot, 0)
    written: dict[tuple[str, int], str] = {}
    lock = threading.Lock()
    problems: list[str] = []
    for key in hot:  # every hot row exists before the readers start
        version = c.put(key, "init")
        written[(key, version)] = "init"
        acked[key] = version
    stop = time.monotonic() + seconds

    def writer(w: int) -> None:
        n = 0
        while time.monotonic() < stop and n < 400:
            key = hot[(w + n) % len(hot)]
            value = f"w{w}-{n}"
            version = c.put(key, value)
            # The write is acknowledged: from now on no read may return an older version.
            with lock:
                written[(key, version)] = value
                acked[key] = max(acked[key], version)
            n += 1

    def reader(r: int) -> None:
        n = 0
        while time.monotonic() < stop and n < 3000:
            key = hot[(r * 7 + n) % len(hot)]
            with lock:
                floor = acked[key]
            got = c.get(key, r * 100_000 + n)
            if got is None:
                problems.append(f"{router}: {key} vanished")
                return
            value, version, _ = got
            if version < floor:
                problems.append(f"{router}: stale {key} v{version} < acked v{floor}")
            with lock:
                expect = written.get((key, version))
            if expect is not None and expect != value:
                problems.append(f"{router}: {key} v{version} is {value!r}, written {expect!r}")
            n += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    threads += [threading.Thread(target=reader, args=(r,)) for r in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return problems


@pytest.mark.parametrize("router", ROUTERS)
def test_concurrent_writes_never_leave_stale_reads(tier: dict[str, Any], router: str) -> None:
    """Writers and readers on a few hot keys: a read that starts after a write returned never
    sees an older version, and every value read is the one written with its version."""
    # Rows beyond the loaded ones (inserted by the first write): the benchmarks never read them.
    hot = [_key(ROWS + 100 + i) for i in range(6)]
    c = _client(tier, router, db_connections=6)
    problems = _hammer(c, router, hot, 1.5)
    assert not problems, problems[:5]
    s = c.stats()
    assert s["writes"] > 0 and s["reads"] > 0 and s["invalidations"] > 0


def test_replica_killed_mid_run_then_rejoins(tier: dict[str, Any]) -> None:
    services = tier["services"]
    c = _client(tier, "hash", db_connections=4)
    c.flush_all()
    c.prefill(ROWS, 1)
    result: dict[str, Any] = {}

    def run() -> None:
        result["r"] = c.bench({"threads": 4, "requests": 60_000, "rows": ROWS, "max_seconds": 20})

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.4)
    services.kill_replica(1)
    t.join()
    r = result["r"]
    assert r["errors"] == 0, r["first_error"]
    assert r["wrong_values"] == 0 and r["missing"] == 0
    assert r["stats"]["bypass"] > 0, "keys of the dead replica were served by the database"
    assert not c.replicas()[1]["up"]
    services.restart_replica(1)
    deadline = time.monotonic() + 10
    while not c.replicas()[1]["up"] and time.monotonic() < deadline:
        c.bench({"threads": 2, "requests": 500, "rows": ROWS, "max_seconds": 5})
        time.sleep(0.05)
    rep = c.replicas()[1]
    assert rep["up"] and rep["epoch"] >= 1, rep
    after = c.bench({"threads": 4, "requests": 3000, "rows": ROWS, "max_seconds": 20})
    assert after["wrong_values"] == 0 and after["errors"] == 0
    assert after["replica_requests"][1] > 0, "the replica serves its keys again"


def test_postgres_restart_bounded_retries(tier: dict[str, Any]) -> None:
    services = tier["services"]
    impatient = _client(tier, "hash", db_attempts=3, db_backoff_s=0.01, db_max_backoff_s=0.02)
    patient = _client(tier, "hash", db_attempts=40, db_backoff_s=0.05, db_max_backoff_s=0.25)
    impatient.flush_all()
    services.stop_postgres()
    try:
        with pytest.raises(SuperlinearError, match="gave up after 3 attempts"):
            impatient.get(_key(77))
        restarter = threading.Timer(0.5, services.start_postgres)
        restarter.start()
        got = patient.get(_key(78))  # waits through the restart with backoff
        restarter.join()
        assert got is not None and got[0].startswith("v0000000001.000000000000078.")
        assert patient.stats()["db_retries"] > 0
    finally:
        if not services.status()["postgres"]["alive"]:
            services.start_postgres()
    assert impatient.get(_key(79)) is not None  # reconnects after the restart


def test_cli_bench_json_and_errors(tier: dict[str, Any], cli: Any, tmp_path: Path) -> None:
    r = cli("cache", "bench", "--dir", tier["dir"], "--replicas", "2", "--requests", "2000", "--rows", str(ROWS),
            "--router", "distcache", "--dist", "zipf:0.99", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    row = doc["row"]
    # Three runs by default: counts are their sums, timed figures their median with the range.
    assert [run["requests"] for run in doc["runs"]] == [2000] * 3 and row["repeats"] == 3
    assert row["requests"] == 6000 and row["wrong_values"] == 0 and row["k"] == 2
    assert row["reads"] + row["writes"] == 6000 and row["writes"] == 0
    for field in ("throughput_rps_projected", "throughput_rps_measured", "hit_rate"):
        assert row[f"{field}_lo"] <= row[field] <= row[f"{field}_hi"], field
        assert sorted(row[f"{field}_runs"]) == sorted(run[field] for run in doc["runs"])
    # Only writes: no hit rate to show (there were no reads), not 0.000.
    r = cli("cache", "bench", "--dir", tier["dir"], "--requests", "300", "--write-fraction", "1", "--repeats", "1")
    assert r.returncode == 0 and "— (no reads)" in r.stdout and "0 / 300" in r.stdout, r.stdout
    r = cli("cache", "bench", "--dir", str(tmp_path / "none"))
    assert r.returncode == 2 and "cache up" in r.stderr and "Traceback" not in r.stderr
    r = cli("cache", "bench", "--memcached", tier["replicas"][0], "--postgres", "host=x bogus")
    assert r.returncode == 2 and "bogus" in r.stderr
    r = cli("cache", "bench", "--dir", tier["dir"], "--router", "nope", "--requests", "10")
    assert r.returncode == 2 and "unknown router" in r.stderr


def test_distcache_balances_skew_in_simulation() -> None:
    """Deterministic routing of Zipf keys (no servers): two-choice keeps max/mean ≤ 1.2."""
    for dist in ("zipf:0.9", "zipf:0.99"):
        hash_loads = _native.cache_route_sim("hash", 16, dist, 1_000_000, 200_000, 3)
        dc_loads = _native.cache_route_sim("distcache", 16, dist, 1_000_000, 200_000, 3)
        ratio = [max(x) * len(x) / sum(x) for x in (hash_loads, dc_loads)]
        assert ratio[1] <= 1.2 < 1.3 <= ratio[0], (dist, ratio)


def test_service_backed_study_end_to_end(tmp_path: Path) -> None:
    """A miniature Fig. 11 through the same driver as `reproduce fig11`: servers up, COPY,
    pre-fill, both routers, results in the shared schema, plots, servers down."""
    from superlinear.experiments.cachetier_driver import _plot, findings, run_study
    from superlinear.experiments.fig11 import CachePanel, CacheStudy
    from superlinear.output.results import write_results

    study = CacheStudy(name="fig11", description="mini", rows=3000, memory_mb=2, replicas=2,
                       panels=(CachePanel("joint", "mini", ("hash", "random"), (1, 2), requests=1500,
                                          threads_per_replica=2, db_per_replica=2),),
                       max_seconds_per_run=30, repeats=2)
    # Each finished round is handed over as it finishes (what an interrupted run keeps).
    rounds: list[list[dict[str, Any]]] = []
    rows = run_study(study, None, tmp_path, show_progress=False, on_round=rounds.append)
    assert [{r["repeats"] for r in done} for done in rounds] == [{1}, {2}]
    assert rounds[-1] == rows
    assert [(r["dispatch"], r["k"]) for r in rows] == [("hash", 1), ("hash", 2), ("random", 1), ("random", 2)]
    for r in rows:
        # Counts add up over the rounds.
        assert r["wrong_values"] == 0 and r["errors"] == 0 and r["requests"] == 1500 * 2
        assert r["speedup_work"] is not None and r["speedup_projected"] is not None
        assert sum(r["replica_requests"]) == 1500 * 2 and len(r["replica_requests"]) == r["k"]
    assert rows[0]["speedup_work"] == pytest.approx(1.0) and rows[0]["speedup_eq3"] == pytest.approx(1.0)
    write_results(tmp_path, "fig11", {"mini": True}, rows)
    assert (tmp_path / "result.csv").exists() and json.loads((tmp_path / "result.json").read_text())["rows"]
    assert {p.name for p in _plot(tmp_path, study, rows)} == {"fig11-joint.png", "fig11-joint.svg"}
    assert any("wrong values" in line for line in findings(study, rows))


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_stops_a_cache_figure_and_every_server_it_started(sig: int, tmp_path: Path) -> None:
    # `timeout` or `kill` (SIGTERM) and a closed terminal (SIGHUP) left the replicas and the
    # PostgreSQL cluster of `reproduce fig11` running, and their folder behind: only Ctrl-C ran
    # the cleanup.
    scratch = Path(tempfile.gettempdir())
    before = set(scratch.glob("superlinear-fig11-*"))
    p = start("reproduce", "fig11", "--quick", "--repeats", "1", "--out", str(tmp_path / "out"))
    deadline = time.monotonic() + 60
    servers: list[int] = []
    while len(servers) < 2:  # the replicas are the command's children; PostgreSQL follows them
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.2)
        servers = _children(p.pid)
    time.sleep(2.0)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, err
    assert err.strip() == f"superlinear: terminated by {signal.Signals(sig).name}", err
    alive = [pid for pid in servers if Path(f"/proc/{pid}").exists()]
    assert not alive, f"servers still running: {alive}"
    assert set(scratch.glob("superlinear-fig11-*")) == before, "the run's server folder is left behind"


def test_cli_bench_refuses_what_it_cannot_measure(tier: dict[str, Any], cli: Any) -> None:
    """Issue 15: zero counts, more rows than loaded, an unreachable replica and a deadline that
    stops the bench are errors (one line, non-zero exit), never defaults or a quiet success."""
    d = tier["dir"]
    for flag in ("--threads", "--replicas", "--db-connections", "--max-seconds"):
        r = cli("cache", "bench", "--dir", d, "--requests", "100", flag, "0")
        assert r.returncode == 2 and f"argument {flag}" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = cli("cache", "bench", "--dir", d, "--requests", "100", "--rows", str(ROWS * 4))
    assert r.returncode == 2 and f"holds {ROWS:,} rows" in r.stderr, r.stderr
    # Without --rows the bench draws from the rows `load` loaded: nothing is missing.
    r = cli("cache", "bench", "--dir", d, "--requests", "500", "--json")
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)["row"]
    assert row["rows"] == ROWS and row["missing"] == 0 and row["replica_errors"] == 0
    r = cli("cache", "bench", "--memcached", "127.0.0.1:1", "--postgres", tier["dsn"], "--requests", "100")
    assert r.returncode == 2 and "the cache is down" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = cli("cache", "bench", "--dir", d, "--requests", "50000000", "--max-seconds", "0.3", "--json")
    assert r.returncode == 1 and "stopped by --max-seconds" in r.stderr, r.stderr
    assert json.loads(r.stdout)["row"]["timed_out"] is True
    # More connections than the server takes failed after the start with "too many clients", and
    # more than the threads were recorded though no thread could use them.
    max_connections = int(_native.cache_sql(tier["dsn"], "SHOW max_connections")[0][0])
    r = cli("cache", "bench", "--dir", d, "--requests", "100", "--threads", str(max_connections + 1))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"--threads {max_connections + 1:,}: the run opens {max_connections + 1:,} PostgreSQL connections and " \
           "the server takes" in r.stderr, r.stderr
    r = cli("cache", "bench", "--dir", d, "--requests", "100", "--threads", "8", "--db-connections", "9")
    assert r.returncode == 2 and "--db-connections 9: at most the 8 threads" in r.stderr, r.stderr


def test_cli_load_says_it_replaced_rows(tier: dict[str, Any], cli: Any) -> None:
    r = cli("cache", "load", "--rows", "400", "--table", "shrink_kv", "--dir", tier["dir"])
    assert r.returncode == 0, r.stderr
    r = cli("cache", "load", "--rows", "100", "--table", "shrink_kv", "--dir", tier["dir"])
    assert r.returncode == 0 and "replaced the 400 rows" in r.stdout, r.stdout


def test_cli_load_never_replaces_a_table_it_did_not_make(tier: dict[str, Any], cli: Any) -> None:
    # A table of that name made by somebody else was dropped and reloaded, `--force` or not.
    _native.cache_sql(tier["dsn"], "CREATE TABLE precious (id int PRIMARY KEY, note text); "
                                   "INSERT INTO precious VALUES (1, 'my data'), (2, 'more')")
    for force in ((), ("--force",)):
        r = cli("cache", "load", "--rows", "100", "--table", "precious", "--dir", tier["dir"], *force)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "table precious exists and was not made by superlinear" in r.stderr, r.stderr
        assert "name another --table or drop it yourself" in r.stderr, r.stderr
    assert _native.cache_sql(tier["dsn"], "SELECT count(*) FROM precious") == [["2"]]


def _held(addresses: list[str], keys: int) -> int:
    """How many of the first ``keys`` keys the replicas hold, all together (``stats`` counts
    items a flush invalidated until they are reclaimed: a get does not)."""
    held = 0
    for address in addresses:
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=2) as s:
            for i in range(keys):
                s.sendall(f"get {_key(i)}\r\n".encode())
                answer = b""
                while not answer.endswith(b"END\r\n"):
                    answer += s.recv(4096)
                held += answer.startswith(b"VALUE ")
    return held


def test_cli_reload_flushes_the_tiers_replicas(tier: dict[str, Any], cli: Any) -> None:
    # Values a bench wrote stayed cached after a reload put the loaded ones back in the table:
    # the next bench served them as hits (right values of their keys, only older) and passed.
    replicas = tier["replicas"]
    r = cli("cache", "load", "--rows", "300", "--table", "reload_kv", "--dir", tier["dir"])
    assert r.returncode == 0, r.stderr
    r = cli("cache", "bench", "--table", "reload_kv", "--rows", "300", "--requests", "3000", "--flush",
            "--write-fraction", "0.5", "--dist", "hot:50", "--dir", tier["dir"])
    assert r.returncode == 0, r.stderr
    assert _held(replicas, 50) > 0
    r = cli("cache", "load", "--rows", "300", "--table", "reload_kv", "--force", "--dir", tier["dir"], "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"rows": 300, "loaded": True, "table": "reload_kv",
                                    "flushed_replicas": len(replicas)}, r.stdout
    assert _held(replicas, 50) == 0
    # Servers the load does not know of (a DSN of its own, no tier): it says what to do.
    r = cli("cache", "load", "--rows", "300", "--table", "reload_kv", "--force", "--postgres", tier["dsn"])
    assert r.returncode == 0, r.stderr
    assert "note: memcached servers in front of this database may hold entries of the 300 rows replaced: " \
           "start the next bench with --flush" in r.stderr, r.stderr


def test_cli_load_stops_on_ctrl_c_and_keeps_the_table_as_it_was(tier: dict[str, Any], cli: Any) -> None:
    r = cli("cache", "load", "--rows", "200", "--table", "interrupted_kv", "--dir", tier["dir"])
    assert r.returncode == 0, r.stderr
    # Twenty million rows take tens of seconds on two cores: the interrupt comes in the middle.
    code, took, err = interrupt_after(start("cache", "load", "--rows", "20000000", "--table", "interrupted_kv",
                                            "--dir", tier["dir"]), 3.0)
    assert code == 130 and err.strip() == "superlinear: interrupted", err
    assert took < 2.0, f"stopped {took:.2f} s after SIGINT"
    # The load was one transaction, rolled back: the 200 rows are still there, marked as loaded.
    assert _native.cache_sql(tier["dsn"], "SELECT count(*) FROM interrupted_kv") == [["200"]]
    r = cli("cache", "load", "--rows", "200", "--table", "interrupted_kv", "--dir", tier["dir"])
    assert r.returncode == 0 and "already loaded" in r.stdout, r.stdout


def test_cli_bench_stopped_by_ctrl_c_shows_the_runs_that_finished(tier: dict[str, Any]) -> None:
    # A Ctrl-C in the third of --repeats 3 threw the two finished runs away: "interrupted", nothing else.
    addresses = tier["services"].state().addresses()
    before = _gets(addresses)
    p = start("cache", "bench", "--dir", tier["dir"], "--flush", "--requests", "500", "--repeats", "1000", "--json")
    try:
        deadline = time.monotonic() + 60
        while _gets(addresses) < before + 1500:  # at most 2 gets a request: a run has finished
            assert p.poll() is None and time.monotonic() < deadline, p.communicate()
            time.sleep(0.05)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 130 and err.strip() == "superlinear: interrupted", err
    assert took < 2.0, f"stopped {took:.2f} s after SIGINT"
    doc = json.loads(out)
    n = len(doc["runs"])
    assert n >= 1 and doc["row"]["repeats"] == n and doc["row"]["requests"] == 500 * n, doc["row"]
    assert doc["stopped"] == f"stopped after {n} of 1000 runs: the figures are theirs"
    assert doc["row"]["wrong_values"] == 0


def test_a_postgres_start_that_fails_says_why(tier: dict[str, Any], cli: Any) -> None:
    # With its port taken, `cache restart` said "PostgreSQL did not start (…): … LOG: database
    # system is shut down", the log's last line, not what had failed.
    services = tier["services"]
    state = services.state()
    assert state is not None and state.postgres is not None
    port = state.postgres.port
    services.stop_postgres()
    try:
        with socket.socket() as taken:
            taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            taken.bind(("127.0.0.1", port))
            taken.listen()
            r = cli("cache", "restart", "--dir", tier["dir"])
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert f"PostgreSQL did not start on port {port} (" in r.stderr, r.stderr
        assert 'could not bind IPv4 address "127.0.0.1": Address already in use' in r.stderr, r.stderr
    finally:
        if not services.status()["postgres"]["alive"]:
            services.start_postgres()
    r = cli("cache", "status", "--dir", tier["dir"], "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["healthy"] is True, r.stdout


def test_cli_load_names_a_reserved_word_given_as_table(tier: dict[str, Any], one_line_mistake: Any) -> None:
    # `--table select` passed the name check and the server answered "syntax error at or near
    # "select"", naming no flag.
    for word in ("select", "left", "SELECT"):
        one_line_mistake(["cache", "load", "--rows", "10", "--table", word, "--dir", tier["dir"]],
                         f"--table {word}: a reserved word of PostgreSQL's SQL")


def test_cli_load_is_sized_against_the_servers_disk(tier: dict[str, Any], cli: Any, one_line_mistake: Any) -> None:
    one_line_mistake(["cache", "load", "--rows", "100000000000000", "--table", "huge_kv", "--dir", tier["dir"]],
                     "--rows 100,000,000,000,000: the table would take about", "of disk in", "free")
    r = cli("cache", "load", "--rows", "2000000000000000", "--dir", tier["dir"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "argument --rows: expected at most 1,000,000,000,000,000 rows" in r.stderr
    # Nothing was made for the refused load.
    assert _native.cache_sql(tier["dsn"], "SELECT to_regclass('huge_kv')") == [[None]]


def test_cli_up_bounds_lock_and_restart(tier: dict[str, Any], cli: Any, tmp_path: Path) -> None:
    r = cli("cache", "up", "--replicas", "100000", "--no-pg", "--dir", str(tmp_path / "big"))
    assert r.returncode == 2 and "--allow-many" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "big" / "state.json").exists()
    # --allow-many lifts the 64-replica bound, not what the kernel can run: 1,688 memcacheds started
    # over a minute before a timeout stopped them.
    r = cli("cache", "up", "--replicas", "100000", "--allow-many", "--no-pg", "--dir", str(tmp_path / "big"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--replicas 100,000: about 900,000 threads (1 + 8 a memcached), and the kernel has room for" in r.stderr
    assert not (tmp_path / "big" / "state.json").exists()
    # advise --verify starts a tier too: the same bounds (200 replicas started and failed on connections).
    for k, message in (("200", "--k 200: more than 64 memcached processes"),
                       ("1,60", "--k 60 × --memory-mb 99999999")):
        r = cli("cache", "advise", "--rows", "20000", "--dist", "hot:2000", "--k", k, "--verify",
                "--memory-mb", "99999999" if "memory" in message else "4", "--out", str(tmp_path / "advice"))
        assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    services = tier["services"]
    with services.locked("up"):
        r = cli("cache", "up", "--replicas", str(REPLICAS), "--memory-mb", "16", "--dir", tier["dir"])
        assert r.returncode == 2 and "another `superlinear cache` command" in r.stderr, r.stderr
    services.kill_replica(2)
    r = cli("cache", "restart", "--dir", tier["dir"])
    assert r.returncode == 0 and tier["replicas"][2] in r.stdout, r.stdout + r.stderr
    # status checks the restarted process, not the killed one.
    r = cli("cache", "status", "--dir", tier["dir"], "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["healthy"] is True, r.stdout
    r = cli("cache", "restart", "7", "--dir", tier["dir"])
    assert r.returncode == 2 and "REPLICA 7" in r.stderr, r.stderr
    r = cli("cache", "status", "--dir", tier["dir"])
    assert r.returncode == 0 and "postgresql 1" in r.stdout, r.stdout  # the server row, its version
    # (The DSN's column wraps where the terminal's width puts it: the JSON names it whole.)
    r = cli("cache", "status", "--dir", tier["dir"], "--json")
    assert json.loads(r.stdout)["postgres"]["dsn"] == tier["dsn"], r.stdout



def _processes_naming(text: str) -> list[int]:
    """Processes whose command line holds ``text`` (zombies are not running)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if text in (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace") \
                        and (d / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(d.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("step", ["memcached", "initdb", "pg_ctl"])
def test_up_cut_short_by_ctrl_c_leaves_no_server_running(step: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C once left a PostgreSQL that pg_ctl had started in a session of its own running,
    # and state.json not naming it; or a memcached that had not answered yet.
    from superlinear.cache import services as services_module

    d = tempfile.mkdtemp(prefix="sl-cut-", dir="/tmp")
    os.chmod(d, 0o755)
    started: list[int] = []
    real_popen = subprocess.Popen

    class CutShort(real_popen):  # type: ignore[misc, valid-type]
        def __init__(self, args: Any, *rest: Any, **kw: Any) -> None:
            super().__init__(args, *rest, **kw)
            started.append(self.pid)

        def communicate(self, *a: Any, **kw: Any) -> Any:
            if step in " ".join(map(str, self.args)):
                time.sleep(0.2)  # the step is under way
                raise KeyboardInterrupt
            return super().communicate(*a, **kw)

    monkeypatch.setattr(subprocess, "Popen", CutShort)
    if step == "memcached":
        def reachable(address: str, ping: Any = None, timeout: float = 0.2) -> bool:
            raise KeyboardInterrupt
        monkeypatch.setattr(services_module, "server_answers", reachable)
    services = Services(d)
    try:
        with pytest.raises(KeyboardInterrupt):
            services.up(2, pg=True)
        assert started, "nothing was started"
        assert not any(services_module._alive(pid) for pid in started), started
        assert _processes_naming(d) == []
        assert services.state() is None
        assert not (Path(d) / "pg" / "data.partial").exists()
        monkeypatch.undo()
        # Nothing half-made is in the way of the next start.
        state = services.up(1, pg=True)
        assert state.postgres is not None and services.status()["healthy"]
    finally:
        monkeypatch.undo()
        services.down(purge=True)
    assert _processes_naming(d) == []


def test_down_purge_and_stop_only_touch_what_up_made(cli: Any, tmp_path: Path) -> None:
    # `--dir` naming the wrong folder once deleted it whole; a pid in state.json that is now
    # another process's (a reboot, a hand edit) was killed in the server's place.
    mine = tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)
    (mine / "notes.txt").write_text("keep")
    r = cli("cache", "down", "--purge", "--dir", str(mine))
    assert r.returncode == 2 and "not deleted" in r.stderr and "notes.txt" in r.stderr, r.stderr
    assert (mine / "notes.txt").read_text() == "keep"
    r = cli("cache", "down", "--dir", str(tmp_path / "never"))
    assert r.returncode == 0 and not (tmp_path / "never").exists(), r.stderr
    (tmp_path / "empty").mkdir()  # an empty folder is nobody's tier: it was deleted
    r = cli("cache", "down", "--purge", "--dir", str(tmp_path / "empty"))
    assert r.returncode == 0 and "no cache tier in" in r.stdout and (tmp_path / "empty").is_dir(), r.stdout
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        tier = tmp_path / "stale"
        tier.mkdir()
        (tier / "state.json").write_text(json.dumps(
            {"dir": str(tier), "memcached": [{"pid": bystander.pid, "memory_mb": 4, "threads": 1, "port": 9}]}))
        r = cli("cache", "status", "--dir", str(tier), "--json")
        assert r.returncode == 1 and json.loads(r.stdout)["memcached"][0]["alive"] is False, r.stdout
        r = cli("cache", "down", "--purge", "--dir", str(tier))
        assert r.returncode == 0, r.stderr
        assert bystander.poll() is None, "a process that is not the server was killed"
        assert not tier.exists()
    finally:
        bystander.kill()
        bystander.wait()
    bad = tmp_path / "bad"
    bad.mkdir()
    for text, fragment in (("[]", "not an object with a 'dir'"),
                           ('{"dir": "x", "memcached": [{"pid": "abc", "memory_mb": 4, "threads": 1, "port": 9}]}',
                            "pid 'abc' is not an integer"),
                           ('{"dir": "x", "memcached": [{"pid": -1, "memory_mb": 4, "threads": 1, "port": 9}]}',
                            "pid -1 is not a process id")):
        (bad / "state.json").write_text(text)
        for action in ("status", "down"):
            r = cli("cache", action, "--dir", str(bad))
            assert r.returncode == 2 and fragment in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_bench_refuses_a_cache_that_does_not_serve(tier: dict[str, Any], cli: Any) -> None:
    # A stopped memcached still has its port open (the kernel accepts connections): every read
    # bypassed the cache and the bench said success; `status` said it answers.
    pid = tier["services"].state().memcached[0].pid
    os.kill(pid, signal.SIGSTOP)
    try:
        r = cli("cache", "status", "--dir", tier["dir"], "--json")
        assert r.returncode == 1 and json.loads(r.stdout)["memcached"][0]["reachable"] is False, r.stdout
        r = cli("cache", "bench", "--requests", "200", "--repeats", "1", "--dir", tier["dir"])
        assert r.returncode == 2 and "does not answer" in r.stderr, r.stderr
    finally:
        os.kill(pid, signal.SIGCONT)
    # A database's port named as a cache, and the tier's cache in front of a named database.
    port = tier["dsn"].rsplit(":", 1)[1].split("/")[0]
    r = cli("cache", "bench", "--requests", "200", "--repeats", "1", "--memcached", f"127.0.0.1:{port}",
            "--postgres", tier["dsn"])
    assert r.returncode == 2 and "does not answer" in r.stderr, r.stderr
    r = cli("cache", "bench", "--requests", "200", "--repeats", "1", "--postgres", tier["dsn"], "--dir", tier["dir"])
    assert r.returncode == 2 and "--postgres needs --memcached" in r.stderr, r.stderr
    # A hot set is checked against the table's rows, not against one row.
    r = cli("cache", "bench", "--requests", "500", "--repeats", "1", "--dist", "hot:100", "--dir", tier["dir"])
    assert r.returncode == 0, r.stderr
    r = cli("cache", "bench", "--requests", "500", "--repeats", "1", "--dist", f"hot:{ROWS + 1}", "--dir", tier["dir"])
    assert r.returncode == 2 and f"larger than the {ROWS} rows" in r.stderr, r.stderr


def test_bench_is_never_served_another_tables_entries(tier: dict[str, Any], cli: Any) -> None:
    """Every table holds the same keys: a bench of one table after a bench of another, without
    --flush, was served the other's entries (right values, but its hit rate was not this
    table's). The mark a bench leaves on each replica names its table."""
    d = tier["dir"]
    _client(tier).flush_all()  # marks superlinear_kv, whichever test ran before
    r = cli("cache", "load", "--rows", "300", "--table", "other_kv", "--dir", d)
    assert r.returncode == 0, r.stderr
    try:
        # The replicas hold superlinear_kv's entries from the tests before: refused, then cold.
        r = cli("cache", "bench", "--dir", d, "--table", "other_kv", "--requests", "500", "--repeats", "1")
        assert r.returncode == 2 and "holds entries of table superlinear_kv" in r.stderr, r.stderr
        r = cli("cache", "bench", "--dir", d, "--table", "other_kv", "--requests", "500", "--repeats", "1", "--flush")
        assert r.returncode == 0, r.stderr
        assert _client(tier).other_tables() == ["other_kv"] * REPLICAS
        # status says which table each replica holds.
        r = cli("cache", "status", "--dir", d, "--json")
        assert [m["table"] for m in json.loads(r.stdout)["memcached"]] == ["other_kv"] * REPLICAS, r.stdout
        r = cli("cache", "status", "--dir", d)
        assert "holds table" in r.stdout and r.stdout.count("other_kv") == REPLICAS, r.stdout
        r = cli("cache", "bench", "--dir", d, "--requests", "500", "--repeats", "1")
        assert r.returncode == 2 and "holds entries of table other_kv" in r.stderr and "--flush" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        r = cli("cache", "bench", "--dir", d, "--requests", "500", "--repeats", "1", "--flush", "--json")
        assert r.returncode == 0, r.stderr
        assert _client(tier).other_tables() == [None] * REPLICAS
    finally:
        _client(tier).flush_all()
    r = cli("cache", "bench", "--dir", d, "--requests", "500", "--repeats", "1")
    assert r.returncode == 0, r.stderr


def _sabotage(addresses: list[str], items: dict[str, str], stop: threading.Event) -> None:
    """Keeps putting old values back into every replica behind the client's back (plain `set`,
    version 1), as a replica that missed an invalidation would serve them."""
    import socket

    conns = []
    for address in addresses:
        host, port = address.rsplit(":", 1)
        conns.append(socket.create_connection((host, int(port)), timeout=2))
    try:
        while not stop.is_set():
            for s in conns:
                s.sendall(b"".join(f"set {k} 1 0 {len(v)} noreply\r\n{v}\r\n".encode() for k, v in items.items()))
            time.sleep(0.001)
    finally:
        for s in conns:
            s.close()


def test_cli_bench_counts_stale_values(tier: dict[str, Any], cli: Any) -> None:
    """Issue 15: with writes, a read that returns a value older than the bench's last finished
    write of that key is counted as stale and fails the bench (exit 1), like a wrong value; a
    clean run with writes reports 0 stale values."""
    d = tier["dir"]
    r = cli("cache", "bench", "--dir", d, "--requests", "3000", "--rows", "50", "--write-fraction", "0.3",
            "--threads", "4", "--repeats", "1", "--json")
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)["row"]
    assert row["stale_values"] == 0 and row["wrong_values"] == 0 and row["errors"] == 0
    r = cli("cache", "bench", "--dir", d, "--requests", "300", "--rows", "50", "--write-fraction", "0.3",
            "--threads", "2")
    assert r.returncode == 0 and "stale values" in r.stdout, r.stderr
    # Old values put back behind the bench's back are stale once the bench has written the key.
    rows = 10
    old = dict(_native.cache_sql(tier["dsn"], f"SELECT k, v FROM superlinear_kv WHERE k < '{_key(rows)}'"))
    assert len(old) == rows
    stop = threading.Event()
    saboteur = threading.Thread(target=_sabotage, args=(tier["services"].state().addresses(), old, stop))
    saboteur.start()
    try:
        r = cli("cache", "bench", "--dir", d, "--requests", "20000", "--rows", str(rows), "--write-fraction", "0.5",
                "--threads", "2", "--repeats", "1", "--json")
    finally:
        stop.set()
        saboteur.join()
        _client(tier).flush_all()
    assert r.returncode == 1, (r.stdout, r.stderr)
    row = json.loads(r.stdout)["row"]
    assert row["stale_values"] > 0 and row["wrong_values"] == 0
    assert "stale values" in r.stderr and "Traceback" not in r.stderr


def _gets(addresses: list[str]) -> int:
    """Gets the replicas have served, in all."""
    return sum(int(_native.cache_memcached_stats(a)["cmd_get"]) for a in addresses)


def _stop_postgres_once_reads_flow(services: Services, running: Any) -> float:
    """Stops PostgreSQL once a bench is under way (its reads reach the replicas) while
    ``running()``; returns when it was stopped (time.monotonic)."""
    addresses = services.state().addresses()
    before = _gets(addresses)
    deadline = time.monotonic() + 30
    while _gets(addresses) < before + 200:
        assert running() and time.monotonic() < deadline, "the bench did not start"
        time.sleep(0.01)
    services.stop_postgres()
    return time.monotonic()


@contextlib.contextmanager
def _bench_while_postgres_stops(tier: dict[str, Any], c: Any, max_seconds: float) -> Iterator[dict[str, Any]]:
    """Runs ``c.bench`` (4 threads, far more requests than it can serve) in a thread and stops
    PostgreSQL once its reads flow; yields ``run`` (the thread), ``started`` and ``stopped``
    (time.monotonic) and, once the bench has returned, its ``r`` or ``error``. Afterwards the bench
    has ended (a stop request ends it if the body left it running), PostgreSQL runs again and the
    replicas are flushed."""
    c.flush_all()
    state: dict[str, Any] = {}

    def bench() -> None:
        try:
            state["r"] = c.bench({"threads": 4, "requests": 50_000_000, "rows": ROWS, "max_seconds": max_seconds})
        except Exception as e:  # the run's error, for the caller to check
            state["error"] = e

    _native.cancel_clear()
    state["run"] = run = threading.Thread(target=bench)
    state["started"] = time.monotonic()
    run.start()
    try:
        state["stopped"] = _stop_postgres_once_reads_flow(tier["services"], run.is_alive)
        yield state
    finally:
        _native.cancel_request()
        run.join()
        _native.cancel_clear()
        tier["services"].start_postgres()
        c.flush_all()


def test_bench_deadline_holds_while_the_database_is_gone(tier: dict[str, Any]) -> None:
    """The deadline was checked every 64 requests, and a failing request spent its whole backoff
    (seconds) past it: with PostgreSQL gone, a 10 s bench ran for minutes. Each request checks it
    now, retries stop there, and a request cut short by it is not done (not an error)."""
    # Each request would retry for about 10 s: far past the deadline.
    c = _client(tier, "hash", db_attempts=40, db_backoff_s=0.05, db_max_backoff_s=0.25)
    with _bench_while_postgres_stops(tier, c, max_seconds=3) as result:
        result["run"].join(timeout=30)
        took = time.monotonic() - result["started"]
    r = result["r"]
    # A wide margin for a loaded machine: without the deadline in the retries it took minutes.
    assert took < 3 + 5, f"the 3 s bench took {took:.1f} s"
    assert r["timed_out"] and r["errors"] == 0 and r["wrong_values"] == 0, (r["errors"], r["first_error"])
    assert r["db_retries"] > 0 and 0 < r["requests"] < 50_000_000


def test_cli_bench_gives_up_when_the_database_is_gone(tier: dict[str, Any]) -> None:
    """With PostgreSQL gone, a bench does not retry for its whole --max-seconds: once as many
    requests in a row as it has threads failed (each after the pool's retries, about 2.6 s), it
    gives up, says so in one line and exits 1."""
    services = tier["services"]
    p = start("cache", "bench", "--dir", tier["dir"], "--flush", "--threads", "4", "--requests", "50000000",
              "--max-seconds", "60", "--repeats", "3", "--json")
    try:
        stopped = _stop_postgres_once_reads_flow(services, lambda: p.poll() is None)
        out, err = p.communicate(timeout=30)
        took = time.monotonic() - stopped
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        services.start_postgres()
    assert p.returncode == 1, err
    # About 2.6 s here; a wide margin for a loaded machine: it ran its whole 60 s before.
    assert took < 20, f"gave up {took:.1f} s after PostgreSQL stopped"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "failed requests, the last ones in a row: the run gave up" in lines[0], err
    assert "unavailable" in lines[0] and "Traceback" not in err
    doc = json.loads(out)
    assert len(doc["runs"]) == 1, "the runs after a run that gave up would fail alike"
    row = doc["row"]
    assert row["gave_up"] is True and row["timed_out"] is False and row["errors"] >= 4
    assert row["requests"] < 50_000_000


def test_bench_stops_on_ctrl_c_while_its_requests_retry(tier: dict[str, Any]) -> None:
    """A request whose database is gone waits out the pool's backoff pauses (up to 1 s each by
    default, 3 s here). A Ctrl-C ended the run only after the pauses in progress: now within a
    poll of the stop request."""
    c = _client(tier, "hash", db_attempts=10, db_backoff_s=3.0, db_max_backoff_s=3.0)
    with _bench_while_postgres_stops(tier, c, max_seconds=60) as result:
        # Every thread's request is then in its first 3 s pause.
        time.sleep(max(0.0, result["stopped"] + 1.0 - time.monotonic()))
        asked = time.monotonic()
        _native.cancel_request()
        result["run"].join(timeout=30)
        took = time.monotonic() - asked
    assert "interrupted" in str(result.get("error")), result
    # Without the stop read inside the pauses: about 2 s, the rest of the pause.
    assert took < 1.0, f"stopped {took:.2f} s after the request"


def test_cli_bench_warmup_cut_short_by_max_seconds_is_an_error(tier: dict[str, Any], one_line_mistake: Any) -> None:
    # The warm-up's report was thrown away: a warm-up --max-seconds stopped was followed by a
    # measured run on a colder cache than asked, and exit 0.
    one_line_mistake(["cache", "bench", "--dir", tier["dir"], "--warmup", "50000000", "--max-seconds", "0.3",
                      "--requests", "100", "--repeats", "1"],
                     "--warmup 50,000,000: --max-seconds 0.3 stopped the warm-up after", "lower --warmup")


def test_cli_bench_refuses_a_server_named_twice(one_line_mistake: Any) -> None:
    # `--memcached A,B,A,B` was benched as 4 replicas.
    one_line_mistake(["cache", "bench", "--memcached", "127.0.0.1:11311,127.0.0.1:11312,127.0.0.1:11311,"
                      "127.0.0.1:11312", "--postgres", "host=x", "--requests", "10"],
                     "--memcached: 127.0.0.1:11311 named twice")
    # Two spellings of one server are one server too.
    one_line_mistake(["cache", "bench", "--memcached", "Mc.local:11311, mc.LOCAL:011311", "--postgres", "host=x"],
                     "--memcached: Mc.local:11311 and mc.LOCAL:011311 named twice")
    one_line_mistake(["cache", "bench", "--memcached", "/tmp/mc.sock,/tmp//mc.sock", "--postgres", "host=x"],
                     "--memcached: /tmp/mc.sock and /tmp//mc.sock named twice")


def test_down_and_restart_write_nothing_into_a_folder_without_a_tier(cli: Any, tmp_path: Path) -> None:
    # `down` and `restart` wrote a .gitignore and a .lock into any folder --dir named, and `down`
    # said "nothing was running" as if it were a tier's.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    r = cli("cache", "status", "--dir", str(mine))
    assert r.returncode == 0 and "nothing running" in r.stdout, r.stdout + r.stderr
    r = cli("cache", "down", "--dir", str(mine))
    assert r.returncode == 0 and f"no cache tier in {mine}" in r.stdout.replace("\n", ""), r.stdout + r.stderr
    r = cli("cache", "down", "--dir", str(mine), "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == {"stopped": False}, r.stdout + r.stderr
    r = cli("cache", "restart", "--dir", str(mine))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and f"no cache tier in {mine}" in r.stderr, r.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    # A tier's folder whose servers are stopped is still a tier's.
    (mine / ".lock").touch()
    r = cli("cache", "down", "--dir", str(mine))
    assert r.returncode == 0 and "nothing was running" in r.stdout, r.stdout + r.stderr
