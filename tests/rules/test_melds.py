"""Meld geometry (RULES 4, 5.1 values, 5.3 lay-off placement, 7 hand values) as pure functions."""

from __future__ import annotations

import pytest

from arena.rules.cards import JOKER, parse, text
from arena.rules.melds import RUN, SET, MeldError, form_meld, hand_value, lay_off, opening_value, swap_wild
from tests.engine_helpers import cards, marks, rules_of, table_meld


def ok(preset: str, s: str, kind: str | None = None, **over: object):
    r = rules_of(preset, **over)
    return form_meld(cards(s), r, marks(s), kind)


def bad(preset: str, s: str, needle: str = "RULES", **over: object) -> str:
    r = rules_of(preset, **over)
    with pytest.raises(MeldError) as e:
        form_meld(cards(s), r, marks(s))
    msg = str(e.value)
    assert "RULES" in msg and needle in msg, msg
    return msg


def stands(m) -> list[str | None]:
    return [m.wild_text(i) for i in range(len(m.cards))]


# -- 4.1 sets ------------------------------------------------------------------

def test_4_1_set_of_three_and_four() -> None:
    assert ok("basic", "7C 7D 7S").kind == SET
    assert ok("basic", "7C 7D 7S 7H").rank == 7


def test_4_1_set_needs_three_cards() -> None:
    bad("basic", "7C 7D", "at least 3 cards")


def test_4_1_set_max() -> None:
    bad("international", "7C 7D 7S 7H 7C", "set_max")
    assert len(ok("international", "7C 7D 7S 7H 7C", set_max=5).cards) == 5
    bad("basic", "7C 7D 7S 7H", "set_max", set_max=3)


def test_4_1_set_distinct_suits() -> None:
    bad("czech", "7C 7C 7D", "set_distinct_suits")
    assert ok("international", "7C 7C 7D").kind == SET  # two decks, not distinct
    assert ok("czech", "7C 7D JK").kind == SET


def test_4_1_set_of_mixed_ranks_is_not_a_meld() -> None:
    bad("basic", "7C 7D 8S")


# -- 4.2 runs and the ace ----------------------------------------------------------

def test_4_2_runs_are_written_lowest_first() -> None:
    assert ok("basic", "5H 6H 7H").kind == RUN
    bad("basic", "7H 6H 5H", "consecutive")
    bad("basic", "5H 6H 8H", "consecutive")
    bad("basic", "5H 6H 7D", "one suit")


@pytest.mark.parametrize("s, low, high_or_low, wrap", [
    ("AH 2H 3H", True, True, True),
    ("QH KH AH", False, True, True),
    ("KH AH 2H", False, False, True),
    ("QH KH AH 2H", False, False, True),
    ("JK AH 2H", False, True, True),   # joker = KH, only when the ace can be high... and round the corner
    ("AH 2H JK", True, True, True),
    ("QH KH JK", True, True, True),    # joker = AH: ace high (or wrap); under low the joker cannot be an ace above K
])
def test_4_2_ace_options(s: str, low: bool, high_or_low: bool, wrap: bool) -> None:
    for ace, want in (("low", low), ("high_or_low", high_or_low), ("wrap", wrap)):
        r = rules_of("basic", ace=ace)
        if s == "JK AH 2H" and ace == "high_or_low":
            want = False  # K-A-2: the ace is an end (RULES 4.2)
        if s == "QH KH JK" and ace == "low":
            want = False  # the joker would have to be an ace above the king
        try:
            form_meld(cards(s), r)
            got = True
        except MeldError as e:
            got = False
            assert "RULES 4.2" in str(e)
        assert got == want, (s, ace)


def test_4_2_ace_low_messages() -> None:
    assert "ace = low" in bad("basic", "QH KH AH")
    assert "ace = high_or_low" in bad("international", "KH AH 2H")
    bad("basic", "JK AH 2H", "ace = low")


def test_4_2_wrap_run_is_written_from_the_card_after_the_gap() -> None:
    m = ok("basic", "QH KH AH 2H", ace="wrap")
    assert m.low == 12 and m.cards == cards("QH KH AH 2H")
    m = ok("basic", "JK AH 2H", ace="wrap")
    assert stands(m) == ["KH", None, None]


