"""``superlinear sweep CONFIG.toml``: any grid of algorithm × dispatcher × workload × k, declared
in a TOML file and run by the shared experiment driver.

Example::

    name = "lists"                 # output folder name (default: the file's stem)
    algos = ["mtf", "static"]      # registry names; caches as "lru:CAPACITY"
    dispatch = ["hash", "rr"]
    k = [1, 2, 4, 8, 16]
    requests = 200000             # optional: default 100000 (a trace must hold this many keys)
    # optional: seed, warmup with exclude_warmup = true, compare_cycles, miss_cycles, sharded,
    # repeats (independent runs of every point: each figure is their median, with their range;
    # default 3, --repeats overrides)

    [workload]                     # or several [[workload]] tables, one panel each
    kind = "zipf"                  # uniform | zipf | trace (optional: default uniform)
    m = 100000
    alpha = 1.01                   # for kind = "zipf" only
    # path = "keys.bin"            # for kind = "trace"
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from superlinear import _native
from superlinear.common.args import MAX_REPEATS
from superlinear.common.defaults import config_defaults
from superlinear.common.input_files import has_kind, kind_words, read_input_text
from superlinear.engine.runs import (
    MAX_WORKER_CYCLES,
    WORKER_PARAMETER_KEYS,
    WORKER_PARAMETERS,
    RunSpec,
    SuperlinearError,
    Workload,
    check_run_size,
)
from superlinear.experiments.spec import Experiment, Panel, Series
from superlinear.output.paths import plain_name

if TYPE_CHECKING:
    from superlinear._native import ConfigName

#: The run config's defaults (crates/core): the sweep's optional keys and their values.
RUN_DEFAULTS = config_defaults("run")
#: Run config fields the sweep sets itself: ``algos`` names the workers (caches as ``lru:C``, which
#: gives the capacity), ``measure`` picks the modes, and the driver chooses the parallelism and
#: each run's timed window (the panel's baseline and point windows).
SET_BY_SWEEP = {"algo", "capacity", "modes", "parallel", "min_timed_ms"}
#: The sweep's own keys: its name, the grid axes (``dispatch`` and ``k`` as lists) and ``measure``.
SWEEP_KEYS = {"name", "algos", "dispatch", "k", "measure"}
TOP_KEYS = SWEEP_KEYS | (set(RUN_DEFAULTS) - SET_BY_SWEEP)
WORKLOAD_KEYS = set(config_defaults("workload"))


class ConfigError(SuperlinearError):
    """A sweep file that cannot be used; the message names the file and the problem."""


def _shown(value: Any) -> str:
    """A value of the file as TOML writes it (``true``, ``"x"``, ``[1, 2]``), not as Python does."""
    return json.dumps(value, default=str, ensure_ascii=False)


def _want(path: Path, table: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any = None,
          where: str = "") -> Any:
    """``table[key]`` of ``kind`` (``default`` where missing, None: required); ``where`` names the
    table in errors (``workload 2: ``)."""
    if key not in table:
        if default is None:
            raise ConfigError(f"{path}: {where}missing required key '{key}'")
        return default
    value = table[key]
    if not has_kind(value, kind):
        raise ConfigError(f"{path}: {where}key '{key}' must be {kind_words(kind)}, got {_shown(value)}")
    return value


def _positive_ints(path: Path, key: str, values: list[Any]) -> tuple[int, ...]:
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values):
        raise ConfigError(f"{path}: '{key}' must be a non-empty list of positive integers, got {_shown(values)}")
    return tuple(values)


#: How the config check's value kinds (Rust's types, as serde names them) read in a sweep file.
_KIND_WORDS = {"usize": "a whole number ≥ 0", "u64": "a whole number ≥ 0", "u32": "a whole number ≥ 0",
               "u16": "a whole number ≥ 0", "u8": "a whole number ≥ 0", "i64": "a whole number",
               "f64": "a number", "f32": "a number", "a boolean": "true or false"}
_SERDE_FIELD = re.compile(r"field '(?P<key>[^']+)': invalid (?:value|type): (?P<got>.+), expected (?P<kind>.+)$")


def _check(path: Path, name: ConfigName, table: dict[str, Any]) -> None:
    """Rust's own check of a run config's fields: a wrong type or range, in one line, in the
    sweep file's words (its keys and value kinds, not Rust's struct and type names)."""
    try:
        _native.config_check(name, table)
    except SuperlinearError as e:
        match = _SERDE_FIELD.search(str(e))
        if match is None:
            raise ConfigError(f"{path}: {e}") from None
        where = "workload: " if name == "workload" else ""
        kind = _KIND_WORDS.get(match["kind"], match["kind"])
        raise ConfigError(f"{path}: {where}key '{match['key']}' must be {kind}, got {match['got']}") from None


def load_sweep(path: Path) -> tuple[Experiment, bool]:
    """Parses and validates a sweep file; returns the experiment and whether to measure."""
    text = read_input_text(path, "the sweep's TOML file")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # tomllib names the line but not what is on it ("Cannot overwrite a value": a key given twice).
        at = re.search(r"at line (\d+)", str(e))
        lines = text.split("\n")  # as tomllib counts lines: splitlines() splits at more
        line = lines[int(at.group(1)) - 1].strip() if at and 0 < int(at.group(1)) <= len(lines) else ""
        raise ConfigError(f"{path}: invalid TOML: {e}" + (f": {line[:80]}" if line else "")) from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(f"{path}: invalid sweep file (arrays or tables nested too deeply)") from None
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(TOP_KEYS))})")
    repeats = doc.get("repeats")
    if isinstance(repeats, int) and not isinstance(repeats, bool) and not 1 <= repeats <= MAX_REPEATS:
        # Before the core's check of the run config, whose range (a whole number ≥ 0) is not a sweep's.
        raise ConfigError(f"{path}: 'repeats' must be 1 to {MAX_REPEATS:,} (as --repeats), got {repeats:,}")
    _check(path, "run", {k: v for k, v in doc.items() if k in RUN_DEFAULTS and k not in SWEEP_KEYS | {"workload"}})
    algos = _want(path, doc, "algos", list)
    if not algos or not all(isinstance(a, str) for a in algos):
        raise ConfigError(f"{path}: 'algos' must be a non-empty list of names")
    canonical = []  # as the core spells them: lru:+10 and lru:010 are lru:10
    for a in algos:
        try:
            canonical.append(_native.check_algo(a))
        except SuperlinearError as e:
            raise ConfigError(f"{path}: algos: {e}") from None
    known_dispatch = {d["name"]: d["name"] for d in _native.dispatchers()}
    for d in _native.dispatchers():
        for alias in d["aliases"]:
            known_dispatch[alias] = d["name"]
    dispatch = _want(path, doc, "dispatch", list)
    if not dispatch or not all(isinstance(d, str) for d in dispatch):
        raise ConfigError(f"{path}: 'dispatch' must be a non-empty list of names")
    for d in dispatch:
        if d not in known_dispatch:
            known = ", ".join(sorted(known_dispatch))
            raise ConfigError(f"{path}: dispatch: unknown dispatcher {d!r} (known: {known})")
    ks = _positive_ints(path, "k", _want(path, doc, "k", list))
    # A name twice would run its series twice and count them as independent repeats (a cache's
    # capacity compared as a number: lru:10, lru:+10 and lru:010 are one cache).
    listed: tuple[tuple[str, list[str]], ...] = (
        ("algos", canonical), ("dispatch", [known_dispatch[d] for d in dispatch]),
        ("k", [str(k) for k in ks]))
    for key, names in listed:
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            alias = " (an alias names the same dispatcher)" if key == "dispatch" else ""
            raise ConfigError(f"{path}: '{key}' lists {', '.join(twice)} more than once{alias}")
    for dest, (what, users) in WORKER_PARAMETERS.items():
        key = WORKER_PARAMETER_KEYS[dest]
        if isinstance(doc.get(key), int) and doc[key] > MAX_WORKER_CYCLES:
            raise ConfigError(f"{path}: '{key}' must be at most {MAX_WORKER_CYCLES:,} cycles, got {doc[key]:,}")
        if key in doc and not any(a.split(":", 1)[0] in users for a in algos):
            raise ConfigError(f"{path}: '{key}' has no effect with algos {', '.join(algos)} (it is the cycles "
                              f"{what}, used by {', '.join(sorted(users))})")
    requests = _want(path, doc, "requests", int, RUN_DEFAULTS["requests"])
    if requests <= 0:
        raise ConfigError(f"{path}: key 'requests' must be a whole number ≥ 1, got {requests}")
    workloads_raw = _want(path, doc, "workload", (dict, list))
    workloads_list = [workloads_raw] if isinstance(workloads_raw, dict) else workloads_raw
    if not workloads_list:
        raise ConfigError(f"{path}: 'workload' must hold at least one workload table")
    sharded = _want(path, doc, "sharded", bool, RUN_DEFAULTS["sharded"])
    if sharded:
        affine = {d["name"] for d in _native.dispatchers() if d["key_affine"]}
        bad_dispatch = [d for d in dispatch if known_dispatch[d] not in affine]
        if bad_dispatch:
            raise ConfigError(
                f"{path}: sharded = true needs key-affine dispatchers ({', '.join(sorted(affine))}); "
                f"{', '.join(bad_dispatch)} send a key to any worker"
            )
    exclude_warmup = _want(path, doc, "exclude_warmup", bool, RUN_DEFAULTS["exclude_warmup"])
    if "warmup" in doc and not exclude_warmup:
        raise ConfigError(f"{path}: warmup has no effect without exclude_warmup = true (without it no warm-up is "
                          "served: every request counts, from a cold start)")
    # The first structure that does not adapt (static list, tree, no cache) is the baseline of
    # the "vs static k=1" column, as in Fig. 5.
    adapts = {a["name"]: a["self_adjusting"] for a in _native.algorithms()}
    static = next((a for a in algos if not adapts[a.split(":", 1)[0]]), None)
    panels: list[Panel] = []
    for i, w in enumerate(workloads_list):
        where = f"workload {i + 1}: " if len(workloads_list) > 1 else "workload: "
        if not isinstance(w, dict):
            raise ConfigError(f"{path}: {where}every [[workload]] must be a table, got {_shown(w)}")
        bad = set(w) - WORKLOAD_KEYS
        if bad:
            known = ", ".join(sorted(WORKLOAD_KEYS))
            raise ConfigError(f"{path}: {where}unknown key(s) {', '.join(sorted(bad))} (known: {known})")
        _check(path, "workload", w)
        kind = _want(path, w, "kind", str, RUN_DEFAULTS["workload"]["kind"], where)
        if kind not in ("uniform", "zipf", "trace"):
            raise ConfigError(f"{path}: {where}kind must be uniform, zipf or trace, got {_shown(kind)}")
        wpath = None
        if kind == "trace":
            unused = sorted(set(w) & {"m", "alpha"})
            if unused:
                raise ConfigError(f"{path}: {where}{', '.join(unused)} has no effect with kind = \"trace\" "
                                  "(it shapes a generated workload)")
            given = _want(path, w, "path", str, where=where)
            if not given.strip():  # it named the sweep file's own folder
                raise ConfigError(f"{path}: {where}path is empty (name the key trace, relative to this file)")
            wpath = str((path.parent / given).resolve())
            if Path(wpath).is_dir() or not Path(wpath).exists():
                problem = "is a folder, not a key trace" if Path(wpath).is_dir() else "does not exist"
                raise ConfigError(f"{path}: {where}path {wpath} {problem}")
            m = 0
        else:
            if "path" in w:
                raise ConfigError(f"{path}: {where}path has no effect with kind = \"{kind}\" (it names the keys "
                                  "of kind = \"trace\")")
            m = _want(path, w, "m", int, where=where)
            if m <= 0:
                raise ConfigError(f"{path}: {where}m must be positive, got {m}")
        if kind == "uniform" and "alpha" in w:
            raise ConfigError(f"{path}: {where}alpha has no effect with kind = \"uniform\" (it is the exponent of "
                              "kind = \"zipf\")")
        alpha = float(_want(path, w, "alpha", (int, float), RUN_DEFAULTS["workload"]["alpha"], where))
        if kind == "zipf" and alpha <= 0:
            raise ConfigError(f"{path}: {where}zipf alpha must be positive, got {alpha}")
        workload = Workload(kind, m, alpha, wpath)
        if any(p.workload == workload for p in panels):
            # It would run one panel twice, as panels a and b.
            raise ConfigError(f"{path}: two [[workload]] tables are the same (each is one panel)")
        caps = [int(a.split(":", 1)[1]) for a in algos if ":" in a]
        panels.append(Panel(
            name=chr(ord("a") + i) if len(workloads_list) > 1 else "a",
            title=f"{workload.label()}" + (f" (m = {m:,})" if m else f" ({Path(wpath or '').name})"),
            workload=workload,
            series=tuple(Series(a, d, exclude_warmup) for a in algos for d in dispatch),
            ks=ks,
            requests=requests,
            warmup=_want(path, doc, "warmup", int, RUN_DEFAULTS["warmup"]),
            compare_cycles=_want(path, doc, "compare_cycles", int, RUN_DEFAULTS["compare_cycles"]),
            miss_cycles=_want(path, doc, "miss_cycles", int, RUN_DEFAULTS["miss_cycles"]),
            capacity=caps[0] if caps else None,
            sharded=sharded,
            static_baseline=static,
            seed=_want(path, doc, "seed", int, RUN_DEFAULTS["seed"]),
            repeats=_want(path, doc, "repeats", int, Panel.repeats),
        ))
    for panel in panels:
        if panel.warmup < 0:
            raise ConfigError(f"{path}: 'warmup' must be 0 or more, got {panel.warmup}")
        assert isinstance(panel.workload, Workload)
        for algo in algos:
            check_run_size(RunSpec(algo=algo, dispatch=dispatch[0], k=max(ks), workload=panel.workload,
                                   requests=requests, warmup=panel.warmup, capacity=panel.capacity),
                           f"{path}: {algo} at k = {max(ks):,} over {panel.title}, requests = {requests:,}"
                           + (f" and warmup = {panel.warmup:,}" if panel.warmup else ""), k_flag=f"{path}: k =")
    if exclude_warmup and not any(p.warmup for p in panels):
        raise ConfigError(f"{path}: exclude_warmup = true needs warmup = N (requests served before timing)")
    name = plain_name(_want(path, doc, "name", str, path.stem), f"{path}: 'name'")
    measure = _want(path, doc, "measure", bool, True)
    return Experiment(name=name, description=f"sweep {name}", panels=tuple(panels)), measure
