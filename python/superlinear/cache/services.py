"""Lifecycle of the real servers the cache tier runs on: memcached replicas and a PostgreSQL cluster.

Everything is started from the Debian binaries (``apt-get install -y memcached postgresql``) as
plain child processes in a project-owned directory (default ``.superlinear/services``, or
``$SUPERLINEAR_SERVICES``), listening on loopback ports or unix sockets only. No system-wide
service manager (systemd, ``service``, ``pg_ctlcluster``) is involved, and nothing outside that
directory is touched, so several checkouts and test runs can each have their own tier.

The directory holds ``state.json`` (what runs where, with pids), one log per server, and the
PostgreSQL data directory.

Running as root: PostgreSQL refuses to run as root (a compromised server must not own the
machine), and memcached needs ``-u`` to drop privileges. As root both therefore run as the
unprivileged ``nobody`` user: memcached through its own ``-u nobody``, PostgreSQL's ``initdb`` and
``pg_ctl`` through ``runuser -u nobody --``, with the PostgreSQL directory ``chown``-ed to
``nobody``. That user must be able to reach the directory, so every parent folder must be
world-searchable (``o+x``); a clear error says so otherwise (``/tmp/...`` always works). As any
other user, both run as that user.

The cluster is tuned for a benchmark, not for durability: ``fsync``, ``synchronous_commit`` and
``full_page_writes`` are off, ``shared_buffers`` holds the whole table, authentication is
``trust`` (only loopback and a private socket directory can reach it).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, get_args, get_type_hints

from superlinear.common.bounds import mem_available_bytes
from superlinear.common.errors import SuperlinearError
from superlinear.common.input_files import has_kind, kind_words
from superlinear.common.processes import run_in_own_group

DEFAULT_DIR = ".superlinear/services"
PG_USER = "superlinear"
PG_DB = "postgres"
RUN_AS_ROOT = "nobody"
INSTALL_HINT = "install it with: apt-get update && apt-get install -y {pkg}"
#: How long initdb and a PostgreSQL start may take before `up` gives up on them.
INITDB_TIMEOUT_S = 120
PG_START_TIMEOUT_S = 60
#: Replicas `up` starts without --allow-many: more is almost surely a typo, and each is a process.
MAX_REPLICAS = 64

#: The connections the PostgreSQL that ``up`` starts takes (``max_connections``); 3 of them are
#: reserved for superusers.
PG_MAX_CONNECTIONS = 300
#: Of those, the connections only a superuser may open (PostgreSQL's superuser_reserved_connections).
PG_RESERVED_CONNECTIONS = 3


def services_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The services directory: ``path``, else ``$SUPERLINEAR_SERVICES``, else ``.superlinear/services``."""
    p = Path(path or os.environ.get("SUPERLINEAR_SERVICES") or DEFAULT_DIR).absolute()
    if p.exists() and not p.is_dir():
        source = "--dir" if path else "$SUPERLINEAR_SERVICES" if os.environ.get("SUPERLINEAR_SERVICES") else "default"
        raise SuperlinearError(f"{p}: exists and is not a folder (the services folder, {source})")
    return p


@dataclass
class Memcached:
    """One memcached replica."""

    pid: int
    memory_mb: int
    threads: int
    port: int | None = None
    socket: str | None = None

    def address(self) -> str:
        return self.socket if self.socket else f"127.0.0.1:{self.port}"


@dataclass
class Postgres:
    """A PostgreSQL cluster in ``datadir``."""

    pid: int
    datadir: str
    socket_dir: str
    port: int
    version: str
    run_as: str | None
    unix: bool = False

    def dsn(self) -> str:
        if self.unix:
            return f"postgresql://{PG_USER}@/{PG_DB}?host={self.socket_dir}&port={self.port}"
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/{PG_DB}"


