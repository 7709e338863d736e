"""Options that only some settings use are refused, naming them, where they would do nothing:
``run --alpha`` without the zipf workload, ``--w``/``--rho`` beside a worker that does not read
them, ``--warmup`` without ``--exclude-warmup`` (and the same two in a sweep file), ``--requests``
beyond a ``--trace``, ``classify --actions`` with rule files that carry their own actions, and
``classify --seed`` where nothing is drawn, and ``predict``/``advise`` options of the other mode
(``--rho``/``--s`` with ``--rules``, ``--actions`` without) or of another worker (``--rho``
beside mtf). Each refusal is checked beside the combination that
does use the option, and each table the checks rest on against the engine itself."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest

from superlinear import _native
from superlinear.classify.cli import rule_file_format
from superlinear.cli import main
from superlinear.engine.runs import WORKER_PARAMETERS, Workload
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
    """The registry says (``reads``), per parameter, which workers' constructors read it: here each
    worker is timed with the parameter at 0 and at 5,000 cycles (a worker that reads it slows
    down tens of times at least; one that does not, not at all), so a worker added to the engine,
    or one that starts reading a parameter, fails this until its registry entry says so."""
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
        assert changed == d["seeded"], d["name"]


# --- predict and advise: the key-stream law's options and the classifier simulation's -------------


PREDICT = ["--k", "1,2", "--m", "200", "--requests", "2000"]


@pytest.mark.parametrize("command", ["predict", "advise"])
def test_predict_and_advise_refuse_the_other_modes_options(one_line_mistake: Mistake, files: dict[str, Path],
                                                           tmp_path: Path, command: str) -> None:
    out = ["--out", str(tmp_path / "o")]
    packets = [command, "--rules", str(files["classbench"]), "--trace", str(files["trace"]), "--k", "2", *out]
    one_line_mistake([*packets, "--rho", "5"], "--rho has no effect with --rules (it is the work per cache miss")
    one_line_mistake([*packets, "--rho", "0"], "--rho has no effect with --rules")
    if command == "predict":
        one_line_mistake([*packets, "--s", "0.1"], "--s has no effect with --rules (it is the serial fraction")
    one_line_mistake([command, *PREDICT, "--actions", "accept", *out],
                     "--actions has no effect without --rules (it names the actions of ClassBench filters")
    one_line_mistake([command, *PREDICT, "--sample", "100000", *out],
                     "--sample has no effect without --rules (it sizes the classifier simulation")
    if command == "advise":
        one_line_mistake([command, *PREDICT, "--verify", *out], "--verify has no effect without --rules")
    for rules in ("native", "nft"):
        one_line_mistake([*packets[:2], str(files[rules]), *packets[3:], "--actions", "accept"],
                         f"--actions has no effect with {rules} rules")
    for algo in ([], ["--algo", "splay"]):
        named = "mtf, the default" if not algo else "splay"
        one_line_mistake([command, *PREDICT, *algo, "--rho", "4", *out], f"--rho 4 has no effect with --algo {named} (")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["predict", "advise"])
def test_predict_and_advise_take_each_modes_options(capsys: pytest.CaptureFixture[str], files: dict[str, Path],
                                                    tmp_path: Path, command: str) -> None:
    out = ["--out", str(tmp_path / "o"), "--json"]
    doc = json.loads(ok(capsys, [command, *PREDICT, "--algo", "lru:50", "--rho", "4", *out]))
    assert doc["config"]["rho"] == 4
    doc = json.loads(ok(capsys, [command, "--rules", str(files["classbench"]), "--actions", "accept", "--trace",
                                 str(files["trace"]), "--k", "2", *out]))
    assert doc["rows"]


def test_rho_changes_the_law_only_for_workers_with_misses() -> None:
    """What the --rho refusal rests on: the key-stream law's work depends on ρ only for caches."""
    workload = asdict(Workload("uniform", 200))
    for algo, uses in (("mtf", False), ("splay", False), ("lru:50", True)):
        work = [_native.LawModel.from_workload(workload, 2000, 1, algo, rho).baseline()["work"] for rho in (0, 9)]
        assert (work[0] != work[1]) == uses, algo


