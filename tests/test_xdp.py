"""``superlinear xdp`` and ``xdp-bench``: the CLI's input handling everywhere; with root, clang at
build time and a kernel with XDP on veth and cpumap programs, the real thing: generated rule sets
with deep dependency chains loaded into the kernel, a trace replayed through two network
namespaces, every rule's counter and every logical worker's work equal to our user-space
classifier's, the MRF order invariant checked in the kernel's own orders, and a rule update under
traffic. Skipped, with the reason, where the datapath cannot be loaded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from superlinear import _native
from superlinear.nft import netns
from superlinear.nft.bench import BenchConfig, send_frames
from superlinear.xdp import pins
from superlinear.xdp.bench import Datapath, XdpBenchConfig, agreement

HAVE_NETNS, WHY_NO_NETNS = netns.availability()
HAVE_XDP, WHY_NO_XDP = pins.availability() if HAVE_NETNS else (False, WHY_NO_NETNS)
needs_xdp = pytest.mark.skipif(not HAVE_XDP, reason=f"needs the XDP datapath: {WHY_NO_XDP}")


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "superlinear", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def one_line_error(out: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The error line, after checking the exit code."""
    assert out.returncode == code, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert "error:" in line, out.stderr
    return line


def synthetic(rules: int, depth: int, packets: int, seed: int = 3) -> Any:
    """The paper's synthetic rules: chains of `depth` dependencies, with a catch-all."""
    return _native.NftWorkload.synthetic(
        {"rules": rules, "depth": depth, "flows_per_rule": 4, "catch_all_fraction": 0.05}, packets, seed)


@pytest.mark.parametrize(("args", "message"), [
    (["xdp", "load"], "xdp load needs --rules FILE and --iface IF"),
    (["xdp", "load", "--rules", "/nonexistent/rules", "--iface", "lo"], "/nonexistent/rules: no such file"),
    (["xdp", "update"], "xdp update needs --rules FILE"),
    # The dispatcher is named before the rules are read or privileges asked for (exit 77).
    (["xdp", "load", "--rules", "/nonexistent/rules", "--iface", "lo", "--dispatch", "nosuch"],
     "--dispatch: the XDP dispatcher hashes header fields: use rss[:FIELDS] or rule, not 'nosuch'"),
    (["xdp", "load", "--rules", "/nonexistent/rules", "--iface", "lo", "--dispatch", "rss:sip,,dip"],
     "--dispatch: empty field"),
    (["xdp", "load", "--rules", "R", "--iface", "lo", "--cpus", "0,x"], "'x' is not a whole number"),
    (["xdp", "load", "--rules", "R", "--iface", "lo", "--workers", "0"], "--workers"),
    (["xdp", "load", "--rules", "R", "--iface", "lo", "--cpus", "0,4096"], "CPU 4096 is not online here"),
    (["xdp-bench"], "nothing to run"),
    (["xdp-bench", "--rules", "R"], "--rules needs --trace"),
    (["xdp-bench", "--data", "/nonexistent"], "--data must be a folder"),
    (["xdp-bench", "--rules", "R", "--trace", "T", "--localities", "warm"], "--localities: unknown warm"),
    (["xdp-bench", "--rules", "R", "--trace", "T", "--studies", "cost,speed"], "--studies: unknown speed"),
    (["xdp-bench", "--rules", "R", "--trace", "T", "--senders", "4096"], "--senders 4096: this process may use"),
    (["xdp-bench", "--rules", "R", "--trace", "T", "--throughput-cpus", "1,4096"],
     "--throughput-cpus: 4096 worker CPUs asked for"),
    (["xdp-bench", "--rules", "R", "--trace", "T", "--out", "-"], "--out -: xdp-bench writes a folder of results"),
    (["xdp-bench", "--rules", "R", "--trace", "T", "--dispatch", "rss;rss"], "--dispatch: rss given more than once"),
    (["xdp-bench", "--rules", "R", "--trace", "T", "--dispatch", "rss;"], "--dispatch: empty entry in 'rss;'"),
    # A dispatcher the datapath has not (the user-space classifier's) once failed at the first load,
    # namespaces made, without naming --dispatch.
    (["xdp-bench", "--rules", "R", "--trace", "T", "--dispatch", "rss;two-choice"],
     "--dispatch two-choice: the XDP dispatcher hashes header fields: use rss[:FIELDS] or rule"),
    # Every count above the CPUs there are once left the check study nothing to check, and it passed.
    (["xdp-bench", "--rules", "R", "--trace", "T", "--studies", "check", "--cpu-counts", "4096"],
     "--cpu-counts 4096: this process may use"),
])
def test_mistakes_get_one_line(args: list[str], message: str) -> None:
    assert message in one_line_error(run_cli(*args))


