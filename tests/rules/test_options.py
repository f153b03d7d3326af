"""Rule options and presets (RULES 9 and 10): every preset value, overrides, validation."""

from __future__ import annotations

import time
from dataclasses import fields

import pytest

from arena.rules.game import Game
from arena.rules.options import (
    BOUNDS,
    DESCRIPTIONS,
    MAX_DEALS,
    OPTION_NAMES,
    PER_COUNT_OPTIONS,
    RulesError,
    RuleSet,
    resolve,
    rules_from_data,
)
from arena.rules.presets import PRESETS
from arena.rules.values import VALUE_TABLES
from arena.selfplay import play_game, policies_for
from tests.engine_helpers import card_count

PRESET_NAMES = ("basic", "international", "parlett", "czech", "german", "wrotham")


def test_10_the_six_presets_exist() -> None:
    assert tuple(PRESETS) == PRESET_NAMES


def _by_count(r: RuleSet, option: str) -> dict[int, int]:
    lo, hi = r.players
    return {n: r.count_value(option, n) for n in range(lo, hi + 1)}


# RULES 10, row by row
EXPECTED: dict[str, dict[str, object]] = {
    "players": {"basic": (2, 6), "international": (2, 8), "parlett": (2, 7), "czech": (2, 5), "german": (2, 6), "wrotham": (2, 6)},
    "first_player_extra_card": {"basic": False, "international": False, "parlett": False, "czech": False, "german": False, "wrotham": True},
    "reshuffle_turned_joker": {"basic": False, "international": False, "parlett": False, "czech": True, "german": False, "wrotham": False},
    "set_distinct_suits": {"basic": True, "international": False, "parlett": False, "czech": True, "german": True, "wrotham": True},
    "ace": {"basic": "low", "international": "high_or_low", "parlett": "low", "czech": "low", "german": "high_or_low", "wrotham": "low"},
    "max_wilds_per_meld": {"basic": 0, "international": 0, "parlett": 0, "czech": 0, "german": 1, "wrotham": 0},
    "joker_swap": {"basic": "none", "international": "any", "parlett": "any", "czech": "after_opening", "german": "any", "wrotham": "any"},
    "swapped_wild_must_be_melded": {"basic": False, "international": False, "parlett": False, "czech": False, "german": True, "wrotham": False},
    "melds_per_turn": {"basic": 1, "international": 0, "parlett": 0, "czech": 0, "german": 0, "wrotham": 1},
    "meld_all_at_once_deals": {"basic": (), "international": (), "parlett": (), "czech": (), "german": (), "wrotham": (4, 5, 6)},
    "initial_meld": {"basic": 0, "international": 0, "parlett": 0, "czech": "czech", "german": 30, "wrotham": 0},
    "layoff": {"basic": "any", "international": "any", "parlett": "any", "czech": "own", "german": "any", "wrotham": "any"},
    "go_out": {"basic": "any", "international": "discard", "parlett": "any", "czech": "any", "german": "discard", "wrotham": "any"},
    "rummy_bonus": {"basic": "none", "international": "none", "parlett": "none", "czech": "none", "german": "double", "wrotham": "none"},
    "stock_exhausted": {"basic": "turn_over", "international": "reshuffle", "parlett": "turn_over", "czech": "end", "german": "end", "wrotham": "turn_over"},
    "upcard_after_rebuild": {"basic": False, "international": False, "parlett": True, "czech": False, "german": False, "wrotham": False},
    "max_stock_rebuilds": {"basic": 2, "international": None, "parlett": None, "czech": None, "german": None, "wrotham": 2},
    "scoring": {"basic": "winner_collects", "international": "winner_collects", "parlett": "winner_collects", "czech": "penalty", "german": "penalty", "wrotham": "winner_collects"},
    "end": {"basic": "target", "international": "target", "parlett": "target", "czech": "elimination", "german": "deals", "wrotham": "deals"},
    "wild_rank": dict.fromkeys(PRESET_NAMES, None),
    "set_max": dict.fromkeys(PRESET_NAMES, 4),
    "wilds_at_most_naturals": dict.fromkeys(PRESET_NAMES, True),
    "wilds_adjacent": dict.fromkeys(PRESET_NAMES, True),
    "take_discard_before_opening": dict.fromkeys(PRESET_NAMES, "yes"),
    "opening_exempt_when_going_out": dict.fromkeys(PRESET_NAMES, False),
    "max_turns": dict.fromkeys(PRESET_NAMES, 500),
}