@pytest.mark.parametrize("command", [["xdp", "load", "--iface", "lo"], ["xdp", "update", "--iface", "lo"],
                                     ["xdp-bench"], ["nft-bench"]])
def test_datapath_commands_refuse_actions_with_rules_that_carry_actions(one_line_mistake: Mistake,
                                                                        files: dict[str, Path],
                                                                        command: list[str]) -> None:
    """Refused before anything is loaded or any namespace made (no privileges needed)."""
    trace = [] if command[0] == "xdp" else ["--trace", str(files["trace"])]
    for fmt in ("native", "nft"):
        one_line_mistake([*command, "--rules", str(files[fmt]), *trace, "--actions", "accept"],
                         f"--actions has no effect with {fmt} rules ({files[fmt]} gives every rule its action")


def test_nft_bench_takes_actions_with_classbench_rules(capsys: pytest.CaptureFixture[str],
                                                       files: dict[str, Path]) -> None:
    table = ok(capsys, ["nft-bench", "--rules", str(files["classbench"]), "--actions", "accept", "--emit", "-"])
    assert "counter accept" in table and "counter drop" not in table.split("chain classify", 1)[1]


# --- --alpha and --seed in predict and advise; --seed in run ------------------------------------


@pytest.mark.parametrize("command", ["predict", "advise"])
def test_predict_and_advise_refuse_alpha_without_zipf(one_line_mistake: Mistake, capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path, command: str) -> None:
    out = ["--out", str(tmp_path / "o")]
    one_line_mistake([command, *PREDICT, "--alpha", "1.2", *out], "--alpha has no effect with --workload uniform, "
                     "the default (it is the exponent of --workload zipf)")
    one_line_mistake([command, *PREDICT, "--workload", "uniform", "--alpha", "1.2", *out],
                     "--alpha has no effect with --workload uniform (")
    doc = json.loads(ok(capsys, [command, *PREDICT, "--workload", "zipf", "--alpha", "1.2", *out, "--json"]))
    assert doc["config"]["workload"]["alpha"] == 1.2


def test_run_and_predict_refuse_seed_with_a_trace_behind_round_robin(one_line_mistake: Mistake, keys: Path,
                                                                      tmp_path: Path) -> None:
    said = "--seed has no effect with --trace and --dispatch rr (it seeds the keys generated without --trace and " \
           "the hash and random dispatchers)"
    one_line_mistake(["run", "--trace", str(keys), "--dispatch", "rr", "--seed", "5", "--k", "2"], said)
    one_line_mistake(["predict", "--trace", str(keys), "--dispatch", "rr", "--seed", "5", "--k", "2", "--out",
                      str(tmp_path / "o")], said)


@pytest.mark.parametrize("args", [["--trace", "KEYS", "--dispatch", "hash"],
                                  ["--trace", "KEYS", "--dispatch", "random"],
                                  ["--dispatch", "rr", "--requests", "500"]])
def test_run_and_predict_take_seed_where_it_draws(capsys: pytest.CaptureFixture[str], keys: Path, tmp_path: Path,
                                                  args: list[str]) -> None:
    args = [str(keys) if a == "KEYS" else a for a in args]
    doc = json.loads(ok(capsys, ["run", *args, "--seed", "5", "--k", "2", "--repeats", "1", "--json"]))
    assert doc["spec"]["seed"] == 5
    doc = json.loads(ok(capsys, ["predict", *args, "--seed", "5", "--k", "2", "--out", str(tmp_path / "o"), "--json"]))
    assert doc["config"]["seed"] == 5


def test_engine_seeded_dispatchers_are_the_ones_whose_assignment_the_seed_changes(keys: Path) -> None:
    workload = asdict(Workload("trace", 0, 1.0, str(keys)))
    for d in _native.dispatchers():
        loads = [[w["requests"] for w in _native.LawModel.from_workload(workload, 0, seed, "mtf", 0)
                  .point(d["name"], 4, 0.0)["workers"]] for seed in (1, 2)]
        assert (loads[0] != loads[1]) == d["seeded"], d["name"]