def test_a_folder_given_as_rules_is_named(tmp_path: Path) -> None:
    line = one_line_error(run_cli("xdp", "load", "--rules", str(tmp_path), "--iface", "lo"))
    assert f"{tmp_path}: a folder" in line


def test_list_runs_without_privileges() -> None:
    out = run_cli("xdp", "list", "--json")
    assert out.returncode == 0, out.stderr
    assert isinstance(json.loads(out.stdout), list)


@pytest.fixture(scope="module")
def pair() -> Any:
    with netns.NetnsPair() as p:
        yield p


CFG = XdpBenchConfig(check_rate=40_000.0, queue_size=8192)


@needs_xdp
@pytest.mark.parametrize(("algo", "dispatch", "k"), [
    ("static", "rss", 1), ("mrf", "rss", 2), ("mrf", "rule", 2), ("mrf", "rss:dport", 5), ("static", "rule", 3)])
def test_kernel_counters_equal_user_space(pair: Any, algo: str, dispatch: str, k: int) -> None:
    w = synthetic(300, 6, 6000)
    w.build_frames(pair.rx_mac, pair.tx_mac)
    expected = w.counts(algo)
    with Datapath(pair, w, algo, dispatch, k, (0, 1), CFG) as dp:
        r = agreement(dp, (list(expected[0]), expected[1]), lambda m: None)
    assert r["all_counted"], r["attempts"]
    assert r["rules_mismatched"] == 0 and r["default_kernel"] == r["default_ours"], r["mismatched_rules"]
    assert r["worker_work_kernel"] == r["worker_work_ours"]
    assert r["worker_packets_kernel"] == r["worker_packets_ours"]
    assert sum(r["worker_packets_kernel"]) == w.packets()
    assert r["order_violations"] == []


@needs_xdp
@pytest.mark.parametrize("depth", [1, 8, 24])
def test_mrf_orders_in_the_kernel_keep_every_rule_behind_its_dependencies(pair: Any, depth: int) -> None:
    w = synthetic(200, depth, 5000, seed=depth)
    w.build_frames(pair.rx_mac, pair.tx_mac)
    expected = w.counts("mrf")
    with Datapath(pair, w, "mrf", "rss", 4, (0, 1), CFG) as dp:
        r = agreement(dp, (list(expected[0]), expected[1]), lambda m: None)
        assert r["counters_equal"] and r["work_equal"]
        assert _native.xdp_check_orders(w, dp.pin) == []
        c = dp.counters()
    assert sum(x["moved"] for x in c["workers"]) > 0, "MRF moved rules"
    if depth == 24:
        # Deep chains move many rules in behind the same dependency: the order labels' gaps close
        # and the order is relabelled, which the equal counts above then cover too.
        assert sum(x["relabels"] for x in c["workers"]) > 0


@needs_xdp
def test_a_rule_update_under_traffic_classifies_every_packet_against_one_rule_set(pair: Any) -> None:
    old, new = synthetic(300, 4, 20_000, seed=5), synthetic(150, 10, 20_000, seed=6)
    old.build_frames(pair.rx_mac, pair.tx_mac)
    new.build_frames(pair.rx_mac, pair.tx_mac)
    cfg = BenchConfig(batch=64)
    with Datapath(pair, old, "mrf", "rss", 2, (0, 1), CFG) as dp:
        sent: dict[str, int] = {}

        def traffic() -> None:
            sent.update(send_frames(pair, old, cfg, count=old.packets(), rate=40_000))

        t = threading.Thread(target=traffic)
        t.start()
        time.sleep(0.15)
        slot = _native.xdp_update(new, dp.pin)
        t.join()
        time.sleep(0.3)
        c = dp.counters()
        # Every packet was counted once, against the old rules or the new ones, never lost.
        assert c["generation"] == slot == 1
        assert c["rules"] == new.rules()
        assert 0 < c["other_generation_hits"] < sent["sent"]
        assert c["other_generation_hits"] + sum(c["rule_hits"]) + c["default_hits"] == sent["sent"]
        # The orders adapted to the traffic after the switch; a second update starts them afresh
        # (in the other slot), and from there the kernel works exactly as user space does.
        assert _native.xdp_check_orders(new, dp.pin) == []
        assert _native.xdp_update(new, dp.pin) == 0
        dp.w = new
        expected = new.counts("mrf")
        r = agreement(dp, (list(expected[0]), expected[1]), lambda m: None)
    assert r["counters_equal"] and r["work_equal"] and r["order_violations"] == []


