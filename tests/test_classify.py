"""The packet classifier end to end: CLI runs on generated rule sets and traces (every format),
brute-force checks, bad input as one line with a non-zero exit, the generic driver on packet
panels, and the packet advisor. Fixtures are generated here; nothing reads ../shared."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from superlinear import _native
from superlinear.classify.workload import PacketWorkloadSpec, load
from superlinear.experiments.driver import Driver
from superlinear.experiments.packets import packet_panel
from superlinear.experiments.spec import Experiment, Panel, Series

Cli = Callable[..., CompletedProcess[str]]

FIG6 = """# the paper's Fig. 6
default drop
accept src 192.168.178.33 dst 23.0.0.45 dport 53 proto udp
drop src 10.10.10.0/24 dst 23.0.0.45/32 dport 443 proto tcp
drop src 192.168.178.0/24 dst 23.0.0.45/32 dport 53 proto udp
accept src 10.10.10.10/32 dst 23.0.0.45/32 proto tcp
accept src 192.168.0.0/16 dst 23.0.0.0/8
"""


def assert_clean_error(result: CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if line]
    assert len(lines) == 1, result.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.fixture
def fixtures(cli: Cli, tmp_path: Path) -> Path:
    for args in (("gen-rules", "--rules-count", "300", "--depth", "2", "--out", str(tmp_path / "r.txt")),
                 ("gen-rules", "--rules-count", "300", "--depth", "2", "--format", "nft",
                  "--out", str(tmp_path / "r.nft")),
                 ("gen-trace", "--rules-count", "300", "--depth", "2", "--flows-per-rule", "5", "--packets", "4000",
                  "--out", str(tmp_path / "t.bin")),
                 ("gen-trace", "--rules-count", "300", "--depth", "2", "--flows-per-rule", "5", "--packets", "4000",
                  "--format", "pcap", "--out", str(tmp_path / "t.pcap")),
                 ("gen-trace", "--rules-count", "300", "--depth", "2", "--flows-per-rule", "5", "--packets", "4000",
                  "--format", "pcapng", "--out", str(tmp_path / "t.pcapng")),
                 ("gen-trace", "--rules-count", "300", "--depth", "2", "--flows-per-rule", "5", "--packets", "4000",
                  "--format", "classbench", "--out", str(tmp_path / "t.cb"))):
        r = cli("classify", *args)
        assert r.returncode == 0, r.stderr
    (tmp_path / "fig6.rules").write_text(FIG6)
    return tmp_path


def test_classify_runs_and_checks_every_format(cli: Cli, fixtures: Path) -> None:
    for rules in ("r.txt", "r.nft"):
        for trace in ("t.bin", "t.pcap", "t.pcapng", "t.cb"):
            r = cli("classify", "--rules", str(fixtures / rules), "--trace", str(fixtures / trace), "--workers", "4",
                    "--dispatch", "rss:dport", "--check", "--json", "--no-measure")
            assert r.returncode == 0, r.stderr
            doc = json.loads(r.stdout)
            assert doc["check"]["checked"] == 4000 and doc["check"]["mismatches"] == 0
            assert doc["info"]["rules"] == 900 and doc["info"]["max_dependency_depth"] == 2
            assert sum(doc["rule_matches"]) == 4000
            assert len(doc["workers"]) == 4
            assert doc["dispatch"] == "rss:dport"
            # Traffic goes to the /0 tails of the chains (rule index ≡ 2 mod 3).
            assert all(c == 0 for i, c in enumerate(doc["rule_matches"]) if i % 3 != 2)


def test_fewer_packets_than_the_trace_holds_runs_its_first_packets(cli: Cli, fixtures: Path) -> None:
    # The rule-aware dispatcher calibrates on the trace's start; with --packets below the trace
    # length its sample must come from the packets that remain, not the whole capture.
    for dispatch in ("rule", "rss:dport"):
        r = cli("classify", "--rules", str(fixtures / "r.txt"), "--trace", str(fixtures / "t.bin"), "--packets", "1000",
                "--workers", "4", "--dispatch", dispatch, "--check", "--json", "--no-measure")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["check"]["checked"] == 1000 and doc["check"]["mismatches"] == 0
        assert sum(doc["rule_matches"]) == 1000


def test_classify_table_output_algorithms_and_rule_aware(cli: Cli, fixtures: Path) -> None:
    for algo in ("static", "mrf", "mrf-swap"):
        r = cli("classify", "--rules", str(fixtures / "r.txt"), "--trace", str(fixtures / "t.bin"), "-k", "2",
                "--algo", algo, "--dispatch", "rule", "--check")
        assert r.returncode == 0, r.stderr
        assert "0 mismatches [OK]" in r.stdout and "per-worker statistics" in r.stdout
        assert "rule(" in r.stdout
    r = cli("classify", "algorithms", "--json")
    names = {a["name"] for a in json.loads(r.stdout)["classifiers"]}
    assert names == {"static", "mrf", "mrf-swap", "tuple-merge", "rule-cache", "rule-cache-flow", "flow-cache"}


def test_classify_without_trace_generates_headers(cli: Cli, fixtures: Path) -> None:
    r = cli("classify", "--rules", str(fixtures / "fig6.rules"), "--packets", "3000", "--check", "--json",
            "--no-measure")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["check"]["mismatches"] == 0 and doc["info"]["dependency_edges"] == 3
    assert doc["info"]["default_action"] == "drop"


def test_convert_to_nft_round_trips(cli: Cli, fixtures: Path) -> None:
    out = fixtures / "fig6.nft"
    r = cli("classify", "convert", "--rules", str(fixtures / "fig6.rules"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "policy drop;" in text and "udp dport 53 accept" in text
    a = _native.PacketWorkload.load(str(fixtures / "fig6.rules"), None, {"generate": 2000})
    b = _native.PacketWorkload.load(str(out), None, {"generate": 2000})
    assert a.items() == b.items()


@pytest.mark.parametrize("content,fragments", [
    ("accept src 1.2.3.4\nallow dst 5.6.7.8\n", (":2:", "unknown action 'allow'")),
    ("@1.2.3.4/32\t5.6.7.8/33\t0 : 65535\t1 : 1\t0x06/0xFF\t0x0000/0x0000\n", (":1:", "bad prefix length")),
    ("table ip t {\n chain c {\n  ip saddr { 1.2.3.4 } accept\n }\n}\n", (":3:", "sets")),
])
def test_bad_rule_files_are_one_line(cli: Cli, fixtures: Path, content: str, fragments: tuple[str, ...]) -> None:
    bad = fixtures / "bad.rules"
    bad.write_text(content)
    r = cli("classify", "--rules", str(bad), "--trace", str(fixtures / "t.bin"))
    assert_clean_error(r, "bad.rules", *fragments)


def test_bad_traces_are_one_line(cli: Cli, fixtures: Path) -> None:
    text = fixtures / "bad.trace"
    text.write_text("1 2 3 4 17 0 0\n1 2 3 99999 17 0 0\n")
    r = cli("classify", "--rules", str(fixtures / "r.txt"), "--trace", str(text))
    assert_clean_error(r, "bad.trace:2:", "destination port")
    pcap = fixtures / "cut.pcap"
    pcap.write_bytes((fixtures / "t.pcap").read_bytes()[:-7])
    r = cli("classify", "--rules", str(fixtures / "r.txt"), "--trace", str(pcap))
    assert_clean_error(r, "cut.pcap", "record 4000")
    r = cli("classify", "--rules", str(fixtures / "missing.rules"), "--trace", str(fixtures / "t.bin"))
    assert_clean_error(r, "missing.rules", "cannot read")
    r = cli("classify", "--trace", str(fixtures / "t.bin"))
    assert_clean_error(r, "--rules")
    r = cli("classify", "--rules", str(fixtures / "r.txt"), "--trace", str(fixtures / "t.bin"), "--dispatch", "rss:mac")
    assert_clean_error(r, "unknown RSS field 'mac'")


def test_driver_runs_packet_panels_with_all_speedup_kinds(tmp_path: Path) -> None:
    spec = PacketWorkloadSpec(kind="synthetic", synthetic_rules=199, flows_per_rule=20, packets=30_000,
                              calibration=5_000)
    panel = Panel(name="t", title="tiny", workload=spec, series=(Series("mrf", "rss:dport"), Series("mrf", "rss")),
                  ks=(1, 2, 8), requests=0, metric="packets", static_baseline="static")
    exp = Experiment(name="tinypk", description="tiny packet experiment", panels=(panel,))
    rows = Driver(measure=True, show_progress=False).run(exp)
    from superlinear.experiments.driver import experiment_config, save

    save(tmp_path, exp, experiment_config(exp, None, True), rows)
    assert (tmp_path / "tinypkt.png").exists() and (tmp_path / "result.csv").exists()
    by = {(r["dispatch"], r["k"]): r for r in rows}
    assert by[("rss:dport", 2)]["speedup_measured"] is not None
    assert by[("rss:dport", 8)]["speedup_measured"] is None
    # Destination-port RSS keeps each rule's flows on one worker: far more work saved than 5-tuple.
    assert by[("rss:dport", 8)]["speedup_work"] > 2 * by[("rss", 8)]["speedup_work"]
    assert by[("rss:dport", 8)]["speedup_work"] > 8
    assert all(r["throughput_vs_static_k1"] is not None for r in rows)
    assert by[("rss", 8)]["dispatch_resolved"] == "rss:sip,dip,sport,dport,proto"


def test_steady_state_packet_panels_serve_the_warm_up_first(cli: Cli, fixtures: Path, tmp_path: Path) -> None:
    spec = PacketWorkloadSpec(kind="synthetic", synthetic_rules=499, flows_per_rule=20, packets=24_000,
                              calibration=5_000)
    panel = packet_panel("t", "tiny", spec, (Series("mrf", "rss:dport"),), (1, 8))
    assert panel.warmup == 6_000
    exp = Experiment(name="tinypk", description="tiny packet experiment", panels=(panel,))
    driver = Driver(measure=False, show_progress=False)
    cold = {r["k"]: r for r in driver.run(exp)}
    steady = {r["k"]: r for r in driver.run(exp.steady_state())}
    assert all(r["warmup"] == "excluded" and r["warmup_requests"] == 6_000 for r in steady.values())
    assert all(r["requests"] == 24_000 for r in [*cold.values(), *steady.values()])
    # Without the first touch of every rule, k = 8 saves relatively more than one worker does.
    assert steady[8]["speedup_work"] > 1.1 * cold[8]["speedup_work"]
    # The CLI: --packets counted after --warmup; on a trace alone, the warm-up comes out of it.
    rules, trace = str(fixtures / "r.txt"), str(fixtures / "t.bin")
    r = cli("classify", "--rules", rules, "--trace", trace, "--packets", "3000", "--warmup", "1000", "--json",
            "--no-measure")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["info"]["packets"], doc["projected"]["requests"], doc["warmup"]) == (4000, 3000, 1000)
    r = cli("classify", "--rules", rules, "--trace", trace, "--warmup", "1000", "--json", "--no-measure")
    assert json.loads(r.stdout)["projected"]["requests"] == 3000
    assert_clean_error(cli("classify", "--rules", rules, "--trace", trace, "--warmup", "4000"),
                       "nothing left to count")


def test_packet_workload_check_and_law_items() -> None:
    w = load(PacketWorkloadSpec(kind="synthetic", synthetic_rules=97, depth=1, flows_per_rule=3, packets=5_000))
    c = w.check("mrf-swap", "rule", 3)
    assert c["checked"] == 5_000 and c["mismatches"] == 0
    items = w.items()
    assert len(items) == 5_000 and all(i % 2 == 1 for i in items)
    assert len(w.assign("rss:dport", 4)) == 5_000


def test_advise_on_packets_prefers_the_destination_port(cli: Cli, fixtures: Path, tmp_path: Path) -> None:
    rules, trace = fixtures / "flows.rules", fixtures / "flows.bin"
    assert cli("classify", "gen-rules", "--rules-count", "400", "--out", str(rules)).returncode == 0
    assert cli("classify", "gen-trace", "--rules-count", "400", "--flows-per-rule", "50", "--packets", "20000",
               "--out", str(trace)).returncode == 0
    r = cli("advise", "--rules", str(rules), "--trace", str(trace), "--k", "4,16",
            "--candidates", "rss:sip;rss:sip,dip,sport,dport,proto;rss:dport", "--out", str(tmp_path / "adv"),
            "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["config"]["recommended"] == "rss:dport"


def test_classify_bench_on_own_rules(cli: Cli, fixtures: Path, tmp_path: Path) -> None:
    r = cli("classify", "bench", "--rules", str(fixtures / "r.txt"), "--trace", str(fixtures / "t.bin"), "--quick",
            "--algos", "static,mrf", "--out", str(tmp_path / "b"), "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert [row["algo"] for row in rows] == ["static", "mrf"]
    assert all(row["mpps_single_core"] > 0 for row in rows)
    assert (tmp_path / "b" / "result.json").exists()


def test_flow_keys_refuse_headers_out_of_range(tmp_path: Path) -> None:
    from superlinear.classify.flow_keys import FlowKeyError, convert, flow_keys

    good = list(flow_keys(["3232235777 167772161 1024 80 6 0x0000/0x0000 3\n", "# comment\n"]))
    assert len(good) == 1 and 0 <= good[0] < 2**63
    for line, field in (("5221225985 1 1 1 6", "source address"), ("1 1 -1 1 6", "source port"),
                        ("1 1 1 70000 6", "destination port"), ("1 1 1 1 300", "protocol")):
        with pytest.raises(FlowKeyError, match=f"t:1: {field} .* out of range"):
            list(flow_keys([line], "t"))
    src = tmp_path / "trace"
    src.write_bytes(b"\xef\xbb\xbf1 2 3 4 6\n")  # a byte-order mark is not part of the address
    assert convert(src, tmp_path / "keys") == (1, 1)


def test_written_files_take_the_format_their_name_says(tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    from superlinear.cli import main

    gen = ["classify", "gen-trace", "--rules-count", "50", "--packets", "100"]
    assert main([*gen, "--out", str(tmp_path / "t.pcap")]) == 0
    assert (tmp_path / "t.pcap").read_bytes()[:4] == bytes.fromhex("d4c3b2a1")  # a pcap, not our binary trace
    assert main([*gen, "--out", str(tmp_path / "t.bin")]) == 0
    assert (tmp_path / "t.bin").read_bytes()[:4] == b"SLPT"
    one_line_mistake([*gen, "--out", str(tmp_path / "u.pcap"), "--format", "binary"],
                     "the name says pcap, --format says binary")
    one_line_mistake(["classify", "gen-rules", "--format", "auto", "--out", str(tmp_path / "r.txt")],
                     "--format auto: gen-rules writes native, nft, classbench")
    assert not (tmp_path / "u.pcap").exists() and not (tmp_path / "r.txt").exists()


NFT_POLICY_DROP = """table inet f {
 chain c {
  type filter hook input priority 0; policy drop;
  tcp dport 80 accept
 }
}
"""


def test_default_is_refused_beside_a_file_that_sets_its_own(tmp_path: Path,
                                                            one_line_mistake: Callable[..., None],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``--default accept`` on a file saying ``default drop`` once ran, and reported, drop."""
    from superlinear.cli import main

    native, nft, bare = tmp_path / "nd", tmp_path / "p.nft", tmp_path / "bare"
    native.write_text("default drop\naccept dport 80\n")
    nft.write_text(NFT_POLICY_DROP)
    bare.write_text("accept dport 80\n")
    trace = tmp_path / "t.bin"
    assert main(["classify", "gen-trace", "--rules", str(bare), "--packets", "50", "--out", str(trace)]) == 0
    capsys.readouterr()
    run = ["--trace", str(trace), "--no-measure", "--repeats", "1", "--json"]
    for default in ("accept", "drop"):  # the same policy as the file's has no effect either
        one_line_mistake(["classify", "--rules", str(native), *run, "--default", default],
                         f"--default {default} has no effect with native rules ({native} sets its own default "
                         "policy, drop; --default is for files that set none)")
    one_line_mistake(["classify", "convert", "--rules", str(nft), "--default", "reject",
                      "--out", str(tmp_path / "o.nft")], f"--default reject has no effect with nft rules ({nft} sets "
                     "its own default policy, drop")
    one_line_mistake(["classify", "bench", "--rules", str(native), "--trace", str(trace), "--quick",
                      "--default", "accept", "--out", str(tmp_path / "b")], "--default accept has no effect")
    assert not (tmp_path / "o.nft").exists()
    # A file that sets none takes it, and the run reports it.
    assert main(["classify", "--rules", str(bare), *run, "--default", "drop"]) == 0
    assert json.loads(capsys.readouterr().out)["info"]["default_action"] == "drop"
    assert main(["classify", "convert", "--rules", str(bare), "--default", "reject", "--out",
                 str(tmp_path / "o.txt"), "--format", "native"]) == 0
    assert "default reject" in (tmp_path / "o.txt").read_text()


