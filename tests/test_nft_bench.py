"""``superlinear nft-bench``: the nft JSON read-back and the CLI's input handling everywhere; with
root (CAP_NET_ADMIN) and the ip/nft programs, the real thing: a generated rule set and trace
replayed through two network namespaces, every nftables counter equal to our classifier's, and
cleanup on Ctrl-C and SIGTERM. Skipped, with the reason, where namespaces cannot be made."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from superlinear import _native, cli
from superlinear.common.errors import SuperlinearError
from superlinear.nft import netns
from superlinear.nft.ruleset_json import compare_rows, describe_row, parse_rule, parse_table

HAVE_NETNS, WHY_NOT = netns.availability()
needs_netns = pytest.mark.skipif(not HAVE_NETNS, reason=f"needs real network namespaces: {WHY_NOT}")

#: Rules of every shape the chain writer emits, appended to the generated ones.
HAND_RULES = """
drop   src 10.1.0.0/16 dst any dport 80 proto tcp
accept src 10.2.0.1-10.2.0.77 dst 192.0.2.0/24 sport 1024-65535 proto udp
reject src any dst 198.51.100.0/24 dport 1000-2000
accept proto icmp
drop   dst 203.0.113.9 dport 5 proto 47
accept src 172.16.0.0/12 proto tcp
drop   sport 7-9 dport 100-199
"""


def _listing(rules: list[list[dict[str, Any]]], policy: str = "drop") -> dict[str, Any]:
    table = "t"
    doc: list[dict[str, Any]] = [{"metainfo": {"version": "1.0.6"}}, {"table": {"family": "netdev", "name": table}},
                                 {"chain": {"table": table, "name": "classify", "policy": policy}},
                                 {"chain": {"table": table, "name": "sink", "policy": "drop"}}]
    for i, expr in enumerate(rules):
        doc.append({"rule": {"table": table, "chain": "classify", "handle": i + 2, "expr": expr}})
    doc.append({"rule": {"table": table, "chain": "sink", "handle": 99, "expr": [{"counter": {"packets": 4}}]}})
    return {"nftables": doc}


def _m(proto: str, field: str, right: Any) -> dict[str, Any]:
    return {"match": {"op": "==", "left": {"payload": {"protocol": proto, "field": field}}, "right": right}}


def test_nft_json_reads_every_rule_shape_back() -> None:
    doc = _listing([
        [_m("ip", "saddr", {"prefix": {"addr": "10.0.0.0", "len": 8}}), _m("ip", "daddr", {"range": ["1.2.3.4",
         "1.2.3.9"]}), _m("tcp", "dport", 53), {"counter": {"packets": 5, "bytes": 300}}, {"drop": None}],
        [_m("th", "sport", {"range": [1024, 65535]}), {"counter": {"packets": 2, "bytes": 1}}, {"accept": None}],
        [_m("ip", "protocol", 47), _m("th", "dport", 5), {"counter": {"packets": 0, "bytes": 0}}, {"accept": None}],
        [{"match": {"op": "==", "left": {"meta": {"key": "l4proto"}}, "right": "udp"}},
         _m("ip", "daddr", "192.0.2.1"), {"counter": {"packets": 1, "bytes": 1}}, {"drop": None}],
        [{"counter": {"packets": 7, "bytes": 1}}],
    ])
    t = parse_table(doc, "t")
    assert t.classify.policy == "drop"
    assert t.classify.counters == [5, 2, 0, 1]
    assert t.classify.default_count == 7 and t.sink == 4 and t.foreign == 0
    any_addr, any_port = (0, 0xFFFF_FFFF), (0, 0xFFFF)
    assert t.classify.rows == [
        (0x0A00_0000, 0x0AFF_FFFF, 0x0102_0304, 0x0102_0309, *any_port, 53, 53, 6, 0xFF, "drop"),
        (*any_addr, *any_addr, 1024, 65535, *any_port, 0, 0, "accept"),
        (*any_addr, *any_addr, *any_port, 5, 5, 47, 0xFF, "accept"),
        (*any_addr, 0xC000_0201, 0xC000_0201, *any_port, *any_port, 17, 0xFF, "drop"),
    ]
    assert describe_row(t.classify.rows[0]) == "drop src 10.0.0.0/8 dst 1.2.3.4-1.2.3.9 sport any dport 53 proto 6"
    diffs = compare_rows(t.classify.rows[:2], [t.classify.rows[0], t.classify.rows[2]])
    assert len(diffs) == 1 and diffs[0].startswith("rule 2: in 'accept src any")


def test_nft_json_refuses_what_it_does_not_understand() -> None:
    with pytest.raises(ValueError, match="payload match ip ttl"):
        parse_rule([_m("ip", "ttl", 3), {"accept": None}])
    with pytest.raises(ValueError, match="conflicting protocols"):
        parse_rule([_m("tcp", "dport", 1), _m("udp", "sport", 2), {"accept": None}])
    with pytest.raises(ValueError, match="statement 'jump'"):
        parse_rule([{"jump": {"target": "x"}}])
    with pytest.raises(SuperlinearError, match=r"rule 1 .*unexpected"):
        parse_table(_listing([[{"match": {"op": "!=", "left": {"meta": {"key": "l4proto"}}, "right": 6}},
                                {"accept": None}], [{"counter": {"packets": 0}}]]), "t")
    with pytest.raises(SuperlinearError, match="does not end with the default counter"):
        parse_table(_listing([[{"accept": None}]]), "t")


def _generated(tmp: Path, packets: int = 3_000) -> tuple[Path, Path]:
    """The project's generators: synthetic dependency chains, hand-written rules of every shape,
    ClassBench-style headers drawn from all of them, and random headers for the default policy."""
    base = _native.NftWorkload.synthetic({"rules": 40, "depth": 2, "flows_per_rule": 3}, 0, 5)
    rules = tmp / "rules.txt"
    base.write(str(rules))
    rules.write_text(rules.read_text(encoding="utf-8") + HAND_RULES, encoding="utf-8")
    w = _native.NftWorkload.load(str(rules), None, {"generate": packets, "seed": 11})
    trace = tmp / "trace.txt"
    w.write(str(tmp / "rules-again.txt"), str(trace))
    rng = random.Random(3)
    extra = [f"{rng.getrandbits(32)}\t{rng.getrandbits(32)}\t{rng.randrange(65536)}\t{rng.randrange(65536)}\t"
             f"{rng.choice([0, 1, 6, 17, 47, 255])}\t0\t0" for _ in range(packets // 5)]
    trace.write_text(trace.read_text(encoding="utf-8") + "\n".join(extra) + "\n", encoding="utf-8")
    return rules, trace


def test_emit_writes_one_linear_chain_without_privileges(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    rules, trace = _generated(tmp_path, 200)
    out = tmp_path / "t.nft"
    assert cli.main(["nft-bench", "--rules", str(rules), "--trace", str(trace), "--emit", str(out),
                     "--device", "eth9"]) == 0
    # The trace is taken beside the rules, and said to be unread.
    assert f"superlinear: note: --trace {trace} was not read" in capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    w = _native.NftWorkload.load(str(rules), str(trace), {})
    classify = text.split("chain classify {")[1].split("}")[0].strip().splitlines()
    assert classify[0].strip() == 'type filter hook ingress device "eth9" priority 0; policy drop;'
    assert len(classify) == 1 + w.rules() + 1 and classify[-1].strip() == "counter"
    assert all(" counter " in line for line in classify[1:-1])
    assert "th sport 7-9 th dport 100-199 counter drop" in text
    assert "ip protocol 47 th dport 5 counter drop" in text
    assert " set " not in text and "@" not in text and "map" not in text


def test_emit_needs_no_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules, _ = _generated(tmp_path, 50)
    assert cli.main(["nft-bench", "--rules", str(rules), "--emit", "-"]) == 0
    assert "chain classify {" in capsys.readouterr().out
    assert cli.main(["nft-bench", "--rules", str(tmp_path / "none"), "--emit", "-"]) == 2
    assert capsys.readouterr().err.strip() == (f"superlinear: error: {tmp_path / 'none'}: no such file "
                                               "(--rules wants a rules file)")


@pytest.mark.parametrize(("argv", "want"), [
    (["--rules", "/nonexistent/r", "--trace", "/nonexistent/t"], "no such file (--rules wants a rules file)"),
    (["--rules", "x"], "--rules needs --trace"),
    ([], "nothing to run"),
    (["--data", "/nonexistent"], "/nonexistent: no such folder (--data"),
    (["--data", "/etc/passwd"], "--data must be a folder"),
    (["--rules", "/", "--trace", "/"], "/: a folder (--rules wants a rules file)"),
])
def test_bad_input_is_one_line(argv: list[str], want: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["nft-bench", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert want in err and len(err.splitlines()) == 1, err


def test_bad_rule_file_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules, trace = tmp_path / "r.txt", tmp_path / "t.txt"
    rules.write_text("accept proto tcp\nfrobnicate src 1.2.3.4\n", encoding="utf-8")
    trace.write_text("1 2 3 4 6 0 0\n", encoding="utf-8")
    assert cli.main(["nft-bench", "--rules", str(rules), "--trace", str(trace), "--emit", "-"]) == 2
    assert f"{rules}:2: unknown action 'frobnicate'" in capsys.readouterr().err


def test_without_privileges_one_line_and_exit_77(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rules, trace = _generated(tmp_path, 100)
    monkeypatch.setattr(netns, "missing_capabilities", lambda: ["CAP_NET_ADMIN"])
    monkeypatch.setattr(netns, "missing_tools", lambda nft=True: [])
    code = cli.main(["nft-bench", "--rules", str(rules), "--trace", str(trace), "--out", str(tmp_path / "o")])
    assert code == netns.EXIT_NO_PRIVILEGES == 77
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("superlinear: nft-bench: nft-bench needs CAP_NET_ADMIN")
    monkeypatch.setattr(netns, "missing_tools", lambda nft=True: ["nft"])
    assert cli.main(["nft-bench", "--rules", str(rules), "--trace", str(trace)]) == netns.EXIT_NO_TOOLS


def test_cleanup_never_says_it_removed_what_is_still_there(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # Without root, `ip netns del` fails: --cleanup printed "removed 2 namespace(s)" with exit 0
    # and both were still there.
    left = ["slnft-1-rx", "slnft-1-tx"]
    monkeypatch.setattr(netns, "project_namespaces", lambda: list(left))
    monkeypatch.setattr(netns, "missing_tools", lambda nft=True: [])
    monkeypatch.setattr(netns, "missing_capabilities", lambda: ["CAP_SYS_ADMIN"])
    assert cli.main(["nft-bench", "--cleanup"]) == netns.EXIT_NO_PRIVILEGES
    assert "needs CAP_SYS_ADMIN" in capsys.readouterr().err
    monkeypatch.setattr(netns, "missing_capabilities", lambda: [])
    failed = subprocess.CompletedProcess([], 2, "", "Cannot remove namespace file: Operation not permitted\n")
    monkeypatch.setattr(netns, "_run", lambda args, **kw: failed)
    assert cli.main(["nft-bench", "--cleanup"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("superlinear: error: could not remove namespace(s) slnft-1-rx, slnft-1-tx (slnft-1-rx: Cannot "
                   "remove namespace file: Operation not permitted; slnft-1-tx: Cannot remove namespace file: "
                   "Operation not permitted)"), err


def test_only_runs_with_nftables_need_the_nft_program(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = netns.shutil.which

    def which(name: str, path: str | None = None) -> str | None:
        return None if name == "nft" else real_which(name, path=path)

    monkeypatch.setattr(netns.shutil, "which", which)
    assert "nft" in netns.missing_tools()
    assert "nft" not in netns.missing_tools(nft=False)


def _our_namespaces(pid: int) -> list[str]:
    return [n for n in netns.list_namespaces() if n.startswith(f"{netns.PREFIX}-{pid}-")]


def _run(args: list[str], timeout: float = 240) -> tuple[int, str, str, int]:
    """Runs nft-bench; (exit code, stdout, stderr, its pid: the namespaces it made are named by it)."""
    proc = subprocess.Popen([sys.executable, "-m", "superlinear", "nft-bench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err, proc.pid


@needs_netns
def test_real_namespaces_counters_equal_our_classifier(tmp_path: Path) -> None:
    rules, trace = _generated(tmp_path)
    out = tmp_path / "out"
    code, stdout, stderr, pid = _run(["--rules", str(rules), "--trace", str(trace), "--duration", "0.2", "--repeats",
                                      "2", "--ks", "2", "--out", str(out), "--json"])
    assert code == 0, stderr
    doc = json.loads(stdout)
    check = json.loads((out / "check.json").read_text(encoding="utf-8"))["rules.txt"]
    w = _native.NftWorkload.load(str(rules), str(trace), {})
    n = w.packets()
    # Every replayed packet was evaluated by the chain, and counted once.
    last = check["attempts"][-1]
    assert last["sent"] == last["classified"] == last["received"] == n and last["foreign"] == 0
    assert check["round_trip"]["equal"], check["round_trip"]["differences"]
    assert check["counters_equal"] and check["rules_mismatched"] == 0, check["mismatches"][:5]
    per_rule, default = w.counts("static")
    assert check["per_rule"]["nft"] == per_rule and check["default"]["nft"] == default
    assert default > 0 and sum(1 for c in per_rule if c) > 40, "traffic reached many rules and the default"
    assert check["sink"] == check["sink_expected"] > 0
    systems = {(row["system"], row["k"], row["kind"]) for row in doc["rows"]}
    assert systems == {("nftables", 1, "measured"), ("ours: static list", 1, "measured"),
                       ("ours: MRF", 1, "measured"), ("ours: MRF", 2, "projected")}
    assert all(row["pps_per_core"] > 0 for row in doc["rows"])
    # Every rate is the median of the runs, with their range; the projected speedup too.
    for row in doc["rows"]:
        rate = "ns_per_packet" if row["system"] == "nftables" else "pps"  # nft's rate is 1 / its cost
        assert row[f"{rate}_min"] <= row[rate] <= row[f"{rate}_max"] and row["repeats"] == 2, row
    (proj,) = [row for row in doc["rows"] if row["kind"] == "projected"]
    assert proj["speedup_projected_lo"] <= proj["speedup_projected"] <= proj["speedup_projected_hi"]
    # The recorded policy is the one that ran: the file's, not --default's default.
    assert [s["default_in_force"] for s in doc["config"]["sets"]] == ["drop"] == [w.default_action()[0]]
    assert (out / "nft-bench.png").is_file() and (out / "nft-bench.svg").is_file()
    assert not _our_namespaces(pid), "namespaces left behind"


@needs_netns
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_real_namespaces_removed_on_ctrl_c_and_sigterm(tmp_path: Path, sig: int, code: int) -> None:
    rules, trace = _generated(tmp_path, 500)
    proc = subprocess.Popen([sys.executable, "-m", "superlinear", "nft-bench", "--rules", str(rules), "--trace",
                             str(trace), "--duration", "60", "--out", str(tmp_path / "o")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _our_namespaces(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert _our_namespaces(proc.pid), "namespaces never appeared"
        time.sleep(0.3)
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert not _our_namespaces(proc.pid), "namespaces left behind"


@needs_netns
def test_stale_namespaces_of_dead_runs_are_swept() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"{netns.PREFIX}-{dead.pid}-rx"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    try:
        assert stale in netns.list_namespaces()
        with netns.NetnsPair() as pair:
            assert stale not in netns.list_namespaces()
            assert {pair.tx_ns, pair.rx_ns} <= set(netns.list_namespaces())
        assert not _our_namespaces(os.getpid())
    finally:
        subprocess.run(["ip", "netns", "del", stale], check=False, capture_output=True)


def test_default_is_refused_beside_rules_that_set_their_own(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The file's policy is the one that runs: --default beside it once did nothing, unsaid."""
    nft, bare = tmp_path / "p.nft", tmp_path / "bare"
    nft.write_text("table inet f {\n chain c {\n  type filter hook input priority 0; policy drop;\n"
                   "  tcp dport 80 accept\n }\n}\n")
    bare.write_text("accept dport 80\n")
    assert cli.main(["nft-bench", "--rules", str(nft), "--default", "reject", "--emit", "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"superlinear: error: --default reject has no effect with nft rules ({nft} sets its own default "
                   "policy, drop; --default is for files that set none)")
    assert cli.main(["nft-bench", "--rules", str(bare), "--default", "drop", "--emit", "-"]) == 0
    assert "policy drop;" in capsys.readouterr().out


@needs_netns
def test_the_exact_check_reports_the_rate_it_reached_not_the_one_asked(tmp_path: Path) -> None:
    """``--check-rate 1e12`` once read "9,660 of 9,660 packets classified at 1,000,000,000,000
    packets/s": the pace asked for, presented as achieved."""
    rules, trace = _generated(tmp_path, 500)
    out = tmp_path / "out"
    code, stdout, stderr, pid = _run(["--rules", str(rules), "--trace", str(trace), "--check-only", "--check-rate",
                                      "1e12", "--out", str(out)])
    assert code == 0, stderr
    assert not _our_namespaces(pid), "namespaces left behind"
    last = json.loads((out / "check.json").read_text(encoding="utf-8"))["rules.txt"]["attempts"][-1]
    assert last["rate_pps"] == 1e12 and 0 < last["reached_pps"] < 1e12
    line = " ".join(stdout.split())  # the console wraps long lines
    assert f"classified, replayed at {last['reached_pps']:,.0f} packets/s (1,000,000,000,000 asked)" in line
    assert "classified at 1,000,000,000,000" not in line


def test_out_dash_is_refused_for_the_results_folder(capsys: pytest.CaptureFixture[str]) -> None:
    """``--out -`` named a folder called ``-``, where ``--emit -`` means standard output."""
    assert cli.main(["nft-bench", "--rules", "R", "--trace", "T", "--out", "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("superlinear: error: --out -: nft-bench writes a folder of results") and "\n" not in err