@needs_xdp
def test_the_in_kernel_replayer_sends_the_trace_exactly(pair: Any) -> None:
    # The throughput study's generator (BPF_PROG_RUN live frames) must send what the trace holds,
    # in order: a paced replay of the whole trace gives every rule's counter and every logical
    # worker's work exactly as user space counts them; a count past the end wraps around.
    w = synthetic(300, 6, 6000)
    w.build_frames(pair.rx_mac, pair.tx_mac)
    replayer = _native.XdpReplayer(w)
    expected = w.counts("mrf")
    with Datapath(pair, w, "mrf", "rss", 2, (0, 1), CFG) as dp:
        _native.xdp_reset(dp.pin)
        sent = send_frames(pair, replayer, BenchConfig(batch=64, cpu=1), count=w.packets(), rate=40_000)
        assert sent["sent"] == w.packets()
        deadline, c = time.monotonic() + 3.0, dp.counters()
        while sum(c["rule_hits"]) + c["default_hits"] < w.packets() and time.monotonic() < deadline:
            time.sleep(0.05)
            c = dp.counters()
        assert list(c["rule_hits"]) == list(expected[0]) and c["default_hits"] == expected[1]
        ours = w.projected("mrf", "rss", 2, 1, 1)
        assert [x["compared"] for x in c["workers"]] == list(ours["worker_work"])
        assert dict(c["dispatch"])["redirected"] == w.packets()
        wrapped = replayer.send({"netns": pair.tx_ns, "device": pair.tx_dev, "start": 5000, "count": 2500,
                                 "rate_pps": 40_000.0, "batch": 64, "cpu": 1})
        assert wrapped["sent"] == 2500 and wrapped["next"] == 1500
        timed = replayer.send({"netns": pair.tx_ns, "device": pair.tx_dev, "seconds": 0.3, "batch": 256, "cpu": 1})
        assert timed["sent"] > 0 and timed["elapsed_ns"] < 1.5e9
    with pytest.raises(_native.SuperlinearError, match=r"batch must be 1\.\.=256"):
        replayer.send({"netns": pair.tx_ns, "device": pair.tx_dev, "count": 1, "batch": 1024})