@dataclass
class State:
    """What runs: written to ``state.json``."""

    dir: str
    memcached: list[Memcached] = field(default_factory=list)
    postgres: Postgres | None = None

    def addresses(self) -> list[str]:
        return [m.address() for m in self.memcached]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: Any) -> State:
        """The state ``to_json`` wrote; ValueError naming what is wrong for anything else (a file
        edited by hand names processes this code would stop)."""
        if not isinstance(d, dict) or not isinstance(d.get("dir"), str):
            raise ValueError("not an object with a 'dir'")
        mcs, pg = d.get("memcached", []), d.get("postgres")
        if not isinstance(mcs, list) or not all(isinstance(m, dict) for m in mcs):
            raise ValueError("'memcached' is not a list of objects")
        if pg is not None and not isinstance(pg, dict):
            raise ValueError("'postgres' is not an object")
        state = State(dir=d["dir"], memcached=[Memcached(**m) for m in mcs], postgres=Postgres(**pg) if pg else None)
        servers: list[Memcached | Postgres] = [*state.memcached, *([state.postgres] if state.postgres else [])]
        for server in servers:
            _check_fields(server)
        for m in state.memcached:
            if (m.port is None) == (m.socket is None) or (m.port is not None and not 0 < m.port < 65536):
                raise ValueError(f"memcached pid {m.pid}: needs one port (1-65535) or socket")
        return state


def _check_fields(server: Memcached | Postgres) -> None:
    """Every field of the record of the kind its dataclass declares, and a pid that names one
    process (0 and -1 name groups)."""
    hints = get_type_hints(type(server))
    for f in fields(server):
        kinds = get_args(hints[f.name]) or (hints[f.name],)
        value = getattr(server, f.name)
        if not has_kind(value, kinds):
            raise ValueError(f"{f.name} {value!r} is not {kind_words(kinds)}")
    if server.pid <= 0:
        raise ValueError(f"pid {server.pid} is not a process id")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        # A zombie that is not our child (its parent died) is dead although kill(pid, 0) answers.
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    with contextlib.suppress(ChildProcessError, OSError):
        # Reap it if it is our exited child (a zombie still answers kill(pid, 0)).
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    return True


def _runs(pid: int, program: str, *args: str) -> bool:
    """Whether ``pid`` is alive and is ``program`` started with ``args`` in this order: a pid in
    state.json may since belong to another process (a reboot, a crash), which must never be
    stopped in the server's place."""
    if pid <= 0 or not _alive(pid):
        return False
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    words = [a.decode(errors="replace") for a in argv]
    want = list(args)
    return bool(words) and os.path.basename(words[0]) == program and any(
        words[i:i + len(want)] == want for i in range(1, len(words)))


def _memcached_runs(m: Memcached) -> bool:
    return _runs(m.pid, "memcached", *(("-s", m.socket) if m.socket else ("-p", str(m.port))))


def _postgres_runs(pg: Postgres) -> bool:
    return _runs(pg.pid, "postgres", "-D", pg.datadir)


#: What a server is sent to show it serves, not only that its port is open (the kernel accepts
#: connections for a stopped process too), and how its answer starts: memcached's ``version``,
#: PostgreSQL's SSL request (answered with one byte, before any authentication).
MEMCACHED_PING = (b"version\r\n", (b"VERSION ",))
POSTGRES_PING = (struct.pack("!II", 8, 80877103), (b"N", b"S"))


def address_problem(address: str) -> str | None:
    """Why ``address`` cannot be reached whatever runs there (a host name that does not resolve,
    a unix socket path that does not exist), or None: then a server that does not answer is down."""
    if address.startswith("/"):
        return None if os.path.exists(address) else "no such socket"
    host = address.rsplit(":", 1)[0].strip("[]")
    try:
        socket.getaddrinfo(host, None)
    except (OSError, UnicodeError) as e:
        return f"host {host} cannot be resolved ({getattr(e, 'strerror', None) or e})"
    return None


