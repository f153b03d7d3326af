"""Every worked example of RULES.md section 11, checked against the engine."""

from __future__ import annotations

import pytest

from arena.rules.game import Game
from arena.rules.log import DealEnd
from arena.rules.melds import RUN, SET, MeldError, form_meld, opening_value
from arena.rules.scoring import score_deal
from tests.engine_helpers import cards, meld, play, rules_of, stage


def kind_of(preset: str, s: str) -> str | None:
    try:
        return form_meld(cards(s), rules_of(preset)).kind
    except MeldError as e:
        assert "RULES 4" in str(e)
        return None


def deal_end(g: Game) -> DealEnd:
    return next(e for e in reversed(g.log) if isinstance(e, DealEnd))


# 11.1
@pytest.mark.parametrize("preset, s, kind", [
    ("basic", "5H 6H 7H", RUN),
    ("basic", "QH KH AH", None),
    ("basic", "7C 7D 7S 7H", SET),
    ("basic", "7C 7D", None),
    ("czech", "7C 7C 7D", None),
])
def test_11_1_basic_and_czech_melds(preset: str, s: str, kind: str | None) -> None:
    assert kind_of(preset, s) == kind


def test_11_1_czech_distinct_suits_reason() -> None:
    with pytest.raises(MeldError, match="set_distinct_suits"):
        form_meld(cards("7C 7C 7D"), rules_of("czech"))


# 11.2
def test_11_2_parlett_joker_in_a_run() -> None:
    m = form_meld(cards("3H 4H JK 6H"), rules_of("parlett"))
    assert m.kind == RUN and m.wild_text(2) == "5H"


def test_11_2_parlett_sets_with_jokers() -> None:
    assert kind_of("parlett", "3C 3D JK") == SET
    assert kind_of("parlett", "3C JK JK") is None


# 11.3
@pytest.mark.parametrize("s, kind", [("7H 8H JK", RUN), ("7H JK JK", None), ("QH KH AH", RUN), ("KH AH 2H", None)])
def test_11_3_german_melds(s: str, kind: str | None) -> None:
    assert kind_of("german", s) == kind


def test_11_3_german_one_wild_per_meld_reason() -> None:
    with pytest.raises(MeldError, match="max_wilds_per_meld"):
        form_meld(cards("7H JK JK"), rules_of("german"))


@pytest.mark.parametrize("s, value, stands", [("QH KH AH", 31, None), ("AH 2H 3H", 6, None), ("JK 8C 9C", 24, "7C")])
def test_11_3_german_opening_values(s: str, value: int, stands: str | None) -> None:
    r = rules_of("german")
    m = form_meld(cards(s), r)
    assert opening_value(m, r) == value
    if stands:
        assert m.wild_text(0) == stands


# 11.4
def test_11_4_czech_opening_value() -> None:
    r = rules_of("czech")
    assert opening_value(form_meld(cards("JC QC KC"), r), r) == 36


def test_11_4_czech_requirements_for_four_players() -> None:
    g = stage("czech", players=4, totals=[120, 80, 80, 10])
    assert [g.requirement(s) for s in range(4)] == [15, 20, 20, 30]


# 11.5
def _no_one_out(hands: list[str], **over: object) -> DealEnd:
    r = rules_of("basic", max_turns=1, **over)
    hs = [hands[0] + " KS", *hands[1:]]
    g = stage(r, players=len(hands), hands=hs, phase="play", drawn="KS")
    g.play(play(discard="KS"))
    end = deal_end(g)
    assert end.out is None and end.reason == "turn_cap"
    return end


def test_11_5_winner_collects_6_15_7_21() -> None:
    end = _no_one_out(["AC 5C", "5D KC", "7S", "KH 9S 2D"])
    assert end.hand_values == [6, 15, 7, 21] and end.scores == [25, 0, 0, 0]


