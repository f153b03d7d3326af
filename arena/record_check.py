"""Reading a game record and checking its shape before it is shown or replayed.

A record file is JSON Lines: a header object, then one object per entry.
``read_record`` reads one and checks every line against what the display and
the engine's replay expect (types, required fields, seat numbers within the
table, a player count the rules allow), so a malformed record is refused with
``RecordError``: one sentence naming the file, the line and what is wrong;
the lines come back typed (``arena.referee.entries.Line``).
Whether the actions hold is the engine's question (``arena replay --verify``),
not this module's.  A header may carry ``suits``, the suit map a tournament
with ``twin_suits = "permute"`` dealt the game under (``arena.rules.suits``).

A record written by the tournament runner carries a MAC in its header
(``mac``, see ``arena.integrity``); ``mac_status`` checks it under a key given
or found next to the record (``../secret.key`` of a tournament's ``records/``
folder) and says in words what it found.  The MAC covers the header, and with it
the game id, which only the key's holder derives from the game's index
(``schedule.game_id``); the runner names the file after that index
(``records/g000042.jsonl``), so a record with a good MAC under another game's
file name (two records swapped, or one copied over another) does not verify.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.integrity import KEY_FILE, MAC_FIELD, RECORD_LABEL, mac_ok, read_key, record_body
from arena.referee.entries import Line, line_from_data
from arena.rules.log import EntryError
from arena.rules.options import RulesError, RuleSet, rules_from_data
from arena.rules.record import RECORD_VERSION, Header
from arena.rules.suits import SuitMapError, from_text

Check = Callable[[Any], bool]


class RecordError(ArenaError, ValueError):
    """A record that cannot be read or is malformed: ``FILE:LINE: what is wrong``."""


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def _object(v: Any) -> bool:
    return isinstance(v, dict)


_STRINGS = _list_of(_str)
_INTS = _list_of(_int)
SEAT = "seat"  # marks a field holding a seat number (checked against the table size)
OPT_SEAT = "seat or null"

# For each entry kind: required fields and their checks; then optional ones.
_REQUIRED: dict[str, dict[str, Check | str]] = {
    "game_start": {"dealer": SEAT},
    "deal_start": {"deal": _int, "dealer": SEAT, "upcard": _opt_str, "hands": _list_of(_STRINGS)},
    "draw": {"seat": SEAT, "source": _str},
    "play": {"seat": SEAT, "actions": _list_of(_object), "discard": _opt_str},
    "rebuild": {"stock_size": _int},
    "deal_end": {"deal": _int, "out": OPT_SEAT, "reason": _str, "scores": _INTS, "totals": _INTS},
    "forfeit": {"seat": SEAT},
    "failure": {"seat": SEAT, "kind": _str, "reason": _str, "action": _str},
    "game_end": {"reason": _str, "totals": _INTS, "placings": _INTS},
}
_OPTIONAL: dict[str, dict[str, Check | str]] = {
    "draw": {"card": _opt_str, "ms": _number},
    "play": {"ms": _number},
    "rebuild": {"upcard": _opt_str},
    "deal_end": {"eliminated": _list_of(lambda v: _int(v)), "rummy": lambda v: isinstance(v, bool)},
    "forfeit": {"failure": _str, "reason": _str},
}
_ACTION_FIELDS: dict[str, dict[str, Check]] = {
    "meld": {"cards": _STRINGS},
    "layoff": {"meld": _int, "cards": _STRINGS},
    "swap": {"meld": _int, "card": _str},
}
_WHAT: dict[Check | str, str] = {
    _int: "a whole number", _str: "a string", _opt_str: "a string or null", _number: "a number",
    _STRINGS: "a list of strings", _INTS: "a list of whole numbers", _object: "an object",
}


def read_record(path: Path) -> tuple[dict[str, Any], list[Line]]:
    """The header and typed lines of a record file, each checked; RecordError on the first problem."""
    header, objects = read_record_objects(path)
    lines: list[Line] = []
    for n, obj in objects:
        try:
            lines.append(line_from_data(obj))
        except EntryError as e:
            raise RecordError(f"{path}:{n}: {obj['e']} entry: {e}") from None
    return header, lines


def read_record_objects(path: Path) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]]]:
    """The header and the entry objects of a record file with their line numbers, each checked."""
    header: dict[str, Any] | None = None
    entries: list[tuple[int, dict[str, Any]]] = []
    players = 0
    for n, obj in _json_lines(path):
        if header is None:
            header = obj
            players = check_header(obj, f"{path}:{n}")
        else:
            check_entry(obj, players, f"{path}:{n}")
            entries.append((n, obj))
    if header is None:
        raise RecordError(f"{path}: empty file; a game record starts with its header line")
    return header, entries


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded JSON) for every non-blank line."""
    try:
        with open(path, "rb") as f:
            for n, raw in enumerate(f, start=1):
                if raw.strip():
                    yield n, _decode(raw, f"{path}:{n}")
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record file") from None
    except OSError as e:
        raise RecordError(f"{path}: cannot read the record: {e.strerror or e}") from None


