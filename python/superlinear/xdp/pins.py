"""Where a loaded XDP datapath lives and what is known about it, and whether one can be loaded here.

A datapath is pinned under ``/sys/fs/bpf/superlinear/NAME`` (programs, maps and the XDP link:
see ``crates/xdp``), with NAME made of the network namespace and the interface
(``eth0@host``, ``slnft-rx@slnft-123-rx``; bpffs refuses names with dots). What the kernel does
not keep (the rule file and how it was read, the dispatcher spec, the CPUs) is recorded beside it in
``/run/superlinear/xdp/NAME.json``.

Requirements, each checked up front with one line and a distinct exit code:
:data:`EXIT_UNAVAILABLE` (69) when this build has no BPF object (clang was missing at build
time) or the kernel refuses what the datapath needs; :data:`EXIT_NO_PRIVILEGES` (77) without
CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from superlinear import _native
from superlinear.common.errors import SuperlinearError
from superlinear.nft.netns import EXIT_NO_PRIVILEGES, EXIT_NO_TOOLS, NeedsPrivilegesError

BPFFS = Path("/sys/fs/bpf")
PIN_ROOT = BPFFS / "superlinear"
META_ROOT = Path("/run/superlinear/xdp")
EXIT_UNAVAILABLE = EXIT_NO_TOOLS
BUILD_HINT = "install clang, llvm and libbpf-dev (apt-get install -y clang llvm libbpf-dev) and run `make build`"
#: Capability bits (linux/capability.h).
_CAPS = {"CAP_NET_ADMIN": 12, "CAP_SYS_ADMIN": 21, "CAP_BPF": 39}


def datapath_name(iface: str, netns: str | None) -> str:
    """The pin name of the datapath on ``iface`` in ``netns`` (None: this namespace)."""
    raw = f"{iface}@{netns or 'host'}"
    return re.sub(r"[^A-Za-z0-9_@-]", "_", raw)


def pin_dir(name: str) -> Path:
    return PIN_ROOT / name


def _missing_capabilities() -> list[str]:
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            eff = next(int(line.split()[1], 16) for line in f if line.startswith("CapEff:"))
    except (OSError, StopIteration, ValueError):
        return [] if os.geteuid() == 0 else list(_CAPS)
    return [name for name, bit in _CAPS.items() if not eff >> bit & 1]


def require() -> None:
    """Raises :class:`NeedsPrivilegesError` unless this build, this process and bpffs can load."""
    why = _native.xdp_build_error()
    if why:
        raise NeedsPrivilegesError(f"this build has no XDP datapath ({why}): {BUILD_HINT}", EXIT_UNAVAILABLE)
    caps = _missing_capabilities()
    if caps:
        raise NeedsPrivilegesError(f"the XDP datapath needs {', '.join(caps)}: run as root", EXIT_NO_PRIVILEGES)
    mount_bpffs()


def mount_bpffs() -> None:
    """Mounts the BPF filesystem on /sys/fs/bpf where it is not mounted yet."""
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            if any(line.split()[1:3] == [str(BPFFS), "bpf"] for line in f):
                return
    except OSError:
        pass
    out = subprocess.run(["mount", "-t", "bpf", "bpf", str(BPFFS)], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        detail = (out.stderr or out.stdout).strip() or f"exit code {out.returncode}"
        raise NeedsPrivilegesError(f"cannot mount the BPF filesystem on {BPFFS}: {detail}", EXIT_UNAVAILABLE)


def availability() -> tuple[bool, str]:
    """Whether the datapath can be loaded here, and why not (one line, for test skips)."""
    try:
        require()
    except SuperlinearError as e:
        return False, str(e)
    return True, ""


def write_meta(name: str, meta: dict[str, Any]) -> None:
    META_ROOT.mkdir(parents=True, exist_ok=True)
    path = META_ROOT / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({**meta, "name": name, "updated_at": time.time()}, indent=1), encoding="utf-8")
    tmp.replace(path)


def read_meta(name: str) -> dict[str, Any]:
    """What was recorded at load (and update) time; empty when nothing was."""
    try:
        meta: dict[str, Any] = json.loads((META_ROOT / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta


def remove_meta(name: str) -> None:
    (META_ROOT / f"{name}.json").unlink(missing_ok=True)


def gone(meta: dict[str, Any]) -> str | None:
    """Why the interface a datapath was loaded on is no longer there (its namespace or the
    interface deleted), or None: the pins outlive both, and the counters then stop where the
    traffic stopped."""
    iface, ns = meta.get("iface"), meta.get("netns") or ""
    if not iface:
        return None
    if not ns:
        return None if (Path("/sys/class/net") / iface).exists() else f"interface {iface} is gone"
    if not (Path("/run/netns") / ns).exists():
        return f"namespace {ns} is gone"
    ip = shutil.which("ip")
    if ip is not None and subprocess.run([ip, "-n", ns, "link", "show", "dev", iface], capture_output=True,
                                         check=False, timeout=10).returncode != 0:
        return f"interface {iface} in namespace {ns} is gone"
    return None


def loaded() -> list[str]:
    """Names of every pinned datapath."""
    if not PIN_ROOT.is_dir():
        return []
    return sorted(p.name for p in PIN_ROOT.iterdir() if (p / "link").exists() or (p / "settings").exists())


#: Steps of a load whose failure means the kernel (not the input) refuses the datapath.
_KERNEL_STEPS = ("load the BPF object", "verify the", "attach (", "start the worker", "pin ", "pinned map")


def load(workload: Any, config: dict[str, Any]) -> dict[str, Any]:
    """``_native.xdp_load``, with the kernel's refusals (no XDP on the device, no cpumap programs,
    no privileges) raised as :class:`NeedsPrivilegesError` with their distinct exit codes."""
    try:
        return dict(_native.xdp_load(workload, config))
    except SuperlinearError as e:
        text = str(e)
        if "needs CAP_BPF" in text:
            raise NeedsPrivilegesError(text, EXIT_NO_PRIVILEGES) from None
        if text.startswith(_KERNEL_STEPS):
            raise NeedsPrivilegesError(f"the kernel refused the XDP datapath: {text}", EXIT_UNAVAILABLE) from None
        raise


def unload(name: str) -> bool:
    """Detaches and removes datapath ``name``; False when there was none."""
    had: bool = _native.xdp_unload(str(pin_dir(name)))
    remove_meta(name)
    return had


def bpf_stats(enable: bool) -> bool:
    """Sets kernel.bpf_stats_enabled (run time per program); returns the previous value."""
    path = Path("/proc/sys/kernel/bpf_stats_enabled")
    try:
        old = path.read_text(encoding="utf-8").strip() == "1"
        path.write_text("1" if enable else "0", encoding="utf-8")
    except OSError as e:
        raise SuperlinearError(f"cannot set kernel.bpf_stats_enabled: {e}") from e
    return old
