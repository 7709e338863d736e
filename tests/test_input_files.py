"""Input files the Rust readers take (rules, key, packet, latency and job traces, rule updates),
given wrong through the real CLI: a device that never ends, a file larger than memory, a
byte-order mark, bytes that are not UTF-8, nft rule sets that cannot be one first-match list,
numbers beyond what the simulator holds. Each mistake is one line naming the file (and line)
and exit 2; a byte-order mark is stripped. Only cases that fail fast: a device is refused
before it is read, a sparse file by its size."""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

Cli = Callable[..., CompletedProcess[str]]

BOM = b"\xef\xbb\xbf"


def one_line_error(cli: Cli, cwd: Path, *args: str) -> str:
    """Runs the CLI; checks exit 2 and one clean line on stderr, and returns it."""
    r = cli(*args, cwd=cwd, timeout=120)
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr and "memory allocation" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert "os error" not in lines[0], lines[0]
    return lines[0]


def ok(cli: Cli, cwd: Path, *args: str) -> str:
    r = cli(*args, cwd=cwd, timeout=120)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    return r.stdout


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    p = tmp_path / "r.txt"
    p.write_text("drop src 10.0.0.0/8\naccept\n")
    return p


@pytest.mark.parametrize(("args", "fragment"), [
    (("classify", "--rules", "/dev/zero", "--packets", "2000", "--no-measure"), "/dev/zero: not a regular file"),
    (("run", "--trace", "/dev/zero", "--requests", "2000"), "/dev/zero: not a regular file"),
    (("cache", "advise", "--trace", "/dev/zero", "--items", "20", "--k", "1,2"), "/dev/zero: not a regular file"),
    (("latency-sim", "run", "--trace", "/dev/zero", "--z", "5", "--out", "o"), "/dev/zero: not a regular file"),
    # The Python front's own text files are read the same way (common/input_files.py).
    (("sweep", "/dev/zero"), "/dev/zero: not a regular file"),
    (("usl", "fit", "/dev/zero", "--no-plot"), "/dev/zero: not a regular file"),
])
def test_devices_are_refused_before_reading(cli: Cli, tmp_path: Path, args: tuple[str, ...], fragment: str) -> None:
    assert fragment in one_line_error(cli, tmp_path, *args)


@pytest.mark.parametrize("args", [
    ("classify", "gen-trace", "--rules", "{rules}", "--out", "{rules}", "--packets", "100"),
    ("classify", "convert", "--rules", "{rules}", "--out", "./{name}", "--format", "native"),
    ("nft-bench", "--rules", "{rules}", "--emit", "{rules}"),
])
def test_an_output_file_that_is_an_input_is_refused(cli: Cli, tmp_path: Path, rules: Path,
                                                    args: tuple[str, ...]) -> None:
    before = rules.read_bytes()
    line = one_line_error(cli, tmp_path, *(a.format(rules=rules, name=rules.name) for a in args))
    assert "is the --rules file" in line and "would overwrite it" in line, line
    assert rules.read_bytes() == before


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    from superlinear.common.errors import SuperlinearError
    from superlinear.output.paths import written_atomically

    out = tmp_path / "rules.txt"
    out.write_text("old")
    with pytest.raises(SuperlinearError) as e, written_atomically(out) as tmp:
        tmp.write_text("half a")  # a native writer, stopped by a full disk
        raise SuperlinearError(f"{tmp}: cannot write: no space left on device")
    assert str(e.value) == f"{out}: cannot write: no space left on device"
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["rules.txt"]