def test_predict_rules_refuses_seed_behind_a_dispatcher_that_draws_nothing(
        one_line_mistake: Mistake, capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path) -> None:
    run = ["predict", "--rules", str(files["native"]), "--trace", str(files["trace"]), "--k", "2", "--out",
           str(tmp_path / "o")]
    one_line_mistake([*run, "--seed", "4"], "--seed has no effect with --rules and --dispatch rule, the default (it "
                     "seeds the random and two-choice dispatchers)")
    one_line_mistake([*run, "--dispatch", "rss:sip", "--seed", "4"], "--dispatch rss:sip (")
    assert json.loads(ok(capsys, [*run, "--dispatch", "random", "--seed", "4", "--json"]))["config"]["seed"] == 4


# --- reproduce: options a figure's driver does not read ------------------------------------------


@pytest.mark.parametrize("figure", ["fig11", "cache-skew", "cache-sensitivity"])
@pytest.mark.parametrize("flag", [["--no-measure"], ["--exclude-warmup"], ["--timed-window", "2"]])
def test_reproduce_refuses_engine_options_for_the_cache_tier(one_line_mistake: Mistake, tmp_path: Path, figure: str,
                                                             flag: list[str]) -> None:
    """Refused before any server is started."""
    one_line_mistake(["reproduce", figure, "--quick", *flag, "--out", str(tmp_path / "o")],
                     f"{flag[0]} has no effect with reproduce {figure} (its figures are wall-clock measurements of "
                     "real memcached and PostgreSQL servers)")
    assert not (tmp_path / "o").exists()


