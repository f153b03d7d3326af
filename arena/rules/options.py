"""Building a rule set: a preset plus overrides by option name, validated (RULES 9, 10).

``resolve(preset, overrides)`` builds a ``RuleSet`` from a preset of
``presets.py`` plus overrides given by option name (as in a tournament
file), and rejects impossible combinations with one sentence that names the
option; ``rules_from_data`` reads back what ``RuleSet.to_data()`` wrote.
The schema itself (``RuleSet``, ``DESCRIPTIONS``, ``BOUNDS``, ``CHOICES``) is
``ruleset.py``, re-exported here.

Every numeric option has a range (``BOUNDS``): what a game can use, so that
no value that validates can make a game impossibly large or long.  A value
outside it is rejected naming the option and the range, like a value of the
wrong type.
"""

from __future__ import annotations

import difflib
from dataclasses import MISSING, replace
from typing import Any

from arena.rules.cards import CardError, parse_rank
from arena.rules.presets import PRESETS
from arena.rules.ruleset import (
    BOUNDS,
    CARDS_PER_DECK,
    CHOICES,
    DEFAULTS,
    DESCRIPTIONS,
    MAX_DEALS,
    OPTION_NAMES,
    PER_COUNT_OPTIONS,
    PerCount,
    RulesError,
    RuleSet,
)
from arena.rules.values import value_table_from_data

__all__ = [
    "BOUNDS", "CARDS_PER_DECK", "CHOICES", "DESCRIPTIONS", "MAX_DEALS", "OPTION_NAMES", "PER_COUNT_OPTIONS",
    "PerCount", "RuleSet", "RulesError", "out_of_bounds", "overlay", "per_count", "resolve", "rules_from_data", "suggest",
    "validate",
]


def per_count(data: object, key: str) -> PerCount:
    """An int, or a table like ``{"2" = 10, "3-4" = 7, "5+" = 6}``."""
    if isinstance(data, bool):
        raise RulesError(f"{key}: expected a whole number or a table by player count, got {data!r}")
    if isinstance(data, int):
        return ((1, 10**6, data),)
    if isinstance(data, (list, tuple)) and all(isinstance(x, (list, tuple)) and len(x) == 3 for x in data):
        return tuple((int(a), int(b), int(c)) for a, b, c in data)
    if isinstance(data, dict):
        out = []
        for k, v in data.items():
            ks = str(k).strip()
            try:
                if ks.endswith("+"):
                    lo, hi = int(ks[:-1]), 10**6
                elif "-" in ks:
                    a, b = ks.split("-", 1)
                    lo, hi = int(a), int(b)
                else:
                    lo = hi = int(ks)
            except ValueError:
                raise RulesError(f"{key}.{k}: expected a player count like \"2\", \"3-4\" or \"6+\"") from None
            if lo > hi:
                raise RulesError(f"{key}.{k}: the first player count is above the second; write \"{hi}-{lo}\"")
            if not isinstance(v, int) or isinstance(v, bool):
                raise RulesError(f"{key}.{k}: expected a whole number, got {v!r}")
            out.append((lo, hi, v))
        return tuple(sorted(out))
    raise RulesError(f"{key}: expected a whole number or a table by player count, got {data!r}")


def overlay(base: PerCount, table: PerCount, lo: int = 1, hi: int = 10**6) -> PerCount:
    """``table`` over ``base``: its values for the player counts it names, ``base``'s for the others
    (``hand_size = {"2" = 8}`` changes the 2-player hand of a preset and keeps the rest); what is
    left of ``base`` is kept only where it meets the game's player counts ``lo``-``hi``."""
    kept: list[tuple[int, int, int]] = []
    for first, last, value in base:
        pieces = [(first, last)]
        for a, b, _ in table:
            pieces = [p for x, y in pieces for p in ((x, min(y, a - 1)), (max(x, b + 1), y)) if p[0] <= p[1]]
        kept += [(x, y, value) for x, y in pieces if x <= hi and y >= lo]
    return tuple(sorted(kept + list(table)))


