"""The client's fast path for requests (protocol/messages.py): the same verdict and values as the strict decoder.

An honest request is decoded with cards as plain strings and its cards looked
up in a set; these tests hold that set equal to what the card patterns accept,
and every request -- real ones from games, and mutated ones -- decoded to the
same struct (of the public types) or refused with the same error as the strict
decoder alone.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import msgspec
import pytest

from arena.referee import wire
from arena.rules.game import Game, Phase
from arena.rules.options import resolve
from arena.selfplay import policies_for
from protocol import codec as mc
from protocol import messages as m

STANDS_PATTERN = r"^[2-9TJQKA][CDHS]?$"
ALPHABET = "0123456789TtJjQqKkAaCcDdHhSs*XZ "


def verdict(decode: Callable[[], object]) -> object:
    """What a decode gives: the message, or the error's fields."""
    try:
        return decode()
    except m.MessageError as e:
        return ("error", e.reason, e.kind, e.shape, e.type, e.game, e.seq)


def strict(data: bytes) -> object:
    """What the strict decoder alone gives."""
    return verdict(lambda: mc._decode(mc._referee_decoder, data, None))


def fast(data: bytes) -> object:
    return verdict(lambda: mc.decode_from_referee(data))


def _strings(max_len: int) -> list[str]:
    out = [""]
    for n in range(1, max_len + 1):
        out += ["".join(p) for p in itertools.product(ALPHABET, repeat=n)]
    return out


def test_the_card_sets_are_exactly_what_the_patterns_accept() -> None:
    candidates = _strings(3) + ["10" + "".join(p) for p in itertools.product(ALPHABET, repeat=2)]
    accepted = {s for s in candidates if re.search(m.CARD_PATTERN, s)}
    assert accepted == set(mc.CARDS)
    assert {s for s in _strings(2) if re.search(STANDS_PATTERN, s)} == set(mc.STANDS_FOR)
    # the patterns' `$` also takes a trailing newline: the set does not, so the strict decoder decides those
    assert re.search(m.CARD_PATTERN, "7H\n") and "7H\n" not in mc.CARDS


def _requests(preset: str, seed: int) -> list[bytes]:
    rules = resolve(preset)
    g = Game(rules, 3, seed)
    policies = policies_for(rules, ["greedy"] * 3, seed)
    out: list[bytes] = []
    while not g.over and len(out) < 400:
        obs = g.observation(g.current)
        decision = "draw" if g.phase is Phase.DRAW else "play"
        out.append(mc.encode(wire.request(f"{preset}-{seed}", len(out), decision, obs, 1000, 250)))
        g.draw(policies[g.current].draw(obs)) if decision == "draw" else g.play(policies[g.current].play(obs))
    return out


@pytest.mark.parametrize("preset", ["basic", "parlett", "wrotham"])
def test_real_requests_decode_to_the_strict_result_of_the_public_types(preset: str) -> None:
    requests = _requests(preset, 5)
    melds = 0
    for data in requests:
        assert mc._fast_request(data) is not None  # taken for every honest request
        msg = mc.decode_from_referee(data)
        assert msg == strict(data)
        assert type(msg) is m.Request and type(msg.observation) is m.Observation
        assert all(type(x) is m.TableMeld for x in msg.observation.melds)
        assert mc.encode(msg) == data and msgspec.to_builtins(msg) == msgspec.json.decode(data)
        melds += len(msg.observation.melds)
    assert melds > 0  # tables with melds were decoded too


def test_bad_cards_and_broken_requests_get_the_strict_verdict() -> None:
    base = next(d for d in _requests("parlett", 5) if b'"melds":[{' in d)
    obj = msgspec.json.decode(base)
    hand0 = obj["observation"]["hand"][0]
    meld_card = obj["observation"]["melds"][0]["cards"][0]
    mutations = [
        base.replace(f'"{hand0}"'.encode(), b'"7X"', 1),  # a card no pattern accepts
        base.replace(f'"{hand0}"'.encode(), b'"7H\\n"', 1),  # the pattern's $ takes it: the strict decoder decides
        base.replace(f'"{meld_card}"'.encode(), b'"ZZ"'),
        base.replace(b'"drawn":null', b'"drawn":"1H"'),
        base.replace(b'"drawn":null', b'"drawn":"QS"'),
        base.replace(b'"wilds":[', b'"wilds":["7Z",', 1),
        base.replace(b'"hand":[', b'"hand":[7,', 1),
        base.replace(b'"seat":', b'"seat":-', 1),
        base.replace(b'"seq":', b'"seq":"', 1),
        base[:-5],
        base.replace(b'"clock":{', b'"clock":' + b"[" * 40 + b"]" * 40 + b',"x":{', 1),
        base.replace(b'"discard":[', b'"discard":["jk","10c*",', 1),
    ]
    verdicts = []
    for data in mutations:
        assert data != base
        got, want = fast(data), strict(data)
        assert got == want, data
        verdicts.append(isinstance(want, tuple))
    assert verdicts == [True, False, True, True, False, True, True, True, True, True, True, False]
    assert mc._fast_request(mutations[1]) is None and mc._fast_request(mutations[-1]) is not None


