"""Memo tables kept per rule set, for pure functions of cards and rules on the engine's hot path.

A ``RuleSet`` is immutable, so what was worked out for one holds while it lives.  A table is
found by the rule set's identity (hashing its thirty-odd fields would cost more than most of
what is memoized), and holds the rule set itself, so the identity cannot be reused while the
table exists.  Memory is bounded: a full table is emptied, and when too many rule sets are in
use the tables of all of them are dropped.  The values stored must be immutable: callers build
fresh mutable results (a ``TableMeld``) from them.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from arena.rules.ruleset import RuleSet

K = TypeVar("K")
V = TypeVar("V")

MAX_ENTRIES = 1 << 15  # per rule set and table
MAX_RULE_SETS = 64


class PerRules(Generic[K, V]):
    """One memo table per rule set (``of(rules)``)."""

    __slots__ = ("_last", "_limit", "_tables")

    def __init__(self, limit: int | None = None) -> None:
        self._tables: dict[int, tuple[RuleSet, dict[K, V]]] = {}
        self._limit = limit  # entries per table (MAX_ENTRIES if None)
        self._last: tuple[RuleSet, dict[K, V]] | None = None  # the table asked for last, found first

    def of(self, rules: RuleSet) -> dict[K, V]:
        entry = self._last
        if entry is None or entry[0] is not rules:
            entry = self._tables.get(id(rules))
            if entry is None or entry[0] is not rules:
                if len(self._tables) >= MAX_RULE_SETS:
                    self._tables.clear()
                entry = self._tables[id(rules)] = (rules, {})
            self._last = entry
        table = entry[1]
        if len(table) >= (self._limit or MAX_ENTRIES):
            table.clear()
        return table
