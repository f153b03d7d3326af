"""Scoring one deal (RULES 7, 6.2): who pays whom, as a pure function.

``score_deal`` takes the rule set, each seat's hand value, who went out (or
None), whether that was rummy, and the seats in the deal, and gives each
seat's score for the deal; ``Game`` adds them to the totals.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.rules.ruleset import RuleSet


def score_deal(rules: RuleSet, values: Sequence[int], out: int | None, rummy: bool, seats: Sequence[int]) -> list[int]:
    """Each seat's score for the deal (seats not in ``seats`` get 0).

    ``values[s]`` is the value of seat s's hand (RULES 7); ``rummy`` means ``out``
    went out in one turn (RULES 6.2).
    """
    mult = 2 if rummy and rules.rummy_bonus == "double" else 1
    bonus = 10 if rummy and rules.rummy_bonus == "plus10" else 0
    scores = [0] * len(values)
    if rules.scoring == "penalty":  # each seat but the one out adds its own hand
        for s in seats:
            if s != out:
                scores[s] += values[s] * mult
        if out is not None:
            scores[out] -= bonus
        return scores
    if out is not None:
        winners = [out]
        owed = {s: values[s] for s in seats if s != out}
    else:  # no one out: the lowest hands win what the others hold above them
        low = min(values[s] for s in seats)
        winners = [s for s in seats if values[s] == low]
        owed = {s: values[s] - low for s in seats if s not in winners}
    share = sum(owed.values()) // len(winners)
    for w in winners:
        scores[w] += share * mult
    if rules.scoring == "settle":
        for s, v in owed.items():
            scores[s] -= v * mult
    if out is not None:
        scores[out] += bonus
    return scores
