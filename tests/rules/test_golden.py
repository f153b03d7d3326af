"""Golden recorded games (one per preset, ``tests/golden/<preset>.jsonl``) replay exactly.

The records were written once by ``tests/golden/make_golden.py``.  A change to
the engine that alters any rule outcome breaks these replays; a record with a
single card changed must not replay.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from arena.referee.entries import encode_line
from arena.rules.log import entry_from_data
from arena.rules.presets import PRESETS
from arena.rules.record import Header, ReplayError, replay

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def load(preset: str) -> tuple[Header, list[dict[str, Any]]]:
    lines = (GOLDEN / f"{preset}.jsonl").read_text(encoding="utf-8").splitlines()
    header = Header.from_data(json.loads(lines[0]))
    return header, [json.loads(line) for line in lines[1:]]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_golden_game_replays_identically(preset: str) -> None:
    header, entries = load(preset)
    assert header.rules.name == preset and header.rules == PRESETS[preset]
    game = replay(header, entries)
    assert game.over and game.log == [entry_from_data(e) for e in entries]
    assert entries[-1]["e"] == "game_end" and entries[-1]["totals"] == game.totals
    assert game.position().card_count() == game.deck_size


def test_every_preset_has_a_golden_game() -> None:
    assert {p.stem for p in GOLDEN.glob("*.jsonl")} >= set(PRESETS)


def _other(card: str) -> str:
    return "2C" if card != "2C" else "3C"


def _mutations(entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Records that differ from ``entries`` by one card, in different kinds of entry."""
    out: dict[str, list[dict[str, Any]]] = {}
    i = next(k for k, e in enumerate(entries) if e["e"] == "play" and e["discard"])
    changed = copy.deepcopy(entries)
    changed[i]["discard"] = _other(changed[i]["discard"])
    out["discard"] = changed
    i = next(k for k, e in enumerate(entries) if e["e"] == "deal_start")
    changed = copy.deepcopy(entries)
    changed[i]["hands"][0][0] = _other(changed[i]["hands"][0][0])
    out["dealt hand"] = changed
    i = next(k for k, e in enumerate(entries) if e["e"] == "draw" and "card" in e)
    changed = copy.deepcopy(entries)
    changed[i]["card"] = _other(changed[i]["card"])
    out["drawn card"] = changed
    melds = [k for k, e in enumerate(entries) if e["e"] == "play" and e["actions"]]
    if melds:
        changed = copy.deepcopy(entries)
        cards = changed[melds[0]]["actions"][0]["cards"]
        cards[0] = _other(cards[0])
        out["meld card"] = changed
    i = next(k for k, e in enumerate(entries) if e["e"] == "deal_end")
    changed = copy.deepcopy(entries)
    changed[i]["hands"] = [list(h) for h in changed[i]["hands"]]
    nonempty = next(s for s, h in enumerate(changed[i]["hands"]) if h)
    changed[i]["hands"][nonempty][0] = _other(changed[i]["hands"][nonempty][0])
    out["final hand"] = changed
    return out


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_record_with_one_card_changed_fails(preset: str) -> None:
    header, entries = load(preset)
    for what, changed in _mutations(entries).items():
        with pytest.raises(ReplayError) as e:
            replay(header, changed)
        assert str(e.value).startswith("entry "), what


@pytest.mark.parametrize("preset", ["basic", "german"])
def test_a_truncated_or_extended_record_fails(preset: str) -> None:
    header, entries = load(preset)
    with pytest.raises(ReplayError, match="record ends|missing"):
        replay(header, entries[:-1])
    with pytest.raises(ReplayError):
        replay(header, entries + [{"e": "draw", "seat": 0, "source": "stock"}])


def test_a_record_with_other_rules_fails() -> None:
    header, entries = load("basic")
    other = Header(header.seed + 1, header.players, header.rules, header.seats, header.extra)
    with pytest.raises(ReplayError):
        replay(other, entries)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_golden_game_replays_byte_identically(preset: str) -> None:
    lines = (GOLDEN / f"{preset}.jsonl").read_text(encoding="utf-8").splitlines()
    header, entries = load(preset)
    game = replay(header, entries)
    assert [encode_line(e).decode() for e in game.log] == lines[1:]  # as the referee's record writer writes them
    assert json.dumps(header.to_data(), separators=(",", ":")) == lines[0]


def test_a_rebuild_written_after_its_draw_fails_naming_the_old_order() -> None:
    header, entries = load("basic")
    i = next(k for k, e in enumerate(entries) if e["e"] == "rebuild" and e["upcard"] is None)
    assert entries[i + 1]["e"] == "draw"
    swapped = entries[:i] + [entries[i + 1], entries[i]] + entries[i + 2:]
    with pytest.raises(ReplayError, match=f"^entry {i + 1}: "):
        replay(header, swapped)
    old = Header(header.seed, header.players, header.rules, header.seats, header.extra, version=1)
    with pytest.raises(ReplayError, match="record version 1 file"):
        replay(old, swapped)


def test_an_entry_the_engine_did_not_make_fails_before_the_action_it_precedes() -> None:
    header, entries = load("basic")
    i = next(k for k, e in enumerate(entries) if e["e"] == "draw")
    bogus = {"e": "rebuild", "stock_size": 3, "upcard": None}
    with pytest.raises(ReplayError, match=f"^entry {i + 1}: "):
        replay(header, entries[:i] + [bogus] + entries[i:])


def test_a_field_no_entry_has_does_not_replay_but_a_latency_does() -> None:
    header, entries = load("basic")
    i = next(k for k, e in enumerate(entries) if e["e"] == "draw")
    with pytest.raises(ReplayError, match=f"^entry {i + 1}: draw entry differs at 'extra': the record says 1, "
                                          "the engine gives None"):
        replay(header, entries[:i] + [entries[i] | {"extra": 1}] + entries[i + 1:])
    timed = [e | {"ms": 1.5} if e["e"] in ("draw", "play") else e for e in entries]
    failure = {"e": "failure", "seat": 0, "bot": "b", "kind": "stale", "reason": "r", "action": "dropped",
               "deal": 1, "turn": 1}
    assert replay(header, timed[:i] + [failure] + timed[i:]).totals == replay(header, entries).totals
