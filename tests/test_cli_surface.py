"""The CLI's surface as a user meets it (issue 15): options a mode does not use are refused, output
paths are checked before any work, one spelling per concept (old ones still work, hidden), errors
name what the user typed, tables say what they leave out, and `make test` installs or names the
system packages its tests need. Every test runs the real CLI (``python -m superlinear``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from superlinear.common.errors import SuperlinearError
from superlinear.output.paths import write_text_atomic

Cli = Callable[..., CompletedProcess[str]]
ROOT = Path(__file__).resolve().parent.parent


def one_line_error(r: CompletedProcess[str], *fragments: str) -> str:
    """The one error line of a usage mistake (exit 2, no traceback), checked for ``fragments``."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("superlinear: error: "), lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    path = tmp_path / "r.txt"
    path.write_text("accept src 10.0.0.0/8 dport 53 proto udp\ndrop proto tcp\n")
    return path


@pytest.fixture
def trace(cli: Cli, rules: Path, tmp_path: Path) -> Path:
    path = tmp_path / "t.bin"
    r = cli("classify", "gen-trace", "--rules", str(rules), "--packets", "500", "--out", str(path))
    assert r.returncode == 0, r.stderr
    return path


# --- An option the chosen mode does not use is an error naming it, not silently dropped. --------


