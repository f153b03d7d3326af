"""The rule set: every option of RULES.md section 9 as one immutable, validated value.

``RuleSet`` holds resolved option values; ``resolve(preset, overrides)`` builds
one from a preset of ``presets.py`` plus overrides given by option name (as in
a tournament file), and rejects impossible combinations with one sentence that
names the option.  ``to_data()`` gives the plain form stored in records and
resolved tournament files, and ``from_data`` reads it back.

Every numeric option has a range (``BOUNDS``): what a game can use, so that
no value that validates can make a game impossibly large or long.  A value
outside it is rejected naming the option and the range, like a value of the
wrong type.
"""

from __future__ import annotations

import difflib
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any, Literal

from arena.rules.cards import RANK_NAMES, CardError, parse_rank
from arena.rules.values import ValueTable, value_table_from_data

Ace = Literal["low", "high_or_low", "wrap"]
JokerSwap = Literal["none", "any", "after_opening"]
TakeDiscard = Literal["yes", "only_to_open"]
Layoff = Literal["any", "after_own_meld", "own"]
GoOut = Literal["any", "discard"]
RummyBonus = Literal["none", "double", "plus10"]
StockExhausted = Literal["turn_over", "reshuffle", "end"]
Scoring = Literal["winner_collects", "settle", "penalty"]
End = Literal["target", "deals", "elimination"]

# (lowest player count, highest player count, value)
PerCount = tuple[tuple[int, int, int], ...]

CHOICES: dict[str, tuple[str, ...]] = {
    "ace": ("low", "high_or_low", "wrap"),
    "joker_swap": ("none", "any", "after_opening"),
    "take_discard_before_opening": ("yes", "only_to_open"),
    "layoff": ("any", "after_own_meld", "own"),
    "go_out": ("any", "discard"),
    "rummy_bonus": ("none", "double", "plus10"),
    "stock_exhausted": ("turn_over", "reshuffle", "end"),
    "scoring": ("winner_collects", "settle", "penalty"),
    "end": ("target", "deals", "elimination"),
}
CARDS_PER_DECK = 52

# Not a rule: a guard so that no game, whatever the bots do, runs forever.  A game
# still going after this many deals ends as if its end condition had been met.
MAX_DEALS = 1000

BOUNDS: dict[str, tuple[int, int]] = {
    "players": (2, 8),  # table sizes: RULES 10 caps the largest preset (international) at 8
    "decks": (1, 4),  # 52-card decks (RULES 1); no preset uses more than 2
    "jokers": (0, 16),  # jokers in all: up to 4 per deck
    "hand_size": (1, 30),  # RULES 2.4; the presets deal 6 to 13
    "set_max": (3, 40),  # RULES 4.1: 4 decks hold 16 cards of a rank, 16 more of a wild rank, 8 jokers
    "max_wilds_per_meld": (0, 40),  # RULES 4.3, 0 = no cap; no meld holds more cards than a set can
    "melds_per_turn": (0, 20),  # RULES 3.2, 0 = unlimited; a 30-card hand holds at most 10 melds
    "meld_all_at_once_deals": (1, MAX_DEALS),  # deal numbers (RULES 3.5)
    "initial_meld": (0, 10_000),  # points to open (RULES 5.1)
    "max_stock_rebuilds": (0, 1_000),  # RULES 6.3; absent = unlimited
    "max_turns": (1, 5_000),  # turns per deal (RULES 6.4)
    "target": (1, 100_000),  # RULES 8
    "deals": (1, MAX_DEALS),  # RULES 8; a game never has more deals than MAX_DEALS
}
"""The allowed range (inclusive) of every numeric option; for per-count options, of each value."""


class RulesError(ValueError):
    """An option value or combination that RULES.md does not allow."""


