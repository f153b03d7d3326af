"""The fixed sets an option's value comes from, as the ``StrEnum`` types typer checks and lists in
--help (``[text|json]``), and ``bad_value``: how a value typer refused (not one of the set, out of
an option's ``min=``/``max=`` range, not a number) is said in one sentence.

Each set is derived from the tuple of the module that owns it where that module is cheap to import;
the owners that cost a command's start (the standings, the match runner, the policies) are named
here once more, and tests/cli/test_choices.py holds each copy equal to its owner.  A member is a
``str``: the commands pass it on as the string it is.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeAlias

from arena.settings import CLOCKS, FAILURE_KINDS


def choice(name: str, values: Iterable[str]) -> type[StrEnum]:
    """A ``StrEnum`` whose members are ``values`` (each its own name)."""
    kind: type[StrEnum] = StrEnum(name, [(v, v) for v in values])  # type: ignore[misc]  # a name known when run
    return kind


if TYPE_CHECKING:  # to mypy an option of one of these is the str each member is
    TextFormat: TypeAlias = str
    TableFormat: TypeAlias = str
    Clock: TypeAlias = str
    FailureKind: TypeAlias = str
    ProgressMode: TypeAlias = str
    MatchTest: TypeAlias = str
    SelfPlayPolicy: TypeAlias = str
    Language: TypeAlias = str
else:
    TextFormat = choice("TextFormat", ("text", "json"))
    TableFormat = choice("TableFormat", ("table", "md", "csv", "json"))  # arena.tournament.standings_text.FORMATS
    Clock = choice("Clock", CLOCKS)
    FailureKind = choice("FailureKind", FAILURE_KINDS)
    ProgressMode = choice("ProgressMode", ("auto", "bar", "lines", "none"))  # arena.tournament.progress.MODES
    MatchTest = choice("MatchTest", ("margin", "penta"))  # arena.tournament.match.TESTS
    SelfPlayPolicy = choice("SelfPlayPolicy", ("random", "greedy", "greedy-eps10", "house-easy", "house-medium",
                                               "house-hard"))  # arena.policies.POLICIES
    Language = choice("Language", ("python", "js", "c"))  # arena.newbot.LANGUAGES

_NOT_ONE_OF = re.compile(r"^(?P<value>'.*') is not one of ")
_OUT_OF_RANGE = re.compile(r"^(?P<value>\S+) is not in the range ")
_NOT_A_NUMBER = re.compile(r"^(?P<value>'.*') is not a valid (?P<kind>integer|float)( range)?\.?$")


def bad_value(e: Any) -> str | None:
    """``--option: expected ..., got VALUE`` for a value typer refused (``e``, its BadParameter), or
    None when it is not one of those (a missing argument: typer's own usage message says it)."""
    param, message = getattr(e, "param", None), getattr(e, "message", None) or ""
    if param is None or not message:
        return None
    opts = getattr(param, "opts", None) or []
    where = max(opts, key=len) if getattr(param, "param_type_name", "") == "option" and opts \
        else str(getattr(param, "human_readable_name", param.name)).upper()
    kind = getattr(param, "type", None)
    if (m := _NOT_ONE_OF.match(message)) is not None:
        values = [str(c.value if isinstance(c, StrEnum) else c) for c in getattr(kind, "choices", ())]
        close = difflib.get_close_matches(m["value"].strip("'"), values, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{where}: expected one of {', '.join(values)}, got {m['value']}{hint}"
    bounds = _range_words(kind)
    if (m := _OUT_OF_RANGE.match(message)) is not None and bounds:
        return f"{where}: expected {bounds}, got {m['value']}"
    if (m := _NOT_A_NUMBER.match(message)) is not None:
        number = "a whole number" if m["kind"] == "integer" else "a number"
        return f"{where}: expected {number}" + (f" ({bounds})" if bounds else "") + f", got {m['value']}"
    return f"{where}: {message.rstrip('.')}"


def _range_words(kind: object) -> str | None:
    """A ``min=``/``max=`` range in words: "at least 1", "2 to 6", "at most 9"."""
    lo, hi = getattr(kind, "min", None), getattr(kind, "max", None)
    if lo is not None and hi is not None:
        return f"{lo} to {hi}"
    if lo is not None:
        return f"at least {lo}"
    if hi is not None:
        return f"at most {hi}"
    return None
