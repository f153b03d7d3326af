"""Bytes <-> the message structs of ``protocol.messages``: ``encode``, and the two total decoders.

Use :func:`decode_from_bot` on the referee side, :func:`decode_from_referee`
in bots, :func:`encode` for both directions.  Both decoders are total: any
bytes whatsoever give a message or a :class:`MessageError` (kind
``oversized`` or ``malformed``, with a one-sentence reason), never another
exception.  Before any parsing they check two bounds:

- :data:`MAX_MESSAGE_BYTES` (bot messages only): a longer message is
  ``oversized``;
- :data:`MAX_NESTING`: a message whose arrays and objects nest deeper than 32
  levels is ``malformed``.  The deepest legitimate message nests 5 levels (a
  ``request``: message > ``observation`` > ``melds`` > meld > ``cards``; a bot's
  deepest, a ``play``, nests 4: message > ``actions`` > action > ``cards``), so
  the cap only stops hostile input from driving the parser's recursion.  It
  counts every ``[`` and ``{`` outside strings, in any field, known or not.

An honest request (in the client library) and an honest reply (in the referee) are decoded
first with cards as plain strings looked up in ``CARDS``; anything else by the strict decoder,
whose verdict and error stand.
"""

from __future__ import annotations

import itertools
import operator
from typing import Any, TypeVar

import msgspec

from protocol.messages import (
    CARD_PATTERN,
    MAX_MESSAGE_BYTES,
    MAX_NESTING,
    PROTOCOL_VERSION,
    BotMessage,
    Draw,
    Error,
    Event,
    GameOver,
    Hello,
    KnownEvent,
    Layoff,
    Meld,
    MessageError,
    NewGame,
    Observation,
    Play,
    RefereeMessage,
    Request,
    Shutdown,
    Swap,
    TableMeld,
    Welcome,
)

_T = TypeVar("_T")

# -- codecs ----------------------------------------------------------------------

_encoder = msgspec.json.Encoder()
_bot_decoder: msgspec.json.Decoder[Hello | Draw | Play] = msgspec.json.Decoder(BotMessage)
_referee_decoder: msgspec.json.Decoder[Welcome | Error | NewGame | Request | Event | GameOver | Shutdown] = (
    msgspec.json.Decoder(RefereeMessage)
)
_raw_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder()
_CARD_REGEX_TEXT = "`str` matching regex " + repr(CARD_PATTERN)


def encode(msg: msgspec.Struct | dict[str, Any]) -> bytes:
    """Encode one message (a struct of this module, or a plain dict) as JSON bytes.

    msgspec writes a struct's tag first; every message has always travelled with
    ``v`` first (``{"v":1,"type":...``, SPEC 3), so a message of this version gets
    its first two fields swapped back (same length, one copy).
    """
    data = _encoder.encode(msg)
    swap = _V_FIRST.get(type(msg))
    if swap is not None and data.startswith(swap[0]):
        return swap[1] + data[len(swap[0]) :]
    return data


def _v_first(cls: type[msgspec.Struct]) -> tuple[bytes, bytes]:
    tag = cls.__struct_config__.tag
    return (f'{{"type":"{tag}","v":{PROTOCOL_VERSION},'.encode(), f'{{"v":{PROTOCOL_VERSION},"type":"{tag}",'.encode())


_V_FIRST: dict[type, tuple[bytes, bytes]] = {
    cls: _v_first(cls) for cls in (Hello, Draw, Play, Welcome, Error, NewGame, Request, Event, GameOver, Shutdown)
}


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN_TO_CLOSE = bytes.maketrans(b"{}", b"[]")
_DEPTH_CHUNK = 4096


def _max_depth(brackets: bytes, start: int) -> int:
    """Deepest nesting reached in ``brackets`` (only ``[`` and ``]``) entered at depth ``start``."""
    # The k-th piece of a split on "]" is the run of "[" after the k-th "]": depth = opens so far - k.
    deepest: int = max(map(operator.sub, itertools.accumulate(map(len, brackets.split(b"]"))), itertools.count()))
    return start + deepest