def test_no_measure_leaves_out_the_panels_made_of_real_thread_runs(one_line_mistake: Mistake, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from superlinear.experiments import REGISTRY
    from superlinear.experiments.cli import _without_real_thread_panels

    one_line_mistake(["reproduce", "fig5", "--quick", "--panel", "c", "--no-measure", "--out", str(tmp_path / "o")],
                     "--no-measure: panel c of fig5 is made of real-thread runs only")
    fig5 = REGISTRY["fig5"](True)
    assert [p.name for p in _without_real_thread_panels(fig5, "fig5", []).panels] == ["a", "b", "d", "e"]
    assert "leaves out panel c of fig5" in capsys.readouterr().err
    assert _without_real_thread_panels(fig5, "fig5", ["a"]) is fig5


# --- xdp: one parser, five actions ---------------------------------------------------------------


@pytest.mark.parametrize(("args", "said"), [
    (["update", "--iface", "lo", "--rules", "R", "--workers", "8"], "--workers has no effect in xdp update (it is for "
                                                                    "xdp load)"),
    (["stats", "--algo", "mrf"], "--algo has no effect in xdp stats (it is for xdp load)"),
    (["unload", "--iface", "lo", "--queue-size", "5"], "--queue-size has no effect in xdp unload"),
    (["list", "--iface", "lo"], "--iface has no effect in xdp list (it is for xdp load, stats, update, unload)"),
    (["load", "--rules", "R", "--iface", "lo", "--name", "x"], "--name has no effect in xdp load (it is for xdp "
                                                               "stats, update, unload)"),
    (["update", "--rules", "R", "--iface", "lo", "--json"], "--json has no effect in xdp update"),
    (["load", "--rules", "R", "--iface", "lo", "--trace", "T"], "--trace has no effect in xdp load without "
                                                                "--dispatch rule"),
    (["stats", "--json", "--watch", "2"], "--watch has no effect in xdp stats with --json"),
    (["stats", "--json", "--top", "3"], "--top has no effect in xdp stats with --json"),
    (["unload", "--all", "--iface", "lo"], "--iface has no effect in xdp unload with --all"),
])
def test_xdp_actions_refuse_the_options_they_do_not_read(one_line_mistake: Mistake, files: dict[str, Path],
                                                          args: list[str], said: str) -> None:
    """Refused before the rules are read or anything is loaded (no privileges needed)."""
    paths = {"R": str(files["native"]), "T": str(files["trace"])}
    one_line_mistake(["xdp", *[paths.get(a, a) for a in args]], said)


def test_xdp_actions_read_what_they_are_given() -> None:
    """The table the refusals rest on names only options the parser has, and every option is read
    by some action."""
    from superlinear.cli import build_parser
    from superlinear.xdp.cli import USED

    xdp = build_parser()._subparsers._group_actions[0].choices["xdp"]  # type: ignore[union-attr]
    dests = {a.dest for a in xdp._actions if a.option_strings and a.dest != "help"}
    assert set().union(*USED.values()) == dests


@pytest.mark.parametrize(("args", "said"), [
    (["bench", "--rules", "N", "--trace", "T", "--warmup", "100", "--out", "B"],
     "--warmup has no effect in classify bench with --rules"),
    (["bench", "--rules", "N", "--trace", "T", "--calibration", "500", "--out", "B"],
     "--calibration has no effect in classify bench with --rules"),
    (["--rules", "N", "--trace", "T", *CLASSIFY, "--json", "--top", "5"], "--top has no effect with --json"),
    (["--rules", "N", "--trace-format", "pcap", *CLASSIFY], "--trace-format has no effect in classify run without "
                                                            "--trace"),
    (["bench", "--rules", "N", "--trace-format", "pcap", "--out", "B"], "--trace-format has no effect in classify "
                                                                        "bench without --trace"),
    (["convert", "--rules", "C", "--format", "classbench", "--actions", "random:0.3", "--out", "B"],
     "--actions has no effect with --format classbench (ClassBench filters carry no actions"),
    (["convert", "--rules", "N", "--format", "classbench", "--default", "drop", "--out", "B"],
     "--default has no effect with --format classbench"),
])
def test_classify_refuses_what_the_action_does_not_read(one_line_mistake: Mistake, files: dict[str, Path],
                                                        tmp_path: Path, args: list[str], said: str) -> None:
    paths = {"N": str(files["native"]), "C": str(files["classbench"]), "T": str(files["trace"]),
             "B": str(tmp_path / "b")}
    one_line_mistake(["classify", *[paths.get(a, a) for a in args]], said)
    assert not (tmp_path / "b").exists()


# --- latency-sim: --seed with a trace ------------------------------------------------------------


def test_latency_sim_refuses_seed_with_a_trace_where_nothing_is_drawn(one_line_mistake: Mistake,
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    trace = tmp_path / "t.txt"
    trace.write_text("".join(f"{i % 7} {i}\n" for i in range(400)))
    out = ["--out", str(tmp_path / "o")]
    one_line_mistake(["latency-sim", "run", "--trace", str(trace), "--seed", "9", *out],
                     "--seed has no effect with --trace and without --belatedly (it seeds a generated trace and "
                     "Belatedly's rounding)")
    one_line_mistake(["latency-sim", "bench", "--trace", str(trace), "--seed", "9", *out],
                     "--seed has no effect with --trace (it seeds a generated trace)")
    doc = json.loads(ok(capsys, ["latency-sim", "run", "--trace", str(trace), "--seed", "9", "--belatedly",
                                 "--cache-size", "2", "--z", "10", "--policies", "lru", *out, "--json"]))
    assert doc["rows"]


# --- attack: estimator, rule files, HFFS sizes ------------------------------------------------------


@pytest.mark.parametrize(("args", "said"), [
    (["classifier", "--learn", "ewma"], "--learn has no effect with --estimator position (it is for --estimator "
                                        "learned)"),
    (["classifier", "--rule-format", "nft"], "--rule-format has no effect without --rules"),
    (["classifier", "--actions", "accept"], "--actions has no effect without --rules"),
    (["classifier", "--default", "drop"], "--default has no effect without --rules"),
    (["classifier", "--rules", "N", "--actions", "random:0.3"], "--actions has no effect with native rules"),
    (["classifier", "--rules", "N", "--trace-format", "pcap"], "--trace-format has no effect without --trace"),
    (["worker", "--workload", "uniform", "--alpha", "2"], "--alpha has no effect with --workload uniform (it is the "
                                                          "exponent of --workload zipf)"),
    (["sim", "--policies", "fcfs,fq", "--width", "8"], "--width has no effect with --policies fcfs,fq (it sizes the "
                                                       "HFFS queue of sjf, wsjf, wsjf-inorder)"),
    (["sim", "--policies", "fcfs", "--levels", "3"], "--levels has no effect with --policies fcfs"),
    (["bench-queue", "--queues", "binary-heap,btree", "--width", "8"], "--width has no effect with --queues "
                                                                       "binary-heap,btree"),
])
def test_attack_refuses_what_its_mode_does_not_read(one_line_mistake: Mistake, files: dict[str, Path],
                                                    tmp_path: Path, args: list[str], said: str) -> None:
    out = ["--quick", "--out", str(tmp_path / "o")]
    one_line_mistake(["attack", *[str(files["native"]) if a == "N" else a for a in args], *out], said)
    assert not (tmp_path / "o").exists()


def test_hffs_policies_are_registered_policies() -> None:
    """The --width refusal's table names policies the simulator has (a renamed one would make the
    refusal fire for every run of it)."""
    from superlinear.attack.cli import HFFS_POLICIES
    from superlinear.attack.studies import ALL_POLICIES

    assert set(ALL_POLICIES) >= HFFS_POLICIES


# --- nft-bench and xdp-bench ----------------------------------------------------------------------


def test_benches_refuse_what_their_inputs_do_not_use(one_line_mistake: Mistake, files: dict[str, Path],
                                                     tmp_path: Path) -> None:
    (tmp_path / "cb").mkdir()
    for name in ("acl1_5k", "fw1_5k"):
        (tmp_path / "cb" / name).write_text(CLASSBENCH)
    data = ["--data", str(tmp_path / "cb")]
    for bench in ("nft-bench", "xdp-bench"):
        one_line_mistake([bench, *data, "--name", "X"], "--name has no effect with --data (it labels the rule set of "
                         "--rules")
    one_line_mistake(["nft-bench", "--rules", str(files["native"]), "--trace", str(files["trace"]), "--seed", "5"],
                     "--seed has no effect with --dispatch rss (it seeds the random and two-choice dispatchers")
    one_line_mistake(["nft-bench", *data, "--sets", "acl1,fw1", "--emit", "-"],
                     "--emit writes one rule set's table: name one with --sets (not acl1,fw1)")


def test_cache_commands_refuse_dir_beside_named_servers(one_line_mistake: Mistake, tmp_path: Path) -> None:
    """Refused before any connection is tried (the addresses here lead nowhere)."""
    dsn = ["--postgres", "postgresql://nobody@127.0.0.1:1/db"]
    folder = ["--dir", str(tmp_path / "services")]
    one_line_mistake(["cache", "bench", "--memcached", "127.0.0.1:1", *dsn, *folder],
                     "--dir has no effect with --memcached and --postgres (it is the folder of the servers")
    one_line_mistake(["cache", "load", *dsn, *folder, "--rows", "10"], "--dir has no effect with --postgres (")
    assert not (tmp_path / "services").exists()


def test_cache_up_refuses_replica_options_without_replicas(one_line_mistake: Mistake, tmp_path: Path) -> None:
    """Refused before anything starts (no folder is made)."""
    folder = ["--dir", str(tmp_path / "services")]
    for flag in (["--memory-mb", "64"], ["--threads", "2"], ["--allow-many"]):
        one_line_mistake(["cache", "up", "--replicas", "0", *folder, *flag],
                         f"{flag[0]} has no effect with --replicas 0 (it is for the memcached replicas")
    assert not (tmp_path / "services").exists()


@pytest.mark.parametrize(("studies", "flag", "said"), [
    ("check", ["--localities", "none"], "--localities has no effect with --studies check (it is for the cost study)"),
    ("check", ["--workers", "64"], "--workers has no effect with --studies check (it is for the work study)"),
    ("throughput", ["--cpu", "0"], "--cpu has no effect with --studies throughput (it is for the check, cost and "
                                   "work studies)"),
    ("check,cost", ["--senders", "2"], "--senders has no effect with --studies check,cost (it is for the throughput "
                                       "study)"),
    ("work", ["--repeats", "2"], "--repeats has no effect with --studies work"),
    ("cost", ["--no-nft", "--duration", "2"], "--duration has no effect with --studies cost and --no-nft (it is for "
                                              "the cost and throughput studies (in the cost study, for nftables'"),
])
def test_xdp_bench_refuses_options_of_the_studies_left_out(one_line_mistake: Mistake, files: dict[str, Path],
                                                           studies: str, flag: list[str], said: str) -> None:
    one_line_mistake(["xdp-bench", "--rules", str(files["native"]), "--trace", str(files["trace"]), "--studies",
                      studies, *flag], said)


def test_xdp_bench_study_table_names_its_options() -> None:
    from superlinear.cli import build_parser
    from superlinear.xdp.bench import STUDIES
    from superlinear.xdp.cli import BENCH_STUDY_OPTIONS

    bench = build_parser()._subparsers._group_actions[0].choices["xdp-bench"]  # type: ignore[union-attr]
    dests = {a.dest for a in bench._actions}
    assert set(BENCH_STUDY_OPTIONS) <= dests
    assert all(set(users) <= set(STUDIES) for users in BENCH_STUDY_OPTIONS.values())


def test_xdp_bench_duration_stays_with_the_cost_study_while_nftables_runs() -> None:
    """--duration times nftables' runs in the cost study: refused there only with --no-nft."""
    from functools import partial

    from superlinear.xdp.cli import BENCH_STUDY_OPTIONS, _unless_studies

    refused = partial(_unless_studies, dest="duration", users=BENCH_STUDY_OPTIONS["duration"])
    assert refused(argparse.Namespace(studies="cost", no_nft=False)) is None
    assert refused(argparse.Namespace(studies="cost", no_nft=True)) == "with --studies cost and --no-nft"
    assert refused(argparse.Namespace(studies="cost,throughput", no_nft=True)) is None
    assert refused(argparse.Namespace(studies="check", no_nft=False)) == "with --studies check"


@pytest.mark.parametrize(("args", "message"), [
    # An empty entry was dropped, and a repeated one ran (and printed) its series twice.
    (["latency-sim", "run", "--policies", "lru,,lfu"], "--policies: empty entry in 'lru,,lfu'"),
    (["latency-sim", "run", "--policies", "lru,lru"], "--policies: lru given more than once"),
    (["latency-sim", "run", "--z", "2,2"], "--z: 2 given more than once"),
    (["attack", "sim", "--policies", "fcfs,,fq"], "--policies: empty entry"),
    (["law", "--k", "2,1,1"], "--k: 1 given more than once"),
    (["predict", "--workload", "zipf", "--m", "100", "--requests", "1000", "--k", "4,4,2"], "--k: 4 given more"),
    (["advise", "--candidates", "hash,", "--workload", "zipf", "--m", "100", "--requests", "1000"],
     "--candidates: empty entry"),
    (["cache", "advise", "--routers", "hash,,random", "--items", "20", "--k", "1,2"], "--routers: empty entry"),
    (["classify", "bench", "--algo", "mrf,mrf"], "--algo: mrf given more than once"),
    (["nft-bench", "--data", ".", "--sets", "acl1,,fw1"], "--sets: empty entry"),
    (["xdp", "stats", "--name", "slnft-rx@x", "--iface", "lo"], "--iface has no effect in xdp stats with --name"),
    # An empty --out once meant the default folder (or the current one).
    (["reproduce", "fig5", "--quick", "--out", ""], "--out: empty (give "),
    (["latency-sim", "run", "--requests", "1000", "--out", " "], "--out: empty (give "),
    # `--out -` is standard output where a file is written (`classify convert`); it made a folder "-".
    (["predict", "--out", "-"], "--out -: this command writes a folder of results, not standard output"),
])
def test_list_options_refuse_empty_and_repeated_entries(one_line_mistake: Mistake, args: list[str],
                                                        message: str) -> None:
    one_line_mistake(args, message)
