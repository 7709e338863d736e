"""What each domain's registries hold, listed one way: ``superlinear list [DOMAIN] [--json]``.

A domain's CLI module declares a :class:`Listing`: a function that asks the registries (in Rust,
through ``_native``) for a JSON document, and one that prints that document as tables. The
older per-domain commands (``algorithms``, ``classify algorithms``, ``attack policies``,
``latency-sim policies``) call :func:`show_listing` with the same listing, so every list, and
every ``--help`` text built with :func:`known`, shows what the registries know.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from superlinear.common.study import console


@dataclass(frozen=True)
class Listing:
    """One domain's registries: ``doc()`` gives the JSON document, ``show(doc)`` prints it."""

    domain: str
    what: str
    doc: Callable[[], Any]
    show: Callable[[Any], None]


def known(names: Iterable[str]) -> str:
    """Registry names for a ``--help`` text: ``a, b, c``."""
    return ", ".join(names)


def name_table(title: str, items: Sequence[dict[str, Any]], flags: Sequence[tuple[str, str]] = ()) -> Table:
    """A table of registry entries: name, the yes/no ``flags`` (column, key) and the summary."""
    t = Table(title=title)
    t.add_column("name")
    for column, _ in flags:
        t.add_column(column)
    t.add_column("what")
    for item in items:
        t.add_row(item["name"], *("yes" if item[key] else "no" for _, key in flags), item["summary"])
    return t


def show_listing(listing: Listing, as_json: bool) -> int:
    """Prints one domain's registries (as JSON with ``as_json``)."""
    doc = listing.doc()
    if as_json:
        print(json.dumps(doc, indent=1))
    else:
        listing.show(doc)
    return 0


def add_listing_options(parser: argparse.ArgumentParser, listing: Listing) -> None:
    """Makes ``parser`` (an older list command) show ``listing``, with ``--json``."""
    if parser.description is None:
        parser.description = f"List the {listing.what} (the same as `superlinear list {listing.domain}`)."
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=lambda args: show_listing(listing, args.json))


def register(sub: Any, listings: Sequence[Listing]) -> None:
    """Adds ``list [DOMAIN] [--json]`` over ``listings``."""
    by_domain = {lst.domain: lst for lst in listings}
    p = sub.add_parser("list", help="what the registries hold: " + known(by_domain),
                       description="List the registries of one domain, or of all: "
                       + "; ".join(f"{lst.domain} ({lst.what})" for lst in listings) + ".")
    p.add_argument("domain", nargs="?", choices=list(by_domain), metavar="DOMAIN",
                   help="one of " + known(by_domain) + " (default: all)")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    def cmd_list(args: argparse.Namespace) -> int:
        if args.domain:
            return show_listing(by_domain[args.domain], args.json)
        if args.json:
            print(json.dumps({d: lst.doc() for d, lst in by_domain.items()}, indent=1))
            return 0
        for lst in listings:
            console.print(f"[bold]{lst.domain}[/bold]: {lst.what}")
            lst.show(lst.doc())
        return 0

    p.set_defaults(func=cmd_list)