def test_4_2_wrap_at_most_13_cards() -> None:
    full = "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"
    assert len(ok("international", full, ace="wrap").cards) == 13
    bad("international", full + " AH", "at most 13", ace="wrap", decks=2)


def test_4_2_high_or_low_run_from_ace_to_ace() -> None:
    # two decks: under high_or_low the ace may be low at one end and high at the other
    full = "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"
    assert len(ok("international", full, decks=2).cards) == 14


def test_4_2_wild_stands_at_its_position() -> None:
    assert stands(ok("parlett", "5H 6H JK")) == [None, None, "7H"]
    assert stands(ok("parlett", "JK 5H 6H")) == ["4H", None, None]
    assert stands(ok("parlett", "3H 4H JK 6H")) == [None, None, "5H", None]


# -- 4.3 wilds -----------------------------------------------------------------------

def test_4_3_a_meld_needs_a_natural_card() -> None:
    bad("parlett", "JK JK JK", "natural", wilds_at_most_naturals=False)


def test_4_3_max_wilds_per_meld() -> None:
    bad("german", "7H JK JK", "max_wilds_per_meld")
    assert ok("german", "7H 8H JK").wild_count == 1
    bad("parlett", "5H JK 7H JK 9H", "max_wilds_per_meld", max_wilds_per_meld=1)
    assert ok("parlett", "5H JK 7H JK 9H", max_wilds_per_meld=2).wild_count == 2
    assert ok("parlett", "5H JK 7H JK 9H", max_wilds_per_meld=0).wild_count == 2


def test_4_3_wilds_at_most_naturals() -> None:
    assert ok("parlett", "3C 3D JK JK").wild_count == 2
    bad("parlett", "3C JK JK", "wilds_at_most_naturals")
    assert ok("parlett", "3C JK JK", wilds_at_most_naturals=False).wild_count == 2
    bad("parlett", "5H JK JK", "wilds_at_most_naturals")


def test_4_3_wilds_adjacent() -> None:
    assert ok("parlett", "5H 6H JK JK 9H", wilds_at_most_naturals=False).kind == RUN
    bad("parlett", "5H 6H JK JK 9H", "wilds_adjacent", wilds_adjacent=False)
    assert ok("parlett", "5H JK 7H JK 9H", wilds_adjacent=False).wild_count == 2
    # sets are not runs: adjacency is not checked there
    assert ok("parlett", "5H 5C JK JK", wilds_adjacent=False).kind == SET


def test_4_3_wild_rank_natural_where_possible() -> None:
    m = ok("basic", "2H 3H 4H", wild_rank="2")
    assert m.wild_count == 0
    m = ok("basic", "2C 2D 2H", wild_rank="2")
    assert m.kind == SET and m.wild_count == 0
    m = ok("basic", "5H 6H 2C", wild_rank="2")
    assert stands(m) == [None, None, "7H"]
    m = ok("basic", "7C 7D 2S", wild_rank="2")
    assert m.kind == SET and stands(m) == [None, None, "7"]


def test_4_3_wild_rank_marked_with_a_star() -> None:
    m = ok("basic", "2H* 3H 4H", wild_rank="2")
    assert stands(m) == ["2H", None, None]  # marked: used as the wild standing for 2H
    with pytest.raises(MeldError, match="RULES 4.3"):
        form_meld(cards("5H* 6H 7H"), rules_of("basic", wild_rank="2"), marks("5H* 6H 7H"))
    with pytest.raises(MeldError, match="RULES 4.3"):
        form_meld(cards("5H 6H 7H"), rules_of("basic"), frozenset({0}))


def test_4_3_wild_in_a_set_stands_for_its_rank() -> None:
    m = ok("parlett", "3C 3D JK")
    assert stands(m) == [None, None, "3"]


def test_4_single_natural_kind_choice() -> None:
    r = rules_of("parlett")
    assert form_meld(cards("5H JK JK"), rules_of("parlett", wilds_at_most_naturals=False)).kind == SET
    assert form_meld(cards("5H JK JK"), rules_of("parlett", wilds_at_most_naturals=False), kind="run").kind == RUN
    with pytest.raises(MeldError):
        form_meld(cards("5H 6H 7H"), r, kind="set")


