"""``superlinear latency-sim``: what it makes of unusual input. A trace's latency column taken
as ``--z trace`` (refused below the shortest miss, naming its line; rounded as ``--latency`` is),
float flags given ``inf`` or ``nan`` (one line naming the flag), and notes that never precede a
refusal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from superlinear.latency import sim as latency
from superlinear.latency.sim import Trace, whole_z


def answer(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str]:
    """Runs the CLI in-process: its exit status and stderr (argparse's refusals exit through
    SystemExit)."""
    from superlinear.cli import main

    try:
        code = main(args)
    except SystemExit as e:
        code = e.code  # type: ignore[assignment]
    return int(code), capsys.readouterr().err


def refused(capsys: pytest.CaptureFixture[str], args: list[str], *fragments: str) -> str:
    """A refusal: exit 2, one line on stderr (no note before it) holding every fragment."""
    code, err = answer(capsys, args)
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line]
    assert len(lines) == 1, err
    assert lines[0].startswith("superlinear"), lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


def _trace(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


# ---------------------------------------------------------------------------------------------
# --z trace: a latency under half a request-time became Z = 1 unsaid (`a 1 5 / b 2 6 / c 3 0`
# gave mean latency 4.00), and fractional ones were rounded unsaid.


def test_a_latency_below_the_shortest_miss_is_refused_naming_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = ["--out", str(tmp_path / "o")]
    t = _trace(tmp_path, "zero.txt", "a 1 5\nb 2 6\nc 3 0\n")
    for command in (["run", "--cache-size", "1"], ["belatedly", "--cache-size", "1"]):
        refused(capsys, ["latency-sim", *command, "--trace", str(t), "--z", "trace", *out],
                f"{t}:3: this object's mean latency 0 gives Z = 0.000 request-times (latency / mean inter-request "
                "time 1), which rounds to 0; the shortest miss is Z = 1, a latency of at least 0.5")
    assert not (tmp_path / "o").exists()
    every = _trace(tmp_path, "all-zero.txt", "a 1 0\nb 2 0\nc 3 0\n")
    refused(capsys, ["latency-sim", "run", "--trace", str(every), "--z", "trace", *out],
            f"{every}:1: this object's mean latency 0 gives Z = 0")
    # An object's Z is the mean of its latencies: named at its first line, with the mean.
    mean = _trace(tmp_path, "mean.txt", "a 0 5\nc 2 0.2\nb 4 6\nc 6 1.4\n")  # R = 2: c's mean 0.8 -> 0.4
    refused(capsys, ["latency-sim", "run", "--trace", str(mean), "--z", "trace", *out],
            f"{mean}:2: this object's mean latency 0.8 gives Z = 0.400 request-times", "a latency of at least 1")
    # The library's entry points refuse it too.
    with pytest.raises(latency.SuperlinearError, match=r"zero\.txt:3: this object's mean latency 0"):
        latency.simulate(Trace.read(t), "lru", None, 1)


def test_fractional_latencies_are_rounded_as_latency_flag_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = _trace(tmp_path, "half.txt", "a 1 5.5\nb 2 6\nc 3 0.5\n")
    code, err = answer(capsys, ["latency-sim", "run", "--trace", str(t), "--z", "trace", "--cache-size", "1",
                                "--policies", "lru", "--out", str(tmp_path / "o"), "--json"])
    assert code == 0 and not err.strip(), err  # the rounding is the one --help states
    doc = json.loads((tmp_path / "o" / "result.json").read_text())
    # Z = 6, 6, 1, each a miss: halves go up, as the engine rounds.
    assert doc["rows"][0]["mean_latency"] == pytest.approx(13 / 3)
    # --latency rounds the same way (it took halves to even: 4.5 -> 4).
    ts = _trace(tmp_path, "ts.txt", "a 0\nb 1\nc 2\n")
    assert Trace.read(ts).z_from_latency(4.5) == 5 == whole_z(4.5)
    assert (whole_z(5.49), whole_z(0.5), whole_z(2.0)) == (5, 1, 2)


def test_whole_latencies_and_generated_traces_take_no_note(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    g = tmp_path / "g.txt"
    code, err = answer(capsys, ["latency-sim", "gen", "--requests", "500", "--objects", "20", "--latencies", "1,7",
                                "--out", str(g)])
    assert code == 0, err
    code, err = answer(capsys, ["latency-sim", "run", "--trace", str(g), "--z", "trace", "--cache-size", "5",
                                "--policies", "lru", "--out", str(tmp_path / "o"), "--json"])
    assert code == 0 and err == "", err


# ---------------------------------------------------------------------------------------------
# Float flags given inf, -inf or nan, or out of the generator's range: one line naming the flag
# (the generator's checks named its config field, "latency_trace config: field 'jitter': inf is
# not a finite number", or no flag at all; `belatedly --time-limit inf` was taken).

GENERATOR_FLAGS = ["--bursty", "--burst-length", "--burst-gap", "--alpha", "--jitter"]


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
@pytest.mark.parametrize(("command", "flag"), [(c, f) for c in ("run", "gen", "belatedly", "bench")
                                               for f in GENERATOR_FLAGS] + [("belatedly", "--time-limit")])
def test_non_finite_float_flags_are_refused_by_name(command: str, flag: str, value: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / ("g.txt" if command == "gen" else "o"))
    line = refused(capsys, ["latency-sim", command, "--requests", "200", "--objects", "20", f"{flag}={value}",
                            "--out", out], flag)
    assert "config" not in line and "field" not in line, line
    if value == "nan":
        assert f"argument {flag}: NaN is not a number here" in line, line
    elif flag == "--time-limit":
        assert (f"argument {flag}: must be a finite number, got {value}" in line
                or f"argument {flag}: must be positive, got {value}" in line), line
    else:
        shown = "inf" if value == "1e400" else value
        assert line == f"superlinear: error: {flag} {shown}: not a finite number", line
    assert not Path(out).exists()


@pytest.mark.parametrize(("flag", "value", "says"), [
    ("--bursty", "2", "--bursty 2: the bursty fraction must be between 0 and 1"),
    ("--burst-length", "0.5", "--burst-length 0.5: the burst length must be at least 1 request"),
    ("--burst-gap", "0", "--burst-gap 0: the gap between requests of a burst must be positive"),
    ("--alpha", "-1", "--alpha -1: the Zipf exponent must not be negative"),
    ("--jitter", "1", "--jitter 1: the jitter must be in [0, 1)"),
])
def test_generator_ranges_are_refused_by_flag(flag: str, value: str, says: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    for command, out in (("run", "o"), ("gen", "g.txt")):
        refused(capsys, ["latency-sim", command, "--requests", "200", "--objects", "20", f"{flag}={value}",
                         "--out", str(tmp_path / out)], f"superlinear: error: {says}")


# ---------------------------------------------------------------------------------------------
# A note never precedes a refusal (`belatedly --cache-size 50,60` printed the note on 60 objects,
# then the error).


def test_a_refusal_is_one_line_without_a_note_before_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small = ["--requests", "2000", "--objects", "50"]
    out = ["--out", str(tmp_path / "o")]
    refused(capsys, ["latency-sim", "belatedly", *small, "--cache-size", "50,60", *out],
            "belatedly: give one --cache-size")
    refused(capsys, ["latency-sim", "bench", *small, "--cache-size", "60,70", *out], "bench: give one --cache-size")
    refused(capsys, ["latency-sim", "belatedly", *small, "--cache-size", "60", "--compare", "fifo", *out],
            "--compare: unknown policy fifo")
    refused(capsys, ["latency-sim", "belatedly", *small, "--cache-size", "60", "--rounds", "20000", *out],
            "--rounds 20,000: at most 10,000")
    refused(capsys, ["latency-sim", "run", *small, "--cache-size", "60", "--belatedly", "--rounds", "20000", *out],
            "--rounds 20,000: at most 10,000")
    taken = tmp_path / "file"
    taken.write_text("")
    refused(capsys, ["latency-sim", "run", *small, "--cache-size", "60", "--out", str(taken)],
            "exists and is not a folder")
    half = _trace(tmp_path, "half.txt", "a 1 5.5\nb 2 6\nc 3 1\n")
    refused(capsys, ["latency-sim", "run", "--trace", str(half), "--z", "trace", "--cache-size", "1", "--out",
                     str(taken)],
            "exists and is not a folder")


def test_the_note_still_comes_when_the_run_goes_ahead(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = answer(capsys, ["latency-sim", "belatedly", "--requests", "600", "--objects", "20", "--cache-size",
                                "30", "--compare", "lru", "--out", str(tmp_path / "o"), "--json"])
    assert code == 0, err
    assert err.strip() == ("superlinear: note: --cache-size 30: more than the trace's 20 objects, so every object "
                           "fits and only the compulsory misses are left"), err


@pytest.mark.parametrize("command", [["latency-sim", "run"], ["latency-sim", "belatedly"], ["cache", "advise"],
                                     ["attack", "worker"]])
def test_an_out_folder_whose_result_would_replace_the_trace_is_refused(
        command: list[str], tmp_path: Path, one_line_mistake: Callable[..., None]) -> None:
    trace = tmp_path / "result.json"  # a trace named as a result's file, in the --out folder
    text = "".join(f"{i % 7}\n" for i in range(50))
    trace.write_text(text, encoding="utf-8")
    extra = ["--cache-size", "2"] if command[0] == "latency-sim" else []
    one_line_mistake([*command, "--trace", str(trace), *extra, "--out", str(tmp_path)],
                     "is the trace file", "would replace it")
    # A link elsewhere to it: the file it points to is what would be replaced.
    link = tmp_path.parent / f"{tmp_path.name}-keys.txt"
    link.symlink_to(trace)
    one_line_mistake([*command, "--trace", str(link), *extra, "--out", str(tmp_path)], "would replace it")
    assert trace.read_text(encoding="utf-8") == text and sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]
