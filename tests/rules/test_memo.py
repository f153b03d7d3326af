"""The engine's memo tables (arena/rules/memo.py) change no answer, share nothing mutable, and stay bounded."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rules import memo
from arena.rules.candidates import _Pools, _runs, _sets, _shape_of, _wild_rank_set, candidate_shapes
from arena.rules.cards import full_deck
from arena.rules.melds import MeldError, _form_meld, form_meld
from arena.rules.options import resolve
from arena.rules.presets import PRESETS
from tests.engine_helpers import cards


def _plain_shapes(hand: list[int], rules) -> list:  # the search without the memo (the wild-rank path)
    pools = _Pools(hand, rules.wild_rank)
    out = _wild_rank_set(pools, rules) + _sets(pools, rules) + _runs(pools, rules)
    return [m for c, kind, where in out if (m := _shape_of(c, kind, where, rules)) is not None]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(preset=st.sampled_from(list(PRESETS)), ace=st.sampled_from([None, "wrap", "high_or_low"]),
       over=st.sampled_from([{}, {"wilds_adjacent": False}, {"max_wilds_per_meld": 1}, {"set_distinct_suits": False},
                             {"wilds_at_most_naturals": False}]),
       size=st.integers(1, 16), data=st.data())
def test_memoized_candidates_are_the_plain_searchs(preset, ace, over, size, data) -> None:
    rules = resolve(preset, {**over, **({"ace": ace} if ace else {})} or None)
    hand = data.draw(st.lists(st.sampled_from(full_deck(2, 4)), min_size=size, max_size=size))
    want = repr(_plain_shapes(hand, rules))
    first = candidate_shapes(hand, rules)
    assert repr(first) == want
    for _cards, shape in first:  # a caller changing a result changes no later answer
        shape.cards.append(99)
        shape.wild.append(True)
    assert repr(candidate_shapes(hand, rules)) == want


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(preset=st.sampled_from(list(PRESETS)), wild=st.sampled_from([None, 2]), kind=st.sampled_from([None, "set", "run"]),
       data=st.data())
def test_memoized_form_meld_is_the_plain_one(preset, wild, kind, data) -> None:
    rules = resolve(preset, {"wild_rank": wild} if wild else None)
    picked = data.draw(st.lists(st.sampled_from(full_deck(2, 4)), min_size=1, max_size=6))
    marked = frozenset(data.draw(st.sets(st.integers(0, len(picked) - 1), max_size=2)))
    for _ in range(2):  # computed, then from the memo
        try:
            plain = _form_meld(picked, rules, marked, kind)
        except MeldError as e:
            try:
                form_meld(picked, rules, marked, kind)
            except MeldError as again:
                assert str(again) == str(e)
            else:
                raise AssertionError("the memo accepted what form_meld refuses")
            continue
        got = form_meld(picked, rules, marked, kind)
        assert got == plain and got.cards is not picked
        got.wild.append(True)  # a fresh meld each time: changing one changes no later answer
        got.cards.append(0)


def test_form_meld_memo_answers_repeat_exactly() -> None:
    basic = resolve("basic")
    run = form_meld(cards("7H 8H 9H"), basic)
    run.cards.append(5)
    again = form_meld(cards("7H 8H 9H"), basic)
    assert again.cards == cards("7H 8H 9H") and again.low == 7 and again.kind == "run"
    for _ in range(2):
        try:
            form_meld(cards("7H 9S 8D"), basic)
        except MeldError as e:
            assert "share neither one rank" in str(e)
        else:
            raise AssertionError("not a meld")


def test_memo_tables_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(memo, "MAX_ENTRIES", 50)
    monkeypatch.setattr(memo, "MAX_RULE_SETS", 4)
    tables: memo.PerRules[int, int] = memo.PerRules()
    rules = resolve("basic")
    for i in range(500):
        t = tables.of(rules)
        t[i] = i
        assert len(t) <= 50
    assert tables.of(rules) is tables.of(rules)
    many = [resolve("basic", {"target": 100 + i}) for i in range(20)]
    for r in many:
        tables.of(r)[0] = 1
        assert len(tables._tables) <= 4
    equal = dataclasses.replace(rules)  # equal, but another object: found by identity, not equality
    assert equal == rules and tables.of(equal) is not tables.of(rules)
