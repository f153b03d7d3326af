"""The wire layer (arena/referee/wire.py) and the record lines (arena/referee/entries.py).

The messages a bot sees are built from the protocol's structs; their bytes are
the bytes the referee sent when it built them as dicts (``v`` first, fields in
the order below), and a record line with a latency is the entry's bytes with
``"ms"`` last.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from arena.referee import wire
from arena.referee.entries import Failure, Timed, encode_line, engine_entry, line_from_data
from arena.rules.actions import IllegalAction, LayOff, Meld, Play, Swap, play_to_wire
from arena.rules.cards import parse
from arena.rules.game import Game, Phase
from arena.rules.log import DealEnd, DealStart, DrawEntry, GameStart, PlayEntry, entry_from_data
from arena.rules.options import resolve
from arena.selfplay import policies_for
from protocol import codec as mc
from protocol import messages as m


def compact(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def played(preset: str, seed: int, players: int = 3) -> Game:
    rules = resolve(preset)
    g = Game(rules, players, seed)
    policies = policies_for(rules, ["greedy", "random", "greedy"][:players], seed)
    while not g.over:
        obs = g.observation(g.current)
        if g.phase is Phase.DRAW:
            g.draw(policies[g.current].draw(obs))
        else:
            g.play(policies[g.current].play(obs))
    return g


# -- referee -> bot: the bytes -------------------------------------------------------------------


def test_every_message_travels_with_v_first() -> None:
    assert mc.encode(wire.welcome("ref 1")) == compact(
        {"v": 1, "type": "welcome", "name": "ref 1", "max_message_bytes": m.MAX_MESSAGE_BYTES, "protocol": 1})
    assert mc.encode(wire.shutdown("done")) == b'{"v":1,"type":"shutdown","reason":"done"}'
    assert mc.encode(wire.game_over("g", [2, 1], [5, 0], "target")) == compact(
        {"v": 1, "type": "game_over", "game": "g", "placings": [2, 1], "totals": [5, 0], "reason": "target"})
    clock = m.Clock(decision_ms=10, bank_ms=20, increment_ms=1, grace_ms=5, clock="cpu")
    assert mc.encode(wire.new_game("g", 1, ["a", "b"], {"name": "basic"}, clock)) == compact(
        {"v": 1, "type": "new_game", "game": "g", "seat": 1, "players": ["a", "b"], "rules": {"name": "basic"},
         "clock": {"decision_ms": 10, "bank_ms": 20, "increment_ms": 1, "grace_ms": 5, "clock": "cpu"}})
    # a struct of another version is written as msgspec writes it (nothing to swap back)
    assert mc.encode(m.Shutdown(v=2, reason="x")).startswith(b'{"type":"shutdown","v":2,')
    assert mc.encode({"type": "x", "v": 1}) == b'{"type":"x","v":1}'  # dicts travel as given


def test_an_error_has_game_and_seq_and_a_version_refusal_has_supported_versions_instead() -> None:
    assert mc.encode(wire.error("illegal", "no", True, "g", 4)) == compact(
        {"v": 1, "type": "error", "game": "g", "seq": 4, "kind": "illegal", "reason": "no", "retry": True})
    assert mc.encode(wire.error("stale", "late", False)) == compact(
        {"v": 1, "type": "error", "game": None, "seq": None, "kind": "stale", "reason": "late", "retry": False})
    assert mc.encode(wire.version_refusal("none in common", [1])) == compact(
        {"v": 1, "type": "error", "kind": "version", "reason": "none in common", "retry": False,
         "supported_versions": [1]})
    back = mc.decode_from_referee(mc.encode(wire.version_refusal("none in common", [1])))
    assert isinstance(back, m.Error) and (back.game, back.seq, back.supported_versions) == (None, None, [1])


def _old_events(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The event objects as the referee built them from a dict entry before the wire layer."""
    e = entry["e"]
    if e == "deal_start":
        return [{"kind": "deal_start", "deal": entry["deal"], "dealer": entry["dealer"],
                 "hand_sizes": [len(h) for h in entry["hands"]], "upcard": entry["upcard"],
                 "stock_size": entry["stock_size"]}]
    if e == "draw":
        if "card" not in entry:
            return []
        out = {"kind": "draw", "seat": entry["seat"], "source": entry["source"]}
        return [out | {"card": entry["card"]} if entry["source"] == "discard" else out]
    if e == "play":
        events = [{**fx, "seat": entry["seat"]} for fx in entry.get("effects", ())]
        if entry["discard"] is not None:
            events.append({"kind": "discard", "seat": entry["seat"], "card": entry["discard"]})
        return events
    if e == "deal_end":
        return [{"kind": "deal_end", **{k: entry[k] for k in ("deal", "out", "rummy", "reason", "hand_values",
                                                               "scores", "totals", "eliminated")}}]
    if e == "rebuild":
        return [{"kind": "rebuild", "stock_size": entry["stock_size"], "upcard": entry["upcard"]}]
    if e == "forfeit":
        return [{"kind": "forfeit", "seat": entry["seat"], "failure": entry["failure"], "reason": entry["reason"]}]
    return []


