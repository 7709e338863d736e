"""``classify compare`` with a peer that misbehaves, and classify's size checks: a peer whose
output is wrong, that fails, hangs or is named without a folder is one line naming it; a hanging
peer is stopped by its timeout or a Ctrl-C with its own children; ``--peer`` runs the binary it
names, never one on PATH, and builds only into an empty or new folder (or over an earlier build);
``--k`` above the packets and generator sizes out of range are refused naming the flag; the
per-worker table of many workers is cut short. The peers are shell scripts taking tmbench's
arguments (RULES TRACE NPACKETS ALGO COUNTS); the ClassBench sets hold one catch-all rule, so a
fake peer knows the right counts: every packet on rule 1."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from conftest import interrupt_after, start

from superlinear.cli import main

Cli = Callable[..., CompletedProcess[str]]
Mistake = Callable[..., None]

CATCH_ALL_RULE = "@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x00/0x00\t0x0000/0x0000\t\n"
HEADER = "167772161\t167772162\t1000\t80\t6\t0\t1\n"
PACKETS = 500
#: What tmbench prints and writes, right for the catch-all sets.
AGREEING_PEER = """echo '{"algo": "x", "mpps_cpu": 2.5}'
printf '{"default": 0, "counts": [%s]}\\n' "$3" > "$5\""""
#: A peer that hangs with a child of its own, whose pids it writes beside itself.
HANGING_PEER = """echo $$ > "$(dirname "$0")/peer.pid"
sleep 300 &
echo $! > "$(dirname "$0")/child.pid"
wait"""


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "cb"
    folder.mkdir()
    for name in ("acl1", "ipc1", "fw1"):
        (folder / f"{name}_1k").write_text(CATCH_ALL_RULE)
        (folder / f"{name}_1k_trace").write_text(HEADER)
    return folder


def _peer(folder: Path, body: str, name: str = "tmbench") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def _compare(data: Path, *extra: str) -> list[str]:
    return ["classify", "compare", "--data", str(data), "--classbench-size", "1k", "--packets", str(PACKETS),
            "--repeats", "1", "--algo", "static", *extra]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie that init has not reaped yet is dead)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _pid_in(path: Path, wait_s: float = 20) -> int:
    deadline = time.monotonic() + wait_s
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.02)
    return int(path.read_text())


@pytest.mark.parametrize(("body", "said"), [
    ("""echo '{"algo": "x"}'""", "its result line has no mpps_cpu"),
    ("""echo '{"algo": "x", mpps}'""", "its result line is not JSON (Expecting property name"),
    ("""echo '{"mpps_cpu": 0}'""", "its result line has mpps_cpu 0 (expected a positive number"),
    ("""echo '{"mpps_cpu": "fast"}'""", 'its result line has mpps_cpu "fast"'),
    ("echo 'usage: something else'", "no result line"),
    ("""echo '{"mpps_cpu": 1}'""", "wrote no per-rule counts file"),
    ("""echo '{"mpps_cpu": 1}'; echo '{"counts": [1' > "$5\"""", "its per-rule counts file is not JSON"),
    ("""echo '{"mpps_cpu": 1}'; echo '{"counts": [-1]}' > "$5\"""", "its per-rule counts file has no counts"),
    ("""echo '{"mpps_cpu": 1}'; echo '{"counts": [1], "default": "x"}' > "$5\"""", 'has default "x"'),
    ("echo boom >&2; exit 3", "failed (exit status 3): boom"),
])
def test_compare_names_the_peer_whose_output_is_wrong(one_line_mistake: Mistake, data: Path, tmp_path: Path,
                                                      body: str, said: str) -> None:
    peer = _peer(tmp_path / "peer", body)
    one_line_mistake(_compare(data, "--peer", str(peer)), f"peer {peer} (TMOnline on acl1_1k)", said)


