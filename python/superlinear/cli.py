"""The ``superlinear`` command line: one entry point for every experiment and tool.

Each domain package registers its own subcommands (``register(subparsers)`` in its ``cli``
module); this module only assembles them, adds ``list`` over the domains' registries, and turns
errors into one line and an exit status.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from rich.console import Console

from superlinear import __version__
from superlinear.analysis import cli as analysis_cli
from superlinear.attack import cli as attack_cli
from superlinear.cache import cli as cache_cli
from superlinear.classify import cli as classify_cli
from superlinear.common import listing
from superlinear.common.args import EMPTY_OK
from superlinear.common.errors import SuperlinearError
from superlinear.common.interrupt import STOP_SIGNALS, stop_on_first_interrupt, stopped_exit_code, stopped_line
from superlinear.engine import cli as engine_cli
from superlinear.experiments import cli as experiments_cli
from superlinear.latency import cli as latency_cli
from superlinear.nft import cli as nft_cli
from superlinear.output import cli as output_cli
from superlinear.output.paths import forget_created, remove_empty_created
from superlinear.output.tables import HONESTY
from superlinear.xdp import cli as xdp_cli

#: The domains' registries, in the order ``superlinear list`` shows them.
LISTINGS = [engine_cli.LISTING, classify_cli.LISTING, attack_cli.LISTING, latency_cli.LISTING, cache_cli.LISTING]


#: Exit status when the reader of stdout has left (`superlinear … | head -1`): 128 + SIGPIPE, what a
#: shell reports for a program SIGPIPE ended; not 1, which several commands give a failed check.
EXIT_STDOUT_CLOSED = 128 + signal.SIGPIPE


def stdout_closed(console: Console) -> NoReturn:
    """rich's answer to a closed stdout, with :data:`EXIT_STDOUT_CLOSED` for its exit 1: silent
    from here on."""
    console.quiet = True
    _stdout_to_null()
    raise SystemExit(EXIT_STDOUT_CLOSED)


def _stdout_to_null() -> None:
    """Points stdout at /dev/null, so that the interpreter's last flush fails no more."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


Console.on_broken_pipe = stdout_closed  # type: ignore[method-assign,assignment]  # every Console the commands make


#: Where a parser leaves the subcommand parser that met arguments it did not know.
UNRECOGNIZED_BY = "_unrecognized_by"


#: What a value that starts with '-' must look like to be taken as a (negative) number.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose usage mistakes are one line: the problem, then where help is.

    argparse's default prints the whole usage block above the error, which for the larger
    subcommands is a screen of options burying the one line that says what was wrong.
    Subparsers inherit this class (``add_subparsers`` builds them with the parent's type).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse takes '-1e-3', '-inf' and '-nan' for options (only -N and -N.N are numbers to
        # it), so `law --s -1e-3` said "expected one argument" instead of the flag's range error.
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {printable(short_quotes(self._unknown_option_first(message)))} "
                     f"(see '{self.prog} --help')\n")

    def _unknown_option_first(self, message: str) -> str:
        """An unknown option's value taken for a positional (``classify --requests 100`` read
        100 as the action): the option is the mistake to name, not the value."""
        bad = re.fullmatch(r"argument \w+: invalid choice: '(.*?)'.*", message, re.DOTALL)
        args = getattr(self, "_given", [])
        if bad and bad.group(1) in args:
            before = args[args.index(bad.group(1)) - 1] if args.index(bad.group(1)) > 0 else ""
            option = before.split("=", 1)[0]
            if option.startswith("-") and option not in self._option_string_actions:
                return f"unrecognized arguments: {before} {bad.group(1)}"
        return message

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(sys.argv[1:] if args is None else args)
        self._refuse_empty_values(self._given)
        parsed, extras = super().parse_known_args(args, namespace)
        # A subcommand's parser hands what it did not know up to its parent, which would report
        # it under its own name; the deepest parser to see it names the subcommand to get help on.
        if extras and not hasattr(parsed, UNRECOGNIZED_BY):
            setattr(parsed, UNRECOGNIZED_BY, self)
        return parsed, extras

    def _refuse_empty_values(self, args: Sequence[str]) -> None:
        """Refuses an empty value (``--trace ""``) for an option of this parser that takes text:
        commands read such options as "given or not", so an empty one ran the default the user
        did not ask for (a generated workload instead of a trace). Typed options refuse it in
        their type's words; an option whose empty value means something is marked ``EMPTY_OK``.
        An empty argument after a flag that takes no value is refused too (it would be read as
        the command's file or folder)."""
        for i, token in enumerate(args):
            if token == "--":
                return
            name, eq, value = token.partition("=")
            action = self._option_named(name)
            if action is None:
                continue
            following = args[i + 1] if i + 1 < len(args) else None
            if action.nargs == 0:
                if following is not None and not following.strip():
                    raise SuperlinearError(f"an empty argument ('') after {name} where a name belongs")
                continue
            if action.type is not None or getattr(action, EMPTY_OK, False):
                continue
            given = value if eq else following
            if given is not None and not given.strip():
                flag = next((o for o in action.option_strings if o.startswith(name)), name)  # unabbreviated
                metavar = action.metavar or action.dest.upper()
                leave = "" if action.required else f", or leave {flag} out"
                raise SuperlinearError(f"{flag}: empty (give {metavar}{leave})")

    def _option_named(self, name: str) -> argparse.Action | None:
        """The option of this parser that ``name`` names, abbreviations resolved as argparse
        resolves them (``--trac`` for ``--trace``, when no other option starts so)."""
        if not name.startswith("-") or name == "-":
            return None
        if name in self._option_string_actions:
            return self._option_string_actions[name]
        if self.allow_abbrev and name.startswith("--"):
            found = {id(a): a for s, a in self._option_string_actions.items() if s.startswith(name)}
            if len(found) == 1:
                return next(iter(found.values()))
        return None

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        given = list(sys.argv[1:] if args is None else args)
        for before, token in zip(["", *given], given, strict=False):
            if token == "--":
                break
            # An option's empty value is its parser's to judge (_refuse_empty_values); an empty
            # name in a command's place (`usl fit ""`, `report ""`) read as the working folder.
            if not token.strip() and not (before.startswith("-") and "=" not in before):
                raise SuperlinearError("an empty argument ('')" + (f" after {before}" if before else "")
                                       + " where a name belongs")
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            getattr(parsed, UNRECOGNIZED_BY, self).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def build_parser() -> argparse.ArgumentParser:
    p = OneLineErrorParser(
        prog="superlinear",
        description="Distributed self-adjusting systems that scale faster than linearly, measured honestly. "
        + HONESTY,
    )
    p.add_argument("--version", action="version", version=f"superlinear {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    experiments_cli.register(sub)
    engine_cli.register(sub)
    analysis_cli.register(sub)
    attack_cli.register(sub)
    cache_cli.register(sub)
    latency_cli.register(sub)
    classify_cli.register(sub)
    nft_cli.register(sub)
    xdp_cli.register(sub)
    xdp_cli.register_bench(sub)
    output_cli.register(sub)
    listing.register(sub, LISTINGS)
    return p


def printable(text: str) -> str:
    """``text`` with its control characters escaped (``\\x00``): an error quotes what the user
    gave, and a NUL or an escape sequence from a file must not reach the terminal raw."""
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in text)