# -- the referee's fast path for a bot's replies ----------------------------------------------


def strict_reply(data: bytes) -> object:
    return verdict(lambda: mc._decode(mc._bot_decoder, data, m.MAX_MESSAGE_BYTES))


def fast_reply(data: bytes) -> object:
    return verdict(lambda: mc.decode_from_bot(data))


def _replies(preset: str, seed: int) -> list[bytes]:
    from arena.rules.actions import play_to_wire

    rules = resolve(preset)
    g = Game(rules, 3, seed)
    policies = policies_for(rules, ["greedy"] * 3, seed)
    out: list[bytes] = []
    while not g.over and len(out) < 400:
        obs = g.observation(g.current)
        if g.phase is Phase.DRAW:
            source = policies[g.current].draw(obs)
            out.append(mc.encode(m.Draw(game="g", seq=len(out), source=source)))  # type: ignore[arg-type]
            g.draw(source)
        else:
            play = policies[g.current].play(obs)
            actions, discard = play_to_wire(play)
            out.append(mc.encode(m.Play(game="g", seq=len(out), actions=actions, discard=discard)))
            g.play(play)
    return out


@pytest.mark.parametrize("preset", ["basic", "parlett", "wrotham"])
def test_real_replies_decode_to_the_strict_result_of_the_public_types(preset: str) -> None:
    kinds: set[type] = set()
    for data in _replies(preset, 5):
        assert mc._fast_reply(data) is not None  # taken for every honest reply
        msg = mc.decode_from_bot(data)
        assert msg == strict_reply(data) and mc.encode(msg) == data
        assert type(msg) in (m.Draw, m.Play)
        if isinstance(msg, m.Play):
            kinds.update(type(a) for a in msg.actions)
    assert kinds >= {m.Meld, m.Layoff}  # plays with table actions were decoded too (of the public types)


def test_bad_cards_and_broken_replies_get_the_strict_verdict() -> None:
    base = (b'{"v":1,"type":"play","game":"g","seq":3,"actions":[{"type":"meld","cards":["7H","8H","9H"]},'
            b'{"type":"layoff","meld":0,"cards":["TH"],"end":"high"},{"type":"swap","meld":1,"card":"5C","wild":"JK"}],'
            b'"discard":"KS"}')
    mutations = [
        base.replace(b'"7H"', b'"7X"'),  # a card no pattern accepts, in a meld
        base.replace(b'"TH"', b'"7H\\n"'),  # the pattern's $ takes it: the strict decoder decides
        base.replace(b'"5C"', b'"ZZ"'),  # in a swap
        base.replace(b'"JK"', b'"1H"'),  # a swap's wild
        base.replace(b'"KS"', b'"KK"'),  # the discard
        base.replace(b'"KS"', b'null'),
        base.replace(b'"KS"', b'"jk"'),
        base.replace(b'"meld":0', b'"meld":-1'),
        base.replace(b'"end":"high"', b'"end":"middle"'),
        base.replace(b'"seq":3', b'"seq":"3"'),
        base.replace(b'"type":"swap"', b'"type":"steal"'),
        base[:-5],
        base.replace(b'"actions":[', b'"actions":[' + b"[" * 40 + b"]" * 40 + b",", 1),
        b'{"v":1,"type":"hello","name":""}',
        b'{"v":1,"type":"draw","game":"g","seq":1,"source":"deck"}',
    ]
    verdicts = []
    for data in mutations:
        assert data != base
        got, want = fast_reply(data), strict_reply(data)
        assert got == want, data
        assert type(got) in (m.Play, tuple), got
        verdicts.append(isinstance(want, tuple))
    assert verdicts == [True, False, True, True, True, False, False, True, True, True, True, True, True, True, True]
    assert mc._fast_reply(mutations[1]) is None and mc._fast_reply(mutations[6]) is not None
    assert fast_reply(base) == strict_reply(base) and type(mc.decode_from_bot(base)) is m.Play