def test_classify_refuses_options_of_another_action(cli: Cli, rules: Path, trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "F.txt"
    r = cli("classify", "--rules", str(rules), "--trace", str(trace), "--out", str(out), "--no-measure")
    one_line_error(r, "--out has no effect in classify run", "gen-rules")
    assert not out.exists()
    one_line_error(cli("classify", "gen-rules", "--rules-count", "20", "--out", str(out), "--check"),
                   "--check has no effect in classify gen-rules")
    assert not out.exists()
    one_line_error(cli("classify", "--rules", str(rules), "--depth", "3"), "--depth has no effect", "without --rules")
    one_line_error(cli("classify", "algorithms", "--k", "3"), "--k has no effect in classify algorithms")
    one_line_error(cli("classify", "--rules", str(rules), "--trace", str(trace), "--front", "4"),
                   "--front has no effect with --algo mrf")
    one_line_error(cli("classify", "--rules", str(rules), "--trace", str(trace), "--calibration", "5"),
                   "--calibration has no effect with --dispatch rss")
    # An old spelling is named as typed.
    one_line_error(cli("classify", "gen-rules", "--workers", "3", "--out", str(out)), "--workers has no effect")


def test_usl_and_nft_bench_refuse_options_of_another_mode(cli: Cli, rules: Path, trace: Path,
                                                          tmp_path: Path) -> None:
    data = tmp_path / "m.csv"
    data.write_text("p,speedup\n1,1\n2,2.1\n3,3.3\n4,4.5\n")
    one_line_error(cli("usl", "fit", str(data), "--at", "3", "--no-plot"), "--at has no effect in usl fit")
    one_line_error(cli("usl", "fit", str(data), "--out", str(tmp_path / "x"), "--no-plot"), "--out has no effect")
    one_line_error(cli("nft-bench", "--rules", str(rules), "--emit", "-", "--duration", "2"),
                   "--duration has no effect with --emit")
    one_line_error(cli("nft-bench", "--rules", str(rules), "--trace", str(trace), "--emit", "-", "--k", "2"),
                   "--k has no effect with --emit")
    one_line_error(cli("nft-bench", "--cleanup", "--rules", str(rules)), "--rules has no effect with --cleanup")
    one_line_error(cli("nft-bench", "--rules", str(rules), "--trace", str(trace), "--sets", "acl1"),
                   "--sets has no effect with --rules")
    out = tmp_path / "xb"
    for bench in ("nft-bench", "xdp-bench"):
        one_line_error(cli(bench, "--rules", str(rules), "--trace", str(trace), "--classbench-size", "1k",
                           "--out", str(out)), "--classbench-size has no effect with --rules")
    one_line_error(cli("xdp-bench", "--rules", str(rules), "--trace", str(trace), "--sets", "acl1", "--out", str(out)),
                   "--sets has no effect with --rules")
    assert not out.exists()


def test_generator_options_are_refused_with_a_trace(cli: Cli, rules: Path, trace: Path, tmp_path: Path) -> None:
    """A flag that shapes a generated workload does nothing when a trace (or rule file) is given:
    it is refused, naming it, rather than silently dropped."""
    keys = tmp_path / "keys.txt"
    keys.write_text("".join(f"{i % 37}\n" for i in range(2000)))
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("".join(f"{64 + i % 1400} {1 + i % 5}\n" for i in range(500)))
    out = str(tmp_path / "out")
    cases = [
        (["run", "--trace", str(keys), "--m", "500"], "--m has no effect with --trace"),
        (["run", "--trace", str(keys), "--workload", "zipf"], "--workload has no effect with --trace"),
        (["run", "--trace", str(keys), "--alpha", "1.2"], "--alpha has no effect with --trace"),
        (["predict", "--trace", str(keys), "--m", "500", "--out", out], "--m has no effect with --trace"),
        (["advise", "--trace", str(keys), "--alpha", "2", "--out", out], "--alpha has no effect with --trace"),
        (["latency-sim", "run", "--trace", str(keys), "--objects", "5", "--out", out],
         "--objects has no effect with --trace"),
        (["latency-sim", "run", "--trace", str(keys), "--alpha", "2", "--out", out],
         "--alpha has no effect with --trace"),
        (["latency-sim", "belatedly", "--trace", str(keys), "--burst-length", "3", "--out", out],
         "--burst-length has no effect with --trace"),
        (["latency-sim", "bench", "--trace", str(keys), "--requests", "100", "--out", out],
         "--requests has no effect with --trace"),
        (["latency-sim", "gen", "--trace", str(keys), "--out", str(tmp_path / "g.txt")],
         "--trace has no effect in latency-sim gen"),
        (["attack", "worker", "--trace", str(keys), "--m", "50", "--out", out], "--m has no effect with --trace"),
        (["attack", "classifier", "--rules", str(rules), "--chains", "5", "--out", out],
         "--chains has no effect with --rules"),
        (["attack", "sim", "--trace", str(jobs), "--job-size", "exp:2", "--out", out],
         "--job-size has no effect with --trace"),
        (["cache", "advise", "--trace", str(keys), "--dist", "hot:5", "--out", out],
         "--dist has no effect with --trace"),
        (["cache", "advise", "--trace", str(keys), "--rows", "5", "--out", out], "--rows has no effect with --trace"),
        # Options of a mode that is off are refused the same way.
        (["latency-sim", "run", "--trace", str(keys), "--rounds", "8", "--out", out],
         "--rounds has no effect without --belatedly"),
        (["cache", "advise", "--verify-requests", "10", "--out", out],
         "--verify-requests has no effect without --verify"),
        (["attack", "sim", "--no-growth", "--jmax-sweep", "5", "--out", out],
         "--jmax-sweep has no effect with --no-growth"),
    ]
    sweep = tmp_path / "trace.toml"
    sweep.write_text(f'requests = 100\nk = [1, 2]\nalgos = ["mtf"]\ndispatch = ["hash"]\n[workload]\nkind = "trace"\n'
                     f'path = "{keys}"\nm = 5\n')
    cases.append((["sweep", str(sweep), "--out", out], 'workload: m has no effect with kind = "trace"'))
    for args, message in cases:
        one_line_error(cli(*args), message)
    assert not (tmp_path / "out").exists() and not (tmp_path / "g.txt").exists()
    # Without the generator flag the same runs work; the generator flags work without a trace.
    r = cli("run", "--trace", str(keys), "--k", "2", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["items"] == 37
    r = cli("run", "--m", "500", "--requests", "2000", "--k", "2", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["items"] == 500, r.stderr
    r = cli("latency-sim", "run", "--trace", str(keys), "--policies", "lru", "--z", "10", "--cache-size", "5",
            "--out", out, "--json")
    assert r.returncode == 0, r.stderr


def test_empty_values_are_refused_not_taken_for_the_default(cli: Cli, rules: Path, trace: Path,
                                                             tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    one_line_error(cli("classify", "--rules", str(empty), "--trace", str(trace)), f"{empty}: no rules")
    one_line_error(cli("classify", "--rules", str(rules), "--trace", str(trace), "--updates", str(empty)),
                   f"{empty}: no updates")
    one_line_error(cli("classify", "--synthetic", "--rules-count", "50", "--dispatch", "rss:", "--packets", "500"),
                   "rss:")
    one_line_error(cli("advise", "--candidates", "", "--m", "200", "--requests", "2000", "--k", "2",
                       "--out", str(tmp_path / "adv")), "--candidates")
    assert not (tmp_path / "adv" / "result.json").exists()
    one_line_error(cli("latency-sim", "gen", "--latencies", "", "--out", str(tmp_path / "g.txt")),
                   "--latencies: empty")
    assert not (tmp_path / "g.txt").exists()
    one_line_error(cli("latency-sim", "run", "--policies", "", "--cache-size", "5"), "--policies: empty")
    one_line_error(cli("nft-bench", "--data", str(tmp_path), "--sets", ""), "--sets: empty")
    data = tmp_path / "usl.csv"
    data.write_text("p,y\n1,1\n2,1.9\n4,3.5\n")
    one_line_error(cli("usl", "fit", str(data), "--where", ""), "--where: empty")


# --- Output paths: checked before any work, in one place. ---------------------------------------


def test_output_paths(cli: Cli, tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "exp").mkdir(parents=True)
    (results / "exp" / "result.json").write_text(json.dumps({"experiment": "x", "rows": [{"k": 1}]}))
    folder = tmp_path / "adir"
    folder.mkdir()
    one_line_error(cli("report", str(results), "--out", str(folder)), str(folder), "folder")
    assert list(tmp_path.glob("*.tmp")) == [] and list(folder.iterdir()) == []

    data = tmp_path / "m.csv"
    data.write_text("p,speedup\n1,1\n2,2.1\n3,3.3\n4,4.5\n")
    missing = tmp_path / "nonexistent" / "dir" / "x"
    one_line_error(cli("usl", "fit", str(data), "--out", str(missing)), "does not exist")
    assert not (tmp_path / "nonexistent").exists()

    a_file = tmp_path / "afile"
    a_file.write_text("x")
    line = one_line_error(cli("law", "--out", str(a_file)), str(a_file))
    assert "Errno" not in line

    # A folder no file can be made in is refused before the fit, also for root, whom os.access
    # lets write anywhere.
    one_line_error(cli("usl", "fit", str(data), "--out", "/proc/superlinear-x"), "/proc/superlinear-x",
                   "not writable (--out)")
    one_line_error(cli("nft-bench", "--rules", str(data), "--emit", "/proc/superlinear-x"),
                   "/proc/superlinear-x", "not writable (--emit)")

    sweep = tmp_path / "esc.toml"
    sweep.write_text('name = "../../escaped"\nalgos = ["mtf"]\ndispatch = ["hash"]\nk = [1, 2]\nrequests = 2000\n'
                     'measure = false\n[workload]\nkind = "uniform"\nm = 100\n')
    work = tmp_path / "work"
    work.mkdir()
    one_line_error(cli("sweep", str(sweep), cwd=work), "'name'", "../../escaped")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["results", "adir", "m.csv", "afile", "esc.toml",
                                                                  "work"])


def test_an_output_that_is_a_link_a_fifo_or_a_device_is_written_not_replaced(cli: Cli, tmp_path: Path) -> None:
    # Every file went through a temporary file renamed onto the path: --out /dev/full became a
    # plain 68 KB file (and reported success), a FIFO and a link were replaced by files.
    target = tmp_path / "target"
    target.write_text("old")
    link = tmp_path / "link"
    link.symlink_to(target)
    r = cli("classify", "gen-rules", "--rules-count", "3", "--out", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and "3 rules" in target.read_text()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text()))
    reader.start()
    r = cli("classify", "gen-rules", "--rules-count", "3", "--out", str(fifo))
    reader.join(timeout=30)
    assert r.returncode == 0 and stat.S_ISFIFO(fifo.lstat().st_mode) and "3 rules" in read[0], r.stderr
    # Copies of /dev/null and /dev/full in tmp_path (making device nodes needs root): the real
    # ones would be lost to a regression.
    null, full = tmp_path / "null", tmp_path / "full"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except PermissionError:
        return
    r = cli("classify", "gen-rules", "--rules-count", "3", "--out", str(null))
    assert r.returncode == 0 and stat.S_ISCHR(null.lstat().st_mode), r.stderr
    one_line_error(cli("classify", "gen-rules", "--rules-count", "10", "--out", str(full)),
                   f"{full}: cannot write: no space left on device")
    assert stat.S_ISCHR(full.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "full", "link", "null", "target"]


def test_convert_to_classbench_says_which_actions_it_leaves_out(cli: Cli, rules: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.cb"
    r = cli("classify", "convert", "--rules", str(rules), "--format", "classbench", "--out", str(out))
    assert r.returncode == 0 and out.exists(), r.stderr
    assert r.stderr.strip() == (f"superlinear: note: ClassBench filters carry no actions: the actions of 1 rule that "
                                f"does not accept are not in {out} (--format native or nft keeps them)")
    # A ClassBench source has no actions of its own to lose, whatever --actions assigned.
    cb = tmp_path / "g.cb"
    r = cli("classify", "gen-rules", "--rules-count", "20", "--format", "classbench", "--out", str(cb))
    assert r.returncode == 0, r.stderr
    r = cli("classify", "convert", "--rules", str(cb), "--format", "classbench", "--out", str(out))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert out.read_text() == cb.read_text()


def test_values_taken_as_asked_that_do_less_than_they_seem_get_a_note(cli: Cli, rules: Path, trace: Path,
                                                                      tmp_path: Path) -> None:
    r = cli("classify", "--rules", str(rules), "--trace", str(trace), "--algo", "rule-cache", "--front", "2",
            "--k", "2", "--no-measure")
    assert r.returncode == 0 and r.stderr.strip() == (
        "superlinear: note: --front 2 holds all 2 rules: the front never evicts (the tuple-space search behind it "
        "serves the packets whose rule is not in it yet)"), r.stderr
    r = cli("classify", "--rules", str(rules), "--trace", str(trace), "--algo", "rule-cache", "--front", "1",
            "--k", "2", "--no-measure")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    r = cli("latency-sim", "run", "--requests", "2000", "--objects", "50", "--policies", "lru", "--z", "10",
            "--cache-size", "10,60", "--out", str(tmp_path / "l"), "--json")
    assert r.returncode == 0 and r.stderr.strip() == (
        "superlinear: note: --cache-size 60: more than the trace's 50 objects, so every object fits and only the "
        "compulsory misses are left"), r.stderr
    r = cli("advise", "--rules", str(rules), "--trace", str(trace), "--k", "2", "--candidates", "rr;spray",
            "--verify", "5", "--out", str(tmp_path / "a"), "--json")
    assert r.returncode == 0, r.stderr
    assert "superlinear: note: --verify 5: there are 2 candidates, each is run" in r.stderr, r.stderr


def test_a_refused_input_leaves_no_empty_output_folder(cli: Cli, tmp_path: Path) -> None:
    # The output folder is made before the input is read; a run refused for its input removes
    # the folders it made (all of them, parents too) and keeps a folder that was there already.
    one_line_error(cli("predict", "--trace", str(tmp_path / "none.txt"), "--out", str(tmp_path / "new" / "deep")),
                   "none.txt")
    assert not (tmp_path / "new").exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    one_line_error(cli("predict", "--trace", str(tmp_path / "none.txt"), "--out", str(kept)), "none.txt")
    assert kept.is_dir()


def test_created_folders_go_deepest_first_and_only_the_running_commands() -> None:
    from superlinear.output import paths

    root = Path(tempfile.mkdtemp())
    paths.forget_created()
    paths.output_dir(root / "a")
    paths.output_dir(root / "a" / "b" / "c")  # a later call, deeper: its folders go first
    paths.remove_empty_created()
    assert not (root / "a").exists()
    paths.output_dir(root / "kept")
    paths.forget_created()  # the next command starts: an earlier command's folder stays
    paths.remove_empty_created()
    assert (root / "kept").is_dir()
    shutil.rmtree(root)


def test_a_failed_write_names_the_users_file_not_its_temporary(tmp_path: Path) -> None:
    target = tmp_path / "gone" / "result.json"
    message = f"{target}: cannot write: folder {target.parent} does not exist"
    with pytest.raises(SuperlinearError, match=re.escape(message)):
        write_text_atomic(target, "{}")


# --- One spelling per concept; the old ones still work and are left out of --help. ---------------


def test_version_is_the_packages() -> None:
    r = subprocess.run([sys.executable, "-m", "superlinear", "--version"], capture_output=True, text=True,
                       check=False)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert r.returncode == 0 and r.stdout.strip() == f"superlinear {version}"


def test_old_spellings_are_hidden_aliases(cli: Cli, rules: Path, trace: Path) -> None:
    ks = set()
    for flag in ("--k", "-k", "--workers"):
        r = cli("classify", "--rules", str(rules), "--trace", str(trace), flag, "3", "--no-measure", "--json")
        assert r.returncode == 0, r.stderr
        ks.add(json.loads(r.stdout)["k"])
    assert ks == {3}
    tables = {cli("nft-bench", "--rules", str(rules), flag, "native", "--emit", "-").stdout
              for flag in ("--rule-format", "--format")}
    assert len(tables) == 1 and "table netdev" in tables.pop()
    capacities = []
    for flag in ("--cache-size", "--sizes"):
        r = cli("latency-sim", "run", "--requests", "500", "--objects", "50", "--policies", "lru", "--z", "10",
                flag, "5", "--json", "--out", str(rules.parent / flag.strip("-")))
        assert r.returncode == 0, r.stderr
        capacities.append({row["capacity"] for row in json.loads(r.stdout)["rows"]})
    assert capacities == [{5}, {5}]
    # classify bench takes its classifiers as --algo (a list there), as every other command does.
    algos = []
    for flag in ("--algo", "--algos"):
        r = cli("classify", "bench", "--rules", str(rules), "--trace", str(trace), flag, "static,mrf", "--quick",
                "--out", str(rules.parent / ("bench" + flag)), "--json")
        assert r.returncode == 0, r.stderr
        algos.append([row["algo"] for row in json.loads(r.stdout)])
    assert algos == [["static", "mrf"], ["static", "mrf"]]
    # attack classifier says --default for the default policy, as classify, nft-bench and xdp do.
    actions = []
    for flag in ("--default", "--default-action"):
        r = cli("attack", "classifier", "--rules", str(rules), "--quick", "--packets", "2000", "--policies", "fcfs",
                "--attack-rates", "0.1", "--adversary", "catch-all", flag, "drop",
                "--out", str(rules.parent / ("ac" + flag)), "--json")
        assert r.returncode == 0, r.stderr
        actions.append(json.loads(r.stdout)["config"]["default_action"])
    assert actions == ["drop", "drop"]
    helps = {
        ("classify",): ("--k", "--workers"), ("nft-bench",): ("--k", "--ks"),
        ("latency-sim", "run"): ("--cache-size", "--sizes"), ("attack", "bench-queue"): ("--queue-size", "--sizes"),
        ("attack", "classifier"): ("--default", "--default-action"),
    }
    for command, (new, old) in helps.items():
        text = cli(*command, "--help").stdout
        assert re.search(rf"(^|[\s\[,]){re.escape(new)}[\s=,\]]", text), (command, new)
        assert not re.search(rf"(^|[\s\[,]){re.escape(old)}[\s=,\]]", text), (command, old)
    text = cli("classify", "--help").stdout
    assert "--algos" not in text and "bench: a comma-separated list" in text


# --- Errors name what the user typed, and the thing that is wrong. -------------------------------


def test_errors_name_the_right_thing(cli: Cli, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 2)
    one_line_error(cli("sweep", str(garbage)), str(garbage))
    one_line_error(cli("latency-sim", "run", "--trace", str(tmp_path)), str(tmp_path), "folder")
    line = one_line_error(cli("latency-sim", "run", "--objects", "50", "--requests", "1000"), "default")
    assert "--sizes" not in line  # the default's flag, not a spelling the user never typed
    one_line_error(cli("latency-sim", "run", "--requests", "100", "--sizes", "0"), "--sizes", "'0'")
    r = cli("reproduce", "fig99")
    line = one_line_error(r, "fig99")
    names = line.split("available: ")[1].rstrip(")").split(", ")
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("argv", "prog", "fragment"), [
    (("run", "--k", "abc"), "superlinear run", "argument --k/-k: expected a positive integer, got 'abc'"),
    (("classify", "--bogus"), "superlinear classify", "unrecognized arguments: --bogus"),
    # The unknown option's value would be read as the action ("invalid choice: '100'").
    (("classify", "--requests", "100"), "superlinear classify", "unrecognized arguments: --requests 100"),
    (("classify", "sideways"), "superlinear classify", "invalid choice: 'sideways'"),
    (("attack", "sim", "--probe"), "superlinear attack sim", "argument --probe: expected one argument"),
    (("cache", "up", "--replicas", "x", "--nope"), "superlinear cache up", "argument --replicas"),
    (("reproduce",), "superlinear reproduce", "required"),
    ((), "superlinear", "required: COMMAND"),
])
def test_argparse_mistakes_are_one_line_naming_the_subcommand(cli: Cli, argv: tuple[str, ...], prog: str,
                                                               fragment: str) -> None:
    # No usage block above the error: the line says what was wrong and which --help to read.
    r = cli(*argv)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"{prog}: error: ") and fragment in lines[0], lines[0]
    assert lines[0].endswith(f"(see '{prog} --help')"), lines[0]


def test_classbench_panel_without_data_is_one_line(cli: Cli, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SUPERLINEAR_DATA"}
    r = subprocess.run([sys.executable, "-m", "superlinear", "reproduce", "fig8", "--quick", "--panel", "a"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, check=False)
    one_line_error(r, "--data", "d2k")


def test_data_is_refused_where_a_figure_does_not_read_it(cli: Cli, tmp_path: Path) -> None:
    for figure in ("fig5", "million-flows", "fig11"):
        r = cli("reproduce", figure, "--quick", "--data", str(tmp_path), "--out", str(tmp_path / figure))
        one_line_error(r, "--data", figure, "fig8")
        assert not (tmp_path / figure).exists()


# --- Tables say what they show. -------------------------------------------------------------------


def test_sweep_table_shows_every_k_and_the_static_baseline(cli: Cli, tmp_path: Path) -> None:
    cfg = tmp_path / "ks.toml"
    cfg.write_text('algos = ["mtf", "static"]\ndispatch = ["hash"]\nk = [1, 2, 4, 8]\nrequests = 2000\n'
                   'measure = false\n[workload]\nkind = "uniform"\nm = 100\n')
    r = cli("sweep", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    assert sorted(int(line.split("│")[3]) for line in rows) == [1, 1, 2, 2, 4, 4, 8, 8]
    assert all(line.split("│")[8].strip() != "—" for line in rows)  # vs static k=1


def test_progress_line_shows_the_panel_prefix(tmp_path: Path) -> None:
    """The progress line of a reproduction starts with "[c] ..." for panel c: plain text, not rich
    markup (which once took "[c]" for a style and hid the line). Rich draws progress only on a
    terminal, so the run gets a pseudo-terminal."""
    import pty
    import select

    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm"}
    p = subprocess.Popen([sys.executable, "-m", "superlinear", "reproduce", "fig5", "--quick", "--panel", "c",
                          "--out", str(tmp_path / "f5")], stdin=follower, stdout=follower,
                         stderr=follower, env=env, close_fds=True)
    os.close(follower)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: the run ended
                    break
                if not chunk:
                    break
                seen += chunk
            elif p.poll() is not None:
                break
    finally:
        p.wait(timeout=300)
        os.close(leader)
    assert p.returncode == 0, seen.decode(errors="replace")[-2000:]
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))
    assert re.search(r"\[c\] \w+ \+ \w+ k=\d+", text), text[-2000:]


def test_long_series_say_which_k_they_leave_out() -> None:
    from rich.console import Console

    from superlinear.output.tables import summary_table

    rows = [{"panel": "a", "algo": "mtf", "dispatch": "hash", "warmup": "included", "k": k, "rules": 5}
            for k in (1, 2, 4, 8, 16, 32, 64)]
    console = Console(width=400, record=True)
    console.print(summary_table(rows, "t"))
    text = " ".join(console.export_text().split())
    assert "Mpkt/s" in text and "Mreq/s" not in text
    assert "Left out here: k = 4, 8, 16, 32" in text


def test_attack_sim_gives_one_figure_per_jmax(cli: Cli, tmp_path: Path) -> None:
    r = cli("attack", "sim", "--quick", "--packets", "5000", "--policies", "fcfs", "--jmax", "10",
            "--jmax-sweep", "5,10", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    growth = {row["job_max_us"]: row["displacement_factor"] for row in doc["rows"]
              if row["panel"] == "growth-summary"}
    assert growth[10.0] == doc["summary"]["policies"]["fcfs"]["displacement_factor"]


def test_cache_findings_leave_out_panels_not_run() -> None:
    from superlinear.experiments.cachetier_driver import SERVICE_EXPERIMENTS, findings

    assert findings(SERVICE_EXPERIMENTS["fig11"](True), []) == []


# --- make test installs the system packages, or names the one command that would. ---------------


def test_system_packages_script_names_the_command(tmp_path: Path) -> None:
    script = ROOT / "scripts" / "install-system-packages.sh"
    bash = shutil.which("bash")
    assert bash is not None
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    r = subprocess.run([bash, str(script), "--print"], capture_output=True, text=True,
                       env={"PATH": str(empty_path)}, check=False)
    assert r.returncode == 0, r.stderr
    # With nothing on PATH, memcached and PostgreSQL count as missing (nft and ip are looked for
    # in /usr/sbin as well), and without apt-get the command names the packages.
    assert "memcached postgresql" in r.stderr and "install with your package manager" in r.stderr
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"(?m)^test: system-packages$", makefile)
    assert "scripts/install-system-packages.sh" in (ROOT / ".ci" / "run").read_text()


# --- classify --updates: rule changes while packets flow, checked against the set in force. ----


def test_classify_updates_under_traffic(cli: Cli, tmp_path: Path) -> None:
    rules, other, trace = tmp_path / "r.txt", tmp_path / "r2.txt", tmp_path / "t.bin"
    for path, depth in ((rules, "3"), (other, "2")):  # the synthetic rule set is drawn without a seed
        r = cli("classify", "gen-rules", "--rules-count", "120", "--depth", depth, "--out", str(path))
        assert r.returncode == 0, r.stderr
    r = cli("classify", "gen-trace", "--rules", str(rules), "--packets", "20000", "--out", str(trace))
    assert r.returncode == 0, r.stderr
    lines = ["# packet change"]
    for i in range(1, 40):
        at = i * 250
        if i == 20:
            lines.append(f"{at} replace {other.name}")
        elif i % 3 == 0:
            lines.append(f"{at} delete {1 + (i * 7) % 50}")
        else:
            lines.append(f"{at} insert {1 + (i * 11) % 60} drop src 10.{i}.0.0/16 dport {1000 + i} proto tcp")
    updates = tmp_path / "u.txt"
    updates.write_text("\n".join(lines) + "\n")
    # Every classifier: MRF follows the generations itself, the others are rebuilt on each one.
    for algo, extra in (("mrf", ()), ("mrf-swap", ()), ("static", ()), ("tuple-merge", ()), ("rule-cache", ()),
                        ("rule-cache", ("--front", "2")), ("rule-cache-flow", ()), ("flow-cache", ())):
        r = cli("classify", "--rules", str(rules), "--trace", str(trace), "--updates", str(updates), "--algo", algo,
                "--k", "4", "--check", "--json", *extra)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["updates_applied"] == 39 and doc["mismatches"] == 0 and doc["packets"] == 20000
        gens = doc["generations"]
        assert [g["generation"] for g in gens] == list(range(40))
        assert sum(g["packets"] for g in gens) == 20000
        assert gens[20]["change"] == f"line 21: replace {other.name}"
    r = cli("classify", "--rules", str(rules), "--trace", str(trace), "--updates", str(updates), "--check")
    assert r.returncode == 0 and "39 updates" in r.stdout and "0 mismatches [OK]" in r.stdout, r.stderr

    # Mistakes: FILE:LINE, one line, exit 2; options a run with updates does not use are refused.
    for text, message in (
        ("100 insert 1 drop src 10.0.0.0/99\n", f"{updates}:1: insert:"),
        ("100 delete 1\n50 delete 1\n", f"{updates}:2: packet 50 comes before packet 100"),
        ("100 delete 900\n", f"{updates}:1: delete: position 900 is outside 1..480"),
        ("# c\n100 replace missing.txt\n", f"{updates}:2: replace missing.txt:"),
        ("100 rotate 3\n", f"{updates}:1: unknown change 'rotate'"),
        ("30000 delete 1\n", f"{updates}:1: an update at packet 30000, but the run's packets are 0 to 19999"),
        # One at the packet count would take effect before a packet the run never sees: it said 0 applied, exit 0.
        ("20000 delete 1\n", f"{updates}:1: an update at packet 20000, but the run's packets are 0 to 19999"),
    ):
        updates.write_text(text)
        one_line_error(cli("classify", "--rules", str(rules), "--trace", str(trace), "--updates", str(updates)),
                       message)
    one_line_error(cli("classify", "--rules", str(rules), "--trace", str(trace), "--updates", str(updates), "--top",
                       "3"), "--top has no effect with --updates")
    one_line_error(cli("classify", "gen-rules", "--rules-count", "20", "--out", str(tmp_path / "x.txt"),
                       "--updates", str(updates)), "--updates has no effect in classify gen-rules")
