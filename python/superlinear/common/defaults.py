"""Config defaults, asked of Rust.

Each config's defaults are written once, in its crate's serde struct; Python reads them through
``_native.config_defaults`` instead of repeating them, for dataclass fields, argparse defaults and
the help texts that show a default.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import TYPE_CHECKING, Any

from superlinear import _native

if TYPE_CHECKING:
    from superlinear._native import ConfigName

__all__ = ["config_defaults", "field_default", "with_default"]


@cache
def _defaults(name: ConfigName) -> dict[str, Any]:
    return _native.config_defaults(name)


def config_defaults(name: ConfigName) -> dict[str, Any]:
    """The defaults of config ``name`` (a copy: callers may change it)."""
    return copy.deepcopy(_defaults(name))


def field_default(name: ConfigName, field: str) -> Any:
    """The default of one field of config ``name``; a nested field as ``workload.m``."""
    value: Any = _defaults(name)
    for part in field.split("."):
        value = value[part]
    return copy.deepcopy(value)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_shown(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def with_default(text: str, name: ConfigName, field: str) -> str:
    """A help text ending in ``(default X)``, X being the Rust default of ``name``'s ``field``."""
    return f"{text} (default {_shown(field_default(name, field))})"
