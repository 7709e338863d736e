"""The tuple-space classifiers from the CLI: ``tuple-merge`` and ``rule-cache`` pass the
brute-force check on generated rule sets (dependency chains and a catch-all) with one and four
workers and count every rule exactly as the static list does; ``classify compare`` runs ours on
a generated ClassBench-format folder and refuses a missing peer binary in one line. Fixtures are
generated here; nothing reads ../shared."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

Cli = Callable[..., CompletedProcess[str]]


@pytest.fixture
def rules(cli: Cli, tmp_path: Path) -> Path:
    out = tmp_path / "r.txt"
    r = cli("classify", "gen-rules", "--rules-count", "150", "--depth", "5", "--catch-all", "0.1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def _run(cli: Cli, rules: Path, algo: str, k: int, *extra: str) -> dict[str, object]:
    r = cli("classify", "--rules", str(rules), "--packets", "6000", "--algo", algo, "--k", str(k), "--check",
            "--json", "--no-measure", "--repeats", "1", *extra)
    assert r.returncode == 0, r.stderr
    doc: dict[str, object] = json.loads(r.stdout)
    return doc


@pytest.mark.parametrize(("algo", "k", "extra"), [("tuple-merge", 1, ()), ("tuple-merge", 4, ()),
                                                  ("rule-cache", 1, ()), ("rule-cache", 4, ()),
                                                  ("rule-cache", 4, ("--front", "2")), ("rule-cache-flow", 4, ()),
                                                  ("flow-cache", 1, ()), ("flow-cache", 4, ())])
def test_tuple_space_classifiers_pass_the_check(cli: Cli, rules: Path, algo: str, k: int,
                                                extra: tuple[str, ...]) -> None:
    doc = _run(cli, rules, algo, k, *extra)
    check = doc["check"]
    assert isinstance(check, dict) and check["checked"] == 6000 and check["mismatches"] == 0
    reference = _run(cli, rules, "static", k)
    assert doc["rule_matches"] == reference["rule_matches"], "per-rule counters identical to the static list's"
    assert doc["default_hits"] == reference["default_hits"]


def test_registry_lists_them(cli: Cli) -> None:
    r = cli("classify", "algorithms", "--json")
    assert r.returncode == 0, r.stderr
    names = {c["name"] for c in json.loads(r.stdout)["classifiers"]}
    assert {"tuple-merge", "rule-cache", "rule-cache-flow", "flow-cache"} <= names


def _classbench_folder(cli: Cli, tmp_path: Path, rules: Path) -> Path:
    data = tmp_path / "cb"
    data.mkdir()
    for name in ("acl1", "ipc1", "fw1"):
        for args in (("convert", "--rules", str(rules), "--format", "classbench", "--out", str(data / f"{name}_1k")),
                     ("gen-trace", "--rules", str(rules), "--packets", "3000", "--format", "classbench",
                      "--out", str(data / f"{name}_1k_trace"))):
            r = cli("classify", *args)
            assert r.returncode == 0, r.stderr
    return data


@pytest.mark.parametrize("traffic", ["trace", "uniform"])
def test_compare_runs_ours_on_a_classbench_folder(cli: Cli, tmp_path: Path, rules: Path, traffic: str) -> None:
    data = _classbench_folder(cli, tmp_path, rules)
    r = cli("classify", "compare", "--data", str(data), "--classbench-size", "1k", "--packets", "3000",
            "--repeats", "2", "--algo", "static,tuple-merge,rule-cache", "--traffic", traffic, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["peer"] is None and doc["traffic"] == traffic
    assert [(row["rules_set"], row["algo"]) for row in doc["rows"]][:3] == [
        ("acl1_1k", "static"), ("acl1_1k", "tuple-merge"), ("acl1_1k", "rule-cache")]
    assert all(row["counts_agree"] and len(row["mpps_runs"]) == 2 for row in doc["rows"])


def test_compare_refuses_a_missing_peer_in_one_line(cli: Cli, tmp_path: Path) -> None:
    r = cli("classify", "compare", "--data", str(tmp_path), "--peer", str(tmp_path / "nowhere" / "tmbench"))
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    lines = [line for line in r.stderr.strip().splitlines() if line]
    assert len(lines) == 1 and "--peer" in lines[0], r.stderr
