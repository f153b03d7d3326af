"""One game record as the viewer's data, and its decision latencies (docs/ARCHITECTURE.md section 8).

A record is read as its file format (JSON Lines: a header, then entries) and
the page gets its objects exactly as the file has them, whichever page it is
(``arena view`` or the report's replays): one shape for ``table_state.js``.
``record_data`` checks every line first (``arena.record_check``).  The clock shown
beside each seat comes from the resolved ``tournament.toml`` of the record's
results folder when there is one (``OUTPUT/records/X.jsonl``).
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from arena.record_check import RecordError, read_record_objects
from arena.referee.entries import line_from_data
from arena.rules.log import EntryError

# Latency histograms: log-spaced bins from 0.01 ms to 100 s, 20 per decade.
BIN_LOW = -2.0
BINS_PER_DECADE = 20
BIN_COUNT = 7 * BINS_PER_DECADE


def clock_of(record: Path) -> dict[str, Any] | None:
    """The time settings of the tournament a record belongs to, or None outside a results folder."""
    folder = record.resolve().parent
    toml = folder.parent / "tournament.toml"
    if folder.name != "records" or not toml.is_file():
        return None
    try:
        time = tomllib.loads(toml.read_text(encoding="utf-8")).get("time")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return time if isinstance(time, dict) else None


def record_data(record: Path) -> dict[str, Any]:
    """The page data of one record: ``header``, ``entries``, ``clock`` (RecordError if it is not a record).

    Every line is checked as ``read_record`` checks it, but the page gets the file's objects: the typed
    lines encode a timed entry as ``{"entry": ..., "ms": ...}``, which the page does not read."""
    header, objects = read_record_objects(record)
    for n, obj in objects:
        try:
            line_from_data(obj)
        except EntryError as e:
            raise RecordError(f"{record}:{n}: {obj['e']} entry: {e}") from None
    return page_data(header, [obj for _, obj in objects], clock_of(record))


def page_data(header: dict[str, Any], entries: list[dict[str, Any]], clock: dict[str, Any] | None) -> dict[str, Any]:
    """What a viewer page embeds: the record's header and entry objects as in its file, and the clock."""
    return {"header": header, "entries": entries, "clock": clock}


def quick_record_data(record: Path, clock: dict[str, Any] | None) -> dict[str, Any]:
    """Like ``record_data`` for the records of a results folder, which the runner wrote: every line is
    decoded and must be a JSON object (RecordError otherwise), but entries are not checked one by one."""
    try:
        raw = record.read_bytes()
    except OSError as e:
        raise RecordError(f"{record}: cannot read the record: {e.strerror or e}") from None
    lines = [x for x in raw.split(b"\n") if x.strip()]
    try:
        objects = [_decoder.decode(x) for x in lines]
    except msgspec.DecodeError as e:
        raise RecordError(f"{record}: a line is not a JSON object ({e})") from None
    if not objects:
        raise RecordError(f"{record}: empty file; a game record starts with its header line")
    return page_data(objects[0], objects[1:], clock)


_decoder = msgspec.json.Decoder(dict[str, Any])


def script_json(data: object) -> str:
    """JSON safe inside a <script> element: no '<' (so no '</script>'), no JS line terminators."""
    text = msgspec.json.encode(data).decode()
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def bin_of(ms: float) -> int:
    if ms <= 0:
        return 0
    b = math.floor((math.log10(ms) - BIN_LOW) * BINS_PER_DECADE)
    return min(max(b, 0), BIN_COUNT - 1)


def bin_edge(b: int) -> float:
    """The lower edge of bin ``b`` in ms."""
    return 10 ** (BIN_LOW + b / BINS_PER_DECADE)


def latency_summary(entries: list[dict[str, Any]], players: int) -> dict[str, list[Any]]:
    """Per seat: a sparse histogram {bin: count}, the number of decisions and the slowest, in ms."""
    hist: list[dict[str, int]] = [{} for _ in range(players)]
    count = [0] * players
    slowest = [0.0] * players
    for e in entries:
        ms, seat = e.get("ms"), e.get("seat")
        if not isinstance(ms, int | float) or not isinstance(seat, int) or not 0 <= seat < players:
            continue
        key = str(bin_of(float(ms)))
        hist[seat][key] = hist[seat].get(key, 0) + 1
        count[seat] += 1
        slowest[seat] = max(slowest[seat], float(ms))
    return {"hist": hist, "count": count, "max": slowest}