#: A quoted token in an error longer than this is shortened (:func:`short_quotes`).
LONGEST_QUOTE = 120

#: Quotes open and close outside words: an apostrophe (o'brien, a rule's) opens none.
_LONG_QUOTE = re.compile(rf"(?<!\w)'([^'\n]{{{LONGEST_QUOTE + 1},}})'(?!\w)")


def short_quotes(text: str) -> str:
    """``text`` with each quoted token longer than :data:`LONGEST_QUOTE` characters cut to its
    start and its length: an error quotes the field it could not read, and that field may be a
    whole line of megabytes (a file with no separators), which must not fill the terminal."""
    return _LONG_QUOTE.sub(lambda m: f"'{m.group(1)[:60]}…' ({len(m.group(1)):,} characters)", text)


def refuse_undecodable(argv: Sequence[str]) -> None:
    """Refuses an argument in bytes that are not UTF-8 (a file name from another locale, which
    Python hands over with surrogate escapes), before anything runs: the native readers take UTF-8
    paths, and a result file could not record it."""
    for a in argv:
        if any("\udc80" <= c <= "\udcff" for c in a):
            shown = a.encode(errors="surrogateescape").decode(errors="replace")
            raise SuperlinearError(f"{shown}: not valid UTF-8 (rename it; the native readers take UTF-8 names)")


def error_text(e: BaseException) -> str:
    """A user-facing error in words: an OSError as ``PATH: reason`` (lower case, as the native
    readers word it), not Python's ``[Errno 2] No such file or directory: 'PATH'``."""
    if isinstance(e, OSError) and e.strerror:
        reason = e.strerror[0].lower() + e.strerror[1:]
        return f"{e.filename}: {reason}" if e.filename is not None else reason
    return str(e)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        stop_on_first_interrupt()
    forget_created()
    try:
        refuse_undecodable(sys.argv[1:] if argv is None else argv)
        args = build_parser().parse_args(argv)
        code: int = args.func(args)
        sys.stdout.flush()  # a reader gone shows here (below), not in the interpreter's last flush
        if code != 0:
            remove_empty_created()  # a command that failed (no privileges, a failed check) made nothing
        return code
    except BrokenPipeError:
        # The reader of stdout left (`superlinear … | head`): stop quietly, as rich's console does
        # for its own writes (stdout_closed), and keep the interpreter from failing again when it
        # flushes stdout at exit. (Caught before OSError, of which it is one, so that it does not
        # read as an error.)
        _stdout_to_null()
        return EXIT_STDOUT_CLOSED
    except (SuperlinearError, OSError, ValueError) as e:
        remove_empty_created()
        print(f"superlinear: error: {printable(short_quotes(error_text(e)))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP (common.interrupt)
        remove_empty_created()
        print(stopped_line(), file=sys.stderr)
        return stopped_exit_code()
    finally:
        if argv is None:
            # The command (this process's one) is over and its result final: a Ctrl-C from here on
            # could only turn it into a traceback, or a kill by the signal while the interpreter
            # shuts down.
            for sig in STOP_SIGNALS:
                signal.signal(sig, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