@pytest.mark.parametrize("option", sorted(EXPECTED))
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_10_preset_option_values(preset: str, option: str) -> None:
    assert getattr(resolve(preset), option) == EXPECTED[option][preset]


def test_10_targets_and_deals() -> None:
    assert (resolve("basic").target, resolve("international").target, resolve("parlett").target) == (100, 100, 100)
    assert resolve("czech").target == 300
    assert resolve("german").deals == 3 and resolve("wrotham").deals == 6


def test_10_decks_jokers_hand_sizes_by_player_count() -> None:
    b = resolve("basic")
    assert _by_count(b, "decks") == dict.fromkeys(range(2, 7), 1) and _by_count(b, "jokers") == dict.fromkeys(range(2, 7), 0)
    assert _by_count(b, "hand_size") == {2: 10, 3: 7, 4: 7, 5: 6, 6: 6}
    i = resolve("international")
    assert _by_count(i, "decks") == {2: 1, 3: 1, 4: 1, 5: 1, 6: 2, 7: 2, 8: 2}
    assert _by_count(i, "jokers") == dict.fromkeys(range(2, 9), 0)
    assert _by_count(i, "hand_size") == {2: 10, 3: 10, 4: 10, 5: 6, 6: 7, 7: 7, 8: 7}
    p = resolve("parlett")
    assert _by_count(p, "decks") == {2: 1, 3: 1, 4: 1, 5: 1, 6: 2, 7: 2}
    assert _by_count(p, "jokers") == {2: 2, 3: 2, 4: 2, 5: 2, 6: 4, 7: 4}
    assert _by_count(p, "hand_size") == {2: 10, 3: 7, 4: 7, 5: 7, 6: 10, 7: 10}
    c = resolve("czech")
    assert _by_count(c, "decks") == dict.fromkeys(range(2, 6), 2) and _by_count(c, "jokers") == dict.fromkeys(range(2, 6), 4)
    assert _by_count(c, "hand_size") == dict.fromkeys(range(2, 6), 12)
    g = resolve("german")
    assert _by_count(g, "decks") == dict.fromkeys(range(2, 7), 2) and _by_count(g, "jokers") == dict.fromkeys(range(2, 7), 6)
    assert _by_count(g, "hand_size") == dict.fromkeys(range(2, 7), 13)
    w = resolve("wrotham")
    assert _by_count(w, "decks") == dict.fromkeys(range(2, 7), 1) and _by_count(w, "jokers") == dict.fromkeys(range(2, 7), 3)
    assert _by_count(w, "hand_size") == dict.fromkeys(range(2, 7), 7)


def test_10_value_tables() -> None:
    basic, parlett, czech, german, opening = (VALUE_TABLES[k] for k in ("basic", "parlett", "czech", "german", "german-opening"))
    assert basic.ranks[1:] == (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10) and basic.joker == 15 and basic.ace_high == 15
    assert parlett.ranks[1:] == basic.ranks[1:] and parlett.joker == 15 and parlett.ace_high == 11
    assert czech.ranks[1:] == (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13) and czech.joker == 15 and czech.ace_high is None
    assert german.ranks[1:] == (15, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10) and german.joker == 20 and german.ace_high == 15
    assert opening.ranks[1:] == (11, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10) and opening.ace_low_in_run == 1
    assert {p: resolve(p).card_values.name for p in PRESET_NAMES} == {  # type: ignore[union-attr]
        "basic": "basic", "international": "basic", "parlett": "parlett", "czech": "czech", "german": "german", "wrotham": "basic"}
    assert resolve("czech").opening_values.name == "czech" and resolve("german").opening_values.name == "german-opening"
    assert resolve("basic").opening_values is resolve("basic").card_values


