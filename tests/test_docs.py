"""Doc-test: every fenced ``superlinear …`` command in README.md and docs/**/*.md runs through the
real CLI (``python -m superlinear``), so the docs cannot rot.

How a command is collected: inside a fenced block (``` or ~~~), a line that starts with
``superlinear `` (or ``$ superlinear ``), joined with its ``\\`` continuation lines; a trailing
``# comment`` is dropped. Every other fenced line that mentions a ``superlinear`` command fails
``test_no_fenced_command_slips_by``, so a doc cannot hide one behind a prefix.

How it runs: the commands of one page run in order, in one fresh working directory (files one
command writes, such as generated rules, feed the next), with ``examples/`` copied in and the
user-side input files of ``FIXTURES`` written there. Docs write their commands at quick sizes
where they can; what must stay as it was measured (the commands of docs/results) goes through
``REWRITES``, a small explicit table applied before the run. Commands that need servers or root
run where this machine has them and are skipped, with the CLI's own one-line reason, where not;
``SKIPS`` would list any that never run here, each with its reason (none today).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from superlinear.nft import netns

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: The docs must keep at least this many runnable commands (guards against a collector that
#: silently stops finding them).
MIN_COMMANDS = 60
#: Pages that show no fenced command on purpose (overviews, design).
PAGES_WITHOUT_COMMANDS = {"docs/cli.md", "docs/design.md", "docs/results/README.md"}

FENCE = re.compile(r"^\s*(```|~~~)")
COMMAND_START = re.compile(r"^\s*(\$\s+)?superlinear\s")
#: A command hidden behind a prefix (``sudo superlinear``, ``.venv/bin/superlinear``, ``x=1 superlinear``).
MENTION = re.compile(r"(^|[\s/;&|(])superlinear\s+[a-z]")
#: Synopsis notation: a fenced command must be a concrete, runnable example.
PLACEHOLDER = re.compile(r"\[|\]|\||\.\.\.|…|<|>")


@dataclass(frozen=True)
class DocCommand:
    page: str  # path relative to the repository root
    line: int
    text: str  # as written, continuation lines joined

    def argv(self) -> list[str]:
        words = shlex.split(self.text, comments=True)
        if words and words[0] == "$":
            words = words[1:]
        assert words[0] == "superlinear"
        return words[1:]


def fenced_lines(path: Path) -> Iterator[tuple[int, str]]:
    inside = False
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if FENCE.match(line):
            inside = not inside
            continue
        if inside:
            yield number, line


def collect(path: Path) -> list[DocCommand]:
    page = str(path.relative_to(ROOT))
    commands: list[DocCommand] = []
    pending: tuple[int, list[str]] | None = None
    for number, line in fenced_lines(path):
        if pending is not None:
            pending[1].append(line.strip().removesuffix("\\"))
            if not line.rstrip().endswith("\\"):
                commands.append(DocCommand(page, pending[0], " ".join(pending[1])))
                pending = None
            continue
        if COMMAND_START.match(line):
            if line.rstrip().endswith("\\"):
                pending = (number, [line.strip().removesuffix("\\")])
            else:
                commands.append(DocCommand(page, number, line.strip()))
    assert pending is None, f"{page}:{pending[0]}: continuation line never ends"
    return commands


ALL = {str(p.relative_to(ROOT)): collect(p) for p in DOC_FILES}


# --- Inputs a user would bring, written into every page's working directory. ------------------

#: The seed's TeraSort Table 2 (the same numbers docs/analysis.md shows and tests/test_usl.py fits).
TABLE2 = "p,T,se\n1,13057,606\n2,6347,541\n3,4444,396\n5,2065,147\n10,893,27\n"
FIXTURES = {
    "table2.csv": TABLE2,
    "measurements.csv": "nodes,throughput\n1,100\n2,230\n4,520\n8,980\n16,1500\n",
    "keys.txt": "# keys, one per line\n" + "".join(f"{(i * 7919) % 97}\n" for i in range(2000)),
}


# --- The rewrite table: how a documented command is made quick and self-contained. -----------

#: Where the docs say the ClassBench data lies; the test puts a tiny generated copy there instead.
SHARED_CLASSBENCH = "../shared/data/classbench"
#: Without --panel, a reproduction runs only its cheapest panel; with several, only the first.
SMALLEST_PANEL = {"fig5": "e", "fig8": "d2k", "fig9": "b1", "fig11": "cache-only", "cache-skew": "zipf0.9",
                  "cache-sensitivity": "hot10x", "million-flows": "f1e4"}
#: Reproductions that start their own memcached and PostgreSQL (run where this machine has them).
SERVICE_FIGURES = {"fig11", "cache-skew", "cache-sensitivity"}
#: Upper limits for size flags; a smaller value in the docs is kept.
CAPS = {"--requests": 20_000, "--packets": 20_000, "--rows": 20_000, "--rules-count": 1_000}
#: Per command: size flags capped (and added when absent, where the default is large).
COMMAND_CAPS: dict[tuple[str, ...], dict[str, tuple[int, bool]]] = {
    ("latency-sim", "run"): {"--requests": (20_000, True), "--objects": (500, False)},
    ("latency-sim", "belatedly"): {"--requests": (2_000, True), "--objects": (100, True)},
    ("latency-sim", "bench"): {"--requests": (200_000, True), "--objects": (10_000, True)},
    ("attack", "sim"): {"--packets": (5_000, True)},
    ("attack", "worker"): {"--requests": (5_000, True)},
    ("attack", "classifier"): {"--packets": (5_000, True)},
    ("attack", "bench-queue"): {"--pairs": (20_000, True)},
}
#: Seconds per nft-bench throughput run.
NFT_DURATION = "0.3"
#: Sweep files are copied into the working directory with these keys capped.
SWEEP_CAPS = {"requests": 20_000, "warmup": 5_000, "repeats": 1, "m": 5_000}
#: Queue sizes of `attack bench-queue`.
QUEUE_SIZES = "1000,10000"
#: Attack rates (fractions of the innocent rate) of `attack worker|classifier` that name none.
ATTACK_RATES = "0.01,0.1"

#: The rewrites, in order: (name, why). Each is applied by ``rewrite`` below.
REWRITES = (
    ("classbench", f"`{SHARED_CLASSBENCH}` → a tiny ClassBench folder generated with `classify gen-rules/gen-trace "
                   "--format classbench` (the project's tests generate their data)"),
    ("reproduce", "`reproduce` gets `--quick --no-measure --repeats 1` (the cache tier's figures, which always "
                  "measure, `--quick --repeats 1`), and runs one panel: the first it names, or the smallest"),
    ("bench", "`bench` and `classify bench` get `--quick`; `classify bench` runs `--classbench-size 5k` only"),
    ("attack", "`attack sim|worker|classifier|bench-queue` get `--quick`; `attack sim` also `--no-growth` unless it "
               f"asks for a J_max sweep; `attack bench-queue` runs `--queue-size {QUEUE_SIZES}`; "
               f"`attack worker|classifier` without `--attack-rates` get `--attack-rates {ATTACK_RATES}`"),
    ("sizes", "size flags are capped (`CAPS`, `COMMAND_CAPS`; added only to generated latency-sim traces); "
              "generated predict/advise workloads get `--requests`"),
    ("sweep", "`sweep` runs on a copy of its file with requests, warm-up and repeats capped, and `--no-measure "
              "--repeats 1`"),
    ("nft-bench", f"measuring `nft-bench` and `xdp-bench` runs get `--duration {NFT_DURATION} --repeats 1`"),
    ("once", "a command that reads no page files and ran unchanged (flags in any order) on an earlier page is "
             "not run again"),
)

#: Commands that never run in this test, with the reason.
SKIPS: dict[tuple[str, ...], str] = {}


def command_key(argv: list[str]) -> tuple[str, ...]:
    if argv[0] in {"reproduce", "attack", "latency-sim", "cache", "usl"} and len(argv) > 1:
        return (argv[0], argv[1])
    if argv[0] == "classify" and len(argv) > 1 and not argv[1].startswith("-"):
        return ("classify", argv[1])
    return (argv[0],)


def flag_value(argv: list[str], flag: str) -> str | None:
    for i, word in enumerate(argv):
        if word == flag and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(flag + "="):
            return word.split("=", 1)[1]
    return None


def set_flag(argv: list[str], flag: str, value: str) -> list[str]:
    out: list[str] = []
    skip = False
    for i, word in enumerate(argv):
        if skip:
            skip = False
            continue
        if word == flag and i + 1 < len(argv):
            skip = True
            continue
        if word.startswith(flag + "="):
            continue
        out.append(word)
    return [*out, flag, value]


def cap(argv: list[str], flag: str, limit: int, add: bool) -> list[str]:
    value = flag_value(argv, flag)
    if value is None:
        return set_flag(argv, flag, str(limit)) if add else argv
    if value.replace("_", "").isdigit() and int(value.replace("_", "")) > limit:
        return set_flag(argv, flag, str(limit))
    return argv


def scale_hot_set(argv: list[str], rows_before: str | None) -> list[str]:
    """A hot set ``--dist hot:H[:…]`` shrunk with ``--rows``, so it keeps its share of the table (a
    hot set larger than the table is refused)."""
    dist, rows = flag_value(argv, "--dist"), flag_value(argv, "--rows")
    if dist is None or rows is None or rows_before is None or rows == rows_before or not dist.startswith("hot:"):
        return argv
    _, hot, *rest = dist.split(":")
    scaled = max(1, int(hot) * int(rows) // int(rows_before.replace("_", "")))
    return set_flag(argv, "--dist", ":".join(["hot", str(scaled), *rest]))


def add_flag(argv: list[str], flag: str) -> list[str]:
    return argv if flag in argv else [*argv, flag]


def rewrite(argv: list[str], classbench: Path) -> list[str]:
    """The documented command made quick and runnable here (see ``REWRITES``)."""
    argv = [w.replace(SHARED_CLASSBENCH, str(classbench)) for w in argv]
    key = command_key(argv)
    if argv[0] == "reproduce":
        argv = add_flag(argv, "--quick")
        argv = set_flag(argv if argv[1] in SERVICE_FIGURES else add_flag(argv, "--no-measure"), "--repeats", "1")
        panel = flag_value(argv, "--panel") or SMALLEST_PANEL.get(argv[1])
        if panel is not None:
            argv = set_flag(argv, "--panel", panel)
    if key in {("bench",), ("classify", "bench")}:
        argv = add_flag(argv, "--quick")
    if key == ("classify", "bench"):
        argv = set_flag(argv, "--classbench-size", "5k")
    if key in {("attack", "sim"), ("attack", "worker"), ("attack", "classifier"), ("attack", "bench-queue")}:
        argv = add_flag(argv, "--quick")
        if key == ("attack", "sim") and "--jmax-sweep" not in argv:
            argv = add_flag(argv, "--no-growth")
        if key == ("attack", "bench-queue"):
            argv = set_flag(argv, "--queue-size", QUEUE_SIZES)
        if key in {("attack", "worker"), ("attack", "classifier")} and flag_value(argv, "--attack-rates") is None:
            argv = set_flag(argv, "--attack-rates", ATTACK_RATES)
    own_caps = COMMAND_CAPS.get(key, {})
    # A latency-sim trace file takes no generator sizes (they are refused with --trace).
    generated = not (key[0] == "latency-sim" and "--trace" in argv)
    for flag, (limit, add) in own_caps.items():
        argv = cap(argv, flag, limit, add and generated)
    rows_before = flag_value(argv, "--rows")
    for flag, limit in CAPS.items():
        if flag not in own_caps:
            argv = cap(argv, flag, limit, add=False)
    argv = scale_hot_set(argv, rows_before)
    if key in {("predict",), ("advise",)} and "--trace" not in argv:
        argv = cap(argv, "--requests", CAPS["--requests"], add=True)
    if key == ("sweep",):
        argv = set_flag(add_flag(argv, "--no-measure"), "--repeats", "1")
    if key == ("nft-bench",) and not {"--emit", "--cleanup", "--check-only"} & set(argv):
        argv = set_flag(set_flag(argv, "--duration", NFT_DURATION), "--repeats", "1")
    if key == ("xdp-bench",):
        argv = set_flag(set_flag(argv, "--duration", NFT_DURATION), "--repeats", "1")
    return argv


def shrink_sweep(path: Path) -> None:
    text = path.read_text()
    for key, limit in SWEEP_CAPS.items():
        text = re.sub(rf"(?m)^({key}\s*=\s*)(\d[\d_]*)",
                      lambda m, lim=limit: m.group(1) + str(min(int(m.group(2).replace("_", "")), lim)), text)
    path.write_text(text)


#: Commands that read no input files but the session's ClassBench copy: after the rewrite, one
#: run per session is enough.
SELF_CONTAINED = {("reproduce", "fig5"), ("reproduce", "fig8"), ("reproduce", "fig9"), ("reproduce", "million-flows"),
                  ("bench",), ("law",),
                  ("algorithms",), ("attack", "sim"), ("attack", "worker"), ("attack", "bench-queue"),
                  ("attack", "policies"), ("latency-sim", "policies")}
INPUT_FLAGS = {"--trace", "--rules", "--data"}
#: Rewritten commands already run in this session, with where.
RAN: dict[tuple[str, ...], str] = {}


@dataclass(frozen=True)
class Plan:
    argv: list[str] | None  # None: skipped
    reason: str = ""


def plan(cmd: DocCommand, classbench: Path) -> Plan:
    argv = cmd.argv()
    reason = SKIPS.get(command_key(argv))
    if reason is not None:
        return Plan(None, reason)
    return Plan(rewrite(argv, classbench))


# --- Fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def classbench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny ClassBench folder in the layout of ../shared/data/classbench, made by the CLI."""
    root = tmp_path_factory.mktemp("classbench")
    rules, trace = root / "acl1_5k", root / "acl1_5k_trace"
    for args in (("classify", "gen-rules", "--rules-count", "199", "--depth", "2", "--format", "classbench",
                  "--out", str(rules)),
                 ("classify", "gen-trace", "--rules", str(rules), "--packets", "3000", "--format", "classbench",
                  "--out", str(trace))):
        r = run_in(root, list(args), dict(os.environ))
        assert r.returncode == 0, r.stderr
    for name in ("acl1", "ipc1", "fw1"):
        for size in ("1k", "5k", "10k"):
            if (name, size) != ("acl1", "5k"):
                shutil.copy(rules, root / f"{name}_{size}")
                shutil.copy(trace, root / f"{name}_{size}_trace")
    return root


