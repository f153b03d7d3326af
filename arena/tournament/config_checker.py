"""The error collection of a tournament file's check: ``ConfigError`` (one problem, its key path
and line), ``ConfigFileError`` (all of them), and ``Checker``, which the table checkers
(``config_*.py``) report to: typed getters that report a bad value with its line and go on, so
every problem of a file is reported at once."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from arena.errors import ArenaError
from arena.tournament.toml_lines import Part, _key_str, _KeyLines

MISSING: Any = object()  # a key the table does not have (None is a value a getter returns on error)


@dataclass(frozen=True)
class ConfigError:
    """One problem: where (key path like ``bots[2].command``, line) and what was expected."""

    key: str
    line: int | None
    message: str
    file: str | None = None

    def __str__(self) -> str:
        where = self.file or "<tournament>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class ConfigFileError(ArenaError, ValueError):
    """Raised by ``load``: carries every ``ConfigError`` of the file."""

    def __init__(self, errors: list[ConfigError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


def describe(v: object) -> str:
    """A TOML value as a message quotes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "an array"
    return repr(v)


class Checker:
    """The problems found so far, each with its line; getters report a bad value and return None
    (or the default when the key is absent)."""

    def __init__(self, where: _KeyLines, file: str | None) -> None:
        self.where = where
        self.file = file
        self.errors: list[ConfigError] = []

    def err(self, path: tuple[Part, ...], message: str) -> None:
        self.errors.append(ConfigError(_key_str(path), self.where.find(path), message, self.file))

    def unknown_keys(self, table: Mapping[str, Any], allowed: Iterable[str], path: tuple[Part, ...]) -> None:
        allowed = tuple(allowed)
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; expected one of: {', '.join(allowed)}"
                self.err(path + (key,), f"unknown key {key!r}{hint}")

    def string(self, table: Mapping[str, Any], key: str, path: tuple[Part, ...], default: Any = MISSING,
               choices: tuple[str, ...] | None = None) -> Any:
        v = table.get(key, MISSING)
        if v is MISSING:
            if default is MISSING:
                self.err(path + (key,), f"missing; expected {_expect_str(choices)}")
                return None
            return default
        if not isinstance(v, str) or not v.strip():
            self.err(path + (key,), f"expected {_expect_str(choices)}, got {describe(v)}")
            return None
        if choices is not None and v not in choices:
            close = difflib.get_close_matches(v, choices, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self.err(path + (key,), f"expected {_expect_str(choices)}, got {v!r}{hint}")
            return None
        return v

    def integer(self, table: Mapping[str, Any], key: str, path: tuple[Part, ...], default: Any = MISSING,
                minimum: int | None = None) -> Any:
        v = table.get(key, MISSING)
        need = "a whole number" + (f" >= {minimum}" if minimum is not None else "")
        if v is MISSING:
            if default is MISSING:
                self.err(path + (key,), f"missing; expected {need}")
                return None
            return default
        if not isinstance(v, int) or isinstance(v, bool) or (minimum is not None and v < minimum):
            self.err(path + (key,), f"expected {need}, got {describe(v)}")
            return None
        return v

    def boolean(self, table: Mapping[str, Any], key: str, path: tuple[Part, ...], default: bool) -> Any:
        v = table.get(key, default)
        if not isinstance(v, bool):
            self.err(path + (key,), f"expected true or false, got {describe(v)}")
            return None
        return v

    def table(self, data: Mapping[str, Any], key: str, path: tuple[Part, ...]) -> dict[str, Any]:
        v = data.get(key, {})
        if not isinstance(v, dict):
            self.err(path + (key,), f"expected a table, got {describe(v)}")
            return {}
        return v


def _expect_str(choices: tuple[str, ...] | None) -> str:
    return f"one of: {', '.join(choices)}" if choices else "a non-empty string"