def test_9_defaults_of_a_ruleset() -> None:
    r = RuleSet(name="x", players=(2, 6), decks=((1, 99, 1),), jokers=((1, 99, 0),), hand_size=((1, 99, 7),))
    assert (r.wild_rank, r.first_player_extra_card, r.reshuffle_turned_joker, r.set_max, r.set_distinct_suits, r.ace) == (None, False, False, 4, True, "low")
    assert (r.max_wilds_per_meld, r.wilds_at_most_naturals, r.wilds_adjacent, r.joker_swap, r.swapped_wild_must_be_melded) == (0, True, True, "any", False)
    assert (r.melds_per_turn, r.meld_all_at_once_deals, r.take_discard_before_opening, r.initial_meld) == (0, (), "yes", 0)
    assert (r.opening_exempt_when_going_out, r.layoff, r.go_out, r.rummy_bonus) == (False, "any", "any", "none")
    assert (r.stock_exhausted, r.upcard_after_rebuild, r.max_stock_rebuilds, r.max_turns) == ("turn_over", False, None, 500)
    assert (r.scoring, r.end, r.target, r.deals) == ("winner_collects", "target", 100, None)


OVERRIDES: list[tuple[str, object, object]] = [
    ("players", [2, 4], (2, 4)),
    ("players", "3-5", (3, 5)),
    ("decks", 2, ((1, 10**6, 2),)),
    ("jokers", {"2": 1, "3-6": 2}, ((2, 2, 1), (3, 6, 2))),
    ("hand_size", {"2-4": 7, "5+": 6}, ((2, 4, 7), (5, 10**6, 6))),
    ("wild_rank", "2", 2),
    ("wild_rank", "none", None),
    ("first_player_extra_card", True, True),
    ("reshuffle_turned_joker", True, True),
    ("set_max", 3, 3),
    ("set_distinct_suits", False, False),
    ("ace", "wrap", "wrap"),
    ("max_wilds_per_meld", 2, 2),
    ("wilds_at_most_naturals", False, False),
    ("wilds_adjacent", False, False),
    ("joker_swap", "after_opening", "after_opening"),
    ("swapped_wild_must_be_melded", True, True),
    ("melds_per_turn", 2, 2),
    ("meld_all_at_once_deals", [3, 1], (1, 3)),
    ("take_discard_before_opening", "only_to_open", "only_to_open"),
    ("initial_meld", 40, 40),
    ("initial_meld", "czech", "czech"),
    ("opening_exempt_when_going_out", True, True),
    ("layoff", "after_own_meld", "after_own_meld"),
    ("go_out", "discard", "discard"),
    ("rummy_bonus", "plus10", "plus10"),
    ("stock_exhausted", "reshuffle", "reshuffle"),
    ("upcard_after_rebuild", True, True),
    ("max_stock_rebuilds", 0, 0),
    ("max_stock_rebuilds", "unlimited", None),
    ("max_turns", 50, 50),
    ("scoring", "settle", "settle"),
    ("target", 500, 500),
    ("deals", 4, 4),
]


@pytest.mark.parametrize("option, value, want", OVERRIDES, ids=[f"{o}={v}" for o, v, _ in OVERRIDES])
def test_9_every_option_can_be_overridden(option: str, value: object, want: object) -> None:
    r = resolve("basic", {option: value})
    assert getattr(r, option) == want
    assert r.name == "basic+overrides"
    # and it survives the plain-data round trip of records
    assert rules_from_data(r.to_data()) == r


def test_9_value_table_overrides() -> None:
    r = resolve("basic", {"card_values": "czech", "initial_meld_values": "german-opening"})
    assert r.card_values == VALUE_TABLES["czech"] and r.opening_values == VALUE_TABLES["german-opening"]
    inline = dict.fromkeys("A23456789TJQK", 5) | {"JK": 25, "ace_high": 7}
    r = resolve("basic", {"card_values": inline})
    assert r.values.card(0, False) == 25 and r.values.ranks[1:] == (5,) * 13 and r.values.ace_high == 7
    assert rules_from_data(r.to_data()) == r


def test_9_every_option_is_covered_by_the_override_tests() -> None:
    covered = {o for o, _, _ in OVERRIDES} | {"card_values", "initial_meld_values", "end", "scoring"}
    assert set(OPTION_NAMES) <= covered


