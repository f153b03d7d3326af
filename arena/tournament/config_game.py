"""The tables that say how each game is played: ``variant`` and its ``[rules]`` overrides (resolved
by the engine, ``arena.rules.options.resolve``: its error names the key), the clock (``[time]``,
milliseconds; a file without it gets ``TOURNAMENT_TIME``, the CPU clock) and the failure policy
(``[failures]``).  Their keys and defaults are the value types' fields, written once."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

from arena.rules.options import RulesError, RuleSet, resolve
from arena.settings import CLOCKS, FAILURE_KINDS, POLICIES, FailurePolicy, TimeControl
from arena.tournament.config_checker import Checker, describe
from arena.tournament.model import TOURNAMENT_TIME

TIME_KEYS = tuple(f.name for f in fields(TimeControl))
_TIME_CHOICES: dict[str, tuple[str, ...]] = {"clock": CLOCKS}
_TIME_POSITIVE = ("start_ms", "decision_ms")  # the others may be 0
FAILURE_KEYS = FAILURE_KINDS + ("strikes",)


def rules(c: Checker, data: dict[str, Any]) -> tuple[RuleSet | None, tuple[int, int] | None]:
    """The resolved rules (None on any error) and the players range of what did resolve."""
    from arena.rules.presets import PRESETS

    variant = c.string(data, "variant", (), choices=tuple(PRESETS))
    overrides = dict(c.table(data, "rules", ()))
    rule_name = overrides.pop("name", None)
    if rule_name is not None and not isinstance(rule_name, str):
        c.err(("rules", "name"), f"expected a string, got {describe(rule_name)}")
        rule_name = None
    if variant is None:
        return None, None
    before = len(c.errors)
    for _ in range(len(overrides) + 1):
        try:
            rs = resolve(variant, overrides, name=rule_name)
        except RulesError as e:
            msg = str(e)
            m = re.match(r"unknown rule option '([^']+)'", msg) or re.match(r"([A-Za-z_]+)[:.]", msg)
            key = m.group(1) if m else None
            if key in overrides:
                assert key is not None
                c.err(("rules", key), msg.removeprefix(f"{key}: "))
                del overrides[key]  # and resolve again: every bad override is reported
                continue
            c.err(("rules",), msg)
            return None, None
        return (rs if len(c.errors) == before else None), rs.players
    return None, None


def time(c: Checker, data: dict[str, Any]) -> TimeControl | None:
    """``[time]``: each key TimeControl's, its default ``TOURNAMENT_TIME``'s."""
    t = c.table(data, "time", ())
    c.unknown_keys(t, TIME_KEYS, ("time",))
    d = TOURNAMENT_TIME
    vals = {k: c.string(t, k, ("time",), default=getattr(d, k), choices=_TIME_CHOICES.get(k))
            if isinstance(getattr(d, k), str) else
            c.integer(t, k, ("time",), default=getattr(d, k), minimum=1 if k in _TIME_POSITIVE else 0)
            for k in TIME_KEYS}
    return None if None in vals.values() else TimeControl(**vals)


def failures(c: Checker, data: dict[str, Any]) -> FailurePolicy | None:
    """``[failures]``: a policy per failure kind and ``strikes``, FailurePolicy's defaults."""
    f = c.table(data, "failures", ())
    c.unknown_keys(f, FAILURE_KEYS, ("failures",))
    d = FailurePolicy()
    vals: dict[str, Any] = {k: c.string(f, k, ("failures",), default=getattr(d, k), choices=POLICIES)
                            for k in FAILURE_KINDS}
    vals["strikes"] = c.integer(f, "strikes", ("failures",), default=d.strikes, minimum=0)
    return None if None in vals.values() else FailurePolicy(**vals)
