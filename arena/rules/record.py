"""Game records: everything needed to replay a game exactly, and the check that it does.

A record is a header (seed, seat count, resolved rule options, optional seat
names, and the suit map when the deal's suits were relabelled, as ``suits``:
see ``arena.rules.suits``) and the game's log: every action (``draw``, ``play``, ``forfeit``)
with its effect, and every deal start, rebuild, deal end (per-deal scores)
and the game end, in the order they happened (so a rebuild forced by a draw
comes before that draw).  ``replay`` feeds the actions to a fresh ``Game``
and checks that every entry comes out the same.

Record version 2 is version 1 with every entry at its own moment: version 1
wrote a meld as it stood at the end of its turn and a draw's rebuild after
the draw, so a version 1 record with either does not replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from arena.rules.actions import IllegalAction, play_from_wire
from arena.rules.game import Game
from arena.rules.log import ACTIONS, DrawEntry, Entry, EntryError, ForfeitEntry, PlayEntry, entry_from_data
from arena.rules.options import RulesError, RuleSet, rules_from_data
from arena.rules.suits import SuitMap, SuitMapError, from_text, to_text

RECORD_VERSION = 2
REFEREE_ENTRIES = ("failure",)  # written by the referee, not the engine: skipped by replay
REFEREE_FIELDS = ("ms",)  # a decision's latency, written beside a draw or play entry by the referee


class ReplayError(ValueError):
    """A record that does not replay: names the first entry that does not hold."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(f"entry {index}: {message}")
        self.index = index