def test_9_every_ruleset_field_has_a_one_line_description() -> None:
    names = [f.name for f in fields(RuleSet)]
    assert list(DESCRIPTIONS) == names  # every field, no other key, in the order of the fields
    for name, text in DESCRIPTIONS.items():
        assert text.strip() and "\n" not in text and len(text) <= 110, name


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_9_presets_round_trip_through_plain_data(preset: str) -> None:
    r = resolve(preset)
    assert rules_from_data(r.to_data()) == r


@pytest.mark.parametrize(
    "overrides, needle",
    [
        ({"nonsense": 1}, "unknown rule option"),
        ({"layof": "own"}, "did you mean 'layoff'"),
        ({"ace": "sideways"}, "ace: expected one of low, high_or_low, wrap"),
        ({"set_max": 2}, "set_max"),
        ({"set_max": 5}, "set_max"),  # distinct suits: at most 4
        ({"end": "elimination"}, "elimination needs scoring"),
        ({"end": "deals"}, "deals"),
        ({"upcard_after_rebuild": True, "stock_exhausted": "end"}, "upcard_after_rebuild"),
        ({"hand_size": 30}, "hand_size"),
        ({"players": [1, 4]}, "players"),
        ({"max_turns": 0}, "max_turns"),
        ({"wild_rank": "X"}, "wild_rank"),
        ({"first_player_extra_card": "yes"}, "first_player_extra_card: expected true or false"),
        ({"melds_per_turn": -1}, "melds_per_turn"),
        ({"card_values": "nope"}, "card_values"),
        ({"meld_all_at_once_deals": [0]}, "meld_all_at_once_deals"),
    ],
)
def test_9_impossible_values_are_rejected_naming_the_option(overrides: dict[str, object], needle: str) -> None:
    with pytest.raises(RulesError) as e:
        resolve("basic", overrides)
    assert needle in str(e.value)


def test_9_set_max_above_4_without_distinct_suits() -> None:
    assert resolve("international", {"set_max": 8}).set_max == 8


def test_10_unknown_preset() -> None:
    with pytest.raises(RulesError, match="unknown variant 'germn'.*did you mean 'german'"):
        resolve("germn")


def test_10_elimination_only_with_penalty() -> None:
    assert resolve("czech").end == "elimination"
    with pytest.raises(RulesError):
        resolve("czech", {"scoring": "settle"})


# -- every numeric option is bounded by what a game can use ------------------------

# For each bounded option: extra overrides under which its highest value is otherwise legal.
AT_MAX: dict[str, dict[str, object]] = {
    "players": {"hand_size": 7, "decks": 2},
    "decks": {},
    "jokers": {},
    "hand_size": {"decks": 4, "players": [2, 4]},
    "set_max": {"set_distinct_suits": False},
    "max_wilds_per_meld": {},
    "melds_per_turn": {},
    "meld_all_at_once_deals": {},
    "initial_meld": {},
    "max_stock_rebuilds": {},
    "max_turns": {},
    "target": {},
    "deals": {"end": "deals"},
}


def _value(option: str, v: int) -> object:
    if option == "players":
        return [2, v] if v >= 2 else [v, 4]
    if option == "meld_all_at_once_deals":
        return [v]
    return v


def test_9_every_numeric_option_has_a_range() -> None:
    numeric = {f.name for f in fields(RuleSet)
               if f.name in PER_COUNT_OPTIONS or f.name in ("players", "meld_all_at_once_deals", "initial_meld",
                                                              "max_stock_rebuilds", "deals")
               or (isinstance(f.default, int) and not isinstance(f.default, bool))}
    assert numeric == set(BOUNDS) == set(AT_MAX)
    assert BOUNDS["deals"][1] == MAX_DEALS and BOUNDS["decks"] == (1, 4)


@pytest.mark.parametrize("option", sorted(BOUNDS))
def test_9_the_highest_value_of_each_option_validates(option: str) -> None:
    lo, hi = BOUNDS[option]
    r = resolve("basic", {**AT_MAX[option], option: _value(option, hi)})
    r2 = resolve("basic", {**AT_MAX[option], option: _value(option, lo)})
    assert rules_from_data(r.to_data()) == r and rules_from_data(r2.to_data()) == r2