# -- 5.3 lay-off placement --------------------------------------------------------------

def test_5_3_natural_goes_where_it_fits() -> None:
    r = rules_of("parlett")
    m = table_meld(r, "5H 6H 7H")
    assert lay_off(m, parse("4H"), r) is False and text(m.cards[0]) == "4H" and m.low == 4
    assert lay_off(m, parse("8H"), r) is False and text(m.cards[-1]) == "8H"
    with pytest.raises(MeldError, match="RULES 5.3"):
        lay_off(m, parse("TH"), r)
    with pytest.raises(MeldError):
        lay_off(m, parse("9C"), r)


def test_5_3_wild_goes_high_unless_low_is_named() -> None:
    r = rules_of("parlett")
    m = table_meld(r, "5H 6H 7H")
    assert lay_off(m, JOKER, r) is True and stands(m) == [None, None, None, "8H"]
    m = table_meld(r, "5H 6H 7H")
    assert lay_off(m, JOKER, r, end="low") is True and stands(m) == ["4H", None, None, None]


def test_5_3_run_extends_past_a_wild_at_its_end() -> None:
    r = rules_of("parlett")
    m = table_meld(r, "5H 6H JK")
    lay_off(m, parse("8H"), r)
    assert stands(m) == [None, None, "7H", None]


def test_5_3_no_room_for_a_wild() -> None:
    r = rules_of("parlett")
    m = table_meld(r, "JH QH KH")
    with pytest.raises(MeldError, match="no room"):
        lay_off(m, JOKER, r)
    lay_off(m, JOKER, r, end="low")
    m = table_meld(rules_of("international"), "JH QH KH")
    assert lay_off(m, parse("AH"), rules_of("international")) is False  # Q-K-A under high_or_low


def test_5_3_ace_ends() -> None:
    low = rules_of("basic")
    m = table_meld(low, "AH 2H 3H")
    with pytest.raises(MeldError):
        lay_off(m, parse("KH"), low)
    hol = rules_of("international")
    m = table_meld(hol, "QH KH AH")
    with pytest.raises(MeldError):
        lay_off(m, parse("2H"), hol)
    wrap = rules_of("basic", ace="wrap")
    m = table_meld(wrap, "QH KH AH")
    lay_off(m, parse("2H"), wrap)
    lay_off(m, parse("JH"), wrap)
    assert m.low == 11 and [text(c) for c in m.cards] == ["JH", "QH", "KH", "AH", "2H"]


def test_5_3_wrap_run_stops_at_13() -> None:
    wrap = rules_of("basic", ace="wrap")
    m = table_meld(wrap, "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH")
    lay_off(m, parse("KH"), wrap)
    assert len(m.cards) == 13
    with pytest.raises(MeldError):
        lay_off(m, JOKER, wrap)


def test_5_3_wild_on_a_set_stands_for_its_rank() -> None:
    r = rules_of("parlett")
    m = table_meld(r, "9C 9D 9S")
    assert lay_off(m, JOKER, r) is True and stands(m)[-1] == "9"
    with pytest.raises(MeldError, match="set_max"):
        lay_off(m, parse("9H"), r)


def test_5_3_lay_off_keeps_the_limits() -> None:
    g = rules_of("german")
    m = table_meld(g, "7H 8H JK")
    with pytest.raises(MeldError, match="max_wilds_per_meld"):
        lay_off(m, JOKER, g)
    c = rules_of("czech")
    m = table_meld(c, "7C 7D 7S")
    with pytest.raises(MeldError, match="set_distinct_suits"):
        lay_off(m, parse("7C"), c)
    lay_off(m, parse("7H"), c)
    p = rules_of("parlett", wilds_adjacent=False)
    m = table_meld(p, "5H 6H JK")
    with pytest.raises(MeldError, match="wilds_adjacent"):
        lay_off(m, JOKER, p)