@dataclass(frozen=True, slots=True)
class Header:
    seed: int
    players: int
    rules: RuleSet
    seats: tuple[str, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()
    version: int = RECORD_VERSION
    suits: SuitMap | None = None  # the deal's suit map (RULES 2.3 under relabelling); None: as shuffled

    def to_data(self) -> dict[str, Any]:
        d: dict[str, Any] = {"record": self.version, "seed": self.seed, "players": self.players, "rules": self.rules.to_data()}
        if self.seats:
            d["seats"] = list(self.seats)
        if self.suits is not None:
            d["suits"] = to_text(self.suits)
        d.update(dict(self.extra))
        return d

    @classmethod
    def from_data(cls, d: dict[str, Any]) -> Header:
        try:
            rules = rules_from_data(d["rules"])
            known = {"record", "seed", "players", "rules", "seats", "suits"}
            suits = None if d.get("suits") is None else from_text(d["suits"])
            return cls(int(d["seed"]), int(d["players"]), rules, tuple(d.get("seats", ())),
                       tuple((k, v) for k, v in d.items() if k not in known), int(d.get("record", 1)), suits)
        except SuitMapError as e:
            raise ReplayError(0, f"the header field 'suits' is not valid ({e})") from None
        except (KeyError, TypeError, ValueError, RulesError) as e:
            raise ReplayError(0, f"the header is not a valid record header ({e})") from None


def header_of(game: Game, seats: tuple[str, ...] = (), **extra: Any) -> Header:
    return Header(game.seed, game.n, game.rules, seats, tuple(extra.items()), suits=game.suit_map)


def _diff(expected_entry: Entry, got_entry: Entry, extra: dict[str, Any]) -> str:
    """The first field (in name order) where two entries differ, as the record file shows them."""
    expected: dict[str, Any] = msgspec.to_builtins(expected_entry) | extra
    got: dict[str, Any] = msgspec.to_builtins(got_entry)
    keys = [k for k in sorted(set(expected) | set(got)) if expected.get(k) != got.get(k)]
    k = keys[0] if keys else "?"
    return f"{expected.get('e', '?')} entry differs at {k!r}: the record says {expected.get(k)!r}, the engine gives {got.get(k)!r}"


def _tag(entry: Entry) -> str:
    return str(type(entry).__struct_config__.tag)


def replay(header: Header, record: Sequence[Entry | dict[str, Any] | None]) -> Game:
    """Replay a record's entries from ``header``; raise ReplayError at the first mismatch.

    An item is an engine entry, the object of a record line (a ``failure`` line
    of the referee is skipped, and so is a latency ``ms``; any other field no
    entry has is a difference), or None for a line that is not the engine's.  Entry numbers in errors count the record's items
    from 1 (the header is line 0).
    """
    numbers: list[int] = []
    entries: list[Entry] = []
    extras: list[dict[str, Any]] = []  # fields of a record's object that no engine entry has: a difference
    for n, item in enumerate(record, start=1):
        if item is None:
            continue
        extra: dict[str, Any] = {}
        if isinstance(item, dict):
            if item.get("e") in REFEREE_ENTRIES:
                continue
            try:
                entry = entry_from_data(item)
            except EntryError as e:
                raise ReplayError(n, f"malformed {item.get('e', 'record')} entry ({e})") from None
            known = type(entry).__struct_fields__
            extra = {k: v for k, v in item.items() if k not in known and k != "e" and k not in REFEREE_FIELDS}
        elif isinstance(item, Entry):
            entry = item
        else:
            raise ReplayError(n, "an entry is not a JSON object")
        numbers.append(n)
        entries.append(entry)
        extras.append(extra)
    try:
        return _replay(header, entries, extras)
    except ReplayError as e:
        n = numbers[e.index - 1] if 0 < e.index <= len(numbers) else len(record) + 1
        hint = "" if header.version >= RECORD_VERSION else (
            f" (a record version {header.version} file: before version {RECORD_VERSION}, a meld entry showed the meld "
            "at the end of its turn and a rebuild came after the draw that needed it)"
        )
        raise ReplayError(n, str(e).split(": ", 1)[1] + hint) from None


def _replay(header: Header, entries: list[Entry], extras: list[dict[str, Any]]) -> Game:
    game = Game(header.rules, header.players, header.seed, header.suits)
    checked = 0

    def check_upto(n: int) -> None:
        nonlocal checked
        while checked < min(n, len(game.log)):
            if checked >= len(entries):
                raise ReplayError(checked + 1, f"the record ends but the engine has a {_tag(game.log[checked])} entry")
            if game.log[checked] != entries[checked] or extras[checked]:
                raise ReplayError(checked + 1, _diff(entries[checked], game.log[checked], extras[checked]))
            checked += 1

    check_upto(len(game.log))
    for i in range(len(entries)):
        if i < checked:
            continue
        # Entries an action produces may come before it (a rebuild before its draw): apply the next action.
        at = next((j for j in range(i, len(entries)) if isinstance(entries[j], ACTIONS)), None)
        if at is None:
            kind = _tag(entries[i])
            raise ReplayError(i + 1, f"the engine has no {kind!r} entry here (expected {_tag(game.log[i]) if i < len(game.log) else 'nothing'})")
        _apply(game, entries[at], at + 1)
        check_upto(len(game.log))
        if checked <= at:
            raise ReplayError(checked + 1, f"the engine has no {_tag(entries[checked])!r} entry here")
    if checked < len(game.log):
        raise ReplayError(checked + 1, f"the record is missing the engine's {_tag(game.log[checked])} entry")
    return game


def _apply(game: Game, entry: Entry, number: int) -> None:
    """Feed one action entry (``draw``, ``play`` or ``forfeit``) to ``game``; ReplayError names ``number``."""
    kind = _tag(entry)
    try:
        if isinstance(entry, DrawEntry):
            if entry.seat != game.current:
                raise ReplayError(number, f"draw by seat {entry.seat} but it is seat {game.current}'s turn")
            game.draw(entry.source)
        elif isinstance(entry, PlayEntry):
            if entry.seat != game.current:
                raise ReplayError(number, f"play by seat {entry.seat} but it is seat {game.current}'s turn")
            game.play(play_from_wire(entry.actions, entry.discard))
        else:
            assert isinstance(entry, ForfeitEntry)
            game.forfeit(entry.seat, entry.reason, entry.failure)
    except IllegalAction as e:
        raise ReplayError(number, f"the engine rejects this {kind}: {e}") from None
