"""One test per clause of RULES.md, per preset where the presets differ.

Each test stages an exact situation (``engine_helpers.stage`` sets the game's
state fields, ``stack`` stacks the decks) and checks the engine's outcome, or
that the action is rejected with a reason naming the rule and changes nothing.
Test names are ``test_<section>_<clause>_<what>[_<preset>]``.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from arena.policies import make_policy
from arena.rules import search
from arena.rules.actions import DISCARD, STOCK, IllegalAction
from arena.rules.cards import JOKER, parse, text, texts
from arena.rules.chance import SeededSource
from arena.rules.game import Game, Phase
from arena.rules.log import DealEnd, DealStart, GameEnd, GameStart, Rebuild
from arena.selfplay import play_game, policies_for
from tests.engine_helpers import (
    card_count,
    cards,
    entry_at,
    layoff,
    meld,
    play,
    rejects,
    rules_of,
    snapshot,
    stacked_game,
    stage,
    swap,
    tag,
    texts_of,
)

FILLER = " ".join(r + s for r in "3456789T" for s in "CDHS")  # 32 distinct cards, no aces, no wilds


def last(g: Game, kind: str) -> Any:
    return next(e for e in reversed(g.log) if tag(e) == kind)


def hand(g: Game, seat: int) -> str:
    return texts_of(g.hands[seat])


# ============================================================== 2. seating, dealer, deal

def test_2_1_left_of_skips_players_out_of_the_game() -> None:
    g = Game(rules_of("czech"), 4, 1)
    assert [g.left_of(s) for s in range(4)] == [1, 2, 3, 0]
    g = stage("czech", players=4, seed=1, in_game=[True, True, False, True])
    assert [g.left_of(s) for s in range(4)] == [1, 3, 3, 0]
    assert g.active() == [0, 1, 3]


def test_2_2_first_dealer_highest_rank_deals() -> None:
    r = rules_of("basic")
    g = stacked_game(r, 3, 5, first_dealer="7C KD 3H")
    assert entry_at(g.log, 0, GameStart).first_dealer_draws == [["7C", "KD", "3H"]]
    assert g.dealer == 1
    assert g.current == 2  # RULES 2.6: play starts left of the dealer


def test_2_2_first_dealer_ties() -> None:
    r = rules_of("basic")
    # seats 0 and 2 tie with kings, draw again from the same deck; suits do not rank
    g = stacked_game(r, 3, 5, first_dealer="KC 5D KH 9S TC")
    assert entry_at(g.log, 0, GameStart).first_dealer_draws == [["KC", "5D", "KH"], ["9S", "TC"]]
    assert g.dealer == 2


def test_2_2_first_dealer_same_rank_different_suit_is_a_tie() -> None:
    r = rules_of("basic")
    g = stacked_game(r, 2, 5, first_dealer="7S 7C 4D 6H")
    assert entry_at(g.log, 0, GameStart).first_dealer_draws == [["7S", "7C"], ["4D", "6H"]]
    assert g.dealer == 1


@pytest.mark.parametrize("preset, over, dealer", [
    ("basic", {}, 1),  # ace low
    ("international", {}, 0),  # ace high under high_or_low
    ("basic", {"ace": "wrap"}, 0),  # and under wrap
    ("german", {}, 0),
])
def test_2_2_first_dealer_ace(preset: str, over: dict, dealer: int) -> None:
    r = rules_of(preset, **over)
    assert stacked_game(r, 2, 5, first_dealer="AC 2D").dealer == dealer


@pytest.mark.parametrize("preset, over, draw", [
    ("parlett", {}, "JK 2D"),
    ("basic", {"wild_rank": "K"}, "KC 2D"),  # a card of the wild rank counts as wild for RULES 2.2
])
def test_2_2_first_dealer_wild_counts_lowest(preset: str, over: dict, draw: str) -> None:
    r = rules_of(preset, **over)
    assert stacked_game(r, 2, 5, first_dealer=draw).dealer == 1


@pytest.mark.parametrize("seed", range(6))
def test_2_2_first_dealer_is_a_function_of_the_seed(seed: int) -> None:
    r = rules_of("basic")
    assert Game(r, 4, seed).log[0] == Game(r, 4, seed).log[0]


def test_2_2_the_deal_passes_left() -> None:
    r = rules_of("basic")
    g, _ = play_game(r, policies_for(r, ["greedy"] * 3, 4), 4)
    dealers = [e.dealer for e in g.log if isinstance(e, DealStart)]
    assert len(dealers) > 2
    assert all(b == (a + 1) % 3 for a, b in itertools.pairwise(dealers))


def test_2_2_the_deal_passes_left_skipping_eliminated_players() -> None:
    r = rules_of("czech", target=60)
    g, _ = play_game(r, policies_for(r, ["greedy"] * 4, 2), 2)
    in_game = [True] * 4
    prev = None
    seen_elimination = False
    for e in g.log:
        if isinstance(e, DealStart):
            if prev is not None:
                nxt = next(s for k in range(1, 5) if in_game[s := (prev + k) % 4])
                assert e.dealer == nxt
            assert all((len(h) == 12) == in_game[s] for s, h in enumerate(e.hands))
            prev = e.dealer
        elif isinstance(e, DealEnd):
            for s in e.eliminated:
                in_game[s] = False
                seen_elimination = True
    assert seen_elimination and g.end_reason == "elimination"


def _dealt_sequence(entry: DealStart, players: int) -> list[str]:
    """The cards of a deal_start entry in the order they came off the deck."""
    order = [(entry.dealer + k) % players for k in range(1, players + 1)]
    hands = [list(h) for h in entry.hands]
    out = []
    size = min(len(h) for h in hands)
    for i in range(size):
        out += [hands[s][i] for s in order]
    extra = [h[size] for h in hands if len(h) > size]
    return out + extra + [entry.upcard]


def test_2_3_deck_of_a_deal_is_the_same_under_any_seating() -> None:
    r = rules_of("international")
    a = Game(r, 3, 77)
    b = stacked_game(r, 3, 77, first_dealer={0: "KC 2D 2H", 1: "2C KD 2H", 2: "2C 2D KH"}[(a.dealer + 1) % 3])
    assert a.dealer != b.dealer
    sa, sb = _dealt_sequence(entry_at(a.log, 1, DealStart), 3), _dealt_sequence(entry_at(b.log, 1, DealStart), 3)
    assert sa == sb
    assert a.stock == b.stock
    # the same cards reach the seat the same distance from the dealer
    k = (b.dealer - a.dealer) % 3
    assert all(entry_at(a.log, 1, DealStart).hands[s] == entry_at(b.log, 1, DealStart).hands[(s + k) % 3] for s in range(3))


@pytest.mark.slow  # 0.7-1.1 s of CPU or own time alone: too near the fast tier's bounds on a loaded machine
@pytest.mark.parametrize("preset", ["international", "parlett", "czech"])
def test_2_3_deck_of_deal_d_depends_only_on_seed_and_d(preset: str) -> None:
    r = rules_of(preset)
    # different play (and so different random acts in earlier deals) does not change later decks
    g1, _ = play_game(r, policies_for(r, ["greedy", "greedy"], 3), 3)
    g2, _ = play_game(r, policies_for(r, ["random", "random"], 3), 3)
    d1 = {e.deal: _dealt_sequence(e, 2) for e in g1.log if isinstance(e, DealStart)}
    d2 = {e.deal: _dealt_sequence(e, 2) for e in g2.log if isinstance(e, DealStart)}
    common = set(d1) & set(d2)
    assert common
    for d in common:
        assert d1[d] == d2[d]
    assert len({tuple(v) for v in d1.values()}) == len(d1)  # each deal has its own deck


def test_2_3_later_random_acts_depend_on_seed_deal_and_count() -> None:
    r = rules_of("international")
    def rebuilt(seed: int, deal: int, acts: int) -> list[int]:
        g = stage(r, seed=seed, stock="", discard=FILLER, hands=["5C 6C", "7C 8C"], deal_no=deal, random_acts=acts)
        g.draw(STOCK)
        return g.stock
    assert rebuilt(9, 1, 0) == rebuilt(9, 1, 0)
    assert rebuilt(9, 1, 0) != rebuilt(9, 1, 1)
    assert rebuilt(9, 1, 0) != rebuilt(9, 2, 0)
    assert rebuilt(9, 1, 0) != rebuilt(10, 1, 0)


def test_2_4_one_card_at_a_time_clockwise_from_left_of_dealer() -> None:
    r = rules_of("basic")
    g = stacked_game(r, 3, 1, first_dealer="2C KD 3H", deals={1: FILLER})
    assert g.dealer == 1
    seq = FILLER.split()
    # 3 players: 7 cards each, dealing starts with seat 2 (left of the dealer)
    assert g.hands[2] == cards(" ".join(seq[0:21:3]))
    assert g.hands[0] == cards(" ".join(seq[1:21:3]))
    assert g.hands[1] == cards(" ".join(seq[2:21:3]))
    assert texts(g.discard) == [seq[21]]  # RULES 2.5: the next card starts the discard pile
    assert g.stock[-1] == parse(seq[22])
    assert g.current == 2 and g.phase is Phase.DRAW


@pytest.mark.parametrize("preset, counts", [
    ("basic", {2: 10, 3: 7, 4: 7, 5: 6, 6: 6}),
    ("international", {2: 10, 4: 10, 5: 6, 6: 7, 8: 7}),
    ("parlett", {2: 10, 3: 7, 5: 7, 6: 10, 7: 10}),
    ("czech", {2: 12, 5: 12}),
    ("german", {2: 13, 6: 13}),
    ("wrotham", {2: 7, 6: 7}),
])
def test_2_4_hand_size_by_player_count(preset: str, counts: dict[int, int]) -> None:
    r = rules_of(preset)
    for n, size in counts.items():
        g = Game(r, n, 3)
        first = g.current
        assert all(len(g.hands[s]) == size + (1 if r.first_player_extra_card and s == first else 0) for s in range(n))
        assert card_count(g) == g.deck_size == r.deck_size(n)


def test_2_4_first_player_extra_card_wrotham() -> None:
    r = rules_of("wrotham")
    g = stacked_game(r, 3, 1, first_dealer="KC 2D 3H", deals={1: FILLER})
    seq = FILLER.split()
    assert g.dealer == 0 and g.current == 1
    assert g.hands[1] == cards(" ".join(seq[0:21:3] + [seq[21]]))  # the next card goes left of the dealer
    assert len(g.hands[2]) == len(g.hands[0]) == 7
    assert texts(g.discard) == [seq[22]]
    # ... who skips the draw in their first turn
    assert g.phase is Phase.PLAY and g.drawn is None and g.observation(1).legal_draws == []
    rejects(g, STOCK, "not time to draw")
    g.play(play(discard=seq[0]))
    # g.play() changed g.phase; mypy keeps the narrowing of the assert above
    assert g.current == 2 and g.phase is Phase.DRAW  # type: ignore[comparison-overlap]
    g.draw(STOCK)
    g.play(play(discard=text(g.hands[2][0])))
    g.draw(STOCK)
    g.play(play(discard=text(g.hands[0][0])))
    assert g.current == 1 and g.phase is Phase.DRAW  # only the first turn skips the draw


def test_2_4_no_extra_card_basic() -> None:
    g = Game(rules_of("basic"), 3, 1)
    assert g.phase is Phase.DRAW and {len(h) for h in g.hands} == {7}


def _upcard_deck(upcards: str) -> str:
    return " ".join(FILLER.split()[:24]) + " " + upcards


def test_2_5_reshuffle_turned_joker_czech() -> None:
    r = rules_of("czech")
    g = stacked_game(r, 2, 1, first_dealer="KC 2D", deals={1: _upcard_deck("JK JK 5C")}, insert_at=0)
    assert texts(g.discard) == ["5C"]
    assert entry_at(g.log, 1, DealStart).returned_wilds == ["JK", "JK"] and entry_at(g.log, 1, DealStart).upcard == "5C"
    assert g.stock[:2] == [JOKER, JOKER]  # put back at the (seeded) place, here the bottom
    assert card_count(g) == g.deck_size == 108


def test_2_5_reshuffle_turned_wild_rank_card() -> None:
    r = rules_of("czech", wild_rank="2")
    g = stacked_game(r, 2, 1, first_dealer="KC 3D", deals={1: _upcard_deck("2C 5C")}, insert_at=10)
    assert texts(g.discard) == ["5C"] and entry_at(g.log, 1, DealStart).returned_wilds == ["2C"]
    assert g.stock[10] == parse("2C")


def test_2_5_reinsertion_is_seeded() -> None:
    r = rules_of("czech")
    for seed in range(40):
        g = Game(r, 2, seed)
        if entry_at(g.log, 1, DealStart).returned_wilds:
            assert Game(r, 2, seed).stock == g.stock
            assert g.discard[-1] != JOKER
            return
    pytest.fail("no seed in range turned a joker")  # pragma: no cover


@pytest.mark.parametrize("preset", ["parlett", "german", "wrotham"])
def test_2_5_turned_joker_stays_without_the_option(preset: str) -> None:
    r = rules_of(preset)
    n_cards = 2 * r.count_value("hand_size", 2) + (1 if r.first_player_extra_card else 0)
    g = stacked_game(r, 2, 1, first_dealer="KC 2D", deals={1: " ".join(FILLER.split()[:n_cards]) + " JK AC"})
    assert texts(g.discard) == ["JK"] and entry_at(g.log, 1, DealStart).returned_wilds == []


def test_2_6_play_starts_left_of_the_dealer() -> None:
    for seed in range(5):
        g = Game(rules_of("parlett"), 4, seed)
        assert g.current == (g.dealer + 1) % 4 and entry_at(g.log, 1, DealStart).dealer == g.dealer


# ============================================================== 3. a turn

def test_3_1_draw_from_stock_or_discard_basic() -> None:
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="KD KS", discard="2S AH")
    assert g.legal_draws() == [STOCK, DISCARD]
    g.draw(STOCK)
    assert hand(g, 0) == "5C 9D KS" and g.drawn == parse("KS") and not g.took_discard and g.phase is Phase.PLAY
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="KD KS", discard="2S AH")
    g.draw(DISCARD)
    assert hand(g, 0) == "5C 9D AH" and g.took_discard and texts(g.discard) == ["2S"]


def test_3_1_draw_errors() -> None:
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="KD KS", discard="")
    rejects(g, DISCARD, "discard pile is empty", "RULES 3.1")
    rejects(g, "deck", "RULES 3.1")
    g = stage("basic", hands=["5C 9D KS", "7C 8C"], stock="KD", discard="2S", phase="play", drawn="KS")
    rejects(g, STOCK, "not time to draw")
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="KD KS", discard="2S")
    rejects(g, play(discard="5C"), "not time to play")


ONLY_TO_OPEN = {"take_discard_before_opening": "only_to_open"}


def test_3_1_take_discard_before_opening_only_to_open_rejects_a_take_that_cannot_open() -> None:
    r = rules_of("german", **ONLY_TO_OPEN)
    g = stage(r, hands=["QH KH 2C 3D 5S 8C 9D", "7C 8C"], stock="KD KS", discard="2S 4S")
    assert g.legal_draws() == [STOCK]
    rejects(g, DISCARD, "only_to_open", "RULES 3.1")


def test_3_1_take_discard_before_opening_only_to_open_must_open_with_it() -> None:
    r = rules_of("german", **ONLY_TO_OPEN)
    g = stage(r, hands=["QH KH 2C 3D 5S 8C 9D TD", "7C 8C"], stock="KD KS", discard="2S AH")
    assert g.legal_draws() == [STOCK, DISCARD]
    g.draw(DISCARD)
    rejects(g, play(discard="2C"), "only_to_open")
    rejects(g, play(meld("8C 9D TD", "run")), "RULES")
    g.play(play(meld("QH KH AH"), discard="2C"))
    assert g.opened[0]


def test_3_1_take_discard_before_opening_only_to_open_found_through_a_shorter_run() -> None:
    # 8H opens only as 8C 8D 8H (24) plus 5H 6H 7H (18): the longest run 5H-8H (26) alone is short
    r = rules_of("german", **ONLY_TO_OPEN)
    g = stage(r, hands=["5H 6H 7H 8C 8D 2S 3D KC", "7C 8C"], stock="KD KS", discard="2S 8H")
    assert g.legal_draws() == [STOCK, DISCARD]
    g.draw(DISCARD)
    rejects(g, play(meld("5H 6H 7H 8H"), discard="2S"), "short of the 30")
    g.play(play(meld("8C 8D 8H"), meld("5H 6H 7H"), discard="KC"))
    assert g.opened[0]


def test_3_1_take_discard_before_opening_only_to_open_meld_after_the_opening_does_not_count() -> None:
    r = rules_of("german", **ONLY_TO_OPEN)
    g = stage(r, hands=["TC JC QC 5H 6H 2D 9S 7H", "7C 8C"], phase="play", drawn="7H", took_discard=True,
              stock="KD KS", discard="2S")
    # the first meld opens (30); the taken 7H is only in a later meld: not an opening meld
    rejects(g, play(meld("TC JC QC"), meld("5H 6H 7H"), discard="2D"), "only_to_open")
    g.play(play(meld("5H 6H 7H"), meld("TC JC QC"), discard="2D"))


def test_3_1_take_discard_before_opening_only_to_open_any_take_once_opened() -> None:
    r = rules_of("german", **ONLY_TO_OPEN)
    g = stage(r, hands=["2C 5S 8C 9D", "7C 8C"], stock="KD KS", discard="2S 4H", opened=[True, False])
    g.draw(DISCARD)
    g.play(play(discard="2C"))


def test_3_1_take_discard_before_opening_yes_german() -> None:
    g = stage("german", hands=["2C 5S 8C 9D", "7C 8C"], stock="KD KS", discard="2S 4H")
    assert g.legal_draws() == [STOCK, DISCARD]
    g.draw(DISCARD)
    g.play(play(discard="2C"))


def test_3_1_taking_the_discard_needs_a_legal_finish_german() -> None:
    # the only card left would equal the taken one, and go_out = discard forbids playing out through the table
    g = stage("german", hands=["7H", "7C 8C"], stock="KD KS", discard="2S 7H", opened=[True, True],
              melds=[("4H 5H 6H", 1), ("8H 9H TH", 1)])
    assert g.legal_draws() == [STOCK]
    rejects(g, DISCARD, "no legal way to finish", "RULES 3.1")


@pytest.mark.parametrize("table", [
    [("4H 5H 6H", 0), ("8H 9H TH", 0)],  # one copy onto each end of two runs
    [("4H 5H 6H", 0), ("7C 7D 7S", 0)],  # onto a run and a set
    [("5H 6H JK", 0)],  # swap for the joker standing for 7H, then discard the joker
])
def test_3_1_taking_the_discard_with_a_finish_through_the_table_czech(table: list) -> None:
    g = stage("czech", hands=["7H", "7C 8C"], stock="KD KS", discard="2S 7H", opened=[True, True], melds=table)
    assert g.legal_draws() == [STOCK, DISCARD]
    g.draw(DISCARD)
    p = g.safe_play()
    g.play(p)


def test_3_safe_move_discards_the_drawn_card_where_legal() -> None:
    g = stage("basic", hands=["5C 9D KS 4H", "7C 8C"], phase="play", drawn="4H")
    assert g.safe_play() == play(discard="4H")
    assert search.safe_play(g.rules, g.turn_view()) == g.safe_play()


def test_3_safe_move_else_the_highest_legal_discard() -> None:
    # the drawn card was taken from the discard pile: it may not be discarded (RULES 3.3)
    g = stage("basic", hands=["5C 9D KS 4H", "7C 8C"], phase="play", drawn="KS", took_discard=True)
    assert g.safe_play() == play(discard="9D")


def test_3_safe_move_else_a_finish() -> None:
    # only_to_open after taking the discard: no plain discard is legal, the safe move opens with it
    r = rules_of("german", **ONLY_TO_OPEN)
    g = stage(r, hands=["TC JC QC 5H 6H 2D 9S 7H", "7C 8C"], phase="play", drawn="7H", took_discard=True)
    p = g.safe_play()
    assert p.actions and p.discard is not None
    g.play(p)
    assert g.opened[0]


def test_3_verify_changes_nothing_and_play_takes_the_checked_value() -> None:
    g = stage("basic", hands=["5H 6H 7H 2C KS", "7C 8C"], phase="play", drawn="KS")
    p = play(meld("5H 6H 7H"), discard="KS")
    before = snapshot(g)
    checked = g.verify_play(p)
    assert snapshot(g) == before and g.verify_play(p) == checked  # pure: the same answer, nothing kept
    assert checked.play == p and not checked.outcome.out and checked.outcome.discard == parse("KS")
    twin = Game.from_position(g.rules, g.position())
    twin.play(checked)  # checked on another game: worked out again there
    g.play(checked)
    assert g.log == twin.log and g.position() == twin.position()
    # the state it was checked in is gone: the value is checked again, and now fails
    g.draw(STOCK)
    with pytest.raises(IllegalAction, match="not in your hand"):
        g.play(checked)
    before = snapshot(g)
    with pytest.raises(IllegalAction):
        g.verify_draw(STOCK)
    assert snapshot(g) == before


def test_2_3_the_random_source_is_injected() -> None:
    r = rules_of("czech")
    for seed in range(3):
        assert Game(r, 3, seed).log == Game(r, 3, seed, source=SeededSource(seed)).log
    # the seed in the record is the game's; the decks are the source's
    a, b = Game(r, 3, 1), Game(r, 3, 1, source=SeededSource(2))
    assert entry_at(a.log, 0, GameStart).seed == entry_at(b.log, 0, GameStart).seed == 1
    assert entry_at(a.log, 1, DealStart).hands != entry_at(b.log, 1, DealStart).hands
    assert b.log[1:] == Game(r, 3, 2).log[1:]


def test_3_2_melds_per_turn_basic() -> None:
    g = stage("basic", hands=["5H 6H 7H 9C 9D 9S 2C", "7C 8C"], phase="play", drawn="2C")
    rejects(g, play(meld("5H 6H 7H"), meld("9C 9D 9S"), discard="2C"), "melds_per_turn", "RULES 3.2")
    g.play(play(meld("5H 6H 7H"), discard="2C"))


@pytest.mark.parametrize("preset, limit", [("international", 0), ("parlett", 0), ("czech", 0)])
def test_3_2_melds_per_turn_unlimited(preset: str, limit: int) -> None:
    r = rules_of(preset)
    assert r.melds_per_turn == limit
    g = stage(r, hands=["5H 6H 7H 9C 9D 9S JC QC KC 2C 3C", "7C 8C"], phase="play", drawn="3C",
              totals=[0, 0])
    g.play(play(meld("5H 6H 7H"), meld("9C 9D 9S"), meld("JC QC KC"), discard="3C"))
    assert len(g.melds) == 3


def test_3_2_melds_per_turn_two() -> None:
    r = rules_of("parlett", melds_per_turn=2)
    g = stage(r, hands=["5H 6H 7H 9C 9D 9S JC QC KC 2C 3C", "7C 8C"], phase="play", drawn="3C")
    rejects(g, play(meld("5H 6H 7H"), meld("9C 9D 9S"), meld("JC QC KC"), discard="3C"), "at most 2 new melds")
    g.play(play(meld("5H 6H 7H"), meld("9C 9D 9S"), discard="3C"))


def test_3_2_actions_apply_in_order_parlett() -> None:
    g = stage("parlett", hands=["5H 6H 7H 8H 4H 2C KS", "7C 8C"], phase="play", drawn="2C")
    rejects(g, play(layoff(0, "8H"), meld("5H 6H 7H"), discard="2C"), "no meld 0", "RULES 3.2")
    g.play(play(meld("5H 6H 7H"), layoff(0, "8H 4H"), discard="2C"))
    assert texts(g.melds[0].cards) == ["4H", "5H", "6H", "7H", "8H"]


def test_3_2_cards_must_be_in_the_hand() -> None:
    g = stage("parlett", hands=["5H 6H 7H 8H 2C", "7C 8C"], phase="play", drawn="2C", melds=[("9C 9D 9S", 1)])
    rejects(g, play(meld("5H 6H 8H 9H"), discard="2C"), "9H is not in your hand", "RULES 3.2")
    rejects(g, play(meld("5H 6H 7H"), layoff(0, "7H"), discard="2C"), "not in your hand")
    rejects(g, play(discard="KS"), "KS is not in your hand", "RULES 3.3")
    rejects(g, play(swap(0, "9H"), discard="2C"), "not in your hand")


def test_3_2_melds_are_never_rearranged() -> None:
    g = stage("parlett", hands=["8H 2C KS", "7C 8C"], phase="play", drawn="2C", melds=[("5H 6H 7H", 1), ("9H TH JH", 1)])
    # 8H joins one run; the two runs are not merged
    g.play(play(layoff(0, "8H"), discard="2C"))
    assert [texts(m.cards) for m in g.melds] == [["5H", "6H", "7H", "8H"], ["9H", "TH", "JH"]]


def test_3_3_cannot_discard_taken_card() -> None:
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="KD KS", discard="2S AH")
    g.draw(DISCARD)
    rejects(g, play(discard="AH"), "RULES 3.3")
    g.play(play(discard="5C"))


def test_3_3_cannot_discard_a_card_equal_to_the_taken_one_czech() -> None:
    g = stage("czech", hands=["5C 9D AH", "7C 8C"], stock="KD KS", discard="2S AH")
    g.draw(DISCARD)
    rejects(g, play(discard="AH"), "(or equals)", "RULES 3.3")
    g.play(play(discard="9D"))


def test_3_3_the_drawn_stock_card_may_be_discarded() -> None:
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="KD KS", discard="2S AH")
    g.draw(STOCK)
    g.play(play(discard="KS"))
    assert texts(g.discard) == ["2S", "AH", "KS"]


def test_3_3_a_turn_ends_with_a_discard() -> None:
    g = stage("basic", hands=["5C 9D KS", "7C 8C"], phase="play", drawn="KS")
    rejects(g, play(), "RULES 3.3")


def test_3_4_go_out_any_by_table_play_parlett() -> None:
    g = stage("parlett", hands=["5H 6H 7H", "7C 8C"], phase="play", drawn="7H")
    rejects(g, play(meld("5H 6H 7H"), discard="7H"), "RULES 3")
    g.play(play(meld("5H 6H 7H")))
    end = [e for e in g.log if isinstance(e, DealEnd)][0]
    assert end.out == 0 and end.reason == "out" and end.hands[0] == []


def test_3_4_go_out_any_by_discard_basic() -> None:
    g = stage("basic", hands=["5H 6H 7H 2C", "7C 8C"], phase="play", drawn="2C")
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert [e for e in g.log if isinstance(e, DealEnd)][0].out == 0


@pytest.mark.parametrize("preset", ["international", "german"])
def test_3_4_go_out_discard_table_play_must_leave_a_card(preset: str) -> None:
    g = stage(preset, hands=["5H 6H 7H", "7C 8C"], phase="play", drawn="7H", opened=[True, True])
    rejects(g, play(meld("5H 6H 7H")), "go_out = discard", "RULES 3.4")
    g = stage(preset, hands=["5H 6H 7H 8H 2C", "7C 8C"], phase="play", drawn="2C", opened=[True, True])
    rejects(g, play(meld("5H 6H 7H 8H")), "RULES 3.3")
    g.play(play(meld("5H 6H 7H 8H"), discard="2C"))
    assert [e for e in g.log if isinstance(e, DealEnd)][0].out == 0


def test_3_4_nothing_follows_going_out() -> None:
    g = stage("parlett", hands=["5H 6H 7H", "7C 8C"], phase="play", drawn="7H", melds=[("9C 9D 9S", 1)])
    rejects(g, play(meld("5H 6H 7H"), layoff(0, "9H")), "already empty", "RULES 3.4")


def test_3_5_meld_all_at_once_deals_wrotham() -> None:
    r = rules_of("wrotham")
    base: dict[str, Any] = dict(hands=["5H 6H 7H 8C 9C TC 2D KS", "7C 8C"], phase="play", drawn="KS", melds=[("TS JS QS", 1)])
    g = stage(r, deal_no=4, **base)
    assert g.observation(0).must_go_out_to_meld
    rejects(g, play(meld("5H 6H 7H"), discard="KS"), "meld_all_at_once_deals", "RULES 3.5")
    rejects(g, play(layoff(0, "KS"), discard="2D"), "meld_all_at_once_deals")
    g = stage(r, deal_no=4, **{**base, "hands": ["5H 6H 7H 8C 9C TC 2D", "7C 8C"], "drawn": "2D"})
    # going out: several melds in one turn (melds_per_turn does not apply)
    g.play(play(meld("5H 6H 7H"), meld("8C 9C TC"), discard="2D"))
    assert last(g, "deal_end").out == 0 and last(g, "deal_end").deal == 4


@pytest.mark.parametrize("deal", [1, 3])
def test_3_5_other_deals_are_normal_wrotham(deal: int) -> None:
    g = stage("wrotham", deal_no=deal, hands=["5H 6H 7H 8C 9C TC 2D KS", "7C 8C"], phase="play", drawn="KS")
    assert not g.observation(0).must_go_out_to_meld
    g.play(play(meld("5H 6H 7H"), discard="KS"))
    assert len(g.melds) == 1


def test_3_5_wrotham_deals_4_to_6_must_go_out_to_meld() -> None:
    r = rules_of("wrotham")
    assert r.meld_all_at_once_deals == (4, 5, 6)
    g = stage("basic", hands=["5H 6H 7H 8C 9C TC 2D KS", "7C 8C"], phase="play", drawn="KS")
    assert not g.observation(0).must_go_out_to_meld


def test_3_an_illegal_turn_is_rejected_whole_and_changes_nothing() -> None:
    g = stage("parlett", hands=["5H 6H 7H 9C 9D 9S 2C", "7C 8C"], phase="play", drawn="2C", melds=[("TH JH QH", 1)])
    # the first two actions are fine, the discard is not
    rejects(g, play(meld("5H 6H 7H"), layoff(0, "9C"), discard="2C"), "RULES")
    rejects(g, play(meld("5H 6H 7H"), meld("9C 9D 9S"), discard="AS"), "RULES")


# ============================================================== 4.4 swapping a wild

def test_4_4_joker_swap_none_basic() -> None:
    g = stage("basic", hands=["6H 2C 3D", "7C 8C"], phase="play", drawn="3D", melds=[("5H JK 7H", 1)])
    rejects(g, play(swap(0, "6H"), discard="2C"), "joker_swap = none", "RULES 4.4")


@pytest.mark.parametrize("preset", ["parlett", "international", "wrotham"])
def test_4_4_joker_swap_any_even_before_melding(preset: str) -> None:
    g = stage(preset, hands=["6H 2C 3D", "7C 8C"], phase="play", drawn="3D", melds=[("5H JK 7H", 1)])
    g.play(play(swap(0, "6H"), discard="JK"))  # the wild goes into the hand, and may be discarded
    assert texts(g.melds[0].cards) == ["5H", "6H", "7H"] and g.melds[0].wild_count == 0
    assert texts(g.discard)[-1] == "JK"


def test_4_4_joker_swap_any_wild_goes_to_the_hand_parlett() -> None:
    g = stage("parlett", hands=["6H 2C 3D", "7C 8C"], phase="play", drawn="3D", melds=[("5H JK 7H", 1)])
    g.play(play(swap(0, "6H"), discard="3D"))
    assert sorted(texts(g.hands[0])) == ["2C", "JK"]


def test_4_4_joker_swap_after_opening_czech() -> None:
    base: dict[str, Any] = dict(hands=["6H 2C 3D", "7C 8C"], phase="play", drawn="3D", melds=[("5H JK 7H", 1)])
    g = stage("czech", opened=[False, True], **base)
    rejects(g, play(swap(0, "6H"), discard="JK"), "before opening", "RULES 5.2")
    g = stage("czech", opened=[True, True], **base)
    g.play(play(swap(0, "6H"), discard="JK"))  # from another player's meld: layoff = own does not restrict swaps


def test_4_4_joker_swap_after_opening_with_initial_meld_0() -> None:
    r = rules_of("parlett", joker_swap="after_opening")
    base: dict[str, Any] = dict(hands=["6H 2C 3D 9C 9D 9S KS", "7C 8C"], phase="play", drawn="KS", melds=[("5H JK 7H", 1)])
    g = stage(r, **base)
    rejects(g, play(swap(0, "6H"), discard="JK"), "RULES 5.2")
    g = stage(r, **base)
    g.play(play(meld("9C 9D 9S"), swap(0, "6H"), discard="JK"))  # opened earlier in the same turn


def test_4_4_set_swap_suit_must_be_missing_czech() -> None:
    g = stage("czech", hands=["9C 9H 3D", "7C 8C"], phase="play", drawn="3D", melds=[("9C 9D JK", 1)],
              opened=[True, True])
    rejects(g, play(swap(0, "9C"), discard="JK"), "suits must differ", "RULES 4.4")
    g.play(play(swap(0, "9H"), discard="JK"))


def test_4_4_run_swap_exact_card_german() -> None:
    g = stage("german", hands=["6C 6H 3D 4D", "7C 8C"], phase="play", drawn="4D", melds=[("5H JK 7H", 1)],
              opened=[True, True])
    rejects(g, play(swap(0, "6C"), discard="JK"), "stands for 6C", "RULES 4.4")


SWAP_TABLE = [("5H JK 7H", 1), ("9C 9D 9S", 1)]


def _german_swap(**kw: Any) -> Game:
    return stage("german", hands=["6H 3C 4C 8D 2S", "7C 8C"], phase="play", drawn="2S", melds=SWAP_TABLE,
                 opened=[True, True], **kw)


def test_4_4_swapped_wild_must_be_melded_german() -> None:
    rejects(_german_swap(), play(swap(0, "6H"), discard="2S"), "swapped_wild_must_be_melded", "RULES 4.4")


def test_4_4_swapped_wild_melded_into_a_new_meld_german() -> None:
    g = _german_swap()
    g.play(play(swap(0, "6H"), meld("3C 4C JK"), discard="2S"))
    assert g.melds[2].wild_text(2) == "5C"


def test_4_4_swapped_wild_laid_off_on_another_meld_german() -> None:
    g = _german_swap()
    g.play(play(swap(0, "6H"), layoff(1, "JK"), discard="2S"))
    assert texts(g.melds[1].cards) == ["9C", "9D", "9S", "JK"]


def test_4_4_swapped_wild_never_back_into_the_same_meld_german() -> None:
    rejects(_german_swap(), play(swap(0, "6H"), layoff(0, "JK"), discard="2S"), "never go back", "RULES 4.4")
    rejects(_german_swap(), play(swap(0, "6H"), layoff(0, "JK", end="low"), discard="2S"), "never go back")


def test_4_4_swapped_wild_may_be_the_discard_german() -> None:
    g = _german_swap()
    g.play(play(swap(0, "6H"), discard="JK"))
    assert g.discard[-1] == JOKER


def test_4_4_swapped_wild_rank_card_melded_as_a_natural() -> None:
    r = rules_of("german", wild_rank="2", jokers=0)
    g = stage(r, hands=["8S 3D 4D 5C 5D 9C", "7C 8C"], phase="play", drawn="9C", melds=[("7S 2D* 9S", 1)],
              opened=[True, True])
    g.play(play(swap(0, "8S"), meld("2D 3D 4D"), discard="9C"))
    assert g.melds[1].wild_count == 0


def test_4_4_swapped_wild_not_melded_is_fine_without_the_option_parlett() -> None:
    g = stage("parlett", hands=["6H 3C 4C 8D 2S", "7C 8C"], phase="play", drawn="2S", melds=SWAP_TABLE)
    g.play(play(swap(0, "6H"), discard="2S"))
    assert JOKER in g.hands[0]
    g = stage("parlett", hands=["6H 3C 4C 8D 2S", "7C 8C"], phase="play", drawn="2S", melds=SWAP_TABLE)
    g.play(play(swap(0, "6H"), layoff(0, "JK"), discard="2S"))  # back into the same meld is allowed here


def test_4_4_layoff_does_not_restrict_swaps_czech() -> None:
    g = stage("czech", hands=["6H 3D 4D", "7C 8C"], phase="play", drawn="4D", melds=[("5H JK 7H", 1)],
              opened=[True, True])
    rejects(g, play(layoff(0, "6H"), discard="3D"), "layoff = own")
    g.play(play(swap(0, "6H"), discard="JK"))


# ============================================================== 5. opening, lay-offs

def _german_open(**kw: Any) -> Game:
    return stage("german", hands=["TC JC QC 2D 3D 4D 8S 9H 4H", "7C 8C"], phase="play", drawn="9H",
                 melds=[("5H 6H 7H", 1)], opened=[False, True], **kw)


def test_5_1_opening_needs_30_german() -> None:
    rejects(_german_open(), play(meld("2D 3D 4D"), discard="9H"), "total 9 points, short of the 30", "RULES 5.1")
    g = _german_open()
    g.play(play(meld("TC JC QC"), discard="9H"))
    assert g.opened[0]


def test_5_1_opening_total_of_several_melds_german() -> None:
    g = stage("german", hands=["8C 9C TC 2D 3D 4D 4H KS", "7C 8C"], phase="play", drawn="KS", opened=[False, True])
    g.play(play(meld("2D 3D 4D"), meld("8C 9C TC"), discard="KS"))  # 9 + 27
    assert g.opened[0]


def test_5_1_until_opened_only_new_melds_german() -> None:
    rejects(_german_open(), play(meld("2D 3D 4D"), layoff(0, "8H"), meld("TC JC QC"), discard="9H"), "RULES")
    rejects(_german_open(), play(layoff(0, "4H"), meld("TC JC QC"), discard="9H"), "cannot lay off before opening", "RULES 5.2")
    g = _german_open()
    g.play(play(meld("TC JC QC"), layoff(0, "4H"), meld("2D 3D 4D"), discard="9H"))  # after the opening meld: anything
    assert texts(g.melds[0].cards)[0] == "4H"


def test_5_1_a_turn_that_does_not_open_has_no_melds_german() -> None:
    g = _german_open()
    g.play(play(discard="9H"))
    assert not g.opened[0] and len(g.melds) == 1


def test_5_1_wild_counts_as_the_card_it_stands_for_german() -> None:
    g = stage("german", hands=["JK 8C 9C 5D 6D", "7C 8C"], phase="play", drawn="6D", opened=[False, True])
    rejects(g, play(meld("JK 8C 9C"), discard="6D"), "total 24 points")
    g = stage("german", hands=["JK KC KD 5D 6D", "7C 8C"], phase="play", drawn="6D", opened=[False, True])
    g.play(play(meld("KC KD JK"), discard="6D"))  # a wild in a set counts as its rank: 30


def test_5_1_ace_values_for_opening_german() -> None:
    g = stage("german", hands=["AH 2H 3H QS KS AS 9C", "7C 8C"], phase="play", drawn="9C", opened=[False, True])
    rejects(g, play(meld("AH 2H 3H"), discard="9C"), "total 6 points")
    g.play(play(meld("QS KS AS"), discard="9C"))  # 31


def test_5_1_opened_stays_opened_for_the_deal_german() -> None:
    g = stage("german", hands=["2D 3D 4D 9H", "7C 8C"], phase="play", drawn="9H", opened=[True, True])
    g.play(play(meld("2D 3D 4D"), discard="9H"))


def test_5_1_czech_requirement_formula() -> None:
    g = stage("czech", players=4, totals=[120, 80, 80, 10])
    assert [g.requirement(s) for s in range(4)] == [15, 20, 20, 30]
    assert [g.observation(s).opening_requirement for s in range(4)] == [15, 20, 20, 30]
    g = stage("czech", players=4, totals=[120, 80, 80, 10], in_game=[False, True, True, True])
    assert [g.requirement(s) for s in (1, 2, 3)] == [15, 15, 25]  # only players in the game count
    g = stage("czech", players=4, totals=[120, 80, 80, 10], in_game=[False, True, True, True], opened=[False] * 3 + [True])
    assert g.requirement(3) == 0


def test_5_1_czech_first_deal_needs_15() -> None:
    g = Game(rules_of("czech"), 5, 3)
    assert [g.requirement(s) for s in range(5)] == [15] * 5


def test_5_1_czech_requirement_enforced() -> None:
    base: dict[str, Any] = dict(players=4, totals=[120, 80, 80, 10], current=3,
                hands={3: "JC QC KC 2D 3D 4D 5D 8S", 0: "2C", 1: "3C", 2: "4C"}, phase="play", drawn="8S")
    g = stage("czech", **base)
    rejects(g, play(meld("2D 3D 4D 5D"), discard="8S"), "short of the 30", "RULES 5.1")
    g = stage("czech", **base)
    g.play(play(meld("JC QC KC"), discard="8S"))  # 36


def test_5_1_initial_meld_0_any_meld_opens_basic() -> None:
    g = stage("basic", hands=["AC 2C 3C 9H KS", "7C 8C"], phase="play", drawn="9H")
    assert g.requirement(0) == 0
    g.play(play(meld("AC 2C 3C"), discard="9H"))
    assert g.opened[0]


def test_5_1_opening_exempt_when_going_out() -> None:
    r = rules_of("german", opening_exempt_when_going_out=True)
    base: dict[str, Any] = dict(hands=["2D 3D 4D 5S 6S 7S 9H", "7C 8C"], phase="play", drawn="9H", opened=[False, True])
    g = stage(r, **base)
    g.play(play(meld("2D 3D 4D"), meld("5S 6S 7S"), discard="9H"))  # 27 < 30, but goes out in one turn
    assert last(g, "deal_end").out == 0
    g = stage(r, hands=["2D 3D 4D 5S 6S 7S 9H KC", "7C 8C"], phase="play", drawn="9H", opened=[False, True])
    rejects(g, play(meld("2D 3D 4D"), meld("5S 6S 7S"), discard="9H"), "short of the 30")


def test_5_1_no_exemption_when_going_out_german() -> None:
    g = stage("german", hands=["2D 3D 4D 5S 6S 7S 9H", "7C 8C"], phase="play", drawn="9H", opened=[False, True])
    rejects(g, play(meld("2D 3D 4D"), meld("5S 6S 7S"), discard="9H"), "short of the 30", "RULES 5.1")


def test_5_2_no_layoff_before_opening_german() -> None:
    g = stage("german", hands=["8H 9C 2D", "7C 8C"], phase="play", drawn="2D", melds=[("5H 6H 7H", 1)],
              opened=[False, True])
    rejects(g, play(layoff(0, "8H"), discard="9C"), "cannot lay off before opening", "RULES 5.2")


def test_5_2_no_swap_before_opening_german() -> None:
    g = stage("german", hands=["6H 9C 2D", "7C 8C"], phase="play", drawn="2D", melds=[("5H JK 7H", 1)],
              opened=[False, True])
    rejects(g, play(swap(0, "6H"), discard="JK"), "before opening", "RULES 5.2")


def test_5_2_layoff_before_own_meld_with_initial_meld_0_parlett() -> None:
    g = stage("parlett", hands=["8H 9C 2D", "7C 8C"], phase="play", drawn="2D", melds=[("5H 6H 7H", 1)])
    g.play(play(layoff(0, "8H"), discard="9C"))
    assert not g.opened[0]


def test_5_3_layoff_any_onto_other_players_melds_parlett() -> None:
    g = stage("parlett", hands=["8H 9C 2D", "7C 8C"], phase="play", drawn="2D", melds=[("5H 6H 7H", 1)],
              opened=[True, True])
    g.play(play(layoff(0, "8H"), discard="9C"))
    assert g.melds[0].owner == 1 and len(g.melds[0].cards) == 4


def test_5_3_layoff_own_melds_czech() -> None:
    base: dict[str, Any] = dict(hands=["8H 4C 9C 2D", "7C 8C"], phase="play", drawn="2D", opened=[True, True],
                melds=[("5H 6H 7H", 1), ("5C 6C 7C", 0)])
    rejects(stage("czech", **base), play(layoff(0, "8H"), discard="9C"), "layoff = own", "RULES 5.3")
    g = stage("czech", **base)
    g.play(play(layoff(1, "4C"), discard="9C"))
    assert texts(g.melds[1].cards) == ["4C", "5C", "6C", "7C"]


def test_5_3_layoff_after_own_meld() -> None:
    r = rules_of("parlett", layoff="after_own_meld")
    base: dict[str, Any] = dict(hands=["8H 9C 9D 9S 2D 3S", "7C 8C"], phase="play", drawn="3S", melds=[("5H 6H 7H", 1)])
    rejects(stage(r, **base), play(layoff(0, "8H"), discard="2D"), "layoff = after_own_meld", "RULES 5.3")
    g = stage(r, **base)
    g.play(play(meld("9C 9D 9S"), layoff(0, "8H"), discard="2D"))  # own meld made earlier in the turn
    g = stage(r, hands=["8H 2D 3S", "7C 8C"], phase="play", drawn="3S", melds=[("5H 6H 7H", 1), ("KC KD KS", 0)])
    g.play(play(layoff(0, "8H"), discard="2D"))  # own meld from an earlier turn


def test_5_3_layoffs_unlimited_per_turn_basic() -> None:
    g = stage("basic", hands=["8H 4H 9C 3C 2D", "7C 8C"], phase="play", drawn="2D",
              melds=[("5H 6H 7H", 1), ("6C 7C 8C", 1), ("JD QD KD", 0)])
    g.play(play(layoff(0, "8H"), layoff(0, "4H"), layoff(1, "9C"), discard="3C"))
    assert [len(m.cards) for m in g.melds][:2] == [5, 4]


# ============================================================== 6. end of a deal

def test_6_1_going_out_ends_the_deal_at_once() -> None:
    g = stage("basic", players=3, hands=["5H 6H 7H 2C", "7C 8C", "KS QS"], phase="play", drawn="2C")
    start = len(g.log)
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    kinds = [tag(e) for e in g.log[start:]]
    assert kinds[:2] == ["play", "deal_end"] and "draw" not in kinds
    end = last(g, "deal_end")
    assert end.out == 0 and end.hand_values == [0, 15, 20] and end.scores == [35, 0, 0]


GERMAN_RUMMY_HAND = "TC JC QC 2D 3D 4D 5S 6S 7S 8S 9H 9C 9D KD"
GERMAN_RUMMY_PLAY = play(meld("TC JC QC"), meld("2D 3D 4D"), meld("5S 6S 7S 8S"), meld("9H 9C 9D"), discard="KD")


def test_6_2_rummy_double_german() -> None:
    # RULES 11.6: a player goes rummy leaving opponents with 12 and 30 in hand: they are charged 24 and 60
    g = stage("german", players=3, hands=[GERMAN_RUMMY_HAND, "7C 5D", "KS QS TS"], phase="play", drawn="KD")
    g.play(GERMAN_RUMMY_PLAY)
    end = last(g, "deal_end")
    assert end.rummy is True and end.scores == [0, 24, 60] and g.totals == [0, 24, 60]


def test_6_2_not_rummy_after_an_earlier_meld_german() -> None:
    g = stage("german", players=3, hands=["2D 3D 4D KD", "7C 5D", "KS QS TS"], phase="play", drawn="KD",
              opened=[True, False, False], played_before=[True, False, False])
    g.play(play(meld("2D 3D 4D"), discard="KD"))
    end = last(g, "deal_end")
    assert end.rummy is False and end.scores == [0, 12, 30]


def _rummy_race(hand0: str, first: object) -> Game:
    """Seat 0 plays ``first`` in one turn, then goes out in its next turn."""
    r = rules_of("parlett", rummy_bonus="double")
    g = stage(r, hands=[hand0, "KC QC KD QD"], stock="9S 9D 5C", discard="AS", melds=[("5H JK 7H", 1)])
    g.draw(STOCK)
    g.play(first)  # type: ignore[arg-type]
    assert hand(g, 0) == "3C 4C 5C"
    g.draw(STOCK)
    g.play(play(discard="9D"))
    g.draw(STOCK)
    g.play(play(meld("3C 4C 5C"), discard="9S"))
    return g


@pytest.mark.parametrize("hand0, first, rummy, score", [
    ("8H 3C 4C", play(discard="8H"), True, 80),
    ("8H 2D 3C 4C", play(layoff(0, "8H"), discard="2D"), False, 40),
    ("6H 3C 4C", play(swap(0, "6H"), discard="JK"), False, 40),
], ids=["no-table-play", "layoff", "swap"])
def test_6_2_rummy_needs_no_table_play_in_earlier_turns(hand0: str, first: object, rummy: bool, score: int) -> None:
    g = _rummy_race(hand0, first)
    end = last(g, "deal_end")
    assert end.out == 0 and end.rummy is rummy and end.scores == [score, 0]


def test_6_2_rummy_in_one_turn_by_table_play_parlett() -> None:
    g = stage(rules_of("parlett", rummy_bonus="double"), hands=["5H 6H 7H", "KC QC"], phase="play", drawn="7H")
    g.play(play(meld("5H 6H 7H")))
    assert last(g, "deal_end").rummy is True and last(g, "deal_end").scores == [40, 0]


@pytest.mark.parametrize("scoring, scores", [
    ("winner_collects", [42 + 10, 0, 0]),
    ("settle", [42 + 10, -12, -30]),
    ("penalty", [-10, 12, 30]),
])
def test_6_2_rummy_plus10(scoring: str, scores: list[int]) -> None:
    over = {"rummy_bonus": "plus10", "scoring": scoring}
    if scoring == "penalty":
        over["end"] = "target"
    r = rules_of("basic", **over)
    g = stage(r, players=3, hands=["5H 6H 7H 2C", "7C 5D", "KS QS TS"], phase="play", drawn="2C")
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert last(g, "deal_end").scores == scores


def test_6_2_rummy_bonus_none_basic() -> None:
    g = stage("basic", players=3, hands=["5H 6H 7H 2C", "7C 5D", "KS QS TS"], phase="play", drawn="2C")
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    end = last(g, "deal_end")
    assert end.rummy is True and end.scores == [42, 0, 0]


def test_6_2_rummy_double_winner_collects() -> None:
    # RULES 11.6: basic with rummy_bonus = double, opponents hold 12 and 30: the winner adds 84
    r = rules_of("basic", rummy_bonus="double")
    g = stage(r, players=3, hands=["5H 6H 7H 2C", "7C 5D", "KS QS TS"], phase="play", drawn="2C")
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert last(g, "deal_end").scores == [84, 0, 0]


# -- 6.3 empty stock

def test_6_3_stock_exhausted_turn_over_basic() -> None:
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="", discard="3C 4D 5S 6H")
    assert g.legal_draws() == [STOCK, DISCARD]
    g.draw(STOCK)
    rebuild = last(g, "rebuild")
    assert rebuild.stock_size == 4 and rebuild.upcard is None
    # turned over unshuffled: the bottom card of the pile is the top of the new stock
    assert g.drawn == parse("3C") and texts(g.stock) == ["6H", "5S", "4D"] and g.discard == []
    assert g.rebuilds == 1 and card_count(g) == g.deck_size


def test_6_3_stock_exhausted_player_may_take_the_discard_instead() -> None:
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="", discard="3C 4D 5S 6H")
    g.draw(DISCARD)
    assert g.drawn == parse("6H") and g.stock == [] and g.rebuilds == 0
    g.play(play(discard="5C"))
    # the next player must draw from an empty stock: the pile is turned over now
    g.draw(STOCK)
    assert g.rebuilds == 1 and g.drawn == parse("3C")


def test_6_3_stock_exhausted_reshuffle_international() -> None:
    base: dict[str, Any] = dict(hands=["5C 9D", "7C 8C"], stock="", discard=FILLER)
    g = stage("international", **base)
    g.draw(STOCK)
    got = [g.drawn, *reversed(g.stock)]  # g.drawn is a card after draw(): sorting it below is safe
    assert sorted(got) == sorted(cards(FILLER)) and got != cards(FILLER) and g.discard == []  # type: ignore[type-var]
    again = stage("international", **base)
    again.draw(STOCK)
    assert again.stock == g.stock and again.drawn == g.drawn  # seeded


@pytest.mark.parametrize("preset", ["czech", "german"])
def test_6_3_stock_exhausted_end(preset: str) -> None:
    g = stage(preset, hands=["5C 9D", "7C KC"], stock="", discard="3C 4D 5S 6H", opened=[True, True])
    assert g.legal_draws() == [STOCK, DISCARD]
    g.draw(STOCK)
    end = last(g, "deal_end")
    assert end.reason == "stock_exhausted" and end.out is None
    values = [14, 7 + (13 if preset == "czech" else 10)]
    assert end.hand_values == values and end.scores == values  # penalty: everyone adds their hand


def test_6_3_stock_exhausted_end_take_discard_instead_german() -> None:
    g = stage("german", hands=["5C 9D", "7C KC"], stock="", discard="3C 4D 5S 6H")
    g.draw(DISCARD)
    g.play(play(discard="5C"))
    assert g.deal_no == 1 and g.current == 1


def test_6_3_upcard_after_rebuild_parlett() -> None:
    g = stage("parlett", hands=["5C 6C", "8C 9C 2S"], stock="", discard="3C 4D 5S", current=1, phase="play", drawn="2S")
    g.play(play(discard="9C"))
    rebuild = last(g, "rebuild")
    # the whole pile turned over (unshuffled under turn_over), its top card turned up
    assert rebuild == Rebuild(3, "3C")
    assert texts(g.discard) == ["3C"] and texts(g.stock) == ["9C", "5S", "4D"]
    assert g.current == 0 and g.phase is Phase.DRAW and g.legal_draws() == [STOCK, DISCARD]
    g.draw(STOCK)
    assert g.drawn == parse("4D")


def test_6_3_upcard_after_rebuild_reshuffle() -> None:
    r = rules_of("parlett", stock_exhausted="reshuffle")
    g = stage(r, hands=["5C 6C", "8C 9C 2S"], stock="", discard=FILLER, current=1, phase="play", drawn="2S")
    g.play(play(discard="9C"))
    assert len(g.discard) == 1 and len(g.stock) == 32
    assert sorted(g.stock + g.discard) == sorted(cards(FILLER + " 9C"))
    assert [g.discard[-1], *reversed(g.stock)] != cards(FILLER + " 9C")


def test_6_3_upcard_rebuild_that_would_leave_the_stock_empty_ends_the_deal_parlett() -> None:
    g = stage("parlett", hands=["5C 6C", "8C 9C 2S"], stock="", discard="", current=1, phase="play", drawn="2S")
    g.play(play(discard="9C"))  # the pile is one card: turning it up leaves no stock
    end = last(g, "deal_end")
    assert end.reason == "stock_exhausted" and end.out is None and end.deal == 1


def test_6_3_rebuild_of_an_empty_pile_ends_the_deal_basic() -> None:
    g = stage("basic", hands=["5C 9D", "7C 8C"], stock="", discard="")
    assert g.legal_draws() == [STOCK]
    g.draw(STOCK)
    assert last(g, "deal_end").reason == "stock_exhausted"


@pytest.mark.parametrize("preset, rebuilds, ends", [
    ("basic", 1, False), ("basic", 2, True), ("wrotham", 2, True), ("international", 50, False), ("parlett", 50, False),
])
def test_6_3_max_stock_rebuilds(preset: str, rebuilds: int, ends: bool) -> None:
    r = rules_of(preset)
    g = stage(r, hands=["5C 9D", "7C 8C"], stock="", discard="3C 4D 5S 6H", rebuilds=rebuilds,
              current=1 if r.upcard_after_rebuild else 0, phase="play" if r.upcard_after_rebuild else "draw",
              drawn="8C" if r.upcard_after_rebuild else None)
    if r.upcard_after_rebuild:
        g.play(play(discard="8C"))
    else:
        g.draw(STOCK)
    ended = any(isinstance(e, DealEnd) for e in g.log)
    assert ended is ends
    if not ends:
        assert g.rebuilds == rebuilds + 1


def test_6_3_max_stock_rebuilds_zero_means_never() -> None:
    g = stage(rules_of("basic", max_stock_rebuilds=0), hands=["5C 9D", "7C 8C"], stock="", discard="3C 4D 5S 6H")
    g.draw(STOCK)
    assert last(g, "deal_end").reason == "stock_exhausted"


def test_6_3_basic_ends_at_the_third_exhaustion() -> None:
    r = rules_of("basic")
    g = stage(r, hands=["5C 9D", "7C 8C"], stock="", discard="3C 4D 5S 6H 7S 8D")
    for exhaustion in (1, 2, 3):
        while g.stock:
            g.draw(STOCK)
            g.play(play(discard=text(g.drawn)))  # type: ignore[arg-type]
        if exhaustion < 3:
            g.draw(STOCK)
            assert g.rebuilds == exhaustion
            g.play(play(discard=text(g.drawn)))  # type: ignore[arg-type]
    g.draw(STOCK)
    assert last(g, "deal_end").reason == "stock_exhausted" and g.deal_no == 2


# -- 6.4 turn cap

def test_6_4_turn_cap() -> None:
    r = rules_of("basic", max_turns=3)
    g = stage(r, hands=["5C 9D", "7C 8C"], stock="2C 2D 2H 2S", discard="AS")
    for _ in range(3):
        g.draw(STOCK)
        g.play(play(discard=text(g.drawn)))  # type: ignore[arg-type]
    end = last(g, "deal_end")
    assert end.reason == "turn_cap" and end.out is None and end.deal == 1 and g.deal_no == 2


def test_6_4_default_turn_cap_is_500() -> None:
    assert all(rules_of(p).max_turns == 500 for p in ("basic", "czech", "german"))


# ============================================================== 7. scoring

def _no_one_out(preset: str, hands: list[str], **over: object) -> DealEnd:
    """End a deal with no one out after seat 0 discards its drawn card (turn cap of 1)."""
    r = rules_of(preset, max_turns=1, **over)
    hs = list(hands)
    hs[0] = hs[0] + " KS"
    g = stage(r, players=len(hands), hands=hs, phase="play", drawn="KS")
    g.play(play(discard="KS"))
    return last(g, "deal_end")


HANDS_6_15_7_21 = ["AC 5C", "5D KC", "7S", "KH 9S 2D"]


def test_7_winner_collects_no_one_out() -> None:
    end = _no_one_out("basic", HANDS_6_15_7_21)
    assert end.hand_values == [6, 15, 7, 21] and end.scores == [25, 0, 0, 0]


def test_7_winner_collects_tied_lowest_share_rounded_down() -> None:
    assert _no_one_out("basic", ["AC 5C", "6D", "TS"]).scores == [2, 2, 0]
    assert _no_one_out("basic", ["AC 5C", "6D", "6S", "TS"]).scores == [1, 1, 1, 0]  # 4 // 3


def test_7_settle_no_one_out() -> None:
    assert _no_one_out("basic", HANDS_6_15_7_21, scoring="settle").scores == [25, -9, -1, -15]


def test_7_settle_ties() -> None:
    assert _no_one_out("basic", ["AC 5C", "6D", "TS"], scoring="settle").scores == [2, 2, -4]


def test_7_penalty_no_one_out() -> None:
    assert _no_one_out("basic", HANDS_6_15_7_21, scoring="penalty", end="target").scores == [6, 15, 7, 21]


def _out(preset: str, **over: object) -> DealEnd:
    r = rules_of(preset, **over)
    g = stage(r, players=3, hands=["5H 6H 7H 2C", "7C 5D", "KS QS TS"], phase="play", drawn="2C",
              opened=[True, True, True], played_before=[True, False, False])
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    return last(g, "deal_end")


def test_7_winner_collects_out_basic() -> None:
    assert _out("basic").scores == [42, 0, 0]


def test_7_settle_out() -> None:
    assert _out("basic", scoring="settle").scores == [42, -12, -30]


@pytest.mark.parametrize("preset", ["czech", "german"])
def test_7_penalty_out(preset: str) -> None:
    values = [12, 30] if preset == "german" else [12, 13 + 12 + 10]
    assert _out(preset).scores == [0, *values]


def test_7_totals_are_the_sum_of_deal_scores() -> None:
    r = rules_of("basic")
    g, _ = play_game(r, policies_for(r, ["greedy", "random"], 8), 8)
    assert [sum(d[s] for d in g.deal_scores) for s in range(2)] == g.totals
    assert [e.scores for e in g.log if isinstance(e, DealEnd)] == g.deal_scores


# ============================================================== 8. end of the game, placings

def test_8_end_target_winner_collects() -> None:
    g = stage("basic", hands=["5H 6H 7H 2C", "5D"], phase="play", drawn="2C", totals=[95, 40])
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert g.over and g.end_reason == "target" and g.totals == [100, 40] and g.placings() == [1, 2]
    assert g.log[-1] == GameEnd("target", [100, 40], [1, 2])


def test_8_end_target_not_reached_plays_on() -> None:
    g = stage("basic", hands=["5H 6H 7H 2C", "4D"], phase="play", drawn="2C", totals=[95, 40])
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert not g.over and g.deal_no == 2 and g.totals == [99, 40]


def test_8_end_target_penalty() -> None:
    r = rules_of("czech", end="target", target=100)
    g = stage(r, hands=["5H 6H 7H 2C", "5D"], phase="play", drawn="2C", totals=[10, 95], opened=[True, True])
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert g.over and g.end_reason == "target" and g.totals == [10, 100] and g.placings() == [1, 2]


@pytest.mark.parametrize("deal, over", [(2, False), (3, True)])
def test_8_end_deals_german(deal: int, over: bool) -> None:
    g = stage("german", hands=["5H 6H 7H 8H 2C", "5D"], phase="play", drawn="2C", opened=[True, True], deal_no=deal)
    g.play(play(meld("5H 6H 7H 8H"), discard="2C"))
    assert g.over is over
    if over:
        assert g.end_reason == "deals"


def test_8_end_deals_wrotham_after_6() -> None:
    g = stage("wrotham", hands=["5H 6H 7H 2C", "5D"], phase="play", drawn="2C", deal_no=6)
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert g.over and g.end_reason == "deals"


def test_8_elimination_czech_last_player_left_wins() -> None:
    g = stage("czech", players=3, hands=["5D", "5H 6H 7H 2C", "KS"], current=1, phase="play", drawn="2C",
              totals=[290, 280, 250], opened=[True, True, True])
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert not g.over and g.totals == [295, 280, 263]
    g2 = stage("czech", players=3, hands=["5D 9D", "5H 6H 7H 2C", "KS"], current=1, phase="play", drawn="2C",
               totals=[290, 280, 290], opened=[True, True, True])
    g2.play(play(meld("5H 6H 7H"), discard="2C"))
    assert g2.over and g2.end_reason == "elimination"
    assert g2.totals == [304, 280, 303]
    assert last(g2, "deal_end").eliminated == [0, 2]
    # the player still in first, then the eliminated of the same deal by total (lower is better)
    assert g2.placings() == [3, 1, 2]


def test_8_elimination_continues_without_the_eliminated() -> None:
    g = stage("czech", players=4, hands=["5D", "5H 6H 7H 2C", "KS", "9C"], current=1, phase="play", drawn="2C",
              totals=[298, 0, 0, 0], opened=[True] * 4)
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert not g.over and g.in_game == [False, True, True, True] and g.deal_no == 2
    start = last(g, "deal_start")
    assert start.hands[0] == [] and all(len(h) == 12 for h in start.hands[1:])
    assert g.current != 0 and g.dealer != 0


def test_8_elimination_everyone_left_reaches_target_lowest_wins() -> None:
    g = stage("czech", players=3, hands=["", "5H 6H 7H 2C", "KS 9H"], current=1, phase="play", drawn="2C",
              totals=[310, 299, 299], opened=[True] * 3, in_game=[False, True, True], left_in_deal=[0, None, None])
    # seat 1 goes out; seat 2 reaches 321 and leaves: seat 1 is the last player left
    g.play(play(meld("5H 6H 7H"), discard="2C"))
    assert g.over and g.placings() == [3, 1, 2]


def test_8_elimination_all_remaining_reach_in_the_same_deal() -> None:
    r = rules_of("czech", max_turns=1)
    g = stage(r, players=3, hands=["", "2C 3C KS", "KH 9H"], phase="play", drawn="KS", totals=[310, 299, 280],
              current=1, in_game=[False, True, True], left_in_deal=[0, None, None])
    g.play(play(discard="KS"))  # turn cap: no one out, everyone adds their hand
    assert g.over and g.totals == [310, 304, 302]
    # both leave in the same deal: the lowest of them wins; the first eliminated is last
    assert g.placings() == [3, 2, 1]


def test_8_placings_standard_competition_ranking() -> None:
    g = stage("basic", players=4, seed=1, totals=[20, 50, 50, 10])
    assert g.placings() == [3, 1, 1, 4]
    g = stage("basic", players=4, seed=1, totals=[50, 50, 50, 50])
    assert g.placings() == [1, 1, 1, 1]


def test_8_placings_settle_higher_is_better() -> None:
    g = stage(rules_of("basic", scoring="settle"), players=3, seed=1, totals=[-5, 10, -5])
    assert g.placings() == [2, 1, 2]


@pytest.mark.parametrize("preset", ["german", "czech"])
def test_8_placings_penalty_lower_is_better(preset: str) -> None:
    g = stage(preset, players=4, seed=1, totals=[20, 50, 50, 10])
    assert g.placings() == [2, 3, 3, 1]


def test_8_placings_elimination_order() -> None:
    g = stage("czech", players=5, seed=1, totals=[320, 100, 330, 310, 150], left_in_deal=[2, None, 3, 3, None],
              in_game=[False, True, False, False, True])
    # in: 1 (100), 4 (150); then deal-3 leavers by total: 3 (310), 2 (330); then the deal-2 leaver 0
    assert g.placings() == [5, 1, 4, 3, 2]


def test_8_every_game_ends_with_a_full_placing() -> None:
    for preset in ("basic", "czech", "german"):
        r = rules_of(preset)
        g, _ = play_game(r, policies_for(r, ["greedy"] * 3, 2), 2)
        end = g.log[-1]
        assert isinstance(end, GameEnd) and sorted(end.placings)[0] == 1 and len(end.placings) == 3


def test_9_policies_are_constructible_for_every_preset() -> None:
    for preset in ("basic", "international", "parlett", "czech", "german", "wrotham"):
        for name in ("random", "greedy"):
            make_policy(name, rules_of(preset))


@pytest.mark.parametrize("preset, s, needle", [
    ("basic", "QH KH AH", "ace = low"),
    ("czech", "7C 7C 7D", "set_distinct_suits"),
    ("german", "7H JK JK", "max_wilds_per_meld"),
    ("parlett", "3C JK JK", "wilds_at_most_naturals"),
    ("international", "7C 7D 7S 7H 7C", "set_max"),
])
def test_4_an_invalid_meld_is_rejected_in_play(preset: str, s: str, needle: str) -> None:
    r = rules_of(preset, decks=2) if preset == "international" else rules_of(preset)
    g = stage(r, hands=[s + " 2D 9S", "7C 8C"], phase="play", drawn="9S", opened=[True, True])
    rejects(g, play(meld(s), discard="9S"), "is not a valid meld", needle, "RULES 4")


def test_4_3_marked_wild_rank_card_in_play() -> None:
    r = rules_of("basic", wild_rank="2")
    g = stage(r, hands=["2H 3H 4H 9C 8S", "7C 8C"], phase="play", drawn="8S")
    g.play(play(meld("2H* 3H 4H"), discard="8S"))
    assert g.melds[0].wild == [True, False, False]
    g = stage(r, hands=["2H 3H 4H 9C 8S", "7C 8C"], phase="play", drawn="8S")
    g.play(play(meld("2H 3H 4H"), discard="8S"))
    assert g.melds[0].wild == [False, False, False]
    g = stage(r, hands=["5H 3H 4H 9C 8S", "7C 8C"], phase="play", drawn="8S")
    rejects(g, play(meld("3H 4H 5H*"), discard="8S"), "RULES 4.3")


def test_5_3_wild_named_low_end_in_play() -> None:
    g = stage("parlett", hands=["JK 9C 8S", "7C 8C"], phase="play", drawn="8S", melds=[("5H 6H 7H", 1)])
    g.play(play(layoff(0, "JK", end="low"), discard="8S"))
    assert g.melds[0].wild_text(0) == "4H"


def test_observation_fields_are_what_the_seat_may_see() -> None:
    g = stage("wrotham", players=3, hands=["5H 6H 7H", "8C 9C", "KD"], stock="2C 3C 4C", discard="AS 9H",
              melds=[("TS JS QS", 1)], opened=[False, True, False], played_before=[False, True, False],
              totals=[5, 7, 9], deal_no=4, turn=6, rebuilds=1, current=1)
    o = g.observation(1)
    assert (o.seat, o.deal, o.turn, o.phase, o.dealer, o.current) == (1, 4, 7, "draw", g.dealer, 1)  # 6 turns played
    assert texts(o.hand) == ["8C", "9C"] and o.drawn is None and o.took_discard is False
    assert texts(o.discard) == ["AS", "9H"] and o.stock_size == 3 and o.hand_sizes == [3, 2, 1]
    assert o.totals == [5, 7, 9] and o.in_game == [True] * 3 and o.opened == [False, True, False]
    assert [texts(m.cards) for m in o.melds] == [["TS", "JS", "QS"]] and o.opening_requirement == 0
    assert o.rebuilds == 1 and o.must_go_out_to_meld is True and o.played_before is True
    assert o.legal_draws == [STOCK, DISCARD]
    other = g.observation(0)
    assert texts(other.hand) == ["5H", "6H", "7H"] and other.legal_draws == [] and other.played_before is False
