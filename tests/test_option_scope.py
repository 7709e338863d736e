"""Options that only some settings use are refused, naming them, where they would do nothing:
``run --alpha`` without the zipf workload, ``--w``/``--rho`` beside a worker that does not read
them, ``--warmup`` without ``--exclude-warmup`` (and the same two in a sweep file), ``--requests``
beyond a ``--trace``, ``classify --actions`` with rule files that carry their own actions, and
``classify --seed`` where nothing is drawn. Each refusal is checked beside the combination that
does use the option, and each table the checks rest on against the engine itself."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from superlinear import _native
from superlinear.classify.cli import SEEDED_DISPATCHERS, rule_file_format
from superlinear.cli import main
from superlinear.engine.cli import WORKER_PARAMETERS
from superlinear.engine.runs import Workload
from superlinear.engine.sweep import ConfigError, load_sweep

Mistake = Callable[..., None]
TINY = ["--requests", "2000", "--m", "200", "--k", "2", "--repeats", "1"]


def ok(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    """Runs the CLI in-process; it must succeed. Returns what it printed."""
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


# --- run: --alpha ---------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "mode"), [
    (["--alpha", "1.5"], "with --workload uniform, the default"),
    (["--workload", "uniform", "--alpha", "1.5"], "with --workload uniform "),
])
def test_run_refuses_alpha_without_the_zipf_workload(one_line_mistake: Mistake, args: list[str], mode: str) -> None:
    one_line_mistake(["run", "--algo", "mtf", *args, *TINY], f"--alpha has no effect {mode}",
                     "(it is the exponent of --workload zipf)")


def test_run_takes_alpha_with_the_zipf_workload(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(ok(capsys, ["run", "--workload", "zipf", "--alpha", "1.5", *TINY, "--json"]))
    assert doc["spec"]["workload"]["alpha"] == 1.5


# --- run: --w and --rho -------------------------------------------------------------------


@pytest.mark.parametrize(("algo", "flag"), [
    ("mtf", "--rho"), ("mtf", "--w"), ("static", "--w"), ("hashmap", "--rho"),
    ("splay", "--rho"), ("tree", "--rho"), ("lru:50", "--w"), ("nocache", "--w"),
])
def test_run_refuses_a_worker_parameter_the_worker_does_not_use(one_line_mistake: Mistake, algo: str,
                                                                 flag: str) -> None:
    users = "lru:C, lru-mad:C, lru-dh:C, nocache" if flag == "--rho" else "tree, splay"
    one_line_mistake(["run", "--algo", algo, flag, "100000", *TINY], f"{flag} has no effect with --algo {algo} (",
                     f"used by --algo {users})")


def test_the_default_worker_is_named_as_the_default(one_line_mistake: Mistake) -> None:
    one_line_mistake(["run", "--rho", "100000", *TINY], "--rho has no effect with --algo mtf, the default (")


@pytest.mark.parametrize(("algo", "flag"), [
    ("tree", "--w"), ("splay", "--w"), ("lru:50", "--rho"), ("lru-mad:50", "--rho"), ("lru-dh:50", "--rho"),
    ("nocache", "--rho"),
])
def test_run_takes_the_parameters_its_worker_uses(capsys: pytest.CaptureFixture[str], algo: str, flag: str) -> None:
    doc = json.loads(ok(capsys, ["run", "--algo", algo, flag, "3", *TINY, "--json"]))
    field = "compare_cycles" if flag == "--w" else "miss_cycles"
    assert doc["spec"][field] == 3


def test_worker_parameters_match_what_the_engine_reads() -> None:
    """WORKER_PARAMETERS names, per parameter, the workers whose constructors read it: here each
    worker is timed with the parameter at 0 and at 5,000 cycles (a worker that reads it slows
    down tens of times at least; one that does not, not at all), so a worker added to the engine,
    or one that starts reading a parameter, fails this until the table says so."""
    names = {a["name"] for a in _native.algorithms()}
    for dest, (_, users) in WORKER_PARAMETERS.items():
        assert users <= names, f"{dest}: {users - names} are not workers"
        for name in sorted(names):
            algo = f"{name}:20" if any(a["takes_capacity"] for a in _native.algorithms() if a["name"] == name) \
                else name

            def rate(cycles: int, algo: str = algo, dest: str = dest) -> float:
                kw = {"compare_cycles" if dest == "w" else "miss_cycles": cycles}
                return max(_native.bench_structure(algo, 200, 2000, **kw) for _ in range(3))

            slowdown = rate(0) / rate(5000)
            if name in users:
                assert slowdown > 4, f"--{dest} {algo}: {slowdown:.1f}× slower, yet listed as using it"
            else:
                assert slowdown < 2, f"--{dest} {algo}: {slowdown:.1f}× slower: add it to WORKER_PARAMETERS"


# --- run: --warmup ------------------------------------------------------------------------


def test_run_refuses_warmup_without_exclude_warmup(one_line_mistake: Mistake) -> None:
    one_line_mistake(["run", "--warmup", "100", *TINY],
                     "--warmup has no effect without --exclude-warmup (without it no warm-up is served")
    # ... as it refuses the other half alone.
    one_line_mistake(["run", "--exclude-warmup", *TINY], "--exclude-warmup needs --warmup N")


def test_run_takes_warmup_with_exclude_warmup(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(ok(capsys, ["run", "--warmup", "100", "--exclude-warmup", *TINY, "--json"]))
    assert (doc["spec"]["warmup"], doc["spec"]["exclude_warmup"], doc["projected"]["requests"]) == (100, True, 2000)


# --- run: --requests beyond a trace -----------------------------------------------------------


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    path = tmp_path / "keys.txt"
    path.write_text("# 2,000 keys\n" + "".join(f"{i % 97}\n" for i in range(2000)))
    return path


def test_run_refuses_more_requests_than_the_trace_holds(one_line_mistake: Mistake, keys: Path) -> None:
    run = ["run", "--trace", str(keys), "--repeats", "1"]
    one_line_mistake([*run, "--requests", "5000"],
                     f"--requests 5,000: {keys} holds only 2,000 keys (give --requests 2,000 or fewer")
    one_line_mistake([*run, "--requests", "1500", "--warmup", "1000", "--exclude-warmup"],
                     f"--requests 1,500 after --warmup 1,000: {keys} holds only 2,000 keys (give --requests 1,000 "
                     "or fewer")


@pytest.mark.parametrize(("args", "served"), [
    (["--requests", "2000"], 2000),  # all of it
    (["--requests", "500"], 500),  # its first 500 keys
    ([], 2000),  # the default, 100,000, is no request for more: a shorter trace runs whole
    (["--requests", "1000", "--warmup", "1000", "--exclude-warmup"], 1000),
])
def test_run_takes_requests_within_the_trace(capsys: pytest.CaptureFixture[str], keys: Path, args: list[str],
                                             served: int) -> None:
    doc = json.loads(ok(capsys, ["run", "--trace", str(keys), *args, "--repeats", "2", "--json"]))
    assert doc["projected"]["requests"] == served


# --- sweep files: alpha and warmup ------------------------------------------------------------


SWEEP = 'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1, 2]\nrequests = 2000\nmeasure = false\n'


@pytest.mark.parametrize(("top", "workload", "message"), [
    ("", 'kind = "uniform"\nm = 100\nalpha = 2\n', 'workload: alpha has no effect with kind = "uniform" (it is the '
     'exponent of kind = "zipf")'),
    ("", "m = 100\nalpha = 2\n", 'workload: alpha has no effect with kind = "uniform"'),  # uniform: the default
    ("warmup = 100\n", 'kind = "uniform"\nm = 100\n', "warmup has no effect without exclude_warmup = true (without "
     "it no warm-up is served"),
    ("warmup = 100\nexclude_warmup = false\n", "m = 100\n", "warmup has no effect without exclude_warmup = true"),
])
def test_a_sweep_refuses_alpha_and_warmup_where_they_do_nothing(one_line_mistake: Mistake, tmp_path: Path, top: str,
                                                                workload: str, message: str) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SWEEP + top + "[workload]\n" + workload)
    one_line_mistake(["sweep", str(path), "--out", str(tmp_path / "out")], f"{path}: {message}")
    assert not (tmp_path / "out").exists()


def test_a_sweep_takes_alpha_with_zipf_and_warmup_with_exclude_warmup(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SWEEP + "warmup = 100\nexclude_warmup = true\n[[workload]]\nkind = \"zipf\"\nm = 100\nalpha = 2\n"
                    "[[workload]]\nkind = \"uniform\"\nm = 100\n")
    experiment, _ = load_sweep(path)
    a, b = experiment.panels
    assert isinstance(a.workload, Workload)
    assert (a.workload.kind, a.workload.alpha, a.warmup, b.warmup) == ("zipf", 2.0, 100, 100)
    assert all(s.exclude_warmup for s in a.series)
    with pytest.raises(ConfigError, match="exclude_warmup = true needs warmup"):  # the other half, as before
        path.write_text(SWEEP + "exclude_warmup = true\n[workload]\nm = 100\n")
        load_sweep(path)


# --- classify: --actions and --seed -------------------------------------------------------------


NATIVE = "accept src 10.0.0.0/8 dport 53 proto udp\ndrop proto tcp\n"
CLASSBENCH = ("@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t53 : 53\t0x11/0xFF\t0x0000/0x0000\n"
              "@0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x06/0xFF\t0x0000/0x0000\n")
NFT = ("table ip t {\n\tchain c {\n\t\ttype filter hook prerouting priority filter; policy accept;\n"
       "\t\tip saddr 10.0.0.0/8 udp dport 53 accept\n\t\tip protocol tcp drop\n\t}\n}\n")


@pytest.fixture
def files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    paths = {"native": tmp_path / "r.txt", "classbench": tmp_path / "cb.txt", "nft": tmp_path / "r.nft",
             "trace": tmp_path / "t.bin"}
    paths["native"].write_text(NATIVE)
    paths["classbench"].write_text(CLASSBENCH)
    paths["nft"].write_text(NFT)
    ok(capsys, ["classify", "gen-trace", "--rules", str(paths["native"]), "--packets", "3000",
                "--out", str(paths["trace"])])
    return paths


CLASSIFY = ["--packets", "3000", "--k", "2", "--no-measure", "--repeats", "1"]


@pytest.mark.parametrize("fmt", ["native", "nft"])
def test_classify_refuses_actions_with_rules_that_carry_actions(one_line_mistake: Mistake, files: dict[str, Path],
                                                                fmt: str, tmp_path: Path) -> None:
    rules = str(files[fmt])
    said = f"--actions has no effect with {fmt} rules ({rules} gives every rule its action; --actions is for " \
           "ClassBench filters, which have none)"
    one_line_mistake(["classify", "--rules", rules, "--actions", "random:0.3", *CLASSIFY], said)
    one_line_mistake(["classify", "--rules", rules, "--rule-format", fmt, "--actions", "accept", *CLASSIFY], said)
    one_line_mistake(["classify", "convert", "--rules", rules, "--actions", "accept", "--out",
                      str(tmp_path / "o.nft")], said)
    assert not (tmp_path / "o.nft").exists()


def test_classify_takes_actions_with_classbench_rules(capsys: pytest.CaptureFixture[str],
                                                      files: dict[str, Path]) -> None:
    doc = json.loads(ok(capsys, ["classify", "--rules", str(files["classbench"]), "--actions", "random:1",
                                 "--trace", str(files["trace"]), *CLASSIFY, "--json"]))
    assert doc["info"]["rules"] == 2


def test_gen_trace_refuses_actions_and_default(one_line_mistake: Mistake, files: dict[str, Path],
                                               tmp_path: Path) -> None:
    """Headers are drawn inside the rules' fields, whatever the actions: both options do nothing."""
    for flag, value in (("--actions", "accept"), ("--default", "drop")):
        one_line_mistake(["classify", "gen-trace", "--rules", str(files["classbench"]), flag, value, "--out",
                          str(tmp_path / "x.bin")], f"{flag} has no effect in classify gen-trace with --rules")


