"""A variant and its ``--rules KEY=VALUE`` overrides, as the commands take them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.cli.app import _wants_json as _wants_json
from arena.cli.app import app as app
from arena.cli.app import fail as fail

if TYPE_CHECKING:
    from arena.rules.options import RuleSet


def _rules(variant: str, overrides: list[str] | None = None) -> RuleSet:
    """A preset with ``--rules KEY=VALUE`` overrides (VALUE read as a TOML value, else as a string)."""
    from arena.rules.options import RulesError, resolve

    changes: dict[str, Any] = {}
    for item in overrides or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            fail(f"--rules {item!r}: expected KEY=VALUE, e.g. deals=3 or card_values=german")
        changes[key.strip()] = _toml_value(raw.strip())
    try:
        return resolve(variant, changes)
    except RulesError as e:
        fail(f"--rules: {e}" if changes else str(e))


def _toml_value(raw: str) -> Any:
    """A command-line value as TOML reads it (``3``, ``true``, ``{"2" = 10}``), or the text itself."""
    import tomllib

    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