def page_workdir() -> Path:
    # Under /tmp and world-searchable: as root, `cache up` runs PostgreSQL as 'nobody'.
    d = Path(tempfile.mkdtemp(prefix="sl-docs-", dir="/tmp"))
    os.chmod(d, 0o755)
    shutil.copytree(ROOT / "examples", d / "examples")
    for toml in (d / "examples").glob("*.toml"):
        shrink_sweep(toml)
    for name, text in FIXTURES.items():
        (d / name).write_text(text)
    return d


def run_in(cwd: Path, argv: list[str], env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "superlinear", *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env, check=False)


# --- Tests ------------------------------------------------------------------------------------


def test_collector_finds_every_page_and_command() -> None:
    total = sum(len(c) for c in ALL.values())
    assert total > MIN_COMMANDS, f"only {total} fenced superlinear commands found"
    without = {page for page, cmds in ALL.items() if not cmds}
    assert without == PAGES_WITHOUT_COMMANDS, f"pages without commands: {sorted(without)}"


def test_no_fenced_command_slips_by() -> None:
    collected = {(c.page, c.line) for cmds in ALL.values() for c in cmds}
    stray = []
    for path in DOC_FILES:
        page = str(path.relative_to(ROOT))
        continued = False
        for number, line in fenced_lines(path):
            was_continued, continued = continued, line.rstrip().endswith("\\")
            if was_continued or line.strip().startswith("#") or (page, number) in collected:
                continue
            if MENTION.search(line):
                stray.append(f"{page}:{number}: {line.strip()}")
    assert not stray, "fenced lines that mention a superlinear command the doc-test cannot run:\n" + "\n".join(stray)


