"""The lines of a game record the referee writes (docs/ARCHITECTURE.md section 3).

A record is the engine's log (``arena.rules.log``) with two things of the
referee's woven in: ``Timed``, a draw or play entry beside the latency of the
decision it answered (the entry itself stays the engine's, unedited), and
``Failure`` entries.  ``encode_line`` gives a line's bytes: the entry as the
engine would write it, with ``"ms"`` last for a timed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from arena.rules.log import DrawEntry, Entry, EntryError, PlayEntry, entry_from_data


class Failure(msgspec.Struct, frozen=True, tag_field="e", tag="failure", omit_defaults=True):
    """A bot's failure, its kind and reason, and what the policy did (docs/ARCHITECTURE.md section 4);
    for forensics, the last lines the bot wrote (``output``, bounded; not for ``stale``) and its log's path."""

    seat: int
    bot: str
    kind: str
    reason: str
    action: str
    deal: int
    turn: int
    output: str | None = None
    log: str | None = None


@dataclass(frozen=True, slots=True)
class Timed:
    """A decision's entry with its latency in ms (charged time, rounded to 0.001 ms)."""

    entry: DrawEntry | PlayEntry
    ms: float


Line = Entry | Timed | Failure

_encoder = msgspec.json.Encoder()


def engine_entry(line: Line) -> Entry | None:
    """The engine's entry of a line (None for the referee's own ``failure`` lines)."""
    if isinstance(line, Timed):
        return line.entry
    if isinstance(line, Failure):
        return None
    return line


def encode_line(line: Line) -> bytes:
    """The JSON bytes of one record line."""
    if isinstance(line, Timed):
        return _encoder.encode(line.entry)[:-1] + b',"ms":' + _encoder.encode(line.ms) + b"}"
    return _encoder.encode(line)


def line_from_data(data: dict[str, Any]) -> Line:
    """The typed line of a record line's object; ValueError if it is not of the right shape."""
    if data.get("e") == "failure":
        try:
            return msgspec.convert(data, Failure)
        except msgspec.ValidationError as e:
            raise EntryError(str(e)) from None
    entry = entry_from_data(data)
    ms = data.get("ms")
    if isinstance(entry, (DrawEntry, PlayEntry)) and isinstance(ms, (int, float)) and not isinstance(ms, bool):
        return Timed(entry, float(ms))
    return entry