def test_out_dash_is_standard_output(cli: Cli, tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    """``classify convert --out -`` once wrote a file named ``-``; ``nft-bench --emit -`` meant
    standard output. Now ``-`` is standard output for every file classify writes, and refused
    where --out names a folder."""
    (tmp_path / "fig6.rules").write_text(FIG6)
    r = cli("classify", "convert", "--rules", "fig6.rules", "--out", "-", "--format", "native", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# superlinear native rules: 5 rules") and "default drop" in r.stdout
    assert r.stderr == ""
    r = cli("classify", "gen-rules", "--rules-count", "4", "--format", "nft", "--out", "-", cwd=tmp_path)
    assert r.returncode == 0 and "chain classify" in r.stdout, r.stderr
    r = cli("classify", "gen-trace", "--rules-count", "4", "--packets", "7", "--format", "classbench", "--out", "-",
            cwd=tmp_path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 7, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig6.rules"]  # no file named '-'
    one_line_mistake(["classify", "bench", "--rules", str(tmp_path / "fig6.rules"), "--quick", "--out", "-"],
                     "--out -: classify bench writes a folder of results")


def test_a_warmup_too_large_is_worded_by_what_the_user_gave(tmp_path: Path,
                                                             one_line_mistake: Callable[..., None]) -> None:
    """``classify --trace T --warmup 999999999999`` once said "--packets 100,000 with --warmup
    ..." of a --packets never given (and sized a replay that does not happen: without --packets
    the warm-up is the start of the trace)."""
    from superlinear.cli import main

    (tmp_path / "fig6.rules").write_text(FIG6)
    rules, trace = str(tmp_path / "fig6.rules"), str(tmp_path / "t.bin")
    assert main(["classify", "gen-trace", "--rules", rules, "--packets", "50", "--out", trace]) == 0
    for warmup in ("50", "999999999999"):
        one_line_mistake(["classify", "--rules", rules, "--trace", trace, "--warmup", warmup],
                         f"--warmup {int(warmup):,}: {trace} holds 50 packets, nothing left to count after the warm-up "
                         "(give --warmup below 50, or --packets N to replay the trace to N packets after it)")
    for source in (["--rules", rules], ["--synthetic"]):
        one_line_mistake(["classify", *source, "--warmup", "999999999999"],
                         "--warmup 999,999,999,999 on top of the 100,000 packets generated by default needs about")
    one_line_mistake(["classify", "--rules", rules, "--trace", trace, "--packets", "10", "--warmup", "999999999999"],
                     "--packets 10 with --warmup 999,999,999,999 needs about")