def server_answers(address: str, ping: tuple[bytes, tuple[bytes, ...]] = MEMCACHED_PING, timeout: float = 0.2) -> bool:
    """Whether the server at ``address`` (``host:port`` or a unix socket path) answers ``ping``."""
    request, answers = ping
    need = max(len(a) for a in answers)
    try:
        if address.startswith("/"):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(timeout)
            s.connect(address)
        else:
            host, port = address.rsplit(":", 1)
            s = socket.create_connection((host, int(port)), timeout=timeout)
        with s:
            s.settimeout(timeout)
            s.sendall(request)
            got = b""
            while len(got) < need and not any(got.startswith(a) for a in answers):
                chunk = s.recv(64)
                if not chunk:
                    break
                got += chunk
        return any(got.startswith(a) for a in answers)
    except (OSError, ValueError):
        return False


def _start_failure(log: Path, offset: int) -> str | None:
    """Why PostgreSQL did not start, as the lines its log got from ``offset`` on say: the port it
    could not bind, then its first FATAL (or PANIC, ERROR) line, without their time stamps (the
    log's last line, "database system is shut down", says nothing of why)."""
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return None
    said = [m.groups() for m in (re.match(r"(?:.*?\[\d+\] )?([A-Z]+):\s+(.*)", line) for line in lines) if m]
    told = [text for _, text in said if text.startswith("could not bind")][:1]
    told += [text for level, text in said if level in ("FATAL", "PANIC", "ERROR")][:1]
    return "; ".join(told) or None


def _made_by_up(name: str) -> bool:
    """Whether a services folder's entry ``name`` is one ``up`` makes (``down --purge`` deletes
    a folder only when it holds nothing else: ``--dir`` may name the wrong one)."""
    return name in (".gitignore", ".lock", "state.json", "state.tmp", "pg") or re.fullmatch(
        r"memcached-\d+\.(log|sock)", name) is not None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def memcached_binary() -> str:
    """Path of memcached, or a one-line error with the install command."""
    path = shutil.which("memcached") or (
        "/usr/bin/memcached" if os.access("/usr/bin/memcached", os.X_OK) else None)
    if not path:
        raise SuperlinearError("memcached not found; " + INSTALL_HINT.format(pkg="memcached"))
    return path