@pytest.mark.parametrize("given", ["tmbench", "./tmbench", "."])
def test_compare_runs_the_named_peer_not_one_on_path(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch, data: Path, tmp_path: Path,
                                                     given: str) -> None:
    here = tmp_path / "here"
    peer = _peer(here, AGREEING_PEER)
    decoy = _peer(tmp_path / "bin", f"touch {tmp_path / 'decoy-ran'}; exit 1")
    monkeypatch.setenv("PATH", f"{decoy.parent}:{os.environ['PATH']}")
    monkeypatch.chdir(here)
    assert main(_compare(data, "--peer", given, "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["peer"] == str(peer)
    assert not (tmp_path / "decoy-ran").exists()
    peers = [r for r in doc["rows"] if r["side"] == "peer"]
    assert len(peers) == 9 and all(r["mpps_runs"] == [2.5] and r["counts_agree"] for r in peers)


def test_compare_stops_a_hanging_peer_at_its_timeout(one_line_mistake: Mistake, data: Path, tmp_path: Path) -> None:
    peer = _peer(tmp_path / "peer", HANGING_PEER)
    t0 = time.monotonic()
    one_line_mistake(_compare(data, "--peer", str(peer), "--peer-timeout", "0.5"), f"peer {peer} (TMOnline",
                     "still running after 0.5 s, stopped (--peer-timeout sets the limit)")
    assert time.monotonic() - t0 < 10
    for pid_file in ("peer.pid", "child.pid"):
        assert not _alive(_pid_in(peer.parent / pid_file)), f"{pid_file}: still running"


def test_ctrl_c_stops_compare_and_the_peer_with_its_children(data: Path, tmp_path: Path) -> None:
    peer = _peer(tmp_path / "peer", HANGING_PEER)
    p = start(*_compare(data, "--peer", str(peer)))
    pids = [_pid_in(peer.parent / name) for name in ("peer.pid", "child.pid")]
    code, took, err = interrupt_after(p, 0)
    assert code == 130 and err.strip() == "superlinear: interrupted", err
    assert took < 10
    assert not any(_alive(pid) for pid in pids)


def test_ctrl_c_keeps_the_rounds_that_finished(data: Path, tmp_path: Path) -> None:
    """Stopped while the peer hangs in its first run on the first set: our classifier's run of
    that round finished, and is shown (as JSON here) before the stop."""
    peer = _peer(tmp_path / "peer", HANGING_PEER)
    p = start(*_compare(data, "--peer", str(peer), "--json"))
    _pid_in(peer.parent / "peer.pid")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130 and err.strip() == "superlinear: interrupted", err
    doc = json.loads(out)
    assert doc["stopped"].startswith("stopped by Ctrl-C during acl1_1k")
    [row] = doc["rows"]
    assert (row["side"], row["algo"], len(row["mpps_runs"]), row["counts_agree"]) == ("ours", "static", 1, True)


def test_peer_timeout_needs_a_peer(one_line_mistake: Mistake, data: Path) -> None:
    one_line_mistake(_compare(data, "--peer-timeout", "5"), "--peer-timeout has no effect without --peer")


@pytest.fixture
def build_script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A fake ``build-tuplemerge`` (found through $SUPERLINEAR_PEERS) that puts the agreeing peer
    into its folder and counts its builds in ``builds``."""
    source = _peer(tmp_path / "source", AGREEING_PEER)
    script = _peer(tmp_path / "peers", f'mkdir -p "$1" && cp {source} "$1/tmbench" && echo >> {tmp_path / "builds"}',
                   name="build-tuplemerge")
    monkeypatch.setenv("SUPERLINEAR_PEERS", str(script.parent))
    return tmp_path / "builds"


@pytest.mark.parametrize("folder", ["new", "empty", "earlier build"])
def test_compare_builds_into_an_empty_or_new_folder_and_reuses_the_build(
        capsys: pytest.CaptureFixture[str], data: Path, tmp_path: Path, build_script: Path, folder: str) -> None:
    into = tmp_path / "tm"
    if folder != "new":
        into.mkdir()
    if folder == "earlier build":
        # What build-tuplemerge copies in before compiling, left by a build that failed.
        (into / "makefile").touch()
        (into / "TupleMerge").mkdir()
        (into / "PartitionSort").mkdir()
    for _ in range(2):
        assert main(_compare(data, "--peer", str(into), "--json")) == 0
        out = capsys.readouterr()
        assert json.loads(out.out)["peer"] == str(into / "tmbench")
    assert build_script.read_text().count("\n") == 1, "built once, then reused"


def test_compare_refuses_to_build_into_a_folder_holding_other_files(one_line_mistake: Mistake, data: Path,
                                                                    tmp_path: Path, build_script: Path) -> None:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "notes.txt").write_text("mine\n")
    one_line_mistake(_compare(data, "--peer", str(home)), f"--peer {home}: a folder with other files and no tmbench",
                     "expected the tmbench binary, a folder holding it, or an empty or new folder")
    assert not build_script.exists()
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt", "project"]


def test_k_above_the_packets_is_refused(one_line_mistake: Mistake) -> None:
    one_line_mistake(["classify", "--synthetic", "--rules-count", "10", "--packets", "100", "--k", "101",
                      "--no-measure", "--repeats", "1"], "--k 101: more workers than the 100 packets")


def test_the_worker_table_shows_the_busiest_workers(capsys: pytest.CaptureFixture[str]) -> None:
    run = ["classify", "--synthetic", "--rules-count", "10", "--packets", "2000", "--k", "200", "--no-measure",
           "--repeats", "1"]
    assert main(run) == 0
    out = capsys.readouterr().out
    assert "the 32 busiest of 200 workers by rules compared; 168 left out, --json lists all" in out
    table = out.split("per-worker statistics", 1)[1].split("matches per rule", 1)[0]
    assert len(table.splitlines()) < 60
    assert main([*run, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["workers"]) == 200


@pytest.mark.parametrize(("flag", "value", "said"), [
    ("--flows-per-rule", "64512", "argument --flows-per-rule: expected at most 64,511 flows per rule, got 64,512"),
    ("--rules-count", "65536", "argument --rules-count: expected at most 65,535 rules, got 65,536"),
])
def test_generator_sizes_out_of_range_name_the_flag(cli: Cli, tmp_path: Path, flag: str, value: str,
                                                    said: str) -> None:
    r = cli("classify", "gen-trace", flag, value, "--out", str(tmp_path / "t.bin"))
    assert r.returncode == 2 and said in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "t.bin").exists()