@pytest.mark.parametrize("option", sorted(BOUNDS))
@pytest.mark.parametrize("side", ["below", "above"])
def test_9_a_value_outside_the_range_is_rejected_naming_option_and_range(option: str, side: str) -> None:
    lo, hi = BOUNDS[option]
    v = lo - 1 if side == "below" else hi + 1
    with pytest.raises(RulesError) as e:
        resolve("basic", {**AT_MAX[option], option: _value(option, v)})
    msg = str(e.value)
    assert msg.startswith(f"{option}: ") and f"{lo} to {hi}" in msg and msg.count(". ") == 0, msg


@pytest.mark.parametrize("overrides", [
    {"decks": 1_000_000},
    {"decks": {"2": 1, "3-6": 10**12}},
    {"jokers": 10**9},
    {"hand_size": {"2-6": 10**9}},
    {"players": [2, 10**9]},
    {"players": "2-1000000000"},
    {"max_turns": 10**18},
    {"target": 10**18},
    {"deals": 10**9, "end": "deals"},
    {"meld_all_at_once_deals": list(range(1, 2002))},
    {"max_stock_rebuilds": 10**9},
])
def test_9_huge_values_are_rejected_at_once(overrides: dict[str, object]) -> None:
    start = time.perf_counter()
    with pytest.raises(RulesError) as e:
        resolve("basic", overrides)
    assert time.perf_counter() - start < 0.5
    key = next(iter(overrides))
    assert str(e.value).startswith(f"{key}: ")


def test_9_a_per_count_value_out_of_range_names_the_player_count() -> None:
    with pytest.raises(RulesError, match=r"^decks: must be from 1 to 4 for 3 players, got 9$"):
        resolve("basic", {"decks": {"2": 1, "3-6": 9}})
    with pytest.raises(RulesError, match=r"^decks: must be from 1 to 4, got 1000000$"):
        resolve("basic", {"decks": 1_000_000})


def test_9_inline_card_values_are_bounded() -> None:
    inline = dict.fromkeys("A23456789TJQK", 5) | {"JK": 1001}
    with pytest.raises(RulesError, match=r"^card_values\.JK: expected a whole number from 0 to 1000"):
        resolve("basic", {"card_values": inline})
    assert resolve("basic", {"card_values": inline | {"JK": 1000}}).values.joker == 1000


def test_9_duplicate_all_at_once_deals_count_once() -> None:
    assert resolve("basic", {"meld_all_at_once_deals": [3, 1, 3]}).meld_all_at_once_deals == (1, 3)


def test_9_a_game_at_the_largest_values_plays_to_its_end() -> None:
    r = resolve("international", {
        "players": [2, 7], "decks": 4, "jokers": 16, "hand_size": 30, "set_max": 40, "max_wilds_per_meld": 40,
        "melds_per_turn": 20, "max_turns": 5000, "end": "deals", "deals": 2, "wild_rank": "2",
        "wilds_at_most_naturals": False,
    })
    game, _ = play_game(r, policies_for(r, ("greedy", "random") * 3 + ("greedy",), 3), 3)
    assert game.over and card_count(game) == game.deck_size
    assert Game(r, 7, 1).deck_size == 4 * 52 + 16


def test_no_import_cycle_in_the_engine() -> None:
    """Every import in ``arena/rules`` (lazy ones inside functions too) points one way (docs/ARCHITECTURE.md section 1)."""
    import ast
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "arena" / "rules"
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("arena.rules."):
                deps.add(node.module.removeprefix("arena.rules."))
            elif isinstance(node, ast.ImportFrom) and node.module == "arena.rules":
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name.removeprefix("arena.rules.") for a in node.names if a.name.startswith("arena.rules."))
        graph[path.stem] = deps
    assert graph["options"] >= {"presets", "ruleset"} and "options" not in graph["presets"]
    done: set[str] = set()

    def visit(mod: str, path: tuple[str, ...]) -> None:
        assert mod not in path, f"import cycle: {' -> '.join((*path, mod))}"
        if mod in done:
            return
        for dep in graph.get(mod, ()):
            visit(dep, (*path, mod))
        done.add(mod)

    for mod in graph:
        visit(mod, ())
