"""Options that only some modes of a command use: one given to a mode that ignores it is an error
naming it, never silently dropped (``classify --rules R --out F`` would write nothing and exit 0).

A command's parser declares its options as usual; :class:`OptionScope` then takes the defaults
out of the parser (so an option the user typed can be told from one left at its default, even when
both hold the same value), and the command, once it knows its mode, calls :meth:`OptionScope.check`
with the options that mode uses and :meth:`OptionScope.fill` to put the defaults back.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection, Mapping
from typing import Any

from superlinear.common.errors import SuperlinearError


class _OldSpelling(argparse.Action):
    """Stores the value like ``store`` and remembers the spelling typed, so that an error about
    the value names the option as the user wrote it (see :func:`spelled`)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.spelled = {**getattr(namespace, "spelled", {}), self.dest: option_string}


def hidden_alias(parser: Any, *spellings: str, dest: str, **kwargs: Any) -> None:
    """Old spellings of an option (``dest``), kept working but left out of ``--help``."""
    parser.add_argument(*spellings, dest=dest, action=_OldSpelling, help=argparse.SUPPRESS,
                        default=argparse.SUPPRESS, **kwargs)


def spelled(args: argparse.Namespace, dest: str, flag: str) -> str:
    """The spelling the user typed for the option ``dest``: an old one, or ``flag``."""
    return str(getattr(args, "spelled", {}).get(dest, flag))


class OptionScope:
    """The options of one parser, their defaults, and which of them the user gave."""

    def __init__(self, parser: argparse.ArgumentParser, exempt: Collection[str] = (),
                 only: Collection[str] | None = None) -> None:
        self.flags: dict[str, str] = {}
        self.defaults: dict[str, Any] = {}
        for action in parser._actions:
            if not action.option_strings or action.dest in exempt or action.default is argparse.SUPPRESS:
                continue
            if only is not None and action.dest not in only:
                continue
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            # The first long spelling declared is the one --help shows (aliases are hidden).
            longs = [s for s in action.option_strings if s.startswith("--")] or action.option_strings
            self.flags.setdefault(action.dest, longs[0])
            if action.nargs == 0 or action.default is None:
                continue  # a switch is given when true; None already means "not given"
            default = action.default
            if isinstance(default, str) and callable(action.type):
                default = action.type(default)  # argparse converts string defaults the same way
            self.defaults[action.dest] = default
            action.default = None

    @staticmethod
    def given(args: argparse.Namespace, dest: str) -> bool:
        """Whether the user typed the option (a switch: whether it is on)."""
        value = getattr(args, dest, None)
        return value is not None and value is not False

    def check(self, args: argparse.Namespace, used: Collection[str], mode: str,
              elsewhere: Mapping[str, str] | None = None) -> None:
        """Refuses the first option given that ``mode`` (e.g. ``in classify gen-rules``) does not
        use; ``elsewhere`` may say, per option, where it does apply."""
        for dest, flag in self.flags.items():
            if dest not in used and self.given(args, dest):
                where = (elsewhere or {}).get(dest)
                raise SuperlinearError(f"{spelled(args, dest, flag)} has no effect {mode}"
                                       + (f" ({where})" if where else ""))

    def fill(self, args: argparse.Namespace) -> argparse.Namespace:
        """Puts every default back where the user gave no value; returns ``args``."""
        for dest, default in self.defaults.items():
            if getattr(args, dest, None) is None:
                setattr(args, dest, default)
        return args


def conditional_scope(parser: argparse.ArgumentParser, options: Collection[str],
                      mode: Callable[[argparse.Namespace], str | None], why: str | Mapping[str, str]) -> None:
    """Refuses the options ``options`` (by dest) whenever ``mode(args)`` names a mode that does not
    read them (e.g. ``"with --trace"``), else lets them through; ``mode`` sees the options of this
    scope (and of any scope made before it) as None where the user gave none. ``why`` says where
    they do apply, one text for all or one per option. Call after the parser's ``func`` is set; it
    wraps it."""
    scope = OptionScope(parser, only=options)
    inner: Callable[[argparse.Namespace], int] = parser.get_default("func")
    where = dict.fromkeys(scope.flags, why) if isinstance(why, str) else dict(why)

    def func(args: argparse.Namespace) -> int:
        refused_in = mode(args)
        if refused_in is not None:
            scope.check(args, (), refused_in, where)
        scope.fill(args)
        return inner(args)

    parser.set_defaults(func=func)


def generator_scope(parser: argparse.ArgumentParser, generator: Collection[str], source: str = "trace",
                    why: str = "it shapes a generated workload") -> None:
    """Refuses the options of a generated workload (``generator``, by dest) when a file workload
    is given (the option ``source``, ``--trace``): ``run --trace T --m 500`` would run the trace and
    drop ``--m`` without a word. Call after the parser's ``func`` is set; it wraps it."""
    flag = "--" + source.replace("_", "-")
    conditional_scope(parser, generator, lambda args: f"with {flag}" if getattr(args, source, None) else None, why)


def needs_option(parser: argparse.ArgumentParser, dependent: Collection[str], switch: str,
                 why: str | Mapping[str, str]) -> None:
    """Refuses the options ``dependent`` (by dest) unless the option ``switch`` is given:
    ``latency-sim run --rounds 8`` without ``--belatedly`` would run and drop ``--rounds``.
    Call after the parser's ``func`` is set; it wraps it."""
    flag = "--" + switch.replace("_", "-")
    conditional_scope(parser, dependent, lambda args: None if OptionScope.given(args, switch) else f"without {flag}",
                      why)


def unless_chosen(chosen: str | None, users: Collection[str], flag: str) -> str | None:
    """A ``mode`` for :func:`conditional_scope`: an option only ``users`` read is refused where the
    comma-separated list ``chosen`` (of ``flag``; None or empty: the default, all of them) names
    none of them."""
    names = {c.strip() for c in (chosen or "").split(",") if c.strip()}
    return None if not names or names & set(users) else f"with {flag} {chosen}"


def alpha_scope(parser: argparse.ArgumentParser, default_workload: str) -> None:
    """Refuses ``--alpha`` beside a generated workload other than zipf (``predict --alpha 1.2``
    would run the uniform default). With ``--trace`` a generator scope refuses it already. Call
    after the generator scope: this one reads ``--workload`` before its default is put back."""
    def mode(args: argparse.Namespace) -> str | None:
        workload = args.workload or default_workload
        if getattr(args, "trace", None) or workload == "zipf":
            return None
        return f"with --workload {workload}" + ("" if args.workload else ", the default")

    conditional_scope(parser, ("alpha",), mode, "it is the exponent of --workload zipf")