@pytest.mark.parametrize(("name", "text", "args", "fragment"), [
    ("long.csv", "p,speedup\n1,1\n2,1.9\n8," + "9" * 200_000 + "\n", ("usl", "fit", "{f}", "--no-plot"),
     "not a CSV file the fit can read"),
    ("same.csv", "p,speedup\n1,1\n2,1.9\n", ("usl", "fit", "{f}", "--x", "speedup", "--y", "speedup", "--no-plot"),
     "column 'speedup' is both x and y"),
    ("deep/result.json", "[" * 100_000 + "]" * 100_000, ("report", "{d}"), "not a result file (nested too deeply)"),
    ("long.toml", 'name = "' + "a" * 300 + '"\nalgos = ["mtf"]\ndispatch = ["hash"]\nk = [1]\n[workload]\nm = 10\n',
     ("sweep", "{f}", "--no-measure"), "'name' is 300 bytes long: at most 200"),
])
def test_python_read_inputs_are_one_line(cli: Cli, tmp_path: Path, name: str, text: str, args: tuple[str, ...],
                                         fragment: str) -> None:
    f = tmp_path / name
    f.parent.mkdir(exist_ok=True)
    f.write_text(text)
    assert fragment in one_line_error(cli, tmp_path, *(a.format(f=f, d=tmp_path) for a in args))


def test_a_file_name_that_is_not_utf8_is_named(cli: Cli, tmp_path: Path, rules: Path) -> None:
    odd = tmp_path / os.fsdecode(b"bad\xffname")
    odd.write_bytes(rules.read_bytes())
    line = one_line_error(cli, tmp_path, "classify", "--rules", str(odd), "--packets", "100", "--no-measure")
    assert "bad\ufffdname: not valid UTF-8" in line, line


def test_replace_with_a_device_is_refused(cli: Cli, tmp_path: Path, rules: Path) -> None:
    updates = tmp_path / "u.txt"
    updates.write_text("10 replace /dev/zero\n")
    line = one_line_error(cli, tmp_path, "classify", "--rules", str(rules), "--packets", "2000",
                          "--updates", str(updates), "--check")
    assert f"{updates}:1: replace /dev/zero: /dev/zero: not a regular file" in line


