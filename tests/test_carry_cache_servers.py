"""scripts/carry-cache-servers.sh: the folder that carries memcached and PostgreSQL to a machine
without them holds every library they load but glibc's, and its wrappers start the carried
binaries. Skipped where the servers are not installed here (CI installs them)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from superlinear.cache.services import binaries_available

HAVE, WHY = binaries_available()
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "carry-cache-servers.sh"
GLIBC = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so", "libresolv.so", "libutil.so",
         "ld-linux-x86-64.so")


@pytest.mark.skipif(not HAVE, reason=f"needs memcached and PostgreSQL here: {WHY}")
def test_the_carried_servers_need_only_glibc_from_the_machine(tmp_path: Path) -> None:
    out = tmp_path / "cache-servers"
    r = subprocess.run(["bash", str(SCRIPT), str(out)], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    assert "memcached" in r.stdout and "PostgreSQL" in r.stdout
    binaries = [p for p in out.rglob("*") if p.is_file() and (p.suffix == ".so" or os.access(p, os.X_OK))
                and p.parent != out / "bin" and "share" not in p.parts]
    assert any(p.name == "postgres" for p in binaries) and any(p.name == "memcached" for p in binaries)
    env = {**os.environ, "LD_LIBRARY_PATH": str(out / "lib")}
    outside = set()
    for b in binaries:
        ldd = subprocess.run(["ldd", str(b)], capture_output=True, text=True, env=env, check=False).stdout
        for line in ldd.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>":
                assert parts[2] != "not", f"{b.name}: {line.strip()}"
                if not parts[2].startswith(str(out)) and not any(g in parts[2] for g in GLIBC):
                    outside.add(parts[2])
    assert not outside, outside
    # The wrappers start the carried binaries (their version, from the folder's own copies).
    for tool, flag in (("memcached", "-V"), ("postgres", "--version"), ("initdb", "--version"),
                       ("pg_ctl", "--version")):
        v = subprocess.run([str(out / "bin" / tool), flag], capture_output=True, text=True, check=False,
                           env={"PATH": "/usr/bin:/bin"})
        assert v.returncode == 0 and v.stdout.strip(), (tool, v.stderr)
    assert "LD_LIBRARY_PATH" in (out / "bin" / "postgres").read_text()
    # Run again, it replaces its own folder; it refuses a folder it did not make, and keeps it.
    again = subprocess.run(["bash", str(SCRIPT), str(out)], capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    refused = subprocess.run(["bash", str(SCRIPT), str(kept)], capture_output=True, text=True, check=False)
    assert refused.returncode != 0 and "was not made by this script" in refused.stderr
    assert (kept / "notes.txt").read_text() == "mine"
    # A missing target is a one-line usage error.
    bad = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, check=False)
    assert bad.returncode != 0 and "usage" in bad.stderr


def test_the_many_core_check_shares_its_budget_and_names_a_bad_step(tmp_path: Path) -> None:
    # scripts/many-cores.sh check, with budgets too small to start anything: every step is
    # skipped and said so, after the machine line; an unknown step is refused before any runs.
    script = SCRIPT.parent / "many-cores.sh"
    native = Path(__file__).resolve().parents[1] / "python" / "superlinear" / "_native.abi3.so"
    carried = tmp_path / "carried"
    carried.mkdir()
    (carried / "_native.abi3.so").write_bytes(native.read_bytes())
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable}
    r = subprocess.run(["bash", str(script), "check", str(carried), str(out), "50", "fig5a", "fig8"],
                       capture_output=True, text=True, timeout=120, check=False, env=env)
    assert r.returncode == 0, r.stderr
    lines = (out / "summary.txt").read_text().splitlines()
    assert lines[0].startswith("machine: ") and "CPUs" in lines[0]
    # (The budget left is counted in whole seconds: 49 where a second turned before the first step.)
    assert re.fullmatch(r"fig5a: skipped, (49|50) s of the budget left", lines[1]), lines
    assert lines[2:] == ["fig8: skipped, no ClassBench sets packed (pack --data DIR)"]
    r = subprocess.run(["bash", str(script), "check", str(carried), str(out), "50", "fig5a", "fig12"],
                       capture_output=True, text=True, timeout=120, check=False, env=env)
    assert r.returncode == 2 and "unknown step fig12" in r.stderr
    r = subprocess.run(["bash", str(script), "check", str(carried), str(out), "fig5a"],
                       capture_output=True, text=True, timeout=120, check=False, env=env)
    assert r.returncode == 2 and "the budget must be whole seconds, not 'fig5a'" in r.stderr
    for args, message in (([str(carried), str(out), "10" * 12], "the budget must be whole seconds"),
                          ([str(tmp_path / "none"), str(out)], "holds no _native.abi3.so (make it with pack)")):
        r = subprocess.run(["bash", str(script), "check", *args], capture_output=True, text=True, timeout=120,
                           check=False, env=env)
        assert r.returncode == 2 and message in r.stderr, r.stderr
