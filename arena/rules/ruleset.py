"""The rule set's schema: every option of RULES.md section 9 as one immutable value.

``RuleSet`` holds resolved option values with their RULES 9 defaults; this
module also names the options (``OPTION_NAMES``, ``DESCRIPTIONS``), their
choices and numeric ranges (``CHOICES``, ``BOUNDS``) and gives ``to_data()``,
the plain form stored in records.  Building and checking a rule set from a
preset and overrides is ``options.py``; the presets are ``presets.py`` (both
import this module, which imports neither).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from arena.rules.cards import RANK_NAMES
from arena.rules.frozen import by_fields
from arena.rules.values import ValueTable

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

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)


PER_COUNT_OPTIONS = ("decks", "jokers", "hand_size")
OPTION_NAMES = tuple(f.name for f in fields(RuleSet) if f.name != "name")


def _per_count_to_data(pc: PerCount) -> int | dict[str, int]:
    if len(pc) == 1 and pc[0][0] <= 2 and pc[0][1] >= 10**6:
        return pc[0][2]
    out = {}
    for lo, hi, v in pc:
        out[str(lo) if lo == hi else (f"{lo}+" if hi >= 10**6 else f"{lo}-{hi}")] = v
    return out


DEFAULTS: dict[str, object] = {f.name: f.default for f in fields(RuleSet)}
"""Each option's default (RULES 9); ``dataclasses.MISSING`` for those without one."""
