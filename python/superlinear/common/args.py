"""Value parsers for the subcommands' options, in one place.

Two kinds: argparse ``type=`` functions that parse one option's text or raise
``argparse.ArgumentTypeError`` (argparse prints the message after the option's name), and list
parsers (``floats``, ``int_list``, ``names``) that take the option's name and raise
:class:`SuperlinearError` naming it, for comma-separated values checked after parsing.

Two wordings are in use and both are kept, since they are what users see: ``expected a
positive integer, got 'x'`` (``run``, ``reproduce``, ``predict``, ``classify``, ``cache``,
``nft-bench``) and ``'x' is not a whole number`` / ``must be positive, got 0`` (``attack`` and
``latency-sim``, the ``*_whole`` and ``*_number`` types).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from superlinear import _native
from superlinear.common.bounds import MAX_WORKERS
from superlinear.common.errors import SuperlinearError

#: The largest count or seed the Rust core takes (u64, usize on 64-bit machines).
MAX_WHOLE = 2**64 - 1
#: The largest value a signed 64-bit integer (C long, i64) holds.
MAX_SIGNED = 2**63 - 1

#: An attribute set (True) on an option whose empty value means something (``latency-sim
#: belatedly --compare ''``: compare with none); the parser refuses an empty value of any other
#: text option (``superlinear.cli``).
EMPTY_OK = "empty_ok"


def _int(text: str, minimum: int, what: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what} integer, got {text!r}") from None
    if v < minimum:
        raise argparse.ArgumentTypeError(f"expected {what} integer, got {v}")
    if v > MAX_WHOLE:
        raise argparse.ArgumentTypeError(f"expected {what} integer of at most {MAX_WHOLE:,} (2^64 - 1), got {v}")
    return v


def positive_int(text: str) -> int:
    """An integer ≥ 1."""
    return _int(text, 1, "a positive")


def non_negative_int(text: str) -> int:
    """An integer ≥ 0."""
    return _int(text, 0, "a non-negative")


def _float(text: str, accept: Callable[[float], bool], expected: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if not accept(v):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {v}")
    return v


def positive_float(text: str) -> float:
    """A number > 0 (``nft-bench`` wording: ``expected a positive number, got 'x'``)."""
    return _float(text, lambda v: v > 0, "a positive number")


def fraction(text: str) -> float:
    """A number in [0, 1]."""
    return _float(text, lambda v: 0.0 <= v <= 1.0, "a number in [0, 1]")


def non_negative_finite(text: str) -> float:
    """A finite number ≥ 0."""
    return _float(text, lambda v: 0.0 <= v < float("inf"), "a finite number ≥ 0")


def _whole(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    # These reach C and Rust integers of 64 bits, signed in some places.
    if abs(v) > MAX_SIGNED:
        raise argparse.ArgumentTypeError(f"{v} is out of range (at most {MAX_SIGNED:,})")
    return v


def positive_whole(text: str) -> int:
    """An integer ≥ 1 (``attack``/``latency-sim`` wording)."""
    v = _whole(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {v}")
    return v


def non_negative_whole(text: str) -> int:
    """An integer ≥ 0 (``attack``/``latency-sim`` wording)."""
    v = _whole(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {v}")
    return v


def number(text: str) -> float:
    """Any number but NaN (``attack``/``latency-sim`` wording)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if v != v:
        raise argparse.ArgumentTypeError("NaN is not a number here")
    return v


def positive_number(text: str) -> float:
    """A number > 0 (``attack``/``latency-sim`` wording)."""
    v = number(text)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


def finite(number_type: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type: ``number_type``'s number, also finite (``attack``/``latency-sim``
    wording). ``inf`` was taken and refused later by the engine, in words that named its config
    field, not the flag, or not at all (``attack sim --load inf`` ended in a ZeroDivisionError)."""
    def parse(text: str) -> float:
        v = number_type(text)
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        return v

    return parse


#: A finite number > 0 (``attack``/``latency-sim`` wording).
positive_finite = finite(positive_number)


def usable_cpu(text: str) -> int:
    """A CPU this process may run on (its affinity mask), e.g. for pinning a sender."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a CPU number, got {text!r}") from None
    allowed = sorted(os.sched_getaffinity(0))
    if v not in allowed:
        raise argparse.ArgumentTypeError(f"CPU {v} is not one this process may use (allowed: "
                                         f"{', '.join(map(str, allowed))})")
    return v