def out_of_bounds(key: str, v: int, where: str = "") -> str | None:
    """The sentence rejecting ``v`` for option ``key`` if it is outside ``BOUNDS``, else None."""
    lo, hi = BOUNDS[key]
    if lo <= v <= hi:
        return None
    return f"{key}: must be from {lo} to {hi}{where}, got {v}"


def _expect_int(v: object, key: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise RulesError(f"{key}: expected a whole number, got {v!r}")
    problem = out_of_bounds(key, v)
    if problem:
        raise RulesError(problem)
    return v


def _expect_bool(v: object, key: str) -> bool:
    if not isinstance(v, bool):
        raise RulesError(f"{key}: expected true or false, got {v!r}")
    return v


def _convert(key: str, v: object) -> object:
    """Turn one option's plain value into its typed value, or raise RulesError."""
    if key == "players":
        if isinstance(v, str) and "-" in v:
            a, b = v.split("-", 1)
            v = [a, b]
        if isinstance(v, (list, tuple)) and len(v) == 2:
            try:
                lo, hi = (x if isinstance(x, int) and not isinstance(x, bool) else int(str(x).strip()) for x in v)
            except (TypeError, ValueError):
                raise RulesError(f"players: expected [min, max] or \"min-max\", got {v!r}") from None
            return (lo, hi)
        raise RulesError(f"players: expected [min, max] or \"min-max\", got {v!r}")
    if key in PER_COUNT_OPTIONS:
        return per_count(v, key)
    if key == "wild_rank":
        if v is None or v == "none" or v == "":
            return None
        try:
            return parse_rank(str(v))
        except CardError as e:
            raise RulesError(f"wild_rank: {e}") from None
    if key in CHOICES:
        if v not in CHOICES[key]:
            raise RulesError(f"{key}: expected one of {', '.join(CHOICES[key])}, got {v!r}")
        return v
    if key == "initial_meld":
        if v == "czech":
            return v
        return _expect_int(v, key)
    if key in ("initial_meld_values", "card_values"):
        if v is None:
            return None
        try:
            return value_table_from_data(v, key)
        except ValueError as err:  # not `e`: mypyc gives a name one type per function (CardError above)
            raise RulesError(str(err)) from None
    if key == "meld_all_at_once_deals":
        if not isinstance(v, (list, tuple)):
            raise RulesError(f"{key}: expected a list of deal numbers, got {v!r}")
        if len(v) > MAX_DEALS:
            raise RulesError(f"{key}: expected at most {MAX_DEALS} deal numbers, got {len(v)}")
        return tuple(sorted({_expect_int(x, key) for x in v}))
    if key == "max_stock_rebuilds":
        if v is None or v == "unlimited":
            return None
        return _expect_int(v, key)
    if key == "deals":
        return None if v is None else _expect_int(v, key)
    default = DEFAULTS[key]
    if isinstance(default, bool):
        return _expect_bool(v, key)
    if isinstance(default, int):
        return _expect_int(v, key)
    raise RulesError(f"{key}: cannot be set")  # pragma: no cover - every option is handled above


def suggest(key: str, names: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(key, names, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def resolve(preset: str, overrides: dict[str, Any] | None = None, name: str | None = None,
            overlay_tables: bool = True) -> RuleSet:
    """A preset plus overrides by option name, validated.  A per-player-count option given as a table
    overrides the counts it names only (``overlay``); with ``overlay_tables`` False it replaces the table."""
    if preset not in PRESETS:
        raise RulesError(f"unknown variant {preset!r}; expected one of {', '.join(PRESETS)}{suggest(preset, list(PRESETS))}")
    rules = PRESETS[preset]
    changes: dict[str, object] = {}
    for key, v in (overrides or {}).items():
        if key not in OPTION_NAMES:
            raise RulesError(f"unknown rule option {key!r}{suggest(key, OPTION_NAMES)}")
        changes[key] = _convert(key, v)
    if overlay_tables:
        players = changes.get("players", rules.players)
        assert isinstance(players, tuple)
        lo, hi = int(players[0]), int(players[1])
        for key, v in (overrides or {}).items():
            if key in PER_COUNT_OPTIONS and isinstance(v, dict):
                for entry in v:
                    a, b, _ = per_count({entry: 0}, key)[0]  # the player counts this entry names
                    if b < lo or a > hi:
                        raise RulesError(f"{key}.{entry}: {preset} is played by {lo} to {hi} players, so this entry "
                                         "would change no game")
                table: PerCount = per_count(v, key)
                changes[key] = overlay(getattr(rules, key), table, lo, hi)
    if name is not None:
        changes["name"] = name
    elif changes:
        changes["name"] = preset + "+overrides"
    rules = replace(rules, **changes)  # type: ignore[arg-type]
    validate(rules)
    return rules


def rules_from_data(data: dict[str, Any]) -> RuleSet:
    """Read back what ``RuleSet.to_data`` wrote (a resolved rule set).

    ``to_data`` leaves out options whose value is None (no wild rank, unlimited
    rebuilds, ...), so an option missing here takes its RULES 9 default, never
    the value of some preset.
    """
    base = dict(data)
    name = base.pop("name", "custom")
    for key in OPTION_NAMES:
        if key not in base and DEFAULTS[key] is not MISSING:
            base[key] = DEFAULTS[key]
    return resolve(name if name in PRESETS else "basic", base, name=name, overlay_tables=False)


def _check_bounds(r: RuleSet) -> None:
    """Every numeric option within ``BOUNDS`` (checked before anything iterates over a value)."""
    lo, hi = r.players
    bmin, bmax = BOUNDS["players"]
    if not bmin <= lo <= hi <= bmax:
        raise RulesError(f"players: min and max must be from {bmin} to {bmax}, min <= max, got {lo}-{hi}")
    for opt in PER_COUNT_OPTIONS:
        flat = len(getattr(r, opt)) == 1
        for n in range(lo, hi + 1):
            problem = out_of_bounds(opt, r.count_value(opt, n), "" if flat else f" for {n} players")
            if problem:
                raise RulesError(problem)
    for key in ("set_max", "max_wilds_per_meld", "melds_per_turn", "max_turns", "target"):
        problem = out_of_bounds(key, getattr(r, key))
        if problem:
            raise RulesError(problem)
    for key in ("initial_meld", "max_stock_rebuilds", "deals"):
        v = getattr(r, key)
        problem = out_of_bounds(key, v) if isinstance(v, int) else None
        if problem:
            raise RulesError(problem)
    for d in r.meld_all_at_once_deals:
        problem = out_of_bounds("meld_all_at_once_deals", d)
        if problem:
            raise RulesError(problem)


def validate(r: RuleSet) -> None:
    """Reject out-of-range values and impossible combinations; each message names the option and the rule."""
    _check_bounds(r)
    lo, hi = r.players
    if r.card_values is None:
        raise RulesError("card_values: must be set")
    for n in range(lo, hi + 1):
        hand = r.count_value("hand_size", n)
        need = n * hand + (1 if r.first_player_extra_card else 0) + 2
        have = r.deck_size(n)
        if need > have:
            raise RulesError(
                f"hand_size: {n} players x {hand} cards plus the upcard and a stock card need {need} cards, "
                f"but decks = {r.count_value('decks', n)} and jokers = {r.count_value('jokers', n)} give {have} (RULES 2.4)"
            )
    if r.set_max < 3:
        raise RulesError(f"set_max: a set has at least 3 cards, got {r.set_max} (RULES 4.1)")
    if r.set_distinct_suits and r.set_max > 4:
        raise RulesError(f"set_max: with set_distinct_suits a set has at most 4 cards, got {r.set_max} (RULES 4.1)")
    if r.end == "elimination" and r.scoring != "penalty":
        raise RulesError("end: elimination needs scoring = \"penalty\" (RULES 8)")
    if r.end == "deals" and r.deals is None:
        raise RulesError("deals: end = \"deals\" needs the number of deals (RULES 8)")
    if r.upcard_after_rebuild and r.stock_exhausted == "end":
        raise RulesError("upcard_after_rebuild: needs stock_exhausted = turn_over or reshuffle (RULES 6.3)")