def nesting_exceeds(data: bytes, limit: int = MAX_NESTING) -> bool:
    """Whether the arrays and objects of ``data`` (read as JSON text) nest deeper than ``limit``.

    Linear, parser-free and exact for valid JSON; brackets inside strings do not
    count (escapes honoured).  On invalid JSON it may answer True where a parser
    would stop at a syntax error first, never False where a parser would go
    deeper.  Costs a few hundred nanoseconds for a message with at most
    ``limit`` brackets and tens of milliseconds at worst for 1 MiB.
    """
    if data.count(91) + data.count(123) <= limit:  # 91, 123: [ and {
        return False  # fewer opening brackets than the limit cannot nest deeper
    if 92 in data:  # backslash: drop escaped backslashes, then escaped quotes, so every quote left is real
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    if 34 in data:  # quote: keep what lies outside strings
        data = b"".join(data.split(b'"')[::2])
    # Only the brackets, all as [ and ]; the innermost pairs go at once (one level).
    brackets = data.translate(_OPEN_TO_CLOSE, _NOT_BRACKETS).replace(b"[]", b"")
    limit -= 1
    depth = 0
    for i in range(0, len(brackets), _DEPTH_CHUNK):
        chunk = brackets[i : i + _DEPTH_CHUNK]
        opens = chunk.count(91)
        if depth + opens > limit and _max_depth(chunk, depth) > limit:
            return True
        depth += 2 * opens - len(chunk)
        if depth < 0:
            return False  # a closing bracket with nothing open: any parser stops there
    return False


def _as_bytes(data: Any) -> bytes:
    """Bytes of a message handed over as another type (text, a buffer); MessageError if it is neither."""
    if isinstance(data, str):
        try:
            return data.encode("utf-8")
        except UnicodeError:
            raise MessageError("not a UTF-8 JSON object: the text holds a lone surrogate") from None
    try:
        return memoryview(data).tobytes()
    except (TypeError, ValueError, MemoryError):
        raise MessageError(f"not a UTF-8 JSON object: got a {type(data).__name__}, not bytes") from None


def _decode(decoder: msgspec.json.Decoder[_T], data: bytes, max_bytes: int | None) -> _T:
    if type(data) is not bytes:
        data = _as_bytes(data)
    if max_bytes is not None and len(data) > max_bytes:
        raise MessageError(f"message of {len(data)} bytes is over the limit of {max_bytes}", kind="oversized")
    if data.count(91) + data.count(123) > MAX_NESTING and nesting_exceeds(data):  # 91, 123: [ and {
        raise MessageError(f"not a UTF-8 JSON object: arrays and objects nest deeper than {MAX_NESTING} levels")
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as e:
        shape_error = e
    except msgspec.DecodeError as e:
        raise MessageError(f"not a UTF-8 JSON object: {e}") from None
    except (RecursionError, MemoryError, ValueError, UnicodeError) as e:
        raise MessageError(f"not a UTF-8 JSON object: the decoder gave up ({type(e).__name__})") from None
    # Valid JSON (the typed decoder got past the syntax), wrong shape: say which, and salvage ids.
    try:
        raw = _raw_decoder.decode(data)
    except (msgspec.DecodeError, RecursionError, MemoryError, ValueError, UnicodeError) as e:  # pragma: no cover
        raise MessageError(f"not a UTF-8 JSON object: {e}") from None
    if not isinstance(raw, dict):
        raise MessageError(f"expected a JSON object, got a JSON {type(raw).__name__}")
    t, g, s = raw.get("type"), raw.get("game"), raw.get("seq")
    detail = str(shape_error).replace(_CARD_REGEX_TEXT, "a card like `7H`, `TD`, `JK`")
    raise MessageError(
        f"wrong shape: {detail}",
        shape=True,
        type=t if isinstance(t, str) else None,
        game=g if isinstance(g, str) else None,
        seq=s if isinstance(s, int) and not isinstance(s, bool) else None,
    )


def decode_from_bot(data: bytes, max_bytes: int | None = MAX_MESSAGE_BYTES) -> Hello | Draw | Play:
    """Decode a bot's message; raise only :class:`MessageError` (never crash the referee).
    An honest reply goes through the fast path (``_fast_reply``, below); anything else gets the
    strict decoder's verdict."""
    if type(data) is bytes and (max_bytes is None or len(data) <= max_bytes):
        fast = _fast_reply(data)
        if fast is not None:
            return fast
    return _decode(_bot_decoder, data, max_bytes)


def decode_from_referee(data: bytes) -> Welcome | Error | NewGame | Request | Event | GameOver | Shutdown:
    """Decode a referee's message (used by bots); raise :class:`MessageError` on anything else."""
    if type(data) is bytes and data.startswith(_REQUEST_PREFIX):
        fast = _fast_request(data)
        if fast is not None:
            return fast
    return _decode(_referee_decoder, data, None)


# -- the fast path for requests ------------------------------------------------
# msgspec spends two thirds of a request's decode matching each card against the
# pattern.  An honest request is decoded with the same structs but plain strings
# for cards, and its cards are then looked up in the (finite) set of strings the
# patterns accept.  Anything else -- a card not in the set, any decode error --
# is decoded again by the strict decoder, which gives the verdict and the error:
# the fast path only ever accepts what the strict one accepts, with the same values.