def postgres_bindir() -> Path:
    """The newest ``/usr/lib/postgresql/<ver>/bin`` (or initdb's folder on PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: [int(x) if x.isdigit() else 0 for x in Path(p).parts[-3].split(".")])
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise SuperlinearError("PostgreSQL (initdb, pg_ctl) not found; " + INSTALL_HINT.format(pkg="postgresql"))


def binaries_available() -> tuple[bool, str]:
    """Whether memcached and PostgreSQL are installed; otherwise why not."""
    try:
        memcached_binary()
        postgres_bindir()
        return True, ""
    except SuperlinearError as e:
        return False, str(e)


def _run_as() -> str | None:
    return RUN_AS_ROOT if os.geteuid() == 0 else None


def _as_user(cmd: list[str], user: str | None) -> list[str]:
    return ["runuser", "-u", user, "--", *cmd] if user else cmd


def _check_reachable_by(path: Path, user: str) -> None:
    for parent in [path, *path.parents]:
        if parent == Path("/"):
            break
        if parent.exists() and not (parent.stat().st_mode & 0o001):
            raise SuperlinearError(
                f"{parent}: not searchable by other users, but PostgreSQL runs as '{user}' when started by root; "
                f"chmod o+x {parent}, or choose a services directory under /tmp with --dir")


def _mem_available_mb() -> int | None:
    avail = mem_available_bytes()
    return None if avail is None else avail // (1024 * 1024)


def check_replica_bounds(replicas: int, memory_mb: int, flag: str = "--replicas",
                         override: str | None = "--allow-many") -> None:
    """Refuses, before anything starts, more replicas than :data:`MAX_REPLICAS` or more memory
    than the machine has available (``override``, the flag that skips this, is named)."""
    unless = f"; pass {override} if you mean it" if override else ""
    if replicas > MAX_REPLICAS:
        raise SuperlinearError(f"{flag} {replicas}: more than {MAX_REPLICAS} memcached processes{unless}")
    avail = _mem_available_mb()
    if avail is not None and replicas * memory_mb > avail:
        raise SuperlinearError(f"{flag} {replicas} × --memory-mb {memory_mb}: {replicas * memory_mb:,} MB, "
                               f"but only {avail:,} MB are available{unless}")


#: Threads a memcached runs beside its workers (listener, LRU crawler and maintainer, hash
#: table expander, logger, slab rebalancer), rounded up.
MEMCACHED_OWN_THREADS = 8


def check_replica_limits(replicas: int, threads: int, unix: bool) -> None:
    """Refuses, before anything starts and whatever ``--allow-many`` says, more replicas than this
    machine can run at all: their threads must fit what the kernel has left of its task limit
    (pid_max, threads-max), and each listens on a port of the local port range (unless ``unix``)."""
    tasks = replicas * (threads + MEMCACHED_OWN_THREADS)
    free = _free_tasks()
    if free is not None and tasks > free:
        raise SuperlinearError(f"--replicas {replicas:,}: about {tasks:,} threads ({threads} + {MEMCACHED_OWN_THREADS} "
                               f"a memcached), and the kernel has room for {free:,} more (pid_max and threads-max "
                               "less those running)")
    ports = _local_ports()
    if not unix and ports is not None and replicas > ports:
        raise SuperlinearError(f"--replicas {replicas:,}: each listens on a port, and the local port range has "
                               f"{ports:,} (or pass --unix for unix sockets)")


def _free_tasks() -> int | None:
    """Tasks (threads) the kernel can still start: the least of pid_max and threads-max, less the
    tasks that run (the fourth field of /proc/loadavg); None where /proc does not say."""
    try:
        limit = min(int(Path(f"/proc/sys/kernel/{n}").read_text()) for n in ("pid_max", "threads-max"))
        running = int(Path("/proc/loadavg").read_text().split()[3].split("/")[1])
    except (OSError, ValueError, IndexError):
        return None
    return max(limit - running, 0)


def _local_ports() -> int | None:
    """Ports of the local (ephemeral) range, which a free port is taken from; None where /proc does not say."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        return None
    return max(high - low + 1, 0)


