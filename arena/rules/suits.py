"""Relabelling the suits of a deal, and whether a rule set treats all suits alike.

A **suit map** is a permutation of the four suits, ``suit_map[s]`` being what
suit ``s`` becomes (suits numbered as in ``arena.rules.cards``: 0..3 for C D H S).
Applied to every card of a deck it deals the same game up to the names of the
suits: the same ranks in the same places, the same suit pattern, other cards.
Jokers have no suit and stay jokers (RULES 1).

Written as text, a suit map is the four suit letters that C, D, H and S
become, in that order: ``"HSCD"`` turns clubs into hearts, diamonds into
spades, hearts into clubs and spades into diamonds; ``"CDHS"`` is the
identity.  Game record headers carry it in that form.

Every rule of RULES.md names suits only to ask that cards share one (a run,
RULES 4.2) or differ (``set_distinct_suits``, RULES 4.1, 4.4); card values
depend on rank alone (RULES 7, 10).  So relabelling the suits of a deal maps
every legal action to a legal action and every score to the same score.
``suit_asymmetry`` says where the engine cannot promise that for a rule set.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import permutations

from arena.rules.cards import JOKER, SUITS, Card, rank_of, suit_of
from arena.rules.options import OPTION_NAMES, RuleSet

SuitMap = tuple[int, int, int, int]

IDENTITY: SuitMap = (0, 1, 2, 3)
ALL_SUIT_MAPS: tuple[SuitMap, ...] = tuple(permutations(range(4)))  # type: ignore[arg-type]
"""The 24 suit maps, identity first."""


class SuitMapError(ValueError):
    """A value that is not a permutation of the four suits: one sentence."""


def check_suit_map(value: object) -> SuitMap:
    """``value`` as a SuitMap if it is a permutation of 0..3, else SuitMapError."""
    if (isinstance(value, (tuple, list)) and len(value) == 4
            and all(isinstance(s, int) and not isinstance(s, bool) for s in value)
            and sorted(value) == [0, 1, 2, 3]):
        return (value[0], value[1], value[2], value[3])
    raise SuitMapError(f"a suit map is a permutation of the four suits 0..3, got {value!r}")


def relabel(card: Card, suit_map: SuitMap) -> Card:
    """``card`` with its suit renamed by ``suit_map``; a joker stays a joker (RULES 1)."""
    if card == JOKER:
        return card
    return rank_of(card) * 4 + suit_map[suit_of(card)]


def relabel_all(cards: Iterable[Card], suit_map: SuitMap) -> list[Card]:
    """Every card relabelled, in the same order (a deck keeps its order, RULES 2.3)."""
    return [relabel(c, suit_map) for c in cards]


def to_text(suit_map: SuitMap) -> str:
    """The record form: what C, D, H and S become (``"HSCD"``)."""
    return "".join(SUITS[s] for s in suit_map)


def from_text(text: object) -> SuitMap:
    """Read the record form back; SuitMapError unless it is the four suit letters in some order."""
    if not isinstance(text, str) or len(text) != 4 or sorted(text.upper()) != sorted(SUITS):
        raise SuitMapError(f"a suit map is the four suit letters C D H S in some order (what C, D, H and S "
                           f"become, e.g. \"HSCD\"), got {text!r}")
    return check_suit_map([SUITS.index(ch) for ch in text.upper()])


# -- which rule sets are suit-symmetric ----------------------------------------------------------

SUIT_FREE_OPTIONS: frozenset[str] = frozenset({
    "players", "decks", "jokers", "hand_size",          # counts (RULES 2.4, 9)
    "wild_rank",                                         # a rank, never a suit (RULES 4.3)
    "first_player_extra_card", "reshuffle_turned_joker",  # RULES 2.4, 2.5: wilds are decided by rank
    "set_max", "set_distinct_suits",                     # RULES 4.1: suits must differ, none is singled out
    "ace",                                               # RULES 4.2: ranks only; a run is "one suit", any suit
    "max_wilds_per_meld", "wilds_at_most_naturals", "wilds_adjacent",  # RULES 4.3
    "joker_swap", "swapped_wild_must_be_melded",         # RULES 4.4
    "melds_per_turn", "meld_all_at_once_deals",          # RULES 3.2, 3.5
    "take_discard_before_opening",                       # RULES 3.1
    "initial_meld", "initial_meld_values", "card_values",  # RULES 5.1, 7: value tables are by rank
    "opening_exempt_when_going_out", "layoff", "go_out", "rummy_bonus",  # RULES 5, 3.4, 6.2
    "stock_exhausted", "upcard_after_rebuild", "max_stock_rebuilds", "max_turns",  # RULES 6.3, 6.4
    "scoring", "end", "target", "deals",                 # RULES 7, 8
})
"""Every option whose values name no suit: each treats the four suits alike."""


def suit_asymmetry(rules: RuleSet) -> str | None:
    """Why relabelling the suits of a deal might not give the same game under ``rules``, or None.

    None means: every legal action maps to a legal action with the same effect
    and every score is unchanged (``tests/rules/test_suit_symmetry.py`` checks it for
    every preset).  A sentence names the option and the rule otherwise:

    - an option not in ``SUIT_FREE_OPTIONS`` (a new option must be shown to
      treat suits alike before twins may be relabelled under it);
    - ``wild_rank`` with two or more decks: whether taking the discard leaves
      a legal finish (RULES 3.1) is then decided, for a hand of equal cards, by
      a bounded search that tries cards of the wild rank in suit order, so a
      relabelled twin is not proven to allow the same draws.
    """
    for option in OPTION_NAMES:
        if option not in SUIT_FREE_OPTIONS:
            return f"option {option} is not known to treat the four suits alike (RULES 9)"
    lo, hi = rules.players
    if rules.wild_rank is not None and any(rules.count_value("decks", n) >= 2 for n in range(lo, hi + 1)):
        return ("with wild_rank and two or more decks, whether taking the discard leaves a legal finish "
                "(RULES 3.1) is decided by a bounded search that tries cards of the wild rank in suit order")
    return None