@pytest.mark.parametrize("body", [CLASSBENCH, NATIVE, NFT, "# comment\n\n" + CLASSBENCH, "\ufeff" + NFT,
                                  "default drop\n" + NATIVE, "  # c\n\n" + NFT])
def test_rule_format_detection_matches_the_reader(tmp_path: Path, body: str) -> None:
    """rule_file_format says ClassBench exactly where the Rust reader gives rules the --actions
    policy (and nft where it reads nft: an nft file read as native fails)."""
    path = tmp_path / "rules"
    path.write_text(body)

    def actions(policy: str) -> list[str]:
        w = _native.NftWorkload.load(str(path), None, {"format": "auto", "actions": policy, "default": "accept",
                                                       "generate": 0})
        return [row[-2] for row in w.rule_rows()]

    fmt = rule_file_format(str(path), "auto")
    assert (fmt == "classbench") == (actions("accept") != actions("random:1"))
    if fmt != "classbench":
        _native.NftWorkload.load(str(path), None, {"format": fmt, "actions": "accept", "default": "accept",
                                                   "generate": 0})


def test_classify_refuses_seed_where_nothing_is_drawn(one_line_mistake: Mistake, files: dict[str, Path],
                                                      tmp_path: Path) -> None:
    run = ["classify", "--rules", str(files["native"]), "--trace", str(files["trace"]), "--seed", "5", *CLASSIFY]
    one_line_mistake(run, "--seed has no effect with --trace and --dispatch rss:sip,dip,sport,dport,proto (it seeds "
                     "the packets generated without --trace and the random and two-choice dispatchers)")
    for dispatch in ("rss:sip", "spray", "rule", "rr"):
        one_line_mistake([*run, "--dispatch", dispatch],
                         f"--seed has no effect with --trace and --dispatch {dispatch} (")
    one_line_mistake(["classify", "bench", "--rules", str(files["native"]), "--trace", str(files["trace"]), "--seed",
                      "5", "--out", str(tmp_path / "b")], "--seed has no effect in classify bench with --trace")


@pytest.mark.parametrize("args", [["--dispatch", "random"], ["--dispatch", "two-choice:sip"], ["--no-trace"]])
def test_classify_takes_seed_where_it_draws(capsys: pytest.CaptureFixture[str], files: dict[str, Path],
                                            args: list[str]) -> None:
    trace = [] if args == ["--no-trace"] else ["--trace", str(files["trace"]), *args]
    doc = json.loads(ok(capsys, ["classify", "--rules", str(files["native"]), *trace, "--seed", "5", *CLASSIFY,
                                 "--json"]))
    assert doc["info"]["packets"] == 3000


def test_seeded_dispatchers_are_the_ones_whose_assignment_the_seed_changes(files: dict[str, Path]) -> None:
    w = _native.PacketWorkload.load(str(files["native"]), str(files["trace"]), {"rule_format": "auto"})
    w.calibrate(3000)
    for d in _native.classify_dispatchers():
        changed = w.assign(d["name"], 4, 1) != w.assign(d["name"], 4, 2)
        assert changed == (d["name"] in SEEDED_DISPATCHERS), d["name"]