def online_cpus() -> list[int]:
    """The CPUs online on this machine (``/sys/devices/system/cpu/online``, e.g. ``0-3,6``)."""
    try:
        spans = Path("/sys/devices/system/cpu/online").read_text().strip().split(",")
        return sorted({c for span in spans if span
                       for c in range(int(span.split("-")[0]), int(span.split("-")[-1]) + 1)})
    except (OSError, ValueError):
        return list(range(os.cpu_count() or 1))


def k_list(text: str) -> tuple[int, ...]:
    """Comma-separated worker counts, each ≥ 2 (``nft-bench --ks``: k = 1 is always measured)."""
    try:
        ks = tuple(int(x) for x in comma_list("--k", text))
    except SuperlinearError as e:  # argparse names the option itself
        raise argparse.ArgumentTypeError(str(e).removeprefix("--k: ")) from None
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 2,4,8, got {text!r}") from None
    if any(k < 2 for k in ks):
        raise argparse.ArgumentTypeError(f"every k must be at least 2 (k = 1 is always measured), got {text!r}")
    if max(ks) > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"every k must be at most {MAX_WORKERS:,}, got {max(ks):,}")
    return ks


def floats(option: str, text: str | None, positive: bool = True) -> tuple[float, ...] | None:
    """Comma-separated numbers (each > 0 unless ``positive`` is false); None for no option."""
    if text is None:
        return None
    values = []
    for part in comma_list(option, text):
        try:
            v = float(part)
        except ValueError:
            raise SuperlinearError(f"{option}: '{part}' is not a number") from None
        if positive and not v > 0:
            raise SuperlinearError(f"{option}: values must be positive, got {part}")
        values.append(v)
    return tuple(values)


def int_list(option: str, text: str, minimum: int = 1, maximum: int | None = None,
             repeats: bool = False) -> tuple[int, ...]:
    """Comma-separated whole numbers, each ≥ ``minimum`` (and ≤ ``maximum`` where given); at
    least one, no empty entries, and none twice unless ``repeats`` (a list of choices that may
    weigh a value twice, not a list of series)."""
    out = []
    for part in comma_list(option, text, repeats=repeats):
        try:
            v = int(part)
        except ValueError:
            raise SuperlinearError(f"{option}: '{part}' is not a whole number") from None
        if v < minimum:
            raise SuperlinearError(f"{option}: values must be at least {minimum}, got {v}")
        if maximum is not None and v > maximum:
            raise SuperlinearError(f"{option}: values must be at most {maximum:,}, got {v:,}")
        out.append(v)
    return tuple(out)


def comma_list(option: str, text: str, separator: str = ",", empty: str | None = None,
               repeats: bool = False) -> list[str]:
    """The entries of a comma-separated option, stripped: at least one (else ``empty``, or a
    plain line), none empty (``a,,b``, ``a,``) and none twice unless ``repeats`` (a list of
    choices that may weigh one twice; in a list of series it would be a second, identical one),
    each refused in one line naming ``option``."""
    parts = [p.strip() for p in text.split(separator)]
    if not any(parts):
        raise SuperlinearError(empty or f"{option}: give at least one value")
    if not all(parts):
        raise SuperlinearError(f"{option}: empty entry in {text!r}")
    twice = sorted({p for p in parts if parts.count(p) > 1})
    if twice and not repeats:
        raise SuperlinearError(f"{option}: {', '.join(twice)} given more than once")
    return parts


def names(option: str, text: str, known: Sequence[str]) -> tuple[str, ...]:
    """Comma-separated registry names; ``name:PARAM`` is accepted where ``name`` is known."""
    found = tuple(comma_list(option, text))
    bad = [n for n in found if n not in known and n.split(":")[0] not in known]
    if bad:
        raise SuperlinearError(f"{option}: unknown {', '.join(bad)} (known: {', '.join(known)})")
    return found


