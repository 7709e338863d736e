"""The CLI as a user runs it: outputs, files, and one-line errors with non-zero exit codes."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

from superlinear import _native

Cli = Callable[..., CompletedProcess[str]]


def assert_clean_error(result: CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if line]
    assert len(lines) == 1, result.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def test_help_lists_every_command(cli: Cli) -> None:
    r = cli("--help")
    assert r.returncode == 0
    for command in ("reproduce", "sweep", "run", "law", "bench", "algorithms", "report"):
        assert command in r.stdout


def test_reproduce_fig5_panel_writes_schema_csv_and_plots(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "fig5"
    r = cli("reproduce", "fig5", "--quick", "--panel", "e", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "projected" in r.stdout
    doc = json.loads((out / "result.json").read_text())
    assert doc["experiment"] == "fig5"
    assert set(doc["machine"]) >= {"cores", "cpu", "git"}
    rows = doc["rows"]
    assert {r["algo"] for r in rows} == {"tree", "splay"}
    required = {"panel", "algo", "dispatch", "workload", "m", "k", "requests", "speedup_measured",
                "speedup_projected", "speedup_work", "throughput_rps_projected"}
    assert all(required <= set(row) for row in rows)
    cores = doc["machine"]["cores"]
    for row in rows:
        assert (row["speedup_measured"] is None) == (row["k"] > cores)
        assert row["speedup_projected"] > 0 and row["speedup_work"] > 0
    # Projected against measured, for every cell that has both (k = 2 … cores).
    both = [row for row in rows if row["k"] >= 2 and row["speedup_measured"] is not None]
    agreement = doc["summary"]["agreement"]
    if cores >= 2:
        assert agreement["cells"] == len(both) and agreement["ks"] == sorted({row["k"] for row in both})
        assert "projected against measured (k = 2" in " ".join(r.stdout.split())
    else:
        assert agreement is None and not both
    with open(out / "result.csv") as f:
        assert len(list(csv.DictReader(f))) == len(rows)
    for name in ("fig5e.png", "fig5e.svg"):
        assert (out / name).stat().st_size > 1000


def test_run_with_trace_files_text_and_binary(cli: Cli, tmp_path: Path) -> None:
    keys = _native.generate_keys({"kind": "zipf", "m": 500, "alpha": 1.2}, 3000, 5)
    for binary in (True, False):
        path = tmp_path / ("keys.bin" if binary else "keys.txt")
        _native.write_trace(str(path), keys, binary)
        r = cli("run", "--algo", "mtf", "--dispatch", "hash", "--k", "4", "--trace", str(path), "--json")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["projected"]["requests"] == 3000
        assert doc["items"] == len(set(keys))


def test_sweep_runs_a_grid(cli: Cli, tmp_path: Path) -> None:
    cfg = tmp_path / "grid.toml"
    cfg.write_text(
        'algos = ["mtf", "static"]\ndispatch = ["hash", "rr"]\nk = [1, 2, 4]\nrequests = 5000\n'
        'measure = false\n[workload]\nkind = "zipf"\nm = 1000\nalpha = 1.01\n'
    )
    out = tmp_path / "out"
    r = cli("sweep", str(cfg), "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert len(rows) == 2 * 2 * 3
    assert all(row["speedup_measured"] is None for row in rows)


def test_shipped_sweep_files_load() -> None:
    from superlinear.engine.sweep import load_sweep

    for path in sorted((Path(__file__).parent.parent / "examples").glob("*.toml")):
        experiment, measure = load_sweep(path)
        assert experiment.panels and measure, path


def test_bad_sweep_configs_give_one_line(cli: Cli, tmp_path: Path) -> None:
    cases = {
        'algos = ["mtf"\n': ("bad.toml", "invalid TOML", "line"),
        "x = " + "[" * 2000 + "]" * 2000 + "\n": ("nested too deeply",),  # tomllib recursed into a traceback
        'algos = ["quick-sort"]\ndispatch = ["hash"]\nk = [1]\n[workload]\nm = 10\n': ("unknown algorithm",),
        'algos = ["mtf"]\ndispatch = ["teleport"]\nk = [1]\n[workload]\nm = 10\n': ("unknown dispatcher",),
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [0]\n[workload]\nm = 10\n': ("positive integers",),
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\nrequests = "many"\n[workload]\nm = 10\n': ("'requests'",),
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\ncolour = 1\n[workload]\nm = 10\n': ("unknown key", "colour"),
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\n': ("missing required key 'workload'",),
        # The Rust config check's answers, in the file's words rather than Rust's types.
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\nseed = -5\n[workload]\nm = 10\n':
            ("key 'seed' must be a whole number ≥ 0, got integer -5",),
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\n[workload]\nm = 10\nalpha = "x"\n':
            ("workload: key 'alpha' must be a number, got string \"x\"",),
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\nrepeats = 1001\n[workload]\nm = 10\n':
            ("'repeats' must be 1 to 1,000",),
        '\ufeffalgos = ["mtf"]\ndispatch = ["hash"]\nk = [0]\n[workload]\nm = 10\n': ("positive integers",),
        # A name twice ran its series twice and counted them as independent repeats.
        'algos = ["mtf", "mtf"]\ndispatch = ["hash"]\nk = [1]\n[workload]\nm = 10\n': ("'algos' lists mtf more",),
        'algos = ["mtf"]\ndispatch = ["hash", "key-hash"]\nk = [1]\n[workload]\nm = 10\n': ("'dispatch' lists hash",),
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [2, 1, 1]\n[workload]\nm = 10\n': ("'k' lists 1 more than once",),
        # As `run --w` with --algo mtf: a cost no worker of the grid reads.
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\ncompare_cycles = 5\n[workload]\nm = 10\n':
            ("'compare_cycles' has no effect with algos mtf",),
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\nmiss_cycles = 5\n[workload]\nm = 10\n':
            ("'miss_cycles' has no effect with algos mtf",),
        # A trace's path beside a generated workload was ignored.
        'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\n[workload]\nm = 10\npath = "keys.txt"\n':
            ("workload: path has no effect with kind = \"uniform\"",),
    }
    for text, fragments in cases.items():
        cfg = tmp_path / "bad.toml"
        cfg.write_text(text)
        assert_clean_error(cli("sweep", str(cfg)), "bad.toml", *fragments)
    assert_clean_error(cli("sweep", str(tmp_path / "missing.toml")), "missing.toml", "no such file")
    assert_clean_error(cli("sweep", str(tmp_path)), str(tmp_path), "a folder, not a file")
    assert_clean_error(cli("sweep", "/dev/null"), "/dev/null", "not a regular file")
    # A trace shorter than `requests` ran what it held, and the rows counted fewer requests than
    # the config said; as `run --trace`, it is refused before any figure, and no folder is left.
    (tmp_path / "keys.txt").write_text("5\n6\n7\n")
    cfg = tmp_path / "short.toml"
    cfg.write_text('algos = ["mtf"]\ndispatch = ["hash"]\nk = [1, 2]\nrequests = 100\nmeasure = false\nrepeats = 1\n'
                   '[workload]\nkind = "trace"\npath = "keys.txt"\n')
    assert_clean_error(cli("sweep", str(cfg), "--out", str(tmp_path / "short")), "requests = 100: the trace",
                       f"{tmp_path / 'keys.txt'} holds only 3 keys (set requests = 3 or fewer)")
    assert not (tmp_path / "short").exists()


def test_bad_run_inputs_give_one_line(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "keys.txt"
    bad.write_text("1\n2\nthree\n")
    assert_clean_error(cli("run", "--trace", str(bad)), f"{bad}:3:", "three")
    assert_clean_error(cli("run", "--trace", str(tmp_path / "none.bin")), "none.bin")
    assert_clean_error(cli("run", "--algo", "lru"), "needs a capacity")
    assert_clean_error(cli("run", "--dispatch", "rr", "--sharded"), "key-affine")
    assert_clean_error(cli("reproduce", "fig99"), "unknown figure")
    assert_clean_error(cli("reproduce", "fig5", "--panel", "z"), "unknown panel")
    r = cli("run", "--k", "0")
    assert r.returncode == 2 and "positive integer" in r.stderr and "Traceback" not in r.stderr


def test_law_prints_the_three_laws(cli: Cli, tmp_path: Path) -> None:
    r = cli("law", "--json", "--out", str(tmp_path), "--k", "1,2,4")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert [row["k"] for row in rows] == [1, 2, 4]
    assert rows[2]["mtf_uniform_k2"] > rows[2]["amdahl"]
    assert (tmp_path / "law_fig10.png").exists() and (tmp_path / "law_fig1.svg").exists()


def test_algorithms_lists_the_registries(cli: Cli) -> None:
    r = cli("algorithms", "--json")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert {a["name"] for a in doc["algorithms"]} >= {"static", "mtf", "tree", "splay", "lru", "nocache", "hashmap"}
    assert {d["name"] for d in doc["dispatchers"]} >= {"rr", "random", "hash"}


def test_reproduce_exclude_warmup_marks_every_row(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "steady"
    args = ("--quick", "--panel", "e", "--exclude-warmup", "--no-measure", "--json", "--out", str(out))
    r = cli("reproduce", "fig5", *args)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert rows and all(row["warmup"] == "excluded" and row["warmup_requests"] > 0 for row in rows)
    assert len({(row["algo"], row["dispatch"], row["k"]) for row in rows}) == len(rows)


def test_bench_figures_are_medians_of_interleaved_rounds(cli: Cli, tmp_path: Path) -> None:
    r = cli("bench", "--quick", "--repeats", "2", "--json", "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert {row["bench"] for row in rows} == {"structure", "dispatcher"}
    for row in rows:
        field = "lookups_per_s" if row["bench"] == "structure" else "ns_per_request"
        assert row["repeats"] == 2 and len(row[f"{field}_runs"]) == 2
        assert row[f"{field}_lo"] <= row[field] <= row[f"{field}_hi"] and row[f"{field}_lo"] > 0


def test_errors_quote_what_they_were_given_printably(one_line_mistake: Any) -> None:
    # A NUL or an escape sequence from a flag or a file reached the terminal raw in the one line.
    one_line_mistake(["latency-sim", "run", "--policies", "lru,\x01"], "unknown policy \\x01")
    one_line_mistake(["run", "--algo", "x\x1b[31m", "--requests", "10"], "'x\\x1b[31m'")
    # A number quoted back is written short: 1e308 was 309 digits.
    one_line_mistake(["predict", "--s", "1e308"], "serial fraction s must be in [0, 1], got 1e308")
    from superlinear.cli import printable

    assert printable("a\x00b\x1bc\u00e9 \U0001f600") == "a\\x00b\\x1bcé \U0001f600"


def test_reproduce_refuses_a_panel_given_twice(one_line_mistake: Callable[..., None]) -> None:
    """``reproduce fig5 --panel a --panel a`` ran as with one, where list options refuse a name
    given twice; fig11 (the cache-tier driver) too, before any server is started."""
    one_line_mistake(["reproduce", "fig5", "--panel", "a", "--panel", "a"], "--panel: a given more than once")
    one_line_mistake(["reproduce", "fig11", "--quick", "--panel", "joint", "--panel", "joint"],
                     "--panel: joint given more than once")


def test_a_binary_file_of_nul_bytes_is_no_text_input(tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    nul = tmp_path / "nul.txt"
    nul.write_bytes(bytes(4096))  # valid UTF-8, one "key" to a reader that splits on white space
    for args in (["latency-sim", "run", "--trace", str(nul), "--cache-size", "1", "--out", str(tmp_path / "a")],
                 ["latency-sim", "belatedly", "--trace", str(nul), "--cache-size", "1", "--out", str(tmp_path / "b")],
                 ["cache", "advise", "--trace", str(nul), "--out", str(tmp_path / "c")],
                 ["classify", "--rules", str(nul)], ["attack", "sim", "--trace", str(nul)],
                 ["run", "--trace", str(nul)], ["usl", "fit", str(nul)]):
        one_line_mistake(args, f"{nul}:1:", "control byte 0x00")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nul.txt"]


def test_a_long_field_is_quoted_shortened(tmp_path: Path, one_line_mistake: Callable[..., None],
                                         capsys: Any) -> None:
    rules = tmp_path / "long.rules"
    rules.write_text("@" + "1" * 200_000 + " 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF\n", encoding="utf-8")
    trace = tmp_path / "long.jobs"
    trace.write_text("1" * 100_000 + "\t2\t3\n", encoding="utf-8")
    for args, size in ((["classify", "--rules", str(rules)], "(200,000 characters)"),
                       (["attack", "sim", "--trace", str(trace)], "(100,004 characters)")):
        one_line_mistake(args, "…' " + size)


def test_a_packet_trace_given_as_a_key_trace_is_named_so(tmp_path: Path,
                                                        one_line_mistake: Callable[..., None]) -> None:
    """A pcap or binary packet trace was refused as 'not UTF-8 text', a ClassBench one as a key of 7 columns."""
    from superlinear.cli import main

    rules = tmp_path / "r.rules"
    assert main(["classify", "gen-rules", "--rules-count", "50", "--out", str(rules)]) == 0
    traces = {"pcap": tmp_path / "t.pcap", "binary": tmp_path / "t.slpt", "classbench": tmp_path / "t.cb"}
    for fmt, trace in traces.items():
        assert main(["classify", "gen-trace", "--rules", str(rules), "--packets", "200", "--format", fmt,
                     "--out", str(trace)]) == 0
    kinds = {"pcap": "a pcap packet trace", "binary": "a binary (SLPT) packet trace",
             "classbench": "a ClassBench header packet trace"}
    for fmt, trace in traces.items():
        for args in (["run", "--trace", str(trace)], ["predict", "--trace", str(trace)],
                     ["latency-sim", "run", "--trace", str(trace), "--out", str(tmp_path / "o")],
                     ["cache", "advise", "--trace", str(trace), "--out", str(tmp_path / "o")]):
            one_line_mistake(args, f"{trace}: {kinds[fmt]}, not a key trace", "--rules RULES --trace TRACE")
    assert not (tmp_path / "o").exists()


def test_negative_numbers_in_exponent_form_meet_the_flags_range_check(capsys: Any) -> None:
    """argparse took '-1e-3' and '-inf' for options: 'expected one argument' named no range."""
    from superlinear.cli import main

    for args, says in ((["law", "--s", "-1e-3"], "argument --s: expected a number in [0, 1], got -0.001"),
                       (["law", "--s", "-inf"], "got -inf"), (["run", "--w", "-1e3"], "got '-1e3'"),
                       (["attack", "sim", "--load", "-1E-3"], "must be positive, got -1E-3")):
        try:
            main(args)
        except SystemExit as e:
            assert e.code == 2
        err = capsys.readouterr().err
        assert says in err and "expected one argument" not in err, err


def test_refusals_say_what_is_wrong(tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    """Each said something else before: 'cannot tell which column is y', 'nope/acl1_5k: no such
    ClassBench rule set', 'seed ... must be an integer' (it was one, but negative)."""
    semi = tmp_path / "semi.csv"
    semi.write_text("k;speedup\n1;1\n2;1,9\n", encoding="utf-8")
    one_line_mistake(["usl", "fit", str(semi)], f"{semi}:1: one column only", "separated by ';'")
    one_line_mistake(["classify", "bench", "--data", str(tmp_path / "nope")], "nope: no such folder (--data")
    from superlinear.cli import main

    rules = tmp_path / "r.cb"
    assert main(["classify", "gen-rules", "--rules-count", "20", "--format", "classbench", "--out", str(rules)]) == 0
    one_line_mistake(["classify", "--rules", str(rules), "--packets", "100", "--actions", "random:0.5:-1"],
                     "seed in 'random:0.5:-1' must be a whole number from 0")


