"""Card value tables (RULES.md sections 7 and 10).

A table gives each rank and the joker a value; ``ace_high`` replaces the ace's
value whenever the ``ace`` option is not ``low``; ``ace_low_in_run`` (only in
``german-opening``) is the ace's value when it is the lowest card of a run.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.rules.cards import JOKER, RANKS, Card, rank_of
from arena.rules.frozen import by_fields


@dataclass(frozen=True, slots=True)
class ValueTable:
    name: str
    ranks: tuple[int, ...]  # index 1..13 (index 0 unused)
    joker: int
    ace_high: int | None = None
    ace_low_in_run: int | None = None

    def card(self, card: Card, ace_is_high: bool) -> int:
        """Value of a card in a hand (a wild at its own value)."""
        if card == JOKER:
            return self.joker
        r = rank_of(card)
        if r == 1 and ace_is_high and self.ace_high is not None:
            return self.ace_high
        return self.ranks[r]

    def rank_value(self, rank: int, ace_is_high: bool, lowest_of_run: bool = False) -> int:
        """Value of a rank as part of a meld (wilds count as what they stand for)."""
        if rank == 1:
            if lowest_of_run and self.ace_low_in_run is not None:
                return self.ace_low_in_run
            if ace_is_high and self.ace_high is not None:
                return self.ace_high
        return self.ranks[rank]

    def describe(self) -> str:
        parts = []
        for r in range(1, 14):
            v = str(self.ranks[r])
            if r == 1 and self.ace_high is not None:
                v += f" [{self.ace_high}]"
            if r == 1 and self.ace_low_in_run is not None:
                v += f" ({self.ace_low_in_run} lowest in run)"
            parts.append(f"{RANKS[r - 1]}={v}")
        parts.append(f"JK={self.joker}")
        return " ".join(parts)

    def to_data(self) -> str | dict[str, int]:
        if self.name in VALUE_TABLES and VALUE_TABLES[self.name] == self:
            return self.name
        data = {RANKS[r - 1]: self.ranks[r] for r in range(1, 14)}
        data["JK"] = self.joker
        if self.ace_high is not None:
            data["ace_high"] = self.ace_high
        if self.ace_low_in_run is not None:
            data["ace_low_in_run"] = self.ace_low_in_run
        return data

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)


def _pips(ace: int, jack: int, queen: int, king: int) -> tuple[int, ...]:
    return (0, ace, 2, 3, 4, 5, 6, 7, 8, 9, 10, jack, queen, king)


VALUE_TABLES: dict[str, ValueTable] = {
    "basic": ValueTable("basic", _pips(1, 10, 10, 10), joker=15, ace_high=15),
    "parlett": ValueTable("parlett", _pips(1, 10, 10, 10), joker=15, ace_high=11),
    "czech": ValueTable("czech", _pips(1, 11, 12, 13), joker=15),
    "german": ValueTable("german", _pips(15, 10, 10, 10), joker=20, ace_high=15),
    "german-opening": ValueTable(
        "german-opening", _pips(11, 10, 10, 10), joker=20, ace_low_in_run=1
    ),
}


MAX_CARD_VALUE = 1000
"""Highest value an inline table may give a card (RULES 7; the presets give at most 20)."""


def value_table_from_data(data: object, key: str) -> ValueTable:
    """A table by name, or an inline table ``{A = 1, 2 = 2, ..., JK = 15, ace_high = 15}``."""
    if isinstance(data, str):
        if data not in VALUE_TABLES:
            raise ValueError(
                f"{key}: unknown value table {data!r}; expected one of {', '.join(VALUE_TABLES)} or an inline table"
            )
        return VALUE_TABLES[data]
    if isinstance(data, dict):
        ranks = [0] * 14
        given: set[int] = set()
        extra: dict[str, int | None] = {"ace_high": None, "ace_low_in_run": None}
        joker = None
        for k, v in data.items():
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_CARD_VALUE:
                raise ValueError(f"{key}.{k}: expected a whole number from 0 to {MAX_CARD_VALUE}, got {v!r}")
            ku = str(k).upper()
            if ku == "JK":
                joker = v
            elif k in extra:
                extra[k] = v
            elif ku in RANKS or ku == "10":
                r = RANKS.index("T" if ku == "10" else ku) + 1
                ranks[r] = v
                given.add(r)
            else:
                raise ValueError(f"{key}.{k}: not a rank, JK, ace_high or ace_low_in_run")
        missing = [RANKS[r - 1] for r in range(1, 14) if r not in given]
        if joker is None:
            missing.append("JK")
        if missing or joker is None:  # joker is None only with "JK" missing
            raise ValueError(f"{key}: an inline value table must give every rank and JK (missing {', '.join(missing)})")
        return ValueTable("custom", tuple(ranks), joker, extra["ace_high"], extra["ace_low_in_run"])
    raise ValueError(f"{key}: expected a value table name or an inline table, got {data!r}")
