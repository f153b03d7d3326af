"""The decoders are total: any bytes give a message or a ``MessageError`` (``malformed`` or ``oversized``).

Hostile input of every kind (arbitrary bytes, invalid UTF-8, NULs, huge
numbers, JSON nested 1,000 and 100,000 deep in known and unknown fields of
every bot message) never raises anything else, and the nesting cap
(``MAX_NESTING``) is exact on valid JSON.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import decode_from_bot, decode_from_referee, encode, nesting_exceeds
from protocol.messages import MAX_MESSAGE_BYTES, MAX_NESTING, Draw, Hello, MessageError, Play

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BASES: dict[str, dict[str, Any]] = {
    "hello": {"v": 1, "type": "hello", "name": "fuzz"},
    "draw": {"v": 1, "type": "draw", "game": "g1", "seq": 3, "source": "stock"},
    "play": {"v": 1, "type": "play", "game": "g1", "seq": 4, "actions": [{"type": "meld", "cards": ["7H", "8H", "9H"]}], "discard": "KD"},
}
# Fields a message type reads (known) and one it ignores (unknown).
FIELDS: dict[str, tuple[str, ...]] = {
    "hello": ("name", "versions", "author", "events", "v", "zzz"),
    "draw": ("game", "seq", "source", "v", "zzz"),
    "play": ("actions", "discard", "seq", "v", "zzz"),
}


def check(data: Any) -> Hello | Draw | Play | MessageError:
    """Decode ``data`` as a bot message; anything but a message or a well-formed MessageError fails the test."""
    try:
        msg = decode_from_bot(data)
    except MessageError as e:
        assert e.kind in ("malformed", "oversized")
        assert e.reason and "\n" not in e.reason and len(e.reason) < 2000
        return e
    assert isinstance(msg, (Hello, Draw, Play))
    return msg


def nested(kind: str, depth: int, leaf: str = "1") -> str:
    """JSON text of a list (or object) nested ``depth`` levels deep."""
    if kind == "list":
        return "[" * depth + leaf + "]" * depth
    return '{"a":' * depth + leaf + "}" * depth


def with_field(msg_type: str, field: str, value_json: str) -> bytes:
    body = dict(BASES[msg_type])
    body.pop(field, None)
    text = json.dumps(body)
    return (text[:-1] + f', "{field}": {value_json}}}').encode()


def json_depth(v: Any) -> int:
    if isinstance(v, list):
        return 1 + max((json_depth(x) for x in v), default=0)
    if isinstance(v, dict):
        return 1 + max((json_depth(x) for x in v.values()), default=0)
    return 0


# -- deep nesting --------------------------------------------------------------


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize("shape", ["list", "object"])
@pytest.mark.parametrize("msg_type", list(BASES))
def test_deep_nesting_in_every_field_is_malformed(msg_type: str, shape: str, depth: int) -> None:
    for field in FIELDS[msg_type]:
        got = check(with_field(msg_type, field, nested(shape, depth)))
        assert isinstance(got, MessageError) and got.kind == "malformed", (msg_type, field)
        assert f"deeper than {MAX_NESTING} levels" in got.reason


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deep_nesting_alone_unclosed_or_inside_strings(depth: int) -> None:
    assert isinstance(check(nested("list", depth).encode()), MessageError)
    assert isinstance(check(nested("object", depth).encode()), MessageError)
    assert isinstance(check(b"[" * depth), MessageError)
    assert isinstance(check(b'{"a":' * depth), MessageError)
    assert isinstance(check(b"\\[" * depth), MessageError)
    # Brackets inside a string are text, not nesting: the message decodes.
    hello = check(with_field("hello", "zzz", json.dumps("[{" * depth)))
    assert isinstance(hello, Hello)
    hello = check(with_field("hello", "zzz", json.dumps('\\"[' * depth)))
    assert isinstance(hello, Hello)


def test_the_nesting_cap_is_exact() -> None:
    # The message object is level 1, so a value in a field may nest MAX_NESTING - 1 deep.
    ok = with_field("draw", "zzz", nested("list", MAX_NESTING - 1))
    assert isinstance(check(ok), Draw)
    too_deep = with_field("draw", "zzz", nested("list", MAX_NESTING))
    assert isinstance(check(too_deep), MessageError)
    assert isinstance(check(with_field("play", "zzz", nested("object", MAX_NESTING - 1))), Play)


def test_the_deepest_real_messages_are_far_below_the_cap() -> None:
    play = encode(Play(game="g", seq=1, actions=[], discard="KD"))
    assert json_depth(json.loads(play)) < MAX_NESTING
    request = {"type": "request", "observation": {"melds": [{"cards": ["7H"], "wilds": [None]}]}}
    assert json_depth(request) == 5 < MAX_NESTING


@pytest.mark.slow
@FUZZ
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\a\u00e9\x00 ', max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\k', max_size=4), inner, max_size=3),
    max_leaves=60,
), st.integers(1, 12), st.booleans())
def test_nesting_check_agrees_with_the_real_depth_on_valid_json(value: Any, limit: int, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert nesting_exceeds(text, limit) == (json_depth(value) > limit)


# -- arbitrary input -----------------------------------------------------------


@FUZZ
@given(st.binary(max_size=4096))
def test_arbitrary_bytes(data: bytes) -> None:
    check(data)
    try:
        decode_from_referee(data)
    except MessageError:
        pass


@pytest.mark.slow
@FUZZ
@given(st.sampled_from(list(BASES)), st.data())
def test_arbitrary_json_values_in_known_and_unknown_fields(msg_type: str, data: st.DataObject) -> None:
    field = data.draw(st.sampled_from(FIELDS[msg_type]))
    value = data.draw(st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
        max_leaves=30,
    ))
    body = dict(BASES[msg_type])
    body[field] = value
    check(json.dumps(body).encode())


@pytest.mark.slow  # 0.7-1.1 s of CPU or own time alone: too near the fast tier's bounds on a loaded machine
@FUZZ
@given(st.sampled_from(list(BASES)), st.sampled_from(["v", "seq", "zzz"]),
       st.integers(min_value=1, max_value=5000), st.sampled_from(["", "-", "0.", "1e"]))
def test_huge_numbers(msg_type: str, field: str, digits: int, prefix: str) -> None:
    number = prefix + "9" * digits + ("1" if prefix == "1e" else "")
    check(with_field(msg_type, field, number))


@pytest.mark.slow  # near the fast tier's 1 s of CPU on a loaded machine (1.0 s beside the timing tier)
@FUZZ
@given(st.sampled_from(list(BASES)), st.binary(min_size=1, max_size=64), st.integers(0, 200))
def test_invalid_utf8_and_nuls_spliced_into_a_message(msg_type: str, junk: bytes, at: int) -> None:
    text = json.dumps(BASES[msg_type]).encode()
    at = min(at, len(text))
    check(text[:at] + junk + text[at:])
    check(with_field(msg_type, "zzz", '"' + junk.hex() + '\\u0000"'))
    check(text.replace(b'"', b'"\x00', 1))
    check(text[:at] + b"\xff\xfe\xc0\x80" + text[at:])


@pytest.mark.slow  # 300 examples: over the fast tier's second of CPU on a loaded machine
@FUZZ
@given(st.text(max_size=200))
def test_text_instead_of_bytes(text: str) -> None:
    check(text)


def test_not_bytes_at_all_is_malformed() -> None:
    for thing in (None, 12, object(), "\ud800", ["x"]):
        assert isinstance(check(thing), MessageError)
    assert isinstance(check(memoryview(json.dumps(BASES["draw"]).encode())), Draw)
    assert isinstance(check(bytearray(json.dumps(BASES["draw"]).encode())), Draw)


def test_size_is_bounded_before_parsing() -> None:
    over = b"[" * (MAX_MESSAGE_BYTES + 1)
    got = check(over)
    assert isinstance(got, MessageError) and got.kind == "oversized"
    assert isinstance(check(b" " * MAX_MESSAGE_BYTES), MessageError)