class Services:
    """The servers of one services directory."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.dir = services_dir(path)
        self.state_file = self.dir / "state.json"

    # ------------------------------------------------------------------ state

    def state(self) -> State | None:
        """What ``up`` started (None if nothing)."""
        try:
            return State.from_json(json.loads(self.state_file.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError) as e:
            raise SuperlinearError(f"{self.state_file}: unreadable state ({e}); stop the servers it names yourself, "
                                   "then remove it") from None

    def _save(self, state: State) -> None:
        self._mkdir()
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state.to_json(), indent=1) + "\n", encoding="utf-8")
        tmp.replace(self.state_file)

    def holds_tier(self) -> bool:
        """Whether the folder is a tier's: it names servers, or ``up`` locked it. Only ``up`` writes
        into a folder that is not."""
        return (self.dir / ".lock").is_file() or self.state_file.is_file()

    @contextlib.contextmanager
    def locked(self, action: str) -> Any:
        """Holds the directory's lock, so two `up`/`down`/`restart` never race on one tier."""
        if action != "up" and not self.holds_tier():
            yield  # no tier was ever set up here: nothing to lock, and nothing to write
            return
        self._mkdir()
        with open(self.dir / ".lock", "w") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise SuperlinearError(f"{self.dir}: another `superlinear cache` command is changing this tier; "
                                       f"wait for it, then run `cache {action}` again") from None
            yield

    def _mkdir(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        ignore = self.dir / ".gitignore"
        if not ignore.exists():
            # Servers' data, logs and sockets never belong in a commit, wherever the folder is.
            ignore.write_text("*\n", encoding="utf-8")

    # ------------------------------------------------------------------ memcached

    def _start_memcached(self, index: int, memory_mb: int, threads: int, unix: bool) -> Memcached:
        port = sock = None
        if unix:
            sock = str(self.dir / f"memcached-{index}.sock")
            if len(sock) > 100:
                raise SuperlinearError(f"{sock}: socket path too long for a unix socket; use a shorter --dir")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(sock)
        else:
            port = _free_port()
        return self._spawn_memcached(index, memory_mb, threads, port, sock)

    def _spawn_memcached(self, index: int, memory_mb: int, threads: int, port: int | None,
                         sock: str | None) -> Memcached:
        """Replica ``index`` started on ``port`` (or unix socket ``sock``) and answering; one that
        exits or does not answer within 10 s, or a Ctrl-C meanwhile, kills it again, so that no
        server runs that ``state.json`` does not name."""
        cmd = [memcached_binary(), "-m", str(memory_mb), "-t", str(threads), "-c", "4096", "-U", "0"]
        cmd += ["-s", sock, "-a", "0666"] if sock else ["-l", "127.0.0.1", "-p", str(port)]
        if os.geteuid() == 0:
            cmd += ["-u", RUN_AS_ROOT]
        log_path = self.dir / f"memcached-{index}.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        server = Memcached(pid=proc.pid, memory_mb=memory_mb, threads=threads, port=port, socket=sock)
        try:
            deadline = time.monotonic() + 10
            while not server_answers(server.address()):
                if proc.poll() is not None:
                    tail = log_path.read_text(errors="replace").strip().splitlines()[-1:]
                    raise SuperlinearError(f"memcached {server.address()} exited at start: {' '.join(tail) or '?'}")
                if time.monotonic() > deadline:
                    raise SuperlinearError(f"memcached {server.address()} did not start listening within 10 s")
                time.sleep(0.02)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        return server

    # ------------------------------------------------------------------ PostgreSQL

    def _pg_paths(self) -> tuple[Path, Path, Path]:
        base = self.dir / "pg"
        return base, base / "data", base / "postgres.log"

    def _start_postgres(self, unix: bool) -> Postgres:
        bindir = postgres_bindir()
        user = _run_as()
        base, data, log = self._pg_paths()
        if user:
            _check_reachable_by(self.dir, user)
        base.mkdir(parents=True, exist_ok=True)
        if user:
            shutil.chown(base, user)
        port = _free_port()
        if len(str(base / f".s.PGSQL.{port}")) > 100:
            raise SuperlinearError(f"{base}: too long a path for PostgreSQL's unix socket; use a shorter --dir")
        if not (data / "PG_VERSION").exists():
            # Into a folder of its own, renamed once complete: an initdb cut short (Ctrl-C, a
            # full disk) leaves no half-made cluster that the next `up` would try to start.
            partial = data.with_name(data.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            try:
                out = run_in_own_group(
                    _as_user([str(bindir / "initdb"), "-D", str(partial), "-U", PG_USER, "--auth=trust", "-E",
                              "UTF8", "--no-sync", "--no-instructions"], user), INITDB_TIMEOUT_S)
                if out.returncode != 0:
                    msg = (out.stderr or out.stdout).strip().splitlines()
                    raise SuperlinearError(f"initdb {data} failed: {msg[-1] if msg else out.returncode}")
            except BaseException as e:
                shutil.rmtree(partial, ignore_errors=True)
                if isinstance(e, subprocess.TimeoutExpired):
                    raise SuperlinearError(f"initdb {data} did not finish within {INITDB_TIMEOUT_S} s") from None
                raise
            shutil.rmtree(data, ignore_errors=True)
            partial.rename(data)
        self._write_pg_conf(data, base, port)
        return self._pg_ctl_start(bindir, data, log, base, port, user, unix)

    @staticmethod
    def _write_pg_conf(data: Path, base: Path, port: int) -> None:
        # Loopback and a private socket directory only; tuned for a read-heavy benchmark.
        conf = f"""# written by superlinear services (overrides postgresql.conf)
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = '{base}'
max_connections = {PG_MAX_CONNECTIONS}
shared_buffers = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
dynamic_shared_memory_type = mmap
jit = off
"""
        auto = data / "postgresql.auto.conf"
        auto.write_text(conf, encoding="utf-8")

    def _pg_ctl_start(self, bindir: Path, data: Path, log: Path, base: Path, port: int, user: str | None,
                      unix: bool) -> Postgres:
        version = (data / "PG_VERSION").read_text().strip()

        def started() -> Postgres | None:
            # The pid file this start wrote; an older one (a crashed server's) names no server
            # of ours, and its pid may since belong to another process.
            with contextlib.suppress(OSError, ValueError, IndexError):
                if (data / "postmaster.pid").stat().st_mtime < since - 1:
                    return None
                pid = int((data / "postmaster.pid").read_text().split()[0])
                return Postgres(pid=pid, datadir=str(data), socket_dir=str(base), port=port, version=version,
                                run_as=user, unix=unix)
            return None

        since = time.time()
        logged = log.stat().st_size if log.exists() else 0
        proc = subprocess.Popen(
            _as_user([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", str(PG_START_TIMEOUT_S),
                      "start"], user),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=PG_START_TIMEOUT_S + 30)
        except BaseException as e:
            # pg_ctl starts the postmaster in a session of its own, where our Ctrl-C does not
            # reach: let pg_ctl finish (a few seconds at most), then stop what it started, so
            # that an interrupted start leaves no server that state.json does not name.
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            proc.kill()
            proc.wait()
            server = started()
            if server is not None:
                self._stop_postgres(server, mode="immediate")
            if isinstance(e, subprocess.TimeoutExpired):
                raise SuperlinearError(f"PostgreSQL did not start within {PG_START_TIMEOUT_S} s ({data})") from None
            raise
        server = started()
        if proc.returncode != 0 or server is None:
            why = _start_failure(log, logged) or " ".join(err.split()) or f"pg_ctl exit code {proc.returncode}"
            raise SuperlinearError(f"PostgreSQL did not start on port {port} ({data}): {why}")
        return server

    def _stop_postgres(self, pg: Postgres, mode: str = "fast") -> None:
        if not _postgres_runs(pg):
            return
        bindir = postgres_bindir()
        subprocess.run(_as_user([str(bindir / "pg_ctl"), "-D", pg.datadir, "-m", mode, "-w", "-t", "60", "stop"],
                                pg.run_as), capture_output=True, text=True, check=False, timeout=90)
        deadline = time.monotonic() + 10
        while _alive(pg.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _postgres_runs(pg):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pg.pid, signal.SIGKILL)

    # ------------------------------------------------------------------ public

    def up(self, replicas: int, memory_mb: int = 4, pg: bool = True, unix: bool = False,
           threads: int = 1) -> State:
        """Starts ``replicas`` memcached processes and (with ``pg``) a PostgreSQL cluster.

        Idempotent: if the same servers already run, returns them; if different ones run, asks
        for ``down`` first.
        """
        if replicas < 0 or memory_mb < 1 or threads < 1:
            raise SuperlinearError("need replicas >= 0, --memory-mb >= 1 and --threads >= 1")
        current = self.state()
        if current is not None:
            st = self.status()
            same = (len(current.memcached) == replicas
                    and all(m.memory_mb == memory_mb and m.threads == threads and (m.socket is not None) == unix
                            for m in current.memcached)
                    and (current.postgres is not None) == pg)
            if same and st["healthy"]:
                return current
            raise SuperlinearError(
                f"{self.dir}: other or unhealthy servers are running; run `superlinear cache down` first")
        if pg:
            postgres_bindir()
        if replicas:
            memcached_binary()
        self._mkdir()
        state = State(dir=str(self.dir))
        try:
            for i in range(replicas):
                state.memcached.append(self._start_memcached(i, memory_mb, threads, unix))
                self._save(state)
            if pg:
                state.postgres = self._start_postgres(unix)
                self._save(state)
        except BaseException:
            self._stop(state)
            with contextlib.suppress(FileNotFoundError):
                self.state_file.unlink()
            raise
        return state

    def _stop(self, state: State) -> None:
        for m in state.memcached:
            self.kill_replica(m)
        if state.postgres is not None:
            self._stop_postgres(state.postgres)

    def down(self, purge: bool = False) -> bool:
        """Stops everything ``up`` started; ``purge`` also deletes the data. False if nothing ran."""
        state = self.state()
        if state is not None:
            self._stop(state)
            self.state_file.unlink()
        # An empty folder is not a tier's (`up` leaves its .lock and .gitignore): --dir may name the wrong one.
        if purge and self.dir.exists() and any(self.dir.iterdir()):
            foreign = sorted(p.name for p in self.dir.iterdir() if not _made_by_up(p.name))
            if foreign:
                raise SuperlinearError(f"{self.dir}: not deleted, it holds what `cache up` did not make ("
                                       + ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "") + ")"
                                       + ("; the servers are stopped" if state is not None else ""))
            shutil.rmtree(self.dir, ignore_errors=True)
        return state is not None

    def status(self) -> dict[str, Any]:
        """Every server with its address and whether its process runs and answers."""
        state = self.state()
        if state is None:
            return {"dir": str(self.dir), "running": False, "healthy": False, "memcached": [], "postgres": None}
        mcs = []
        for m in state.memcached:
            alive = _memcached_runs(m)
            mcs.append({"address": m.address(), "pid": m.pid, "memory_mb": m.memory_mb, "threads": m.threads,
                        "alive": alive, "reachable": alive and server_answers(m.address())})
        pg = None
        if state.postgres is not None:
            p = state.postgres
            alive = _postgres_runs(p)
            pg = {"dsn": p.dsn(), "pid": p.pid, "datadir": p.datadir, "version": p.version, "alive": alive,
                  "reachable": alive and server_answers(f"127.0.0.1:{p.port}", POSTGRES_PING), "run_as": p.run_as}
        healthy = all(m["reachable"] for m in mcs) and (pg is None or bool(pg["reachable"]))
        return {"dir": str(self.dir), "running": True, "healthy": healthy, "memcached": mcs, "postgres": pg}

    # ------------------------------------------------------------------ faults (tests, experiments)

    def kill_replica(self, m: Memcached | int) -> None:
        """Kills one memcached replica (by record or index) at once, as a crash would."""
        if isinstance(m, int):
            state = self.state()
            if state is None or not 0 <= m < len(state.memcached):
                raise SuperlinearError(f"no memcached replica {m}")
            m = state.memcached[m]
        if not _memcached_runs(m):
            return  # gone already (its pid may since be another process's)
        with contextlib.suppress(ProcessLookupError):
            os.kill(m.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while _alive(m.pid) and time.monotonic() < deadline:
            time.sleep(0.01)

    def restart_replica(self, index: int) -> Memcached:
        """Starts replica ``index`` again on the same port or socket (empty, like a rebooted one)."""
        state = self.state()
        if state is None or not 0 <= index < len(state.memcached):
            raise SuperlinearError(f"no memcached replica {index}")
        old = state.memcached[index]
        self.kill_replica(old)
        new = self._spawn_memcached(index, old.memory_mb, old.threads, old.port, old.socket)
        state.memcached[index] = new
        self._save(state)
        return new

    def stop_postgres(self) -> None:
        """Stops PostgreSQL (fast shutdown), keeping its data."""
        state = self.state()
        if state is None or state.postgres is None:
            raise SuperlinearError("no PostgreSQL cluster is running here")
        self._stop_postgres(state.postgres)

    def start_postgres(self) -> Postgres:
        """Starts the stopped PostgreSQL cluster again on the same port."""
        state = self.state()
        if state is None or state.postgres is None:
            raise SuperlinearError("no PostgreSQL cluster was set up here")
        p = state.postgres
        if _postgres_runs(p):
            return p
        base, data, log = self._pg_paths()
        new = self._pg_ctl_start(postgres_bindir(), data, log, base, p.port, p.run_as, p.unix)
        state.postgres = new
        self._save(state)
        return new
