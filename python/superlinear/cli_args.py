"""Value types for the subcommands' argparse options: each parses one option's text or raises
``argparse.ArgumentTypeError`` with the message argparse prints after the option's name.

Two wordings are in use and both are kept, since they are what users see: ``expected a
positive integer, got 'x'`` (``run``, ``reproduce``, ``predict``, ``classify``, ``cache``,
``nft-bench``) and ``'x' is not a whole number`` / ``must be positive, got 0`` (``attack`` and
``latency-sim``, the ``*_whole`` types).
"""

from __future__ import annotations

import argparse


def _int(text: str, minimum: int, what: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what} integer, got {text!r}") from None
    if v < minimum:
        raise argparse.ArgumentTypeError(f"expected {what} integer, got {v}")
    return v


def positive_int(text: str) -> int:
    """An integer ≥ 1."""
    return _int(text, 1, "a positive")


def non_negative_int(text: str) -> int:
    """An integer ≥ 0."""
    return _int(text, 0, "a non-negative")


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None


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