DESCRIPTIONS: dict[str, str] = {
    "name": "the preset's name, or PRESET+overrides once an option is changed",
    "players": "allowed table sizes, min-max (RULES 9, 10)",
    "decks": "how many 52-card decks, possibly by player count (RULES 1)",
    "jokers": "how many jokers in all, possibly by player count (RULES 1)",
    "hand_size": "cards dealt to each player, possibly by player count (RULES 2.4)",
    "wild_rank": "a rank whose cards may also be used as wilds; unset = none (RULES 4.3)",
    "first_player_extra_card": "the player left of the dealer gets one card more and skips their first draw (RULES 2.4)",
    "reshuffle_turned_joker": "a wild turned up as the first discard goes back into the stock (RULES 2.5)",
    "set_max": "most cards a set may hold (RULES 4.1)",
    "set_distinct_suits": "no two natural cards of a set may share a suit (RULES 4.1)",
    "ace": "the ace in runs: low only, high_or_low (either end) or wrap (round the corner) (RULES 4.2)",
    "max_wilds_per_meld": "most wilds in one meld; 0 = no cap (RULES 4.3)",
    "wilds_at_most_naturals": "a meld may not hold more wilds than natural cards (RULES 4.3)",
    "wilds_adjacent": "two wilds may stand next to each other in a run; false forbids it (RULES 4.3)",
    "joker_swap": "when a natural card may take a wild's place in a meld: none, any, after_opening (RULES 4.4)",
    "swapped_wild_must_be_melded": "a wild taken by a swap must go into another meld, or be discarded, that turn (RULES 4.4)",
    "melds_per_turn": "most new melds per turn; 0 = unlimited (RULES 3.2)",
    "meld_all_at_once_deals": "deals in which table play is allowed only in the turn that goes out (RULES 3.5)",
    "take_discard_before_opening": "yes, or only_to_open: before opening, take the discard only to open with it (RULES 3.1)",
    "initial_meld": "what opening needs: 0 (any meld), a number of points, or czech (RULES 5.1)",
    "initial_meld_values": "card values counted towards the opening requirement; unset = card_values (RULES 5.1)",
    "opening_exempt_when_going_out": "going out in one turn with nothing on the table before needs no minimum (RULES 5.1)",
    "layoff": "onto whose melds a player may lay off: any, after_own_meld, own (RULES 5.3)",
    "go_out": "any (table play may empty the hand) or discard (the last card leaves by the discard) (RULES 3.4)",
    "rummy_bonus": "going out in one turn: none, double (the deal's scores doubled) or plus10 (RULES 6.2)",
    "stock_exhausted": "an empty stock: turn_over or reshuffle the discard pile into a new one, or end the deal (RULES 6.3)",
    "upcard_after_rebuild": "a rebuilt stock turns its top card up as the new discard pile (RULES 6.3)",
    "max_stock_rebuilds": "most stock rebuilds per deal; unset = unlimited, 0 = never (RULES 6.3)",
    "max_turns": "turns of a deal after which it ends with no one out (RULES 6.4)",
    "scoring": "winner_collects, settle (each loser pays the winner) or penalty (each adds their hand) (RULES 7)",
    "card_values": "what each card left in a hand counts at the end of a deal (RULES 7, 10)",
    "end": "when the game ends: target (a total reaches target), deals (after deals), elimination (RULES 8)",
    "target": "the total that ends the game, or under elimination puts a player out (RULES 8)",
    "deals": "how many deals a game has under end = deals (RULES 8)",
}
"""What each ``RuleSet`` field (below, in the same order) does, in one line; ``arena variants`` prints them."""