#: Environment variable that sets ``--timed-window`` where the flag is not given (the test suite
#: sets it to 0: its runs check counts and shapes, not timings).
TIMED_WINDOW_ENV = "SUPERLINEAR_TIMED_WINDOW"


#: The longest ``--timed-window``: each point's window, and 3 times it for a baseline (1e15 was
#: taken and recorded as the run's window, which the passes' cap then cut short unsaid).
MAX_TIMED_WINDOW_S = 600.0


def timed_window_seconds(text: str) -> float:
    """A timed window in seconds, from 0 to :data:`MAX_TIMED_WINDOW_S`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds ≥ 0, got {text!r}")
    if value > MAX_TIMED_WINDOW_S:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_TIMED_WINDOW_S:g} seconds, got {text}")
    if 0 < value < 0.0005:
        # Windows are whole milliseconds: this one would round to 0, which means no window.
        raise argparse.ArgumentTypeError(f"windows are whole milliseconds: {text} s rounds to none; give 0 (no "
                                         "window) or at least 0.001")
    return value


def add_timed_window_option(parser: argparse.ArgumentParser) -> None:
    """``--timed-window S``: the least wall-clock time the timed passes of each point span."""
    parser.add_argument("--timed-window", type=timed_window_seconds, metavar="S",
                        help="seconds of wall-clock time to spend timing each point: its timed passes (projected) "
                             "and threaded runs (measured) are repeated until they take S seconds together (at most "
                             f"{_native.MAX_WINDOW_PASSES} times), and the least time is kept; a k = 1 baseline gets "
                             "3·S, in two halves at the start and end of each round (the faster kept). 0: no "
                             f"window, no extra passes. Default: ${TIMED_WINDOW_ENV} if set, otherwise 1 "
                             f"(0.2 for reproduce million-flows --quick). At most {MAX_TIMED_WINDOW_S:g}, in whole "
                             "milliseconds")


def timed_window(args: argparse.Namespace) -> float | None:
    """``--timed-window``, else ``$SUPERLINEAR_TIMED_WINDOW``, else None (the panels' own windows)."""
    if getattr(args, "timed_window", None) is not None:
        return float(args.timed_window)
    env = os.environ.get(TIMED_WINDOW_ENV)
    if env is None or env == "":
        return None
    try:
        return timed_window_seconds(env)
    except argparse.ArgumentTypeError as e:
        raise SuperlinearError(f"${TIMED_WINDOW_ENV}: {e}") from None


#: The most independent runs of a point (a median of more moves no figure, and a typo of a few
#: more digits would look like a hang).
MAX_REPEATS = 1_000
#: The longest timed run a flag sets, in seconds.
MAX_DURATION_S = 3_600.0


def _at_most(parse_int: Callable[[str], int], maximum: int, unit: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        v = parse_int(text)
        if v > maximum:
            raise argparse.ArgumentTypeError(f"expected at most {maximum:,} {unit}, got {v:,}")
        return v

    return parse


def positive_int_at_most(maximum: int, unit: str) -> Callable[[str], int]:
    """An argparse type: an integer from 1 to ``maximum`` (``unit`` names what it counts)."""
    return _at_most(positive_int, maximum, unit)


def non_negative_int_at_most(maximum: int, unit: str) -> Callable[[str], int]:
    """An argparse type: an integer from 0 to ``maximum`` (``unit`` names what it counts)."""
    return _at_most(non_negative_int, maximum, unit)


#: ``--repeats``: an integer from 1 to :data:`MAX_REPEATS`.
repeat_count = positive_int_at_most(MAX_REPEATS, "repeats")


def duration_seconds(text: str) -> float:
    """A timed run's length: more than 0 and at most :data:`MAX_DURATION_S` seconds."""
    v = positive_float(text)
    if v > MAX_DURATION_S:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_DURATION_S:,.0f} seconds, got {text}")
    return v


def add_repeats_option(parser: argparse.ArgumentParser, default: str = "3") -> None:
    """``--repeats N``: independent runs of every point, whose median and range every timed
    figure reports; ``default`` says what runs without it."""
    parser.add_argument("--repeats", type=repeat_count, metavar="N",
                        help="independent runs of every point, interleaved across series: every timed figure is "
                             f"their median, with their range (default {default})")