@pytest.mark.parametrize("preset,seed", [("basic", 5), ("parlett", 34), ("wrotham", 29), ("czech", 1)])
def test_events_are_the_bytes_they_always_were(preset: str, seed: int) -> None:
    g = played(preset, seed)
    kinds: set[str] = set()
    for entry in g.log:
        old = [compact({"v": 1, "type": "event", "game": "g7", "event": ev})
               for ev in _old_events(msgspec.to_builtins(entry))]
        new = [mc.encode(wire.event("g7", ev)) for ev in wire.events(entry)]
        assert new == old, entry
        kinds.update(type(ev).__name__ for ev in wire.events(entry))
        for data in new:  # and a bot reads each back as the typed event it is
            msg = mc.decode_from_referee(data)
            assert isinstance(msg, m.Event) and mc.encode(msg) == data
    assert {"DealStartEvent", "DrawEvent", "DiscardEvent", "DealEndEvent"} <= kinds


def test_a_forfeit_and_a_stock_draw_give_their_events_and_a_draw_that_found_no_stock_none() -> None:
    g = Game(resolve("basic"), 3, 2)
    seat = g.current
    (draw,) = wire.events(g.draw("stock")[-1])
    assert draw == m.DrawEvent(seat=seat, source="stock")  # the card stays secret
    assert mc.encode(wire.event("g", draw)) == compact(
        {"v": 1, "type": "event", "game": "g", "event": {"kind": "draw", "seat": seat, "source": "stock"}})
    (forfeit,) = g.forfeit(1, "3 timeouts", "timeout")
    assert wire.events(forfeit) == [m.ForfeitEvent(seat=1, failure="timeout", reason="3 timeouts")]
    assert wire.events(DrawEntry(0, "stock")) == []


def test_a_request_carries_the_observation_in_wire_order_and_reads_back() -> None:
    rules = resolve("parlett")
    g = Game(rules, 3, 34)
    policies = policies_for(rules, ["greedy"] * 3, 34)
    while not (g.melds and g.phase is Phase.DRAW):
        obs = g.observation(g.current)
        g.draw(policies[g.current].draw(obs)) if g.phase is Phase.DRAW else g.play(policies[g.current].play(obs))
    obs = g.observation(g.current)
    data = mc.encode(wire.request("g", 3, "draw", obs, 1000, 250))
    fields = list(json.loads(data))
    assert fields == ["v", "type", "game", "seq", "decision", "observation", "clock"]
    assert list(json.loads(data)["observation"])[-3:] == ["must_go_out_to_meld", "played_before", "legal_draws"]
    msg = mc.decode_from_referee(data)
    assert isinstance(msg, m.Request) and msg.clock == m.DecisionClock(decision_ms=1000, bank_ms_left=250)
    back = wire.observation_from_wire(msg.observation)
    assert back.hand == obs.hand and back.discard == obs.discard and back.legal_draws == obs.legal_draws
    assert [(x.id, x.kind, x.cards, x.wild, x.low, x.rank, x.suit) for x in back.melds] == \
        [(x.id, x.kind, x.cards, x.wild, x.low, x.rank, x.suit) for x in obs.melds]
    assert wire.observation(back) == msg.observation


# -- bot -> referee -----------------------------------------------------------------------------


def test_a_play_reads_back_into_the_engine_play_it_came_from() -> None:
    play = Play((Meld(tuple(parse(c) for c in ("7H", "8H", "2C")), frozenset({2}), "run"),
                 LayOff(0, (parse("9H"),), end="high"), Swap(1, parse("5S"), parse("JK"))), parse("KC"))
    actions, discard = play_to_wire(play)
    assert actions[0] == m.Meld(cards=["7H", "8H", "2C*"], kind="run")
    msg = mc.decode_from_bot(mc.encode(m.Play(game="g", seq=1, actions=actions, discard=discard)))
    assert isinstance(msg, m.Play) and wire.play_from_message(msg) == play


@pytest.mark.parametrize("actions,discard,reason", [
    ([m.Meld(cards=[])], "KC", "action 1: 'cards' must be a non-empty list of cards (RULES 3.2)"),
    ([m.Swap(meld=0, card="7H*")], "KC", "action 1: '7H*' is not a card"),
    ([], "9D*", "discard: '9D*' is not a card"),
])
def test_what_no_card_is_gets_the_reason_the_bot_is_told(actions: list[m.Action], discard: str, reason: str) -> None:
    with pytest.raises(IllegalAction, match="^" + reason.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        wire.play_from_message(m.Play(game="g", seq=1, actions=actions, discard=discard))


# -- record lines -------------------------------------------------------------------------------


def test_a_timed_line_is_the_entry_with_ms_last_and_reads_back() -> None:
    g = Game(resolve("basic"), 2, 9)
    draw = g.draw("stock")[-1]
    assert isinstance(draw, DrawEntry) and draw.card is not None
    line = encode_line(Timed(draw, 12.345))
    assert line == compact({"e": "draw", "seat": draw.seat, "source": "stock", "card": draw.card, "ms": 12.345})
    back = line_from_data(json.loads(line))
    assert back == Timed(draw, 12.345) and engine_entry(back) == draw
    fail = Failure(0, "bot", "timeout", "slow", "retry", 1, 3)
    assert encode_line(fail) == compact({"e": "failure", "seat": 0, "bot": "bot", "kind": "timeout", "reason": "slow",
                                         "action": "retry", "deal": 1, "turn": 3})
    assert line_from_data(json.loads(encode_line(fail))) == fail and engine_entry(fail) is None


def test_entries_are_frozen_and_read_back_from_their_bytes() -> None:
    g = played("basic", 5)
    kinds = {type(e) for e in g.log}
    assert {DealStart, DrawEntry, PlayEntry, DealEnd} <= kinds
    for e in g.log:
        assert entry_from_data(json.loads(msgspec.json.encode(e))) == e
    first = g.log[0]
    assert isinstance(first, GameStart)
    with pytest.raises(AttributeError):
        first.dealer = 1  # type: ignore[misc]