def test_11_5_winner_collects_6_6_10() -> None:
    end = _no_one_out(["AC 5C", "6D", "TS"])
    assert end.hand_values == [6, 6, 10] and end.scores == [2, 2, 0]


def test_11_5_settle_6_15_7_21() -> None:
    end = _no_one_out(["AC 5C", "5D KC", "7S", "KH 9S 2D"], scoring="settle")
    assert end.scores == [25, -9, -1, -15]


# 11.6
def test_11_6_german_rummy_charges_double() -> None:
    g = stage("german", players=3, hands=["TC JC QC 2D 3D 4D 5S 6S 7S 8S 9H 9C 9D KD", "7C 5D", "KS QS TS"],
              phase="play", drawn="KD")
    g.play(play(meld("TC JC QC"), meld("2D 3D 4D"), meld("5S 6S 7S 8S"), meld("9H 9C 9D"), discard="KD"))
    end = deal_end(g)
    assert end.rummy and end.hand_values == [0, 12, 30] and end.scores == [0, 24, 60]


def test_11_6_basic_rummy_double_adds_84() -> None:
    g = stage(rules_of("basic", rummy_bonus="double"), players=3, hands=["5H 6H 7H 2C", "7C 5D", "KS QS TS"],
              phase="play", drawn="2C")
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    end = deal_end(g)
    assert end.rummy and end.hand_values == [0, 12, 30] and end.scores == [84, 0, 0]


# 11.5, 11.6 and RULES 7 through the pure scoring function alone
@pytest.mark.parametrize("preset, over, values, out, rummy, scores", [
    # 11.5: winner_collects, no one out: the lowest hand adds the differences
    ("basic", {}, [6, 15, 7, 21], None, False, [25, 0, 0, 0]),
    ("basic", {}, [6, 6, 10], None, False, [2, 2, 0]),  # ties share, rounded down
    ("basic", {}, [6, 6, 11], None, False, [2, 2, 0]),  # 5 // 2
    ("basic", {"scoring": "settle"}, [6, 15, 7, 21], None, False, [25, -9, -1, -15]),
    # RULES 7: the one out adds every other hand; under settle each pays theirs
    ("basic", {}, [0, 12, 30], 0, False, [42, 0, 0]),
    ("basic", {"scoring": "settle"}, [0, 12, 30], 0, False, [42, -12, -30]),
    # 11.6: german (penalty, rummy doubles), and basic with rummy_bonus = double
    ("german", {}, [0, 12, 30], 0, True, [0, 24, 60]),
    ("basic", {"rummy_bonus": "double"}, [0, 12, 30], 0, True, [84, 0, 0]),
    # RULES 7 penalty: with no one out everyone adds theirs
    ("german", {}, [5, 12, 30], None, False, [5, 12, 30]),
    # RULES 6.2 plus10: +10 under winner_collects and settle, -10 under penalty
    ("basic", {"rummy_bonus": "plus10"}, [0, 12], 0, True, [22, 0]),
    ("basic", {"rummy_bonus": "plus10", "scoring": "settle"}, [0, 12], 0, True, [22, -12]),
    ("german", {"rummy_bonus": "plus10"}, [0, 12], 0, True, [-10, 12]),
    ("basic", {"rummy_bonus": "plus10"}, [0, 12], 0, False, [12, 0]),  # not rummy: no bonus
])
def test_7_score_deal(preset: str, over: dict, values: list[int], out: int | None, rummy: bool, scores: list[int]) -> None:
    assert score_deal(rules_of(preset, **over), values, out, rummy, list(range(len(values)))) == scores


def test_7_score_deal_counts_only_the_seats_in_the_deal() -> None:
    # seat 1 is out of the game: its (stale) value is not lowest, owes nothing, gains nothing
    assert score_deal(rules_of("basic"), [6, 0, 15, 7], None, False, [0, 2, 3]) == [10, 0, 0, 0]
    assert score_deal(rules_of("german"), [4, 9, 0], 2, False, [0, 2]) == [4, 0, 0]