@needs_xdp
def test_ctrl_c_while_the_replayer_floods_stops_cleanly(tmp_path: Path) -> None:
    # The senders are inside long native calls when Ctrl-C lands: they must stop at their next
    # call and be waited for, not be torn down by the interpreter's exit (an abort).
    rules, trace = tmp_path / "rules.txt", tmp_path / "trace.txt"
    synthetic(150, 5, 4000).write(str(rules), str(trace))
    proc = subprocess.Popen([sys.executable, "-m", "superlinear", "xdp-bench", "--rules", str(rules), "--trace",
                             str(trace), "--studies", "throughput", "--no-nft", "--throughput-cpus", "1",
                             "--duration", "60", "--out", str(tmp_path / "o")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ours = f"{netns.PREFIX}-{proc.pid}-"
        deadline = time.monotonic() + 60
        while (not any(n.startswith(ours) for n in netns.list_namespaces()) and time.monotonic() < deadline
               and proc.poll() is None):
            time.sleep(0.05)
        time.sleep(3.0)  # the datapath is loaded and the senders flood
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "FATAL" not in err, err
    assert not any(n.startswith(ours) for n in netns.list_namespaces())


@needs_xdp
def test_the_cli_loads_reports_updates_and_unloads(pair: Any, tmp_path: Path) -> None:
    w = synthetic(120, 3, 3000)
    rules, rules2 = tmp_path / "r.txt", tmp_path / "r2.txt"
    w.write(str(rules), None)
    synthetic(60, 2, 100, seed=9).write(str(rules2), None)
    where = ["--iface", pair.rx_dev, "--netns", pair.rx_ns]
    try:
        out = run_cli("xdp", "load", "--rules", str(rules), *where, "--algo", "mrf", "--dispatch", "rule",
                      "--workers", "3", "--cpus", "0,1")
        assert out.returncode == 0, out.stderr
        assert "3 logical worker(s) on CPU(s) 0,1" in out.stdout
        again = run_cli("xdp", "load", "--rules", str(rules), *where)
        assert "already loaded" in one_line_error(again)
        w.build_frames(pair.rx_mac, pair.tx_mac)
        send_frames(pair, w, BenchConfig(batch=64), count=w.packets(), rate=30_000)
        time.sleep(0.3)
        stats = run_cli("xdp", "stats", *where, "--json")
        assert stats.returncode == 0, stats.stderr
        doc = json.loads(stats.stdout)
        assert sum(doc["rule_hits"]) + doc["default_hits"] == w.packets()
        assert doc["k"] == 3 and len(doc["workers"]) == 3
        table = run_cli("xdp", "stats", *where, "--top", "3")
        assert table.returncode == 0 and "top 3 rules by hits" in table.stdout
        up = run_cli("xdp", "update", "--rules", str(rules2), *where)
        assert up.returncode == 0 and "generation slot 1" in up.stdout, up.stderr
        listed = json.loads(run_cli("xdp", "list", "--json").stdout)
        # The policy in force is the file's (the synthetic files say `default drop`), not --default's default.
        assert any(x["name"] == pins.datapath_name(pair.rx_dev, pair.rx_ns) and x["updates"] == 1
                   and x["default"] == "drop" for x in listed)
        # Commands that change a datapath must be told which, even when only one is loaded.
        if len(listed) == 1:
            assert "which datapath?" in one_line_error(run_cli("xdp", "unload"))
            assert "which datapath?" in one_line_error(run_cli("xdp", "update", "--rules", str(rules)))
            assert run_cli("xdp", "stats").returncode == 0
    finally:
        out = run_cli("xdp", "unload", *where)
    assert out.returncode == 0 and "unloaded" in out.stdout
    assert "no datapath" in one_line_error(run_cli("xdp", "unload", *where))


GoneCheck = Callable[[str, str, list[str]], None]


def _datapath_whose_namespace_goes(tmp_path: Path, tag: str,
                                   while_gone: GoneCheck) -> tuple[subprocess.CompletedProcess[str], str, str]:
    """Loads a datapath on a veth in a namespace of its own, deletes the namespace, runs
    ``while_gone(namespace, datapath name, the load's arguments)``, and unloads it whatever
    happened; returns the unload's answer, the namespace and the datapath's name."""
    ns, dev = f"{netns.PREFIX}-{os.getpid()}-{tag}", f"sl{tag}0"
    rules = tmp_path / "r.txt"
    synthetic(20, 2, 10).write(str(rules), None)
    name = pins.datapath_name(dev, ns)
    load = ["xdp", "load", "--rules", str(rules), "--iface", dev, "--netns", ns, "--workers", "1"]
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "add", dev, "type", "veth", "peer", "name", f"sl{tag}1"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
        out = run_cli(*load)
        assert out.returncode == 0, out.stderr
        listed = {x["name"]: x for x in json.loads(run_cli("xdp", "list", "--json").stdout)}
        assert listed[name]["gone"] is None
        subprocess.run(["ip", "netns", "del", ns], check=True)
        while_gone(ns, name, load)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)
        unloaded = run_cli("xdp", "unload", "--name", name)
    return unloaded, ns, name


@needs_xdp
def test_a_datapath_whose_namespace_was_deleted_is_listed_as_gone(tmp_path: Path) -> None:
    """The pins outlive the namespace (and with it the interface): `list` showed such a datapath
    like a live one, and `stats` its last counters without a word."""
    def while_gone(ns: str, name: str, load: list[str]) -> None:
        listed = {x["name"]: x for x in json.loads(run_cli("xdp", "list", "--json").stdout)}
        assert listed[name]["gone"] == f"namespace {ns} is gone"
        assert "gone:" in run_cli("xdp", "list").stdout  # (the table wraps the reason in its cell)
        stats = run_cli("xdp", "stats", "--name", name, "--json")
        assert stats.returncode == 0 and json.loads(stats.stdout)["gone"] == f"namespace {ns} is gone"
        assert f"superlinear: note: namespace {ns} is gone: datapath {name} sees no traffic" in stats.stderr

    out, _, _ = _datapath_whose_namespace_goes(tmp_path, "gone", while_gone)
    assert out.returncode == 0 and "unloaded" in out.stdout, out.stderr


@needs_xdp
def test_xdp_bench_end_to_end(tmp_path: Path) -> None:
    w = synthetic(150, 5, 4000)
    rules, trace = tmp_path / "rules.txt", tmp_path / "trace.txt"
    w.write(str(rules), str(trace))
    out = run_cli("xdp-bench", "--rules", str(rules), "--trace", str(trace), "--workers", "1,2,4",
                  "--localities", "trace,high", "--repeats", "1", "--duration", "0.3", "--check-rate", "40000",
                  "--out", str(tmp_path / "out"), "--json", timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout)
    rows = doc["rows"]
    assert {r["kind"] for r in rows} == {"measured", "work"}
    work = [r for r in rows if r["kind"] == "work"]
    assert all(r["speedup_work"] == pytest.approx(r["speedup_work_user_space"]) for r in work)
    assert all(r["check_work_equal"] and r["check_counters_equal"] for r in work)
    measured = {(r["system"], r["trace"]): r for r in rows if r["kind"] == "measured" and r.get("study") is None}
    for key in (("xdp static", "trace"), ("xdp mrf", "high"), ("nftables", "trace")):
        assert measured[key]["ns_per_packet"] > 0
    # Packets per second against worker CPUs: on two CPUs, one sender and one worker CPU.
    pps = {r["algo"]: r for r in rows if r.get("study") == "throughput"}
    assert set(pps) == {"static", "mrf"}
    for r in pps.values():
        assert r["kind"] == "measured" and r["worker_cpus"] == 1 and r["speedup_measured"] == pytest.approx(1.0)
        assert r["speedup_measured_lo"] == pytest.approx(1.0) == r["speedup_measured_hi"]  # each round: itself
        assert r["generator"] == "xdp-live"
        assert r["pps"] > 0 and 0.0 <= r["dropped_share"] <= 1.0 and r["limited_by"] in ("workers", "senders")
    check = json.loads((tmp_path / "out" / "check.json").read_text())
    assert check[0]["ok"] and check[0]["nftables"]["counters_equal"]
    assert (tmp_path / "out" / "xdp-bench.png").stat().st_size > 0


@pytest.mark.parametrize("command", [["xdp", "load", "--iface", "lo"], ["xdp", "update", "--name", "lo"],
                                     ["xdp-bench", "--trace", "T"]])
def test_default_is_refused_beside_rules_that_set_their_own(tmp_path: Path, command: list[str]) -> None:
    """``xdp update --rules R --default accept`` on a file saying ``default drop`` once loaded a
    datapath that dropped everything unmatched. Refused before anything is loaded (no privileges
    needed)."""
    native, nft = tmp_path / "nd", tmp_path / "p.nft"
    native.write_text("default drop\naccept dport 80\n")
    nft.write_text("table inet f {\n chain c {\n  type filter hook input priority 0; policy drop;\n"
                   "  tcp dport 80 accept\n }\n}\n")
    for fmt, rules in (("native", native), ("nft", nft)):
        line = one_line_error(run_cli(*command, "--rules", str(rules), "--default", "accept"))
        assert (f"--default accept has no effect with {fmt} rules ({rules} sets its own default policy, drop; "
                "--default is for files that set none)") in line


@needs_xdp
def test_a_datapath_whose_namespace_was_deleted_refuses_updates_and_says_so_on_unload(tmp_path: Path) -> None:
    """`xdp update` once switched rules into the pins of a datapath whose namespace was gone and
    reported them in force, exit 0; `xdp load` called it "already loaded"."""
    def while_gone(ns: str, name: str, load: list[str]) -> None:
        line = one_line_error(run_cli("xdp", "update", "--name", name, "--rules", load[load.index("--rules") + 1]))
        assert f"namespace {ns} is gone: datapath {name} classifies no traffic" in line
        assert f"`superlinear xdp unload --name {name}` removes it" in line
        line = one_line_error(run_cli(*load))
        assert f"namespace {ns} is gone, but the datapath loaded on it is still pinned as {name}" in line
        assert json.loads(run_cli("xdp", "stats", "--name", name, "--json").stdout)["generation"] == 0

    out, ns, name = _datapath_whose_namespace_goes(tmp_path, "upd", while_gone)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"unloaded {name} (namespace {ns} is gone: removed the pins it left behind)"


@pytest.mark.parametrize(("size", "message"), [
    ("16385", "argument --queue-size: expected 1 to 16,384 frames (the kernel's cpumap refuses a larger queue), "
              "got 16,385"),
    ("999999999", "expected 1 to 16,384 frames"),
    ("0", "argument --queue-size: expected a positive integer, got 0"),
])
def test_a_queue_size_the_cpumap_refuses_is_bad_input(size: str, message: str) -> None:
    """`--queue-size 999999999` once reached the kernel and came back as exit 69, "the kernel
    refused the XDP datapath": it is the user's number, refused up front (no privileges needed)."""
    assert message in one_line_error(run_cli("xdp", "load", "--rules", "R", "--iface", "lo", "--queue-size", size))


@needs_xdp
def test_the_largest_queue_size_loads(tmp_path: Path) -> None:
    """16,384 frames is what the kernel's cpumap takes (16,385 it refuses: the bound above)."""
    ns, dev = f"{netns.PREFIX}-{os.getpid()}-qs", "slqs0"
    rules = tmp_path / "r.txt"
    synthetic(20, 2, 10).write(str(rules), None)
    name = pins.datapath_name(dev, ns)
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "add", dev, "type", "veth", "peer", "name", "slqs1"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
        out = run_cli("xdp", "load", "--rules", str(rules), "--iface", dev, "--netns", ns, "--workers", "1",
                      "--queue-size", "16384")
        assert out.returncode == 0, out.stderr
    finally:
        run_cli("xdp", "unload", "--name", name)
        subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def test_the_plot_draws_no_empty_panel_and_no_empty_legend(tmp_path: Path) -> None:
    """``xdp-bench --studies check`` once drew an empty cost panel and matplotlib warned twice of
    a legend with no labelled artists; a set without a study's rows beside one with them too."""
    import warnings

    from superlinear.xdp.bench import SetResult
    from superlinear.xdp.report import plot

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plot(tmp_path, [SetResult("a", [], {})]) == []
        work = [{"kind": "work", "k": k, "dispatch": "rss", "speedup_work": k, "speedup_work_user_space": k,
                 "system": "xdp mrf"} for k in (1, 2)]
        paths = plot(tmp_path, [SetResult("a", work, {}), SetResult("b", [], {})])
    assert [p.name for p in paths] == ["xdp-bench.png", "xdp-bench.svg"] and paths[0].stat().st_size > 0


def test_an_empty_trace_is_no_sample_to_plan_on(tmp_path: Path) -> None:
    # `xdp load --dispatch rule --trace EMPTY` calibrated on no packets and loaded a dispatcher
    # whose fields were chosen without traffic, with exit 0.
    rules, empty = tmp_path / "r.txt", tmp_path / "empty.txt"
    synthetic(20, 2, 10).write(str(rules), None)
    empty.write_text("", encoding="utf-8")
    line = one_line_error(run_cli("xdp", "load", "--rules", str(rules), "--iface", "sl-none0", "--dispatch", "rule",
                                  "--trace", str(empty)))
    assert f"{empty}: no TCP/UDP/IPv4 packets (--trace" in line, line


def _interrupted_once_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that lands as the (second-long) load returns, as the signal handler raises it."""
    real = pins.load

    def load(workload: Any, config: dict[str, Any]) -> dict[str, Any]:
        real(workload, config)
        raise KeyboardInterrupt

    monkeypatch.setattr(pins, "load", load)


@needs_xdp
def test_ctrl_c_during_a_load_leaves_no_datapath(pair: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every xdp-bench stopped by Ctrl-C during one of its loads left that datapath's pins behind
    # (the `with` block that unloads it had not begun); `xdp load` left the datapath attached,
    # classifying the interface's traffic, with nothing recorded of its rules.
    from superlinear import cli

    w = synthetic(20, 2, 10)
    rules = tmp_path / "r.txt"
    w.write(str(rules), None)
    name = pins.datapath_name(pair.rx_dev, pair.rx_ns)
    _interrupted_once_loaded(monkeypatch)
    try:
        with pytest.raises(KeyboardInterrupt), Datapath(pair, w, "mrf", "rss", 1, (0,), CFG):
            pass
        assert not pins.pin_dir(name).exists()
        assert cli.main(["xdp", "load", "--rules", str(rules), "--iface", pair.rx_dev, "--netns", pair.rx_ns,
                         "--workers", "1"]) == 130
        assert not pins.pin_dir(name).exists() and name not in pins.loaded()
        assert pins.read_meta(name) == {}
    finally:
        monkeypatch.undo()
        pins.unload(name)
