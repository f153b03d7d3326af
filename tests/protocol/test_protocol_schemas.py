"""The committed JSON Schemas match the message types, and every example in SPEC.md is valid."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

import jsonschema
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import protocol
from protocol import gen_schemas
from protocol.codec import decode_from_bot, decode_from_referee, parse_event
from protocol.messages import EVENT_KINDS, MessageError

SPEC = Path(protocol.__file__).with_name("SPEC.md")
SCHEMAS = gen_schemas.SCHEMA_DIR
BOT_TYPES = {"hello", "draw", "play"}


def _schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(_schema(name))


def spec_examples() -> list[dict[str, Any]]:
    """Every ```json block of SPEC.md (each is one whole message)."""
    blocks = re.findall(r"```json\n(.*?)```", SPEC.read_text(encoding="utf-8"), flags=re.S)
    return [json.loads(b) for b in blocks]


EXAMPLES = spec_examples()


def test_committed_schemas_match_the_code() -> None:
    wanted = gen_schemas.generate()
    on_disk = {p.name for p in SCHEMAS.glob("*.json")}
    assert on_disk == set(wanted), "schema files drifted: run python -m protocol.gen_schemas"
    for name, schema in wanted.items():
        text = (SCHEMAS / name).read_text(encoding="utf-8")
        assert text == gen_schemas.dumps(schema), f"{name} drifted: run python -m protocol.gen_schemas"


@pytest.mark.parametrize("name", sorted(gen_schemas.generate()))
def test_schemas_are_valid_json_schema(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(_schema(name))


def test_spec_has_an_example_of_every_message_and_event_kind() -> None:
    types = {e["type"] for e in EXAMPLES}
    assert types == set(gen_schemas.MESSAGE_TYPES)
    kinds = {e["event"]["kind"] for e in EXAMPLES if e["type"] == "event"}
    assert kinds == set(EVENT_KINDS)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["type"])
def test_spec_example_is_valid(example: dict[str, Any]) -> None:
    t = example["type"]
    _validator(f"{t}.json").validate(example)
    direction = "bot_message.json" if t in BOT_TYPES else "referee_message.json"
    _validator(direction).validate(example)
    data = json.dumps(example).encode()
    msg = decode_from_bot(data) if t in BOT_TYPES else decode_from_referee(data)
    assert msgspec.to_builtins(msg)["type"] == t
    if t == "event":
        _validator("event_kind.json").validate(example["event"])
        assert parse_event(example["event"]) is not None


BAD_BOT_MESSAGES = [
    {"v": 1, "type": "draw", "game": "g1", "seq": 1, "source": "deck"},
    {"v": 1, "type": "draw", "game": "g1", "source": "stock"},
    {"v": 1, "type": "draw", "game": "g1", "seq": -1, "source": "stock"},
    {"v": 1, "type": "play", "game": "g1", "seq": 2, "actions": [{"type": "meld", "cards": ["1H"]}], "discard": None},
    {"v": 1, "type": "play", "game": "g1", "seq": 2, "actions": [{"type": "split", "meld": 0}], "discard": "KC"},
    {"v": 1, "type": "play", "game": "g1", "seq": 2, "actions": [], "discard": "JK*x"},
    {"v": 1, "type": "play", "game": "g1", "seq": 2, "actions": [{"type": "layoff", "meld": 0, "cards": ["5S"], "end": "mid"}], "discard": "KC"},
    {"v": 1, "type": "play", "game": "g1", "seq": 2, "actions": []},
    {"v": 1, "type": "hello", "name": ""},
    {"v": 1, "type": "hello", "name": "x" * 65},
    {"v": 1, "type": "welcome", "name": "r", "max_message_bytes": 1, "protocol": 1},
]


@pytest.mark.parametrize("bad", BAD_BOT_MESSAGES)
def test_bad_bot_messages_fail_schema_and_decoder_alike(bad: dict[str, Any]) -> None:
    assert not _validator("bot_message.json").is_valid(bad)
    with pytest.raises(MessageError) as info:
        decode_from_bot(json.dumps(bad).encode())
    err = info.value
    assert err.kind == "malformed" and err.shape
    assert err.type == bad["type"]
    assert err.game == bad.get("game") and err.seq == bad.get("seq")


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"\xff\xfe{}", b"[1, 2]", b'"hello"', b"null", b'{"type": "draw"} x'],
)
def test_not_a_json_object_is_malformed(data: bytes) -> None:
    with pytest.raises(MessageError) as info:
        decode_from_bot(data)
    assert info.value.kind == "malformed" and not info.value.shape


def test_oversized() -> None:
    data = json.dumps({"v": 1, "type": "hello", "name": "x", "author": "y" * 100}).encode()
    with pytest.raises(MessageError) as info:
        decode_from_bot(data, max_bytes=50)
    assert info.value.kind == "oversized"
    assert cast(protocol.Hello, decode_from_bot(data, max_bytes=None)).name == "x"


def test_cards_are_case_insensitive_and_accept_10() -> None:
    msg = decode_from_bot(b'{"v":1,"type":"play","game":"g","seq":3,"actions":[{"type":"meld","cards":["10h","jh","qh*","jk"]}],"discard":null}')
    assert cast(protocol.Meld, cast(protocol.Play, msg).actions[0]).cards == ["10h", "jh", "qh*", "jk"]


def test_encode_round_trip() -> None:
    play = protocol.Play(game="g", seq=4, actions=[protocol.Layoff(meld=1, cards=["7H"])], discard="KC")
    data = protocol.encode(play)
    assert json.loads(data)["v"] == protocol.PROTOCOL_VERSION
    assert "end" not in json.loads(data)["actions"][0]
    _validator("play.json").validate(json.loads(data))
    assert decode_from_bot(data) == play


def test_unknown_fields_are_ignored() -> None:
    msg = decode_from_bot(b'{"v":1,"type":"hello","name":"n","future":{"x":1}}')
    assert cast(protocol.Hello, msg).name == "n"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["v", "type", "game", "seq", "source", "actions", "discard", "cards", "meld", "name"]) | st.text(max_size=3), inner, max_size=6),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64) | json_values.map(lambda v: json.dumps(v).encode()))
def test_decoder_raises_only_message_error(data: bytes) -> None:
    try:
        decode_from_bot(data)
    except MessageError:
        pass
