"""Cards and their notation (RULES 1)."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.rules.cards import (
    JOKER,
    CardError,
    full_deck,
    make,
    parse,
    parse_rank,
    rank_of,
    suit_of,
    text,
    texts,
)


def test_1_every_card_round_trips() -> None:
    for r in "A23456789TJQK":
        for s in "CDHS":
            c = parse(r + s)
            assert text(c) == r + s
            assert rank_of(c) == "A23456789TJQK".index(r) + 1
            assert suit_of(c) == "CDHS".index(s)
    assert parse("JK") == JOKER and text(JOKER) == "JK"


@pytest.mark.parametrize("raw, want", [("7h", "7H"), ("td", "TD"), ("10H", "TH"), ("10h", "TH"), ("as", "AS"),
                                       ("jk", "JK"), (" 7H ", "7H"), ("Qc", "QC")])
def test_1_input_is_case_insensitive_and_10_is_t(raw: str, want: str) -> None:
    assert text(parse(raw)) == want


@pytest.mark.parametrize("raw", ["", "7", "1H", "11H", "7X", "HH", "7HH", "JJ", "0H", "TT"])
def test_1_bad_cards_are_rejected_naming_the_rule(raw: str) -> None:
    with pytest.raises(CardError) as e:
        parse(raw)
    assert "RULES 1" in str(e.value)


def test_1_ranks() -> None:
    assert parse_rank("a") == 1 and parse_rank("10") == 10 and parse_rank("K") == 13 and parse_rank("t") == 10
    with pytest.raises(CardError):
        parse_rank("1")


def test_1_output_is_upper_case() -> None:
    assert texts([parse(t) for t in ["7h", "jk", "10s"]]) == ["7H", "JK", "TS"]


def test_1_two_decks_make_a_multiset_of_equal_cards() -> None:
    deck = full_deck(2, 4)
    assert len(deck) == 108
    counts = Counter(deck)
    assert counts[JOKER] == 4
    assert all(counts[make(r, s)] == 2 for r in range(1, 14) for s in range(4))
    # equal cards are equal values: interchangeable everywhere
    assert parse("7H") == parse("7h") == make(7, 2)


def test_1_one_deck() -> None:
    deck = full_deck(1, 0)
    assert len(deck) == 52 and len(set(deck)) == 52 and JOKER not in deck
