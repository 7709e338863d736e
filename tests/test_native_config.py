"""The typed config boundary, through ``superlinear._native`` directly: a misspelt or mistyped
key fails with one line naming the config and the key, a correct config runs, and
``config_defaults`` returns the defaults the code uses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from superlinear import _native
from superlinear._native import SuperlinearError

Cli = Callable[..., CompletedProcess[str]]
RULES = "accept src 1.2.3.4\ndrop dst 5.6.7.8\naccept proto udp dport 53\n"
TINY_RUN: dict[str, Any] = {"algo": "mtf", "dispatch": "hash", "k": 2, "requests": 2000,
                            "workload": {"kind": "zipf", "m": 200, "alpha": 1.1}}


def error_of(call: Callable[[], object]) -> str:
    with pytest.raises(SuperlinearError) as e:
        call()
    message = str(e.value)
    assert "\n" not in message, message
    return message


@pytest.fixture
def rules(tmp_path: Path) -> str:
    """A small rule file in the native format."""
    path = tmp_path / "small.rules"
    path.write_text(RULES)
    return str(path)


def synthetic() -> _native.PacketWorkload:
    return _native.PacketWorkload.synthetic({"rules": 50, "depth": 2}, 2000, 1)


# (config, call with a misspelt key, the key) for every config a domain takes.
MISSPELT: list[tuple[str, Callable[[str], object], str]] = [
    ("run", lambda rules: _native.run({**TINY_RUN, "mis_cycles": 5000}), "mis_cycles"),
    ("workload", lambda rules: _native.generate_keys({"kind": "zipf", "m": 10, "alhpa": 1.2}, 10, 1), "alhpa"),
    ("classify_load", lambda rules: _native.PacketWorkload.load(rules, None, {"rule_fromat": "native"}),
     "rule_fromat"),
    ("classify_synthetic", lambda rules: _native.PacketWorkload.synthetic({"rule": 50}, 100, 1), "rule"),
    ("classify_run", lambda rules: synthetic().run({"algo": "mrf", "workers": 2}), "workers"),
    ("nft_load", lambda rules: _native.NftWorkload.load(rules, None, {"default_action": "drop"}),
     "default_action"),
    ("cache_client", lambda rules: _native.CacheClient({"replica": ["127.0.0.1:1"], "dsn": "postgresql://x@h/d"}),
     "replica"),
    ("cache_bench", lambda rules: _native.config_check("cache_bench", {"thread": 2}), "thread"),
    ("latency_trace", lambda rules: _native.LatencyTrace.generate({"requests": 100, "burst_lenght": 4.0}),
     "burst_lenght"),
    ("attack_traffic", lambda rules: _native.sched_innocent_stats({"flow": 3}), "flow"),
    ("attack_sweep", lambda rules: _native.sched_sweep({"policy": "fcfs", "buffers": 64}), "buffers"),
    ("attack_key", lambda rules: _native.sched_key_attack({"adversery": "rotate"}), "adversery"),
    ("attack_classifier", lambda rules: _native.sched_classifier_attack({"estimater": "position"}), "estimater"),
]


@pytest.mark.parametrize(("config", "call", "key"), MISSPELT, ids=[m[0] for m in MISSPELT])
def test_a_misspelt_key_fails_with_one_line_naming_it(config: str, call: Callable[[str], object], key: str,
                                                     rules: str) -> None:
    message = error_of(lambda: call(rules))
    assert message.startswith(f"{config} config: unknown field '{key}' (expected one of: "), message


# (config, call with a value of the wrong type, the field as named in the message).
MISTYPED: list[tuple[str, Callable[[str], object], str]] = [
    ("run", lambda rules: _native.run({**TINY_RUN, "k": "abc"}), "k"),
    ("run", lambda rules: _native.run({**TINY_RUN, "workload": {"kind": "zipf", "m": "many"}}), "workload.m"),
    ("run", lambda rules: _native.run({**TINY_RUN, "modes": "projected"}), "modes"),
    ("classify_run", lambda rules: synthetic().run({"k": 1.5}), "k"),
    ("classify_load", lambda rules: _native.PacketWorkload.load(rules, None, {"generate": "lots"}), "generate"),
    ("cache_client", lambda rules: _native.CacheClient({"replicas": "127.0.0.1:1"}), "replicas"),
    ("cache_bench", lambda rules: _native.config_check("cache_bench", {"rows": [1]}), "rows"),
    ("latency_trace", lambda rules: _native.LatencyTrace.generate({"objects": "many"}), "objects"),
    ("attack_sweep", lambda rules: _native.sched_sweep({"attack_rates": [1.0, "x"]}), "attack_rates[1]"),
    ("attack_key", lambda rules: _native.sched_key_attack({"buffer": -1}), "buffer"),
    ("attack_classifier", lambda rules: _native.sched_classifier_attack({"policies": "fcfs"}), "policies"),
]


@pytest.mark.parametrize(("config", "call", "field"), MISTYPED, ids=[f"{m[0]}-{m[2]}" for m in MISTYPED])
def test_a_mistyped_value_fails_with_one_line_naming_the_field(config: str, call: Callable[[str], object],
                                                               field: str, rules: str) -> None:
    message = error_of(lambda: call(rules))
    assert message.startswith(f"{config} config: field '{field}': "), message


def test_none_means_the_default() -> None:
    a = _native.run({**TINY_RUN, "capacity": None, "workload": {**TINY_RUN["workload"], "path": None}})
    b = _native.run(TINY_RUN)
    assert a["projected"] is not None and b["projected"] is not None
    assert a["projected"]["worker_work"] == b["projected"]["worker_work"]


def test_correct_configs_still_run() -> None:
    r = _native.run(TINY_RUN)
    assert r["projected"] is not None and r["projected"]["requests"] == 2000
    raw = synthetic().run({"algo": "mrf", "dispatch": "rss", "k": 2, "modes": ["projected"], "stats": True})
    assert raw["projected"] is not None and raw["projected"]["requests"] == 2000 and len(raw["stats"]) == 2
    trace, bursty = _native.LatencyTrace.generate({"requests": 500, "objects": 20, "seed": 3})
    assert len(trace) == 500 and len(bursty) == 20
    sweep = _native.sched_sweep({"policy": "fcfs", "attack_rates": [10.0], "packets": 2000, "stats_samples": 5000})
    assert len(sweep["points"]) == 1 and sweep["bound_kind"] == "lower"


def test_every_config_has_defaults_and_unknown_names_fail() -> None:
    names = _native.config_names()
    assert "run" in names and "attack_classifier" in names
    for name in names:
        assert _native.config_check(name, {}) == _native.config_defaults(name)
    assert "unknown config 'runn'" in error_of(lambda: _native.config_defaults("runn"))  # type: ignore[arg-type]


def test_config_defaults_are_the_ones_the_code_uses(rules: str) -> None:
    run = _native.config_defaults("run")
    r = _native.run({"workload": {"kind": "uniform", "m": 50}, "requests": 1000})
    assert r["projected"] is not None
    assert (r["projected"]["k"], r["projected"]["requests"]) == (run["k"], 1000)
    assert r["measured"] is None and run["modes"] == ["projected"]
    assert _native.run({"workload": {"m": 50}, "requests": 10})["items"] == 50
    assert _native.run({"requests": 10})["items"] == run["workload"]["m"]

    load = _native.config_defaults("classify_load")
    assert _native.PacketWorkload.load(rules, None, {}).packets == load["generate"]

    gen = _native.config_defaults("latency_trace")
    trace, bursty = _native.LatencyTrace.generate({})
    assert (len(trace), len(bursty)) == (gen["requests"], gen["objects"])

    sweep_defaults = _native.config_defaults("attack_sweep")
    stats = _native.sched_innocent_stats({}, 200_000, 1 ^ 0x5EED)
    sweep = _native.sched_sweep({"policy": "wsjf", "attack_rates": [10.0], "packets": 2000})
    assert sweep["innocent_rate"] == pytest.approx(sweep_defaults["load"] * stats["r_max"])
    assert sweep["bits_min"] == 8 * 64 and stats["bits_max"] == 8 * sweep_defaults["bytes_max"]

    bench = _native.config_defaults("cache_bench")
    assert _native.config_check("cache_bench", {"threads": 2}) == {**bench, "threads": 2}


# The sweep TOML (the one config read from a file): its run-config keys come from the Rust run
# config, so a misspelt key fails with one line naming it, the CLI exiting 2.
SWEEP_GRID = 'algos = ["mtf"]\ndispatch = ["hash"]\nk = [1, 2]\nrequests = 2000\n'
MISSPELT_SWEEP = [
    ("top-level", SWEEP_GRID + 'mis_cycles = 5000\n[workload]\nm = 100\n', "unknown key(s) mis_cycles"),
    ("workload", SWEEP_GRID + '[workload]\nm = 100\nalhpa = 1.2\n', "workload: unknown key(s) alhpa"),
    ("second workload", SWEEP_GRID + '[[workload]]\nm = 100\n[[workload]]\nknid = "zipf"\nm = 100\n',
     "workload 2: unknown key(s) knid"),
]


@pytest.mark.parametrize(("where", "text", "fragment"), MISSPELT_SWEEP, ids=[m[0] for m in MISSPELT_SWEEP])
def test_a_misspelt_sweep_key_fails_with_one_line_naming_it(where: str, text: str, fragment: str, cli: Cli,
                                                            tmp_path: Path) -> None:
    cfg = tmp_path / "grid.toml"
    cfg.write_text(text)
    r = cli("sweep", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{cfg}: {fragment} (known: " in lines[0], lines[0]


def test_the_sweep_takes_every_run_config_field_it_does_not_set_itself(tmp_path: Path) -> None:
    from superlinear.engine.sweep import SET_BY_SWEEP, load_sweep

    run = _native.config_defaults("run")
    cfg = tmp_path / "grid.toml"
    for key in sorted(set(run) - SET_BY_SWEEP - {"algo", "dispatch", "k", "workload"}):
        value = run[key]
        literal = str(value).lower() if isinstance(value, bool) else repr(value)
        # A warm-up is served only when it is excluded (the sweep refuses one that would not be).
        line = f"{key} = {literal}\n" if key != "warmup" else "warmup = 100\nexclude_warmup = true\n"
        grid = SWEEP_GRID if key != "requests" else SWEEP_GRID.replace("requests = 2000", "")
        # A worker's cost is taken where a worker of the grid reads it (and refused elsewhere).
        grid = grid.replace('["mtf"]', '["mtf", "splay", "lru:10"]')
        cfg.write_text(f'{grid}{line}[workload]\nm = 100\nkind = {run["workload"]["kind"]!r}\n')
        experiment, _ = load_sweep(cfg)
        assert experiment.panels[0].workload.m == 100, key
    wrong = cfg.read_text().replace("requests = 2000", "requests = -5")
    cfg.write_text(wrong)
    with pytest.raises(SuperlinearError, match="requests"):
        load_sweep(cfg)


def test_python_dataclasses_default_as_rust_does() -> None:
    from dataclasses import asdict

    from superlinear.attack.classifier import ClassifierStudy
    from superlinear.attack.studies import SimStudy, Traffic, WorkerStudy
    from superlinear.cache.client import client_config
    from superlinear.classify.workload import DEFAULT_PACKETS, PacketWorkloadSpec
    from superlinear.engine.runs import RunSpec
    from superlinear.latency.sim import TraceSpec

    run = _native.config_defaults("run")
    assert RunSpec(run["algo"], run["dispatch"], run["k"]).to_native() == run
    assert asdict(TraceSpec()) == _native.config_defaults("latency_trace")
    assert Traffic().native() == _native.config_defaults("attack_traffic")
    sweep = _native.config_defaults("attack_sweep")
    sim = asdict(SimStudy())
    assert {k: sim[k] for k in ("load", "buffer", "packets", "width", "levels", "seed", "threads")} == \
        {k: sweep[k] for k in ("load", "buffer", "packets", "width", "levels", "seed", "threads")}
    assert sim["probe_jobs"] == sweep["probe_jobs"]
    key = _native.config_defaults("attack_key")
    worker = asdict(WorkerStudy())
    assert all(worker[k] == (tuple(v) if isinstance(v, list) else v) for k, v in key.items() if k in worker
               and k not in ("adversary", "attack_fractions")), (worker, key)
    classifier = ClassifierStudy().native()
    assert {k: v for k, v in classifier.items() if k not in ("adversaries", "attack_fractions")} == \
        {k: v for k, v in _native.config_defaults("attack_classifier").items()
         if k in classifier and k not in ("adversaries", "attack_fractions")}
    client = _native.config_defaults("cache_client")
    assert client_config([], "", "hash", 4, "t") == {**{k: client[k] for k in ("coalesce", "seed", "timeout_s")},
                                                     "replicas": [], "dsn": "", "router": "hash",
                                                     "db_connections": 4, "table": "t"}
    load, synthetic = _native.config_defaults("classify_load"), _native.config_defaults("classify_synthetic")
    spec = PacketWorkloadSpec()
    assert (spec.actions, spec.seed, DEFAULT_PACKETS) == (load["actions"], load["seed"], load["generate"])
    assert (spec.synthetic_rules, spec.depth, spec.flows_per_rule, spec.catch_all) == \
        (synthetic["rules"], synthetic["depth"], synthetic["flows_per_rule"], synthetic["catch_all"])


def test_wire_defaults_are_what_python_sent_before_they_moved_to_rust() -> None:
    # The attack's smallest packet and largest job (the CLI always sent 64 B and 10 µs) and the
    # cache client's timeout (the benchmarks always sent 5 s).
    traffic = _native.config_defaults("attack_traffic")
    assert (traffic["bytes_min"], traffic["job_max"]) == (64, 10.0)
    assert _native.config_defaults("attack_sweep")["bytes_min"] == 64
    assert _native.config_defaults("cache_client")["timeout_s"] == 5.0


def test_help_texts_show_the_rust_defaults(cli: Cli) -> None:
    alpha = _native.config_defaults("run")["workload"]["alpha"]
    assert f"(default {alpha:g})" in cli("run", "--help").stdout
    gen = _native.config_defaults("latency_trace")
    text = " ".join(cli("latency-sim", "gen", "--help").stdout.split())
    assert f"mean requests per burst (default {gen['burst_length']:g})" in text
    sweep = _native.config_defaults("attack_sweep")
    text = " ".join(cli("attack", "sim", "--help").stdout.split())
    assert f"innocent load r_I / r_max (default {sweep['load']:g})" in text
