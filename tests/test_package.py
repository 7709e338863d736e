"""The package's shape: domains as packages, drivers independent of the command line, one
``list`` over the registries, one set of option parsers and one study runner."""

from __future__ import annotations

import argparse
import ast
import json
import time
from pathlib import Path

import pytest

import superlinear
from superlinear import _native
from superlinear.cli import main
from superlinear.common import args as option
from superlinear.common.errors import SuperlinearError
from superlinear.common.study import Outcome, Study, keeping, run_study

PACKAGE = Path(superlinear.__file__).parent
DOMAINS = ("analysis", "attack", "cache", "classify", "engine", "experiments", "latency", "nft", "output", "xdp")


def test_top_level_holds_only_the_entry_points_and_the_domain_packages() -> None:
    modules = {p.name for p in PACKAGE.glob("*.py")}
    assert modules == {"__init__.py", "__main__.py", "cli.py"}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages == {*DOMAINS, "common"}


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_domain_registers_its_own_subcommands(domain: str) -> None:
    source = (PACKAGE / domain / "cli.py").read_text(encoding="utf-8")
    assert "def register(sub" in source


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_no_driver_or_model_imports_a_command_line_module() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.name == "cli.py" or path.name.endswith("_cli.py") or path.parent == PACKAGE:
            continue
        bad = [m for m in _imports(path) if m.startswith("superlinear.")
               and (m.endswith(".cli") or m.endswith("_cli"))]
        assert not bad, f"{path.relative_to(PACKAGE)} imports {bad}"


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_list_covers_every_domain_and_the_old_commands_are_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    everything = _json(capsys, "list", "--json")
    assert isinstance(everything, dict)
    assert set(everything) == {"engine", "classify", "attack", "latency", "cache"}
    for domain, alias in (("engine", ["algorithms"]), ("classify", ["classify", "algorithms"]),
                          ("attack", ["attack", "policies"]), ("latency", ["latency-sim", "policies"])):
        assert _json(capsys, "list", domain, "--json") == everything[domain]
        assert _json(capsys, *alias, "--json") == everything[domain], alias
    assert [a["name"] for a in everything["engine"]["algorithms"]] == [a["name"] for a in _native.algorithms()]
    assert [r["name"] for r in everything["cache"]] == [r["name"] for r in _native.cache_routers()]
    assert [p["name"] for p in everything["latency"]] == [p["name"] for p in _native.latency_policies()]