def _mem_available() -> int | None:
    try:
        for text in Path("/proc/meminfo").read_text().splitlines():
            if text.startswith("MemAvailable:"):
                return int(text.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@pytest.mark.parametrize("args", [
    ("run", "--trace", "{big}", "--requests", "2000"),
    ("latency-sim", "run", "--trace", "{big}", "--z", "5", "--out", "o"),
    ("classify", "--rules", "{rules}", "--trace", "{big}", "--no-measure"),
    # The Python front's own text files.
    ("sweep", "{big}"),
    ("usl", "fit", "{big}", "--no-plot"),
])
def test_a_file_larger_than_memory_is_refused_by_its_size(cli: Cli, tmp_path: Path, rules: Path,
                                                          args: tuple[str, ...]) -> None:
    avail = _mem_available()
    if avail is None:
        pytest.skip("no MemAvailable in /proc/meminfo: the size check does not apply")
    big = tmp_path / "big"
    try:
        with open(big, "wb") as f:
            f.truncate(2 * avail)  # sparse: takes no disk space
    except OSError:
        pytest.skip("this file system holds no sparse file that large")
    line = one_line_error(cli, tmp_path, *(a.format(big=big, rules=rules) for a in args))
    assert str(big) in line and "of memory, but only" in line


def test_missing_and_folder(cli: Cli, tmp_path: Path) -> None:
    line = one_line_error(cli, tmp_path, "run", "--trace", str(tmp_path / "none.txt"), "--requests", "10")
    assert f"{tmp_path / 'none.txt'}: cannot read: no such file" in line
    line = one_line_error(cli, tmp_path, "classify", "--rules", str(tmp_path), "--packets", "100", "--no-measure")
    assert f"{tmp_path}: a folder" in line
    line = one_line_error(cli, tmp_path, "attack", "worker", "--quick", "--trace", str(tmp_path))
    assert line.endswith(f"{tmp_path}: a folder, not a file (--trace)"), line
    # A ClassBench folder without the set asked for names --data and the set, not --rules.
    line = one_line_error(cli, tmp_path, "nft-bench", "--data", str(tmp_path), "--check-only")
    assert line.endswith(f"--data {tmp_path}: no file acl1_5k (set acl1 of --sets, size 5k)"), line
    line = one_line_error(cli, tmp_path, "cache", "up", "--replicas", "1", "--no-pg", "--dir", "/proc/none/x")
    assert line.endswith("/proc/none: no such file or directory") and "Errno" not in line, line


def test_a_byte_order_mark_is_stripped(cli: Cli, tmp_path: Path) -> None:
    native = tmp_path / "native.txt"
    native.write_bytes(BOM + b"drop src 10.0.0.0/8\naccept\n")
    assert "2 rules" in ok(cli, tmp_path, "classify", "--rules", str(native), "--packets", "500", "--no-measure")
    classbench = tmp_path / "cb.txt"
    classbench.write_bytes(BOM + b"@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t80 : 80\t0x06/0xFF\t0x0000/0x0000\t\n")
    assert "1 rules" in ok(cli, tmp_path, "classify", "--rules", str(classbench), "--packets", "500",
                           "--no-measure")
    keys = tmp_path / "keys.txt"
    keys.write_bytes(BOM + b"3221225985\n5\n5\n")
    ok(cli, tmp_path, "run", "--trace", str(keys), "--requests", "3")
    packets = tmp_path / "packets.txt"
    packets.write_bytes(BOM + b"3221225985 1 2 3 6\n167772161 1 2 80 6\n")
    ok(cli, tmp_path, "classify", "--rules", str(native), "--trace", str(packets), "--no-measure")
    objects = tmp_path / "objects.txt"
    objects.write_bytes(BOM + b"1108\n1108\n7\n")
    out = ok(cli, tmp_path, "latency-sim", "run", "--trace", str(objects), "--z", "5", "--cache-size", "1",
             "--policies", "lru", "--out", "o", "--json")
    assert '"objects": 2' in out


def test_non_utf8_names_its_line(cli: Cli, tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_bytes(b"1\n2\n\xff3\n")
    assert f"{keys}:3: not UTF-8 text" in one_line_error(cli, tmp_path, "run", "--trace", str(keys),
                                                         "--requests", "10")


NFT_HEAD = "table ip filter {\n\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n"


@pytest.mark.parametrize(("body", "fragment"), [
    (NFT_HEAD + "\t\ttcp dport 22 accept\n\t}\n\tchain forward {\n"
     "\t\ttype filter hook forward priority filter; policy accept;\n\t\tdrop\n\t}\n}\n",
     ":6: rules in more than one base chain: 'forward' here and 'input' on line 2"),
    (NFT_HEAD + "\t\taccept\n\t}\n\tchain helper {\n\t\tip saddr 10.0.0.0/8 drop\n\t}\n}\n",
     ":6: chain 'helper' is a regular chain"),
    (NFT_HEAD + "\t\tip saddr 10.0.0.0/8 ip saddr 11.0.0.0/8 accept\n\t}\n}\n",
     ":4: field 'src' given twice ('ip saddr 11.0.0.0/8')"),
    (NFT_HEAD + "\t\ttcp dport 80 tcp dport 443 accept\n\t}\n}\n", ":4: field 'dport' given twice"),
    (NFT_HEAD + '\t\ttcp dport 80 comment "web" accept\n\t}\n}\n', ":4: 'comment' before the verdict"),
])
def test_nft_rule_sets_that_are_not_one_list(cli: Cli, tmp_path: Path, body: str, fragment: str) -> None:
    f = tmp_path / "r.nft"
    f.write_text(body)
    line = one_line_error(cli, tmp_path, "classify", "--rules", str(f), "--packets", "100", "--no-measure")
    assert f"{f}{fragment}" in line


def test_nft_comment_after_the_verdict_is_read(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "r.nft"
    f.write_text(NFT_HEAD + '\t\ttcp dport 80 accept comment "web" # handle 3\n\t}\n}\n')
    assert "1 rules" in ok(cli, tmp_path, "classify", "--rules", str(f), "--packets", "100", "--no-measure")


def test_a_stock_ruleset_with_empty_base_chains_is_read(cli: Cli, tmp_path: Path) -> None:
    # forward and output hold no rules: nothing to merge, and input's policy is the default.
    f = tmp_path / "r.nft"
    f.write_text(NFT_HEAD + "\t\ttcp dport 22 accept\n\t}\n\tchain forward {\n"
                 "\t\ttype filter hook forward priority filter; policy accept;\n\t}\n\tchain output {\n"
                 "\t\ttype filter hook output priority filter; policy accept;\n\t}\n}\n")
    out = tmp_path / "r.txt"
    ok(cli, tmp_path, "classify", "convert", "--rules", str(f), "--format", "native", "--out", str(out))
    assert "default drop" in out.read_text()


def test_native_rules_with_two_defaults(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "r.txt"
    f.write_text("default drop\naccept src 10.0.0.0/8\ndefault accept\n")
    line = one_line_error(cli, tmp_path, "classify", "--rules", str(f), "--packets", "100", "--no-measure")
    assert f"{f}:3: a second 'default' line (the first is line 1)" in line


def test_latency_trace_numbers_beyond_the_clock(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "t.txt"
    f.write_text("a 1 5\nb 2 9223372036854775807\n")
    line = one_line_error(cli, tmp_path, "latency-sim", "run", "--trace", str(f), "--z", "trace", "--out", "o")
    assert f"{f}:2: latency 9223372036854775807 is above the largest miss latency, 2^62" in line
    f.write_text("a 18446744073709551615\nb 5\n")
    line = one_line_error(cli, tmp_path, "latency-sim", "run", "--trace", str(f), "--z", "5", "--out", "o")
    assert f"{f}:2: timestamp 5 is earlier than the previous one (18446744073709551615)" in line


def test_binary_packet_trace_with_an_impossible_count(cli: Cli, tmp_path: Path, rules: Path) -> None:
    f = tmp_path / "t.slpt"
    f.write_bytes(b"SLPT" + struct.pack("<IQ", 1, 1 << 63) + bytes(13))
    line = one_line_error(cli, tmp_path, "classify", "--rules", str(rules), "--trace", str(f), "--no-measure")
    assert f"{f}: header announces 9223372036854775808 packets, an impossible count" in line


def test_job_trace_packets_beyond_an_ip_packet(cli: Cli, tmp_path: Path) -> None:
    # The simulation's time grows with the largest packet: megabyte "packets" ran for minutes.
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("200 1\n1000000 1\n")
    line = one_line_error(cli, tmp_path, "attack", "sim", "--trace", str(jobs), "--quick", "--out", "o")
    assert line.endswith("jobs.txt:2: packet size 1000000 is above 65535 bytes, the largest IP packet"), line
    r = cli("attack", "sim", "--pmax", "65536", "--quick", "--out", "o", cwd=tmp_path)
    assert r.returncode == 2 and "argument --pmax: expected at most 65,535 bytes" in r.stderr


@pytest.mark.parametrize("args", [
    ("run", "--trace", "{pipe}", "--k", "2"),
    ("sweep", "{pipe}"),
])
def test_a_pipe_is_refused_before_it_is_opened(cli: Cli, tmp_path: Path, args: tuple[str, ...]) -> None:
    # `--trace <(zcat t.gz)`: a run reads its input once per repeat, and a second read of a pipe
    # would wait forever; opening one without a writer would too, so it is refused first. (`usl
    # fit` reads its CSV once, and takes a pipe: test_usl.py.)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    line = one_line_error(cli, tmp_path, *(a.format(pipe=pipe) for a in args))
    assert f"{pipe}: a pipe, which can be read only once" in line and "write it to a file first" in line


def test_text_white_space_is_read_and_control_bytes_are_refused_by_the_python_reader(tmp_path: Path) -> None:
    from superlinear.common.errors import SuperlinearError
    from superlinear.common.input_files import read_input_text

    ok = tmp_path / "ok.csv"
    ok.write_bytes(b"p,\ty\r\n1,1\x0c\n2,\x0b1.9\n")  # tab, CRLF, form feed, vertical tab: text
    assert read_input_text(ok, "a CSV") == "p,\ty\r\n1,1\x0c\n2,\x0b1.9\n"
    for body, said in ((b"p,y\n1,1\n\x00\x00", ":3: not text: control byte 0x00 (a binary file?)"),
                       (b"p,y\n\x1b[31m1,1\n", ":2: not text: control byte 0x1b (terminal colour codes?)")):
        bad = tmp_path / "bad.csv"
        bad.write_bytes(body)
        with pytest.raises(SuperlinearError, match=re.escape(f"bad.csv{said}")):
            read_input_text(bad, "a CSV")