def test_every_command_is_concrete_and_planned(tmp_path: Path) -> None:
    for cmds in ALL.values():
        for cmd in cmds:
            assert not PLACEHOLDER.search(cmd.text.split(" #")[0]), \
                f"{cmd.page}:{cmd.line}: synopsis notation in a fenced command (use docs/cli.md): {cmd.text}"
            p = plan(cmd, tmp_path)
            assert p.argv is not None or p.reason, f"{cmd.page}:{cmd.line}: skipped without a reason"


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_relative_links_resolve() -> None:
    broken = []
    for path in DOC_FILES:
        for target in LINK.findall(path.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            if not dest.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md":
                headings = {_slug(h) for h in re.findall(r"(?m)^#+ (.*)$", dest.read_text())}
                if anchor not in headings:
                    broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_rewrites_are_explicit(tmp_path: Path) -> None:
    cb = tmp_path / "cb"
    assert rewrite(["reproduce", "fig8", "--data", f"{SHARED_CLASSBENCH}"], cb) == \
        ["reproduce", "fig8", "--data", str(cb), "--quick", "--no-measure", "--repeats", "1", "--panel", "d2k"]
    assert rewrite(["classify", "--packets", "2000000", "--rules", f"{SHARED_CLASSBENCH}/acl1_5k"], cb) == \
        ["classify", "--rules", f"{cb}/acl1_5k", "--packets", "20000"]
    assert rewrite(["run", "--requests", "500"], cb) == ["run", "--requests", "500"]
    assert rewrite(["latency-sim", "bench"], cb)[-4:] == ["--requests", "200000", "--objects", "10000"]
    toml = tmp_path / "s.toml"
    toml.write_text("requests = 1000000\nwarmup = 200000\nrepeats = 2\nk = [1, 2]\n[workload]\nm = 100000\n")
    shrink_sweep(toml)
    assert toml.read_text() == "requests = 20000\nwarmup = 5000\nrepeats = 1\nk = [1, 2]\n[workload]\nm = 5000\n"
    assert rewrite(["reproduce", "fig8", "--panel", "a", "--panel", "d10k"], cb) == \
        ["reproduce", "fig8", "--quick", "--no-measure", "--repeats", "1", "--panel", "a"]
    assert rewrite(["reproduce", "fig11"], cb) == ["reproduce", "fig11", "--quick", "--repeats", "1", "--panel",
                                                   "cache-only"]


#: Exit codes of nft-bench and xdp that mean "this machine cannot" (69: tools or kernel support
#: missing, 77: no privileges).
NFT_CANNOT = {69, 77}
#: Network namespaces the docs' walk-throughs use, with the veth pair in each: made (where this
#: machine can) before the page's commands run, as the page tells its reader to, and removed after.
DOC_NAMESPACES = {"xdpdemo": ("xdp0", "xdp1")}


def make_doc_namespaces(page: str) -> list[str]:
    """The namespaces this page's commands name, created; none where namespaces cannot be made."""
    wanted = {flag_value(c.argv(), "--netns") for c in ALL[page]} & set(DOC_NAMESPACES)
    if not wanted or not netns.availability()[0]:
        return []
    made = []
    for name in sorted(n for n in wanted if n is not None):
        a, b = DOC_NAMESPACES[name]
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
        for args in (["netns", "add", name], ["-n", name, "link", "add", a, "type", "veth", "peer", "name", b],
                     ["-n", name, "link", "set", a, "up"], ["-n", name, "link", "set", b, "up"]):
            subprocess.run(["ip", *args], capture_output=True, check=True)
        made.append(name)
    return made


@pytest.mark.parametrize("page", [p for p, c in ALL.items() if c])
def test_doc_commands_run(page: str, classbench: Path) -> None:
    cwd = page_workdir()
    env = {k: v for k, v in os.environ.items() if k != "SUPERLINEAR_DATA"}
    env["SUPERLINEAR_SERVICES"] = str(cwd / "services")
    unavailable: dict[str, str] = {}  # group → reason
    skipped: list[str] = []
    started_cache = False
    namespaces = make_doc_namespaces(page)
    try:
        for cmd in ALL[page]:
            p = plan(cmd, classbench)
            where = f"{cmd.page}:{cmd.line}"
            if p.argv is None:
                skipped.append(f"{where}: {p.reason}")
                continue
            group = _group(p.argv)
            if group in unavailable:
                skipped.append(f"{where}: {unavailable[group]}")
                continue
            once = command_key(p.argv) in SELF_CONTAINED and all(
                (flag_value(p.argv, f) or str(classbench)).startswith(str(classbench)) for f in INPUT_FLAGS)
            same = tuple(sorted(p.argv))  # the same flags in another order are the same command
            if once and same in RAN:
                skipped.append(f"{where}: ran unchanged at {RAN[same]}")
                continue
            r = run_in(cwd, p.argv, env)
            if once and r.returncode == 0:
                RAN[same] = where
            if group == "cache" and p.argv[1] == "up":
                started_cache = True
            why = _cannot_run(group, p.argv, r)
            if why is not None:
                unavailable[group] = why
                skipped.append(f"{where}: {why}")
                continue
            assert r.returncode == 0, (f"{where}: `superlinear {' '.join(p.argv)}` exited {r.returncode}\n"
                                       f"{r.stderr[-2000:]}")
    finally:
        if started_cache:
            run_in(cwd, ["cache", "down", "--purge"], env)
        for name in namespaces:
            run_in(cwd, ["xdp", "unload", "--all"], env)
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
        shutil.rmtree(cwd, ignore_errors=True)
    if skipped and len(skipped) == len(ALL[page]):
        pytest.skip("; ".join(skipped))
    for line in skipped:
        print("not run:", line)


def _group(argv: list[str]) -> str:
    if argv[0] == "cache" or (argv[0] == "reproduce" and argv[1] in SERVICE_FIGURES):
        return "cache"
    if argv[0] == "nft-bench" and "--emit" not in argv:  # --emit needs no privileges
        return "nft"
    if argv[0] == "xdp-bench" or (argv[0] == "xdp" and argv[1:2] != ["list"]):
        return "xdp"
    return ""


def _cannot_run(group: str, argv: list[str], r: subprocess.CompletedProcess[str]) -> str | None:
    """The CLI's own one-line reason when this machine lacks the servers or privileges."""
    last = (r.stderr.strip().splitlines() or [""])[-1]
    if group == "nft" and r.returncode in NFT_CANNOT:
        return f"needs root and ip/nft: {last}"
    if group == "xdp" and r.returncode in NFT_CANNOT:
        return f"needs root, clang at build time and XDP: {last}"
    if group == "xdp" and flag_value(argv, "--netns") in DOC_NAMESPACES and not netns.availability()[0]:
        return f"needs network namespaces: {netns.availability()[1]}"
    starts_servers = argv[0] == "reproduce" or argv[1:2] == ["up"]
    if group == "cache" and starts_servers and r.returncode != 0 and "apt-get install" in r.stderr:
        return f"needs memcached and PostgreSQL: {last}"
    return None


def test_missing_servers_or_privileges_skip_with_the_clis_reason() -> None:
    def done(code: int, stderr: str) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(["superlinear"], code, "", stderr)

    no_root = done(77, "superlinear: error: nft-bench needs CAP_NET_ADMIN (run as root)\n")
    assert _cannot_run("nft", ["nft-bench", "--check-only"], no_root) == \
        "needs root and ip/nft: superlinear: error: nft-bench needs CAP_NET_ADMIN (run as root)"
    assert _cannot_run("nft", ["nft-bench", "--check-only"], done(2, "bad rules")) is None
    no_memcached = done(1, "superlinear: error: memcached not found: apt-get install -y memcached\n")
    assert _cannot_run("cache", ["cache", "up"], no_memcached) is not None
    assert _cannot_run("cache", ["cache", "bench"], no_memcached) is None
    assert _cannot_run("cache", ["reproduce", "fig11"], no_memcached) is not None
    assert _group(["reproduce", "fig11"]) == "cache" and _group(["reproduce", "fig5"]) == ""
    assert _group(["nft-bench", "--emit", "-"]) == "" and _group(["nft-bench", "--cleanup"]) == "nft"
    assert _group(["xdp", "load"]) == "xdp" and _group(["xdp", "list"]) == "" and _group(["xdp-bench"]) == "xdp"
    no_clang = done(69, "superlinear: xdp load: this build has no XDP datapath (clang not found)\n")
    assert _cannot_run("xdp", ["xdp", "load"], no_clang) is not None