def test_a_short_generated_trace_says_how_many_objects_it_requests(tmp_path: Path, capsys: Any) -> None:
    from superlinear.cli import main

    out = tmp_path / "t.txt"
    assert main(["latency-sim", "gen", "--requests", "200", "--objects", "1000", "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    distinct = len({line.split()[0] for line in out.read_text(encoding="utf-8").splitlines() if line.strip()})
    assert doc["objects"] == 1000 and doc["objects_requested"] == distinct < 200


def test_an_empty_value_is_refused_not_read_as_not_given(tmp_path: Path, one_line_mistake: Callable[..., None],
                                                         capsys: Any) -> None:
    """`run --trace ""` ran a generated workload, `predict --algo ""` mtf, `usl fit F --x ""` the
    automatic column, `usl fit ""` a folder's name: each exited 0 with a default not asked for."""
    from superlinear.cli import main

    for args, flag in ((["run", "--trace", ""], "--trace"), (["predict", "--algo", ""], "--algo"),
                       (["advise", "--rules", " "], "--rules"), (["attack", "worker", "--trace="], "--trace"),
                       (["latency-sim", "run", "--trace", ""], "--trace"), (["usl", "fit", "f.csv", "--x", ""], "--x"),
                       (["classify", "--updates", ""], "--updates"), (["run", "--trac", ""], "--trace")):
        one_line_mistake(args, f"{flag}: empty (give ", f", or leave {flag} out)")
    for args, after in ((["usl", "fit", ""], "after fit"), (["report", ""], "after report"),
                        (["usl", "fit", "--no-plot", ""], "after --no-plot")):
        one_line_mistake(args, "an empty argument ('')", after)
    # An empty --compare means "compare with none", as its help says.
    out = tmp_path / "b"
    assert main(["latency-sim", "belatedly", "--compare", "", "--requests", "300", "--json", "--out", str(out)]) == 0
    assert {r["policy"] for r in json.loads(capsys.readouterr().out)["rows"]} <= {"belatedly", "belatedly-lp"}


def test_second_audit_refusals_and_notes(tmp_path: Path, one_line_mistake: Callable[..., None], capsys: Any) -> None:
    from superlinear.cli import main

    # gen-rules draws no randomness and no flows: --seed and --flows-per-rule changed nothing.
    for flag in ("--seed", "--flows-per-rule"):
        one_line_mistake(["classify", "gen-rules", "--rules-count", "5", "--out", str(tmp_path / "r"), flag, "3"],
                         f"{flag} has no effect in classify gen-rules")
    # A pcap holds ICMP, which classify skips when it reads the file back: said.
    rules = tmp_path / "icmp.rules"
    rules.write_text("accept src 10.0.0.0/8 proto icmp\ndrop proto tcp\n", encoding="utf-8")
    assert main(["classify", "gen-trace", "--rules", str(rules), "--packets", "400", "--out",
                 str(tmp_path / "t.pcap")]) == 0
    err = capsys.readouterr().err
    assert "packets are neither TCP nor UDP" in err and "classify skips them" in err, err
    assert main(["classify", "gen-trace", "--rules", str(rules), "--packets", "400", "--out",
                 str(tmp_path / "t.bin")]) == 0
    assert "neither TCP nor UDP" not in capsys.readouterr().err
    one_line_mistake(["attack", "sim", "--pmin", "1500", "--pmax", "64"], "--pmin 1500 is above --pmax 64")
    one_line_mistake(["attack", "classifier", "--attack-bytes", "10"], "--attack-bytes 10: at least 64")
    # usl fit: rows with no y are left out, and said; a speedup column inverted as a runtime, said.
    data = tmp_path / "s.csv"
    data.write_text("p,speedup\n1,1\n2,1.9\n4,\n8,6.5\n16,11\n", encoding="utf-8")
    assert main(["usl", "fit", str(data), "--no-plot"]) == 0
    assert "1 row with no value in 'speedup' left out of the fit (line 4)" in capsys.readouterr().err
    assert main(["usl", "fit", str(data), "--no-plot", "--runtime"]) == 0
    assert "its name says it is one" in capsys.readouterr().err


def test_sweep_file_mistakes_name_the_table_and_show_toml(tmp_path: Path,
                                                          one_line_mistake: Callable[..., None]) -> None:
    head = 'algos = ["mtf"]\ndispatch = ["hash"]\n'
    for body, said in (('k = [1]\n[[workload]]\nm = 10\n[[workload]]\n', "workload 2: missing required key 'm'"),
                       ('k = [1]\nworkload = 5\n', "key 'workload' must be a table or a list, got 5"),
                       ('k = [1, true]\n[workload]\nm = 10\n', "got [1, true]"),
                       ('k = [1]\nk = [2]\n[workload]\nm = 10\n',
                        "Cannot overwrite a value (at line 4, column 8): k = [2]"),
                       ('k = [1]\nrequests = 0\n[workload]\nm = 10\n',
                        "key 'requests' must be a whole number ≥ 1, got 0"),
                       ('k = [1]\n[workload]\nkind = "trace"\npath = ""\n', "workload: path is empty")):
        sweep = tmp_path / "s.toml"
        sweep.write_text(head + body, encoding="utf-8")
        one_line_mistake(["sweep", str(sweep), "--out", str(tmp_path / "o")], said)


def test_a_long_option_value_is_no_input_file(tmp_path: Path, capsys: Any) -> None:
    """Every option's value is looked at as a possible input: a 291-character --k list made stat
    fail ('file name too long') and the command with it."""
    from superlinear.cli import main

    ks = ",".join(str(k) for k in range(1, 101))
    assert main(["predict", "--k", ks, "--m", "100", "--requests", "2000", "--out", str(tmp_path / "p")]) == 0, \
        capsys.readouterr().err


def test_nft_bench_names_a_missing_data_folder_first(tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    """With --emit it asked for one --sets entry of a folder that was not there."""
    one_line_mistake(["nft-bench", "--data", str(tmp_path / "nope"), "--emit", "-"], "nope: no such folder (--data")
