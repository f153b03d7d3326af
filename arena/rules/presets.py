"""The six presets of RULES.md section 10, as data.

Options not listed for a preset keep the defaults of RULES 9 (the ``RuleSet``
field defaults).  RULES 10 names the source text of each preset; the
choices RULES 10 made where sources are silent are noted beside the values
they set.
"""

from __future__ import annotations

from arena.rules.ruleset import PerCount, RuleSet
from arena.rules.values import VALUE_TABLES

ANY: int = 10**6


def _by_count(*ranges: tuple[int, int, int]) -> PerCount:
    return tuple(ranges)


def _flat(v: int) -> PerCount:
    return ((1, ANY, v),)


PRESETS: dict[str, RuleSet] = {
    # 003 "Basic Rummy"; endless stock bounded by 2 rebuilds (RULES 10).
    "basic": RuleSet(
        name="basic",
        players=(2, 6),
        decks=_flat(1),
        jokers=_flat(0),
        hand_size=_by_count((2, 2, 10), (3, 4, 7), (5, 6, 6)),
        set_distinct_suits=True,
        ace="low",
        joker_swap="none",
        melds_per_turn=1,
        stock_exhausted="turn_over",
        max_stock_rebuilds=2,
        scoring="winner_collects",
        end="target",
        target=100,
        card_values=VALUE_TABLES["basic"],
    ),
    # 003 "International"; capped at 8 players (RULES 10).
    "international": RuleSet(
        name="international",
        players=(2, 8),
        decks=_by_count((2, 5, 1), (6, ANY, 2)),
        jokers=_flat(0),
        hand_size=_by_count((2, 4, 10), (5, 5, 6), (6, ANY, 7)),
        set_distinct_suits=False,
        ace="high_or_low",
        joker_swap="any",
        melds_per_turn=0,
        go_out="discard",
        stock_exhausted="reshuffle",
        scoring="winner_collects",
        end="target",
        target=100,
        card_values=VALUE_TABLES["basic"],
    ),
    # 002 (Parlett); no target in the source, 100 chosen (RULES 10).
    "parlett": RuleSet(
        name="parlett",
        players=(2, 7),
        decks=_by_count((2, 5, 1), (6, 7, 2)),
        jokers=_by_count((2, 5, 2), (6, 7, 4)),
        hand_size=_by_count((2, 2, 10), (3, 5, 7), (6, 7, 10)),
        set_distinct_suits=False,
        ace="low",
        joker_swap="any",
        melds_per_turn=0,
        stock_exhausted="turn_over",
        upcard_after_rebuild=True,
        scoring="winner_collects",
        end="target",
        target=100,
        card_values=VALUE_TABLES["parlett"],
    ),
    # 000 (Czech Rummy); first-deal requirement 15 from the formula (RULES 10).
    "czech": RuleSet(
        name="czech",
        players=(2, 5),
        decks=_flat(2),
        jokers=_flat(4),
        hand_size=_flat(12),
        reshuffle_turned_joker=True,
        set_distinct_suits=True,
        ace="low",
        joker_swap="after_opening",
        melds_per_turn=0,
        initial_meld="czech",
        initial_meld_values=VALUE_TABLES["czech"],
        layoff="own",
        stock_exhausted="end",
        scoring="penalty",
        end="elimination",
        target=300,
        card_values=VALUE_TABLES["czech"],
    ),
    # 001 (German Rummy / Rommé); stock exhaustion ends the deal as DROV does (RULES 10).
    "german": RuleSet(
        name="german",
        players=(2, 6),
        decks=_flat(2),
        jokers=_flat(6),
        hand_size=_flat(13),
        set_distinct_suits=True,
        ace="high_or_low",
        max_wilds_per_meld=1,
        joker_swap="any",
        swapped_wild_must_be_melded=True,
        melds_per_turn=0,
        initial_meld=30,
        initial_meld_values=VALUE_TABLES["german-opening"],
        layoff="any",
        go_out="discard",
        rummy_bonus="double",
        stock_exhausted="end",
        scoring="penalty",
        end="deals",
        deals=3,
        card_values=VALUE_TABLES["german"],
    ),
    # 003 "Wrotham"; scoring not given in the source, basic's used (RULES 10).
    "wrotham": RuleSet(
        name="wrotham",
        players=(2, 6),
        decks=_flat(1),
        jokers=_flat(3),
        hand_size=_flat(7),
        first_player_extra_card=True,
        set_distinct_suits=True,
        ace="low",
        joker_swap="any",
        melds_per_turn=1,
        meld_all_at_once_deals=(4, 5, 6),
        stock_exhausted="turn_over",
        max_stock_rebuilds=2,
        scoring="winner_collects",
        end="deals",
        deals=6,
        card_values=VALUE_TABLES["basic"],
    ),
}

SOURCES: dict[str, str] = {
    "basic": 'seed 003, "Basic Rummy"',
    "international": 'seed 003, "International Rummy"',
    "parlett": "seed 002, basic rummy after David Parlett",
    "czech": "seed 000, Czech Rummy",
    "german": "seed 001, German Rummy (Rommé)",
    "wrotham": 'seed 003, "Wrotham Rummy"',
}
