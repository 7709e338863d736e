"""Lifecycle of the network namespaces ``superlinear nft-bench`` runs in, next to
:mod:`superlinear.cache.services` (which owns the cache tier's servers).

Two namespaces joined by a veth pair, made with iproute2::

    slnft-PID-tx  [slnft-tx] ==veth== [slnft-rx]  slnft-PID-rx
                  sender (AF_PACKET)              nftables table on slnft-rx's netdev ingress

Both namespaces are private to the run, so the fixed device names never clash; IPv6 is
switched off in both before the devices exist (no neighbour discovery or MLD frames on the
wire), and the devices carry no addresses, so the only frames on the link are the replayed
ones. Deleting a namespace deletes its end of the pair, the peer with it, and the nftables
table bound to the device, so cleanup is two ``ip netns del``.

Cleanup happens on every exit path: the context manager's ``__exit__`` (normal end, errors,
Ctrl-C), SIGTERM and SIGHUP turned into an exception while a pair is up, and at the start of
every run a sweep of stale namespaces (the project prefix and a process id that is no longer
alive: a run that was killed with SIGKILL, or one that was told ``--keep``).

Privileges: creating namespaces and loading nftables rules needs CAP_NET_ADMIN (and
CAP_SYS_ADMIN for ``ip netns``' mounts, CAP_NET_RAW for the AF_PACKET sender); in practice,
root. Without them :class:`NeedsPrivilegesError` says so in one line and carries the exit code
:data:`EXIT_NO_PRIVILEGES` (77, sysexits' EX_NOPERM); without the ``ip`` or ``nft``
programs, :data:`EXIT_NO_TOOLS` (69, EX_UNAVAILABLE).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from superlinear.common.errors import SuperlinearError

#: Every namespace this module creates is named PREFIX-PID-tx / PREFIX-PID-rx.
PREFIX = "slnft"
TX_DEV, RX_DEV = "slnft-tx", "slnft-rx"
#: Locally administered unicast addresses ("SL" in the second and third bytes).
TX_MAC, RX_MAC = "02:53:4c:00:00:01", "02:53:4c:00:00:02"
TABLE = "superlinear_nft"
EXIT_NO_PRIVILEGES = 77
EXIT_NO_TOOLS = 69
INSTALL_HINT = "install them with: apt-get update && apt-get install -y nftables iproute2"

#: Capability bits (linux/capability.h) the benchmark needs.
_CAPS = {"CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_SYS_ADMIN": 21}


class NeedsPrivilegesError(SuperlinearError):
    """The benchmark cannot run here; ``exit_code`` says why (privileges or missing tools)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class TerminatedError(Exception):
    """SIGTERM or SIGHUP arrived while namespaces were up (cleanup runs, then the run stops)."""


def missing_capabilities() -> list[str]:
    """The needed capabilities this process does not have in its effective set."""
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            eff = next(int(line.split()[1], 16) for line in f if line.startswith("CapEff:"))
    except (OSError, StopIteration, ValueError):
        return list(_CAPS) if os.geteuid() != 0 else []
    return [name for name, bit in _CAPS.items() if not eff >> bit & 1]


def missing_tools(nft: bool = True) -> list[str]:
    """Which of ``ip`` and (where ``nft``) ``nft`` are not on PATH (nor in /usr/sbin, /sbin)."""
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/sbin"
    return [t for t in ("ip", "nft") if (nft or t != "nft") and shutil.which(t, path=path) is None]


def availability() -> tuple[bool, str]:
    """Whether real namespaces can be made here, and why not (one line, for skips): the tools and
    capabilities, then a namespace actually created and deleted (a container may refuse it even
    to root)."""
    try:
        require()
        probe = f"{PREFIX}-{os.getpid()}-probe"
        _add_namespace(probe)
        _run([_tool("ip"), "netns", "del", probe], check=False)
    except SuperlinearError as e:
        return False, str(e)
    return True, ""