_CARD_RANKS = [*"23456789TtJjQqKkAa", "10"]
CARDS: frozenset[str] = frozenset(
    [r + s + w for r in _CARD_RANKS for s in "CcDdHhSs" for w in ("", "*")] + ["JK", "Jk", "jK", "jk"])
"""Every string CARD_PATTERN accepts without a trailing newline (tests check both ways)."""
STANDS_FOR: frozenset[str] = frozenset(r + s for r in "23456789TJQKA" for s in ("", *"CDHS"))
"""Every string StandsFor's pattern accepts without a trailing newline."""
_STANDS_OR_NONE = STANDS_FOR | {None}


class _LooseTableMeld(TableMeld, kw_only=True):
    cards: list[str]
    wilds: list[str | None]


class _LooseObservation(Observation, kw_only=True):
    hand: list[str]
    drawn: str | None
    discard: list[str]
    melds: list[_LooseTableMeld]  # type: ignore[assignment]  # decoded only, never assigned


class _LooseRequest(Request, tag="request", kw_only=True):
    observation: _LooseObservation


_REQUEST_PREFIX = _V_FIRST[Request][1]  # how encode() starts a request
_loose_request_decoder: msgspec.json.Decoder[_LooseRequest] = msgspec.json.Decoder(_LooseRequest)


def _loose(decoder: msgspec.json.Decoder[_T], data: bytes) -> _T | None:
    """``data`` through a loose decoder, or None when it nests too deep or does not decode."""
    if data.count(91) + data.count(123) > MAX_NESTING and nesting_exceeds(data):  # 91, 123: [ and {
        return None
    try:
        return decoder.decode(data)
    except (msgspec.DecodeError, RecursionError, MemoryError, ValueError, UnicodeError):
        return None


def _fast_request(data: bytes) -> Request | None:
    """The request in ``data`` if it is one the strict decoder accepts with cards of the set; else None."""
    msg = _loose(_loose_request_decoder, data)
    if msg is None:
        return None
    obs = msg.observation
    if not (CARDS.issuperset(obs.hand) and CARDS.issuperset(obs.discard)
            and (obs.drawn is None or obs.drawn in CARDS)):
        return None
    for meld in obs.melds:
        if not (CARDS.issuperset(meld.cards) and _STANDS_OR_NONE.issuperset(meld.wilds)):
            return None
    # Same fields in the same slots (the subclasses only loosen types): the objects become the
    # public types, exactly what the strict decoder would have built.
    for meld in obs.melds:
        meld.__class__ = TableMeld  # type: ignore[assignment]
    obs.__class__ = Observation  # type: ignore[assignment]
    msg.__class__ = Request  # type: ignore[assignment]
    return msg


# The same for a bot's replies (the referee's side): a play's cards as plain strings, looked up in
# CARDS; a hello and a draw hold no card and are decoded by the strict structs themselves.


class _LooseMeld(Meld, tag="meld"):
    cards: list[str]


class _LooseLayoff(Layoff, tag="layoff"):
    cards: list[str]


class _LooseSwap(Swap, tag="swap"):
    card: str
    wild: str | None = None


class _LoosePlay(Play, tag="play", kw_only=True):
    actions: list[_LooseMeld | _LooseLayoff | _LooseSwap]  # type: ignore[assignment]
    discard: str | None


_loose_bot_decoder: msgspec.json.Decoder[Hello | Draw | _LoosePlay] = msgspec.json.Decoder(Hello | Draw | _LoosePlay)
_PUBLIC_ACTION: dict[type, type] = {_LooseMeld: Meld, _LooseLayoff: Layoff, _LooseSwap: Swap}


def _fast_reply(data: bytes) -> Hello | Draw | Play | None:
    """The message in ``data`` if the strict decoder accepts it and every card of a play is in the set; else None."""
    msg = _loose(_loose_bot_decoder, data)
    if msg is None:
        return None
    if type(msg) is not _LoosePlay:
        return msg  # a hello or a draw: decoded by the strict struct itself
    if msg.discard is not None and msg.discard not in CARDS:
        return None
    for a in msg.actions:
        if type(a) is _LooseSwap:
            if a.card not in CARDS or (a.wild is not None and a.wild not in CARDS):
                return None
        elif not CARDS.issuperset(a.cards):  # type: ignore[union-attr]
            return None
    for a in msg.actions:  # same fields in the same slots: the public types, as the strict decoder builds them
        a.__class__ = _PUBLIC_ACTION[type(a)]
    msg.__class__ = Play  # type: ignore[assignment]
    return msg


def parse_event(event: dict[str, Any]) -> KnownEvent | None:
    """The typed form of an event object, or None for a kind this version does not document or a wrong shape."""
    try:
        known: KnownEvent = msgspec.convert(event, KnownEvent)
    except (msgspec.ValidationError, RecursionError):
        return None
    return known