def test_list_prints_tables_and_rejects_an_unknown_domain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "cache"]) == 0
    out = capsys.readouterr().out
    for router in _native.cache_routers():
        assert router["name"] in out
    with pytest.raises(SystemExit):
        main(["list", "nowhere"])
    assert "nowhere" in capsys.readouterr().err


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_help_names_what_the_registries_know(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # argparse would break a name at its hyphen
    text = _help(capsys, "run")
    for a in _native.algorithms():
        assert a["name"] in text
    for d in _native.dispatchers():
        assert d["name"] in text
    text = _help(capsys, "cache", "bench")
    for r in _native.cache_routers():
        assert r["name"] in text
    text = _help(capsys, "attack", "sim")
    for p in _native.sched_policies():
        assert p["name"] in text
    text = _help(capsys, "latency-sim", "run")
    for p in _native.latency_policies():
        assert p["name"] in text


@pytest.mark.parametrize(("parse", "text", "message"), [
    (option.positive_int, "0", "expected a positive integer, got 0"),
    (option.positive_int, "x", "expected a positive integer, got 'x'"),
    (option.non_negative_int, "-1", "expected a non-negative integer, got -1"),
    (option.positive_float, "0", "expected a positive number, got 0.0"),
    (option.fraction, "1.5", "expected a number in [0, 1], got 1.5"),
    (option.positive_whole, "2.5", "'2.5' is not a whole number"),
    (option.non_negative_whole, "-3", "must not be negative, got -3"),
    (option.number, "nan", "NaN is not a number here"),
    (option.positive_number, "-1", "must be positive, got -1"),
    (option.k_list, "1,2", "every k must be at least 2"),
])
def test_option_parsers_reject_with_the_words_users_see(parse: object, text: str, message: str) -> None:
    assert callable(parse)
    with pytest.raises(argparse.ArgumentTypeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse(text)


def test_list_parsers_name_the_option() -> None:
    assert option.int_list("--z", "1, 5") == (1, 5)
    assert option.floats("--rates", "0.5,2") == (0.5, 2.0)
    assert option.names("--policies", "wsjf,rotate:3", ["wsjf", "rotate"]) == ("wsjf", "rotate:3")
    for call, fragment in ((lambda: option.int_list("--z", "0"), "--z: values must be at least 1"),
                           (lambda: option.floats("--rates", "1,x"), "--rates: 'x' is not a number"),
                           (lambda: option.names("--policies", "fifo", ["wsjf"]), "--policies: unknown fifo")):
        with pytest.raises(SuperlinearError, match=fragment):
            call()


class _Squares(Study[int]):
    """A study small enough to check the runner: k² for k up to n, with a summary."""

    experiment = "squares"

    def config_from(self, args: argparse.Namespace) -> int:
        if args.n < 1:
            raise SuperlinearError("n must be at least 1")
        return int(args.n)

    def run(self, config: int, progress: object) -> Outcome:
        rows = [{"k": k, "square": k * k} for k in range(1, config + 1)]
        return Outcome(rows, {"n": config}, summary={"largest": config * config})

    def table(self, config: int, outcome: Outcome) -> None:
        print(f"largest square {outcome.summary and outcome.summary['largest']}")

    def exit_code(self, outcome: Outcome) -> int:
        return 3 if len(outcome.rows) > 2 else 0


def test_the_study_runner_writes_results_and_prints_json_or_tables(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "squares"
    assert run_study(_Squares(), argparse.Namespace(n=2, out=str(out), json=False)) == 0
    printed = capsys.readouterr().out
    assert "largest square 4" in printed and str(out / "result.csv") in printed
    doc = json.loads((out / "result.json").read_text())
    assert doc["experiment"] == "squares" and doc["config"] == {"n": 2} and doc["summary"] == {"largest": 4}
    assert (out / "result.csv").read_text().splitlines() == ["k,square", "1,1", "2,4"]
    assert run_study(_Squares(), argparse.Namespace(n=3, out=str(out), json=True)) == 3
    assert json.loads(capsys.readouterr().out)["rows"][-1] == {"k": 3, "square": 9}
    with pytest.raises(SuperlinearError, match="n must be at least 1"):
        run_study(_Squares(), argparse.Namespace(n=0, out=str(out), json=True))


class _SquaresOnAFullDisk(_Squares):
    def plot(self, out: Path, config: int, outcome: Outcome) -> list[Path]:
        raise SuperlinearError(f"{out / 'squares.png'}: cannot write: No space left on device")


def test_a_plot_that_cannot_be_written_keeps_the_run_and_says_so(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # The run had finished: its rows, summary and tables are kept and shown; then one error line.
    out = tmp_path / "squares"
    with pytest.raises(SuperlinearError, match=r"the plots were not written: .*squares\.png: cannot write: No space"
                                               r".*the results are in .*result\.json"):
        run_study(_SquaresOnAFullDisk(), argparse.Namespace(n=2, out=str(out), json=False))
    assert "largest square 4" in capsys.readouterr().out
    doc = json.loads((out / "result.json").read_text())
    assert doc["summary"] == {"largest": 4} and doc["plots"] == []


class _SquaresStoppedAtThree(_Squares):
    def run(self, config: int, progress: object) -> Outcome:
        rows: list[dict[str, object]] = []
        with keeping(lambda: Outcome(rows, {"n": config})):
            for k in range(1, config + 1):
                if k == 3:
                    raise KeyboardInterrupt  # Ctrl-C
                rows.append({"k": k, "square": k * k})
        return Outcome(rows, {"n": config})


def test_a_study_stopped_by_ctrl_c_writes_what_it_finished(tmp_path: Path) -> None:
    out = tmp_path / "squares"
    with pytest.raises(KeyboardInterrupt):
        run_study(_SquaresStoppedAtThree(), argparse.Namespace(n=5, out=str(out), json=False))
    doc = json.loads((out / "result.json").read_text())
    assert doc["config"] == {"n": 5, "interrupted": True} and doc["rows"] == [{"k": 1, "square": 1},
                                                                                {"k": 2, "square": 4}]
    assert doc["plots"] == []  # `report` shows no plot an earlier run left in the folder


_SLOW_STUDY = """
import argparse, sys, time
from superlinear.common.interrupt import interruptible, stop_on_first_interrupt
from superlinear.common.study import Outcome, Study, keeping, run_study

class Slow(Study):
    experiment = "slow"

    def run(self, config, progress):
        rows = []
        with keeping(lambda: Outcome(rows, {"n": 2})):
            rows.append({"k": 1})
            print("ready", flush=True)
            interruptible(lambda: time.sleep(30))  # a call that does not read the stop flag
        return Outcome(rows, {"n": 2})

    def table(self, config, outcome):
        pass

stop_on_first_interrupt()
try:
    run_study(Slow(), argparse.Namespace(out=sys.argv[1], json=False))
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_a_study_keeps_what_it_finished_when_a_call_does_not_stop(tmp_path: Path) -> None:
    # The process must then end under the call (os._exit after 0.75 s): the rows finished before
    # it are written first, from the main thread.
    import signal
    import subprocess
    import sys

    out = tmp_path / "slow"
    p = subprocess.Popen([sys.executable, "-c", _SLOW_STUDY, str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline() == "ready\n"
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130 and err.strip() == "superlinear: interrupted", err
    doc = json.loads((out / "result.json").read_text())
    assert doc["rows"] == [{"k": 1}] and doc["config"] == {"n": 2, "interrupted": True} and doc["plots"] == []