def _decode(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise RecordError(f"{where}: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{where}: not a JSON line ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise RecordError(f"{where}: JSON nested too deeply") from None


def check_header(obj: Any, where: str) -> int:
    """Check a record header; returns its number of players."""
    if not isinstance(obj, dict) or "record" not in obj:
        raise RecordError(f"{where}: not a game record (the first line must be the record header)")
    if not _int(obj["record"]) or not 1 <= obj["record"] <= RECORD_VERSION:
        raise RecordError(f"{where}: record version {_shown(obj['record'])} is not one this arena reads "
                          f"(1 to {RECORD_VERSION})")
    for key in ("seed", "players"):
        if not _int(obj.get(key)):
            raise RecordError(f"{where}: header field {key!r} must be a whole number, got {_shown(obj.get(key))}")
    if not isinstance(obj.get("rules"), dict):
        raise RecordError(f"{where}: header field 'rules' must be an object of rule options, got {_shown(obj.get('rules'))}")
    rules = _rules(obj["rules"], where)
    players: int = obj["players"]
    lo, hi = rules.players
    if not lo <= players <= hi:
        raise RecordError(f"{where}: header says {players} players, but these rules are for {lo} to {hi}")
    seats = obj.get("seats")
    if seats is not None and (not _STRINGS(seats) or len(seats) != players):
        raise RecordError(f"{where}: header field 'seats' must be a list of {players} names, got {_shown(seats)}")
    _suits(obj.get("suits"), where)
    try:
        Header.from_data(obj)
    except ValueError as e:
        raise RecordError(f"{where}: {str(e).split(': ', 1)[-1]}") from None
    return players


def _suits(value: Any, where: str) -> None:
    """The optional ``suits`` field: absent, null, or a suit map such as ``"HSCD"``."""
    if value is None:
        return
    try:
        from_text(value)
    except SuitMapError as e:
        raise RecordError(f"{where}: header field 'suits': {e}") from None


def _rules(data: dict[str, Any], where: str) -> RuleSet:
    try:
        return rules_from_data(data)
    except (RulesError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise RecordError(f"{where}: header field 'rules' is not a valid rule set ({e})") from None


def check_entry(obj: Any, players: int, where: str) -> None:
    """Check one entry's shape: a known kind with the fields it needs, seats within the table."""
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: an entry must be a JSON object, got {_shown(obj)}")
    kind = obj.get("e")
    if kind not in _REQUIRED:
        raise RecordError(f"{where}: unknown entry kind {kind!r}; expected one of {', '.join(_REQUIRED)}")
    for key, check in _REQUIRED[kind].items():
        if key not in obj:
            raise RecordError(f"{where}: {kind} entry has no {key!r} field")
        _field(obj, kind, key, check, players, where)
    for key, check in _OPTIONAL.get(kind, {}).items():
        if key in obj:
            _field(obj, kind, key, check, players, where)
    if kind == "play":
        for i, action in enumerate(obj["actions"]):
            _action(action, i, where)
    if kind == "deal_end":
        for seat in obj.get("eliminated") or []:
            _seat(seat, players, f"{kind} entry field 'eliminated'", where)


def _field(obj: dict[str, Any], kind: str, key: str, check: Check | str, players: int, where: str) -> None:
    value = obj[key]
    if check == OPT_SEAT and value is None:
        return
    if check in (SEAT, OPT_SEAT):
        _seat(value, players, f"{kind} entry field {key!r}", where)
    elif not check(value):  # type: ignore[operator]
        raise RecordError(f"{where}: {kind} entry field {key!r} must be {_WHAT.get(check, 'well formed')}, "
                          f"got {_shown(value)}")


def _seat(value: Any, players: int, what: str, where: str) -> None:
    if not _int(value) or not 0 <= value < players:
        raise RecordError(f"{where}: {what} must be a seat number from 0 to {players - 1}, got {_shown(value)}")


def _action(action: dict[str, Any], i: int, where: str) -> None:
    kind = action.get("type")
    if kind not in _ACTION_FIELDS:
        raise RecordError(f"{where}: play entry action {i} has type {kind!r}; expected meld, layoff or swap")
    for key, check in _ACTION_FIELDS[kind].items():
        if not check(action.get(key)):
            raise RecordError(f"{where}: play entry action {i} ({kind}) field {key!r} must be "
                              f"{_WHAT.get(check, 'well formed')}, got {_shown(action.get(key))}")
    if "end" in action and not _opt_str(action["end"]):
        raise RecordError(f"{where}: play entry action {i} ({kind}) field 'end' must be a string")


def _shown(v: Any) -> str:
    try:
        text = json.dumps(v)
    except (RecursionError, ValueError, TypeError):
        return "a deeply nested value"
    return text if len(text) <= 40 else text[:37] + "..."


# -- the record's MAC -------------------------------------------------------------------------

@dataclass(frozen=True)
class MacStatus:
    """What the MAC check found: ``ok`` is False only for a MAC that fails (or is missing under a key)."""

    ok: bool
    text: str


def tournament_key_file(record: Path) -> Path | None:
    """The key of the tournament a record belongs to (``OUTPUT/secret.key`` for ``OUTPUT/records/X``)."""
    folder = record.resolve().parent
    if folder.name != "records":
        return None
    candidate = folder.parent / KEY_FILE
    return candidate if candidate.is_file() else None


def mac_status(path: Path, header: dict[str, Any], key_file: Path | None) -> MacStatus:
    """Check the MAC of the record at ``path`` (whose header is ``header``) under ``key_file``.

    KeyFileError if the key file cannot be read or is not a key.
    """
    if key_file is None:
        return MacStatus(True, "no key: MAC not checked")
    key = read_key(key_file)
    claimed = header.get(MAC_FIELD)
    if claimed is None:
        return MacStatus(False, f"carries no MAC, but a record of the tournament of {key_file} must")
    if not mac_ok(key, RECORD_LABEL, record_body(header, _entry_lines(path)), claimed):
        return MacStatus(False, f"MAC does not verify under {key_file}: the record was changed after the "
                                f"runner wrote it, or is not a record of that tournament")
    return _bound(path, header, key)


RECORD_NAME = re.compile(r"g(\d{6,})\.jsonl")  # the runner's name of game INDEX's record


def _bound(path: Path, header: dict[str, Any], key: bytes) -> MacStatus:
    """A record whose MAC verifies: whether it is the record of the game its file name says."""
    from arena.tournament.schedule import game_id

    m = RECORD_NAME.fullmatch(path.name)
    if m is None:
        return MacStatus(True, "its file name names no game, so its game is not checked; MAC verified")
    index = int(m[1])
    if header.get("game_id") != game_id(key, index):
        return MacStatus(False, f"its MAC verifies but it is not the record of game {index}, as its file name "
                                f"says: records were swapped, renamed or copied over one another")
    return MacStatus(True, "MAC verified")


def _entry_lines(path: Path) -> list[bytes]:
    """The raw entry lines of a record (every non-blank line after the header)."""
    try:
        lines = [raw for raw in path.read_bytes().split(b"\n") if raw.strip()]
    except OSError as e:
        raise RecordError(f"{path}: cannot read the record: {e.strerror or e}") from None
    return lines[1:]