def _add_namespace(name: str) -> None:
    out = _run([_tool("ip"), "netns", "add", name], check=False)
    if out.returncode != 0:
        why = (out.stderr or out.stdout).strip().splitlines()
        detail = why[0] if why else f"exit code {out.returncode}"
        if "permitted" in detail or "denied" in detail:
            raise NeedsPrivilegesError(f"cannot create a network namespace: {detail}", EXIT_NO_PRIVILEGES)
        raise SuperlinearError(f"`ip netns add {name}` failed: {detail}")


def require(nft: bool = True) -> None:
    """Raises :class:`NeedsPrivilegesError` unless tools and privileges are all there (``nft``
    only where nftables is used)."""
    tools = missing_tools(nft)
    if tools:
        raise NeedsPrivilegesError(f"nft-bench needs the {' and '.join(tools)} program(s): {INSTALL_HINT}",
                              EXIT_NO_TOOLS)
    caps = missing_capabilities()
    if caps:
        raise NeedsPrivilegesError(f"nft-bench needs {', '.join(caps)} (network namespaces, nftables, raw sockets): "
                              "run it as root", EXIT_NO_PRIVILEGES)


def _tool(name: str) -> str:
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/sbin"
    return shutil.which(name, path=path) or name


def _run(args: list[str], input_text: str | None = None, check: bool = True,
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(args, input=input_text, capture_output=True, text=True, timeout=timeout, check=False)
    if check and out.returncode != 0:
        why = (out.stderr or out.stdout).strip().splitlines()
        detail = "; ".join(why[:3]) if why else f"exit code {out.returncode}"
        raise SuperlinearError(f"`{' '.join(args[:6])}{' ...' if len(args) > 6 else ''}` failed: {detail}")
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_namespaces() -> list[str]:
    """Names of every named network namespace (``ip netns list``)."""
    out = _run([_tool("ip"), "netns", "list"], check=False)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def project_namespaces() -> list[str]:
    """Namespaces with this project's prefix (any process)."""
    return [n for n in list_namespaces() if n.startswith(PREFIX + "-")]


def sweep_stale() -> list[str]:
    """Deletes this project's namespaces whose creating process is gone; returns their names."""
    removed = []
    for name in project_namespaces():
        parts = name.split("-")
        pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
        if pid is None or not _pid_alive(pid) or pid == os.getpid():
            _run([_tool("ip"), "netns", "del", name], check=False)
            removed.append(name)
    return removed


def remove_all() -> list[str]:
    """Deletes every namespace with this project's prefix (``nft-bench --cleanup``) and returns
    their names; :class:`NeedsPrivilegesError` without the privileges to, and an error naming
    those still there afterwards (without root, ``ip netns del`` fails and they stay)."""
    names = project_namespaces()
    if not names:
        return names
    require(nft=False)
    why = {}
    for name in names:
        out = _run([_tool("ip"), "netns", "del", name], check=False)
        if out.returncode != 0:
            why[name] = (out.stderr or out.stdout).strip().splitlines()[:1]
    left = [n for n in project_namespaces() if n in names]
    if left:
        reasons = "; ".join(f"{n}: {why[n][0]}" for n in left if why.get(n))
        raise SuperlinearError(f"could not remove namespace(s) {', '.join(left)}"
                               + (f" ({reasons})" if reasons else ""))
    return names


@dataclass
class LinkCounters:
    """A device's receive counters."""

    rx_packets: int
    rx_dropped: int


class NetnsPair:
    """Sender and receiver namespaces joined by a veth pair, with the receiver's nftables table.

    Use as a context manager; ``keep=True`` leaves everything in place at the end (the next run
    sweeps it, or ``superlinear nft-bench --cleanup``). ``queues`` > 1 gives both devices that
    many transmit and receive queues: frames are spread over the receive queues by flow hash, so
    several senders' receive paths run on several CPUs at once (and packets of different flows
    no longer arrive in the order they were sent). ``nft=False``: no nftables needed."""

    def __init__(self, keep: bool = False, queues: int = 1, nft: bool = True) -> None:
        base = f"{PREFIX}-{os.getpid()}"
        self.tx_ns, self.rx_ns = f"{base}-tx", f"{base}-rx"
        self.tx_dev, self.rx_dev = TX_DEV, RX_DEV
        self.tx_mac, self.rx_mac = TX_MAC, RX_MAC
        self.table = TABLE
        self.keep = keep
        self.queues = queues
        self.needs_nft = nft
        self._old_handlers: dict[int, Any] = {}
        self._up = False

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> NetnsPair:
        require(self.needs_nft)
        self._trap_signals()
        try:
            self.up()
        except BaseException:
            self.down()
            self._restore_signals()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if not self.keep:
                self.down()
        finally:
            self._restore_signals()

    def up(self) -> None:
        sweep_stale()
        ip = _tool("ip")
        self._up = True
        for ns in (self.tx_ns, self.rx_ns):
            _add_namespace(ns)
            # Off before any device exists, so no IPv6 frame (DAD, MLD, RS) is ever sent.
            self.exec(ns, ["sh", "-c", "for f in all default; do echo 1 > /proc/sys/net/ipv6/conf/$f/disable_ipv6; "
                                       "done 2>/dev/null; true"])
        queues = ["numtxqueues", str(self.queues), "numrxqueues", str(self.queues)] if self.queues > 1 else []
        _run([ip, "link", "add", self.tx_dev, "netns", self.tx_ns, "address", self.tx_mac, *queues, "type", "veth",
              "peer", "name", self.rx_dev, "netns", self.rx_ns, "address", self.rx_mac, *queues])
        for ns, dev in ((self.tx_ns, self.tx_dev), (self.rx_ns, self.rx_dev)):
            _run([ip, "-n", ns, "link", "set", dev, "up"])

    def down(self) -> None:
        """Deletes both namespaces (and with them the veth pair and the table); idempotent."""
        ip = _tool("ip")
        # A second Ctrl-C must not cut the cleanup short.
        try:
            old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread
            old = None
        try:
            for ns in (self.rx_ns, self.tx_ns):
                _run([ip, "netns", "del", ns], check=False)
        finally:
            if old is not None:
                signal.signal(signal.SIGINT, old)
        self._up = False

    def _trap_signals(self) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            raise TerminatedError(f"stopped by signal {signal.Signals(signum).name}")

        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
                self._old_handlers[sig] = signal.signal(sig, handler)

    def _restore_signals(self) -> None:
        for sig, old in self._old_handlers.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, old)
        self._old_handlers.clear()

    # -- commands in a namespace ---------------------------------------------------------------
    def exec(self, ns: str, args: list[str], input_text: str | None = None,
             check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run([_tool("ip"), "netns", "exec", ns, *args], input_text=input_text, check=check)

    def nft(self, args: list[str], input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        """Runs nft in the receiving namespace."""
        return self.exec(self.rx_ns, [_tool("nft"), *args], input_text=input_text)

    def load_table(self, text: str) -> float:
        """Replaces the benchmark table atomically (fresh counters); returns the seconds it took."""
        # Declaring the table first makes the delete valid whether or not it exists.
        prologue = f"table netdev {self.table}\ndelete table netdev {self.table}\n"
        t0 = time.perf_counter()
        self.nft(["-f", "-"], input_text=prologue + text)
        return time.perf_counter() - t0

    def list_table(self) -> dict[str, Any]:
        """``nft -j -n list table``: the table with its rules and counters, numeric."""
        out = self.nft(["-j", "-n", "list", "table", "netdev", self.table])
        doc: dict[str, Any] = json.loads(out.stdout)
        return doc

    def rx_counters(self) -> LinkCounters:
        """The receiving device's counters."""
        out = _run([_tool("ip"), "-n", self.rx_ns, "-s", "-j", "link", "show", self.rx_dev])
        rx = json.loads(out.stdout)[0]["stats64"]["rx"]
        return LinkCounters(int(rx["packets"]), int(rx.get("dropped", 0)))