@dataclass(frozen=True, slots=True)
class RuleSet:
    name: str
    players: tuple[int, int]
    decks: PerCount
    jokers: PerCount
    hand_size: PerCount
    wild_rank: int | None = None
    first_player_extra_card: bool = False
    reshuffle_turned_joker: bool = False
    set_max: int = 4
    set_distinct_suits: bool = True
    ace: Ace = "low"
    max_wilds_per_meld: int = 0
    wilds_at_most_naturals: bool = True
    wilds_adjacent: bool = True
    joker_swap: JokerSwap = "any"
    swapped_wild_must_be_melded: bool = False
    melds_per_turn: int = 0
    meld_all_at_once_deals: tuple[int, ...] = ()
    take_discard_before_opening: TakeDiscard = "yes"
    initial_meld: int | Literal["czech"] = 0
    initial_meld_values: ValueTable | None = None
    opening_exempt_when_going_out: bool = False
    layoff: Layoff = "any"
    go_out: GoOut = "any"
    rummy_bonus: RummyBonus = "none"
    stock_exhausted: StockExhausted = "turn_over"
    upcard_after_rebuild: bool = False
    max_stock_rebuilds: int | None = None
    max_turns: int = 500
    scoring: Scoring = "winner_collects"
    card_values: ValueTable | None = None
    end: End = "target"
    target: int = 100
    deals: int | None = None

    # -- derived values -------------------------------------------------
    @property
    def ace_is_high(self) -> bool:
        """Whether ``ace_high`` values apply (RULES 7: whenever ``ace`` is not ``low``)."""
        return self.ace != "low"

    @property
    def values(self) -> ValueTable:
        assert self.card_values is not None
        return self.card_values

    @property
    def opening_values(self) -> ValueTable:
        return self.initial_meld_values or self.values

    def count_value(self, option: str, players: int) -> int:
        table: PerCount = getattr(self, option)
        for lo, hi, value in table:
            if lo <= players <= hi:
                return value
        raise RulesError(f"{option}: the table gives no value for {players} players")

    def deck_size(self, players: int) -> int:
        return self.count_value("decks", players) * CARDS_PER_DECK + self.count_value("jokers", players)

    # -- plain data -----------------------------------------------------
    def to_data(self) -> dict[str, Any]:
        """Every option as TOML/JSON-friendly data (None values left out)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            if f.name == "players":
                v = list(v)
            elif f.name in PER_COUNT_OPTIONS:
                v = _per_count_to_data(v)
            elif f.name == "wild_rank":
                v = RANK_NAMES[v]
            elif f.name == "meld_all_at_once_deals":
                v = list(v)
            elif isinstance(v, ValueTable):
                v = v.to_data()
            out[f.name] = v
        return out

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> RuleSet:
        """Read back what ``to_data`` wrote (a resolved rule set).

        ``to_data`` leaves out options whose value is None (no wild rank, unlimited
        rebuilds, ...), so an option missing here takes its RULES 9 default, never
        the value of some preset.
        """
        base = dict(data)
        name = base.pop("name", "custom")
        for key in OPTION_NAMES:
            if key not in base and _DEFAULTS[key] is not MISSING:
                base[key] = _DEFAULTS[key]
        return resolve(name if name in _preset_names() else "basic", base, name=name)



PER_COUNT_OPTIONS = ("decks", "jokers", "hand_size")
OPTION_NAMES = tuple(f.name for f in fields(RuleSet) if f.name != "name")


def _preset_names() -> tuple[str, ...]:
    from arena.rules.presets import PRESETS

    return tuple(PRESETS)


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
            if not isinstance(v, int) or isinstance(v, bool):
                raise RulesError(f"{key}.{k}: expected a whole number, got {v!r}")
            out.append((lo, hi, v))
        return tuple(sorted(out))
    raise RulesError(f"{key}: expected a whole number or a table by player count, got {data!r}")


def _per_count_to_data(pc: PerCount) -> int | dict[str, int]:
    if len(pc) == 1 and pc[0][0] <= 2 and pc[0][1] >= 10**6:
        return pc[0][2]
    out = {}
    for lo, hi, v in pc:
        out[str(lo) if lo == hi else (f"{lo}+" if hi >= 10**6 else f"{lo}-{hi}")] = v
    return out


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
        except ValueError as e:
            raise RulesError(str(e)) from None
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
    default = _DEFAULTS[key]
    if isinstance(default, bool):
        return _expect_bool(v, key)
    if isinstance(default, int):
        return _expect_int(v, key)
    raise RulesError(f"{key}: cannot be set")  # pragma: no cover - every option is handled above


_DEFAULTS: dict[str, object] = {f.name: f.default for f in fields(RuleSet)}


def suggest(key: str, names: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(key, names, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def resolve(preset: str, overrides: dict[str, Any] | None = None, name: str | None = None) -> RuleSet:
    """A preset plus overrides by option name, validated."""
    from arena.rules.presets import PRESETS

    if preset not in PRESETS:
        raise RulesError(f"unknown variant {preset!r}; expected one of {', '.join(PRESETS)}{suggest(preset, list(PRESETS))}")
    rules = PRESETS[preset]
    changes: dict[str, object] = {}
    for key, v in (overrides or {}).items():
        if key not in OPTION_NAMES:
            raise RulesError(f"unknown rule option {key!r}{suggest(key, OPTION_NAMES)}")
        changes[key] = _convert(key, v)
    if name is not None:
        changes["name"] = name
    elif changes:
        changes["name"] = preset + "+overrides"
    rules = replace(rules, **changes)  # type: ignore[arg-type]
    validate(rules)
    return rules


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