def test_5_3_wild_rank_card_laid_off_in_its_own_place_is_natural() -> None:
    r = rules_of("basic", wild_rank="2")
    m = table_meld(r, "3H 4H 5H")
    assert lay_off(m, parse("2H"), r) is False
    m = table_meld(r, "3H 4H 5H")
    assert lay_off(m, parse("2C"), r) is True and stands(m)[-1] == "6H"
    m = table_meld(r, "3H 4H 5H")
    assert lay_off(m, parse("2H"), r, as_wild=True) is True and stands(m)[-1] == "6H"


# -- 4.4 swaps ---------------------------------------------------------------------------

def test_4_4_run_swap_needs_exactly_the_card_the_wild_stands_for() -> None:
    r = rules_of("parlett")
    m = table_meld(r, "5H JK 7H")
    with pytest.raises(MeldError, match="RULES 4.4"):
        swap_wild(m, parse("6C"), r)
    assert swap_wild(m, parse("6H"), r) == JOKER
    assert m.wild_count == 0 and m.cards == cards("5H 6H 7H")


def test_4_4_set_swap_rank_and_suit() -> None:
    r = rules_of("czech")
    m = table_meld(r, "9C 9D JK")
    with pytest.raises(MeldError, match="rank"):
        swap_wild(m, parse("8H"), r)
    with pytest.raises(MeldError, match="suits must differ"):
        swap_wild(m, parse("9C"), r)
    assert swap_wild(m, parse("9H"), r) == JOKER
    r2 = rules_of("parlett")
    m = table_meld(r2, "9C 9D JK")
    assert swap_wild(m, parse("9C"), r2) == JOKER  # suits may repeat without set_distinct_suits


def test_4_4_swap_a_joker_in_is_not_natural() -> None:
    r = rules_of("parlett")
    with pytest.raises(MeldError, match="natural"):
        swap_wild(table_meld(r, "5H JK 7H"), JOKER, r)


def test_4_4_swap_names_which_wild() -> None:
    r = rules_of("basic", wild_rank="2", jokers=2)
    m = table_meld(r, "5H JK 2C* 8H")
    assert swap_wild(m, parse("7H"), r, parse("2C")) == parse("2C")
    m = table_meld(r, "5H JK 2C* 8H")
    with pytest.raises(MeldError):
        swap_wild(m, parse("7H"), r, JOKER)  # the joker stands for 6H


# -- 5.1 opening values and 7 hand values ---------------------------------------------------

@pytest.mark.parametrize("preset, s, value", [
    ("german", "QH KH AH", 31), ("german", "AH 2H 3H", 6), ("german", "JK 8C 9C", 24),
    ("german", "AC AD AS", 33), ("german", "JK AD AS", 33), ("czech", "JC QC KC", 36),
    ("czech", "AC 2C 3C", 6), ("czech", "KC KD JK", 39), ("basic", "AC 2C 3C", 6),
    ("international", "AC 2C 3C", 20), ("international", "QC KC AC", 35),
])
def test_5_1_opening_values(preset: str, s: str, value: int) -> None:
    r = rules_of(preset)
    assert opening_value(form_meld(cards(s), r), r) == value


@pytest.mark.parametrize("preset, hand, value", [
    ("basic", "AC KD JK 7S", 1 + 10 + 15 + 7), ("international", "AC KD", 25), ("parlett", "AC JK", 16),
    ("czech", "AC KD JK QS JH", 1 + 13 + 15 + 12 + 11), ("german", "AC KD JK 7S", 15 + 10 + 20 + 7),
    ("basic", "", 0),
])
def test_7_hand_values(preset: str, hand: str, value: int) -> None:
    assert hand_value(cards(hand), rules_of(preset)) == value


def test_7_ace_high_value_whenever_ace_is_not_low() -> None:
    assert hand_value(cards("AC"), rules_of("basic", ace="wrap")) == 15
    assert hand_value(cards("AC"), rules_of("parlett", ace="high_or_low")) == 11
    assert hand_value(cards("AC"), rules_of("parlett")) == 1


def test_7_wild_rank_card_counts_at_its_own_value() -> None:
    assert hand_value(cards("2C"), rules_of("basic", wild_rank="2")) == 2
