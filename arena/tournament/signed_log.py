"""The signed JSON Lines logs of a results folder (journal, bots, rounds) and their durable writes.

One rule for a torn tail, whichever log: a last line without its newline is a
write that ``kill -9`` (or a crash) cut short.  Readers skip it (``Lines.torn``:
a note, never an error, since a line is only written whole or not at all), and
an appender first cuts it off the file (kept in a side file when the log wants
the bytes), so the next line starts clean.  A complete line that does not
decode or verify is each log's own business (the journal sets it aside, the
bots log refuses the folder, the rounds file chooses the round again).

Lines are written whole in one ``write``, flushed and fsync'd (``append``);
a file is replaced atomically (``replace``: a temporary file, fsync, rename,
fsync of the folder).  Both write mode 0600 whatever the umask.

Lines are signed with a MAC under the folder's key (``arena.integrity``) over
their canonical encoding without the ``mac`` field: ``sign``/``verifies`` for
``msgspec`` structs with a ``mac`` field.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from arena.integrity import mac, mac_ok, open_private

_encoder = msgspec.json.Encoder()
S = TypeVar("S", bound=msgspec.Struct)


@dataclass
class Lines:
    """A log as read: its complete lines (number from 1, bytes without the newline; blank lines left
    out) and the torn last line, if any, with its number."""

    complete: list[tuple[int, bytes]] = field(default_factory=list)
    torn: bytes | None = None
    torn_number: int = 0


def read_lines(path: Path) -> Lines:
    """The lines of ``path`` (none if it does not exist)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Lines()
    out = Lines()
    parts = raw.split(b"\n")
    for no, line in enumerate(parts[:-1], start=1):
        if line.strip():
            out.complete.append((no, line))
    if parts[-1].strip():  # after the last newline: a write cut short
        out.torn, out.torn_number = parts[-1], len(parts)
    return out


def cut_torn_tail(path: Path, keep: Path | None = None) -> bytes:
    """Cut an unterminated last line off ``path`` (appended, with a newline, to ``keep`` when given);
    returns the bytes cut."""
    try:
        f = open(path, "rb+")
    except FileNotFoundError:
        return b""
    with f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return b""
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return b""
        f.seek(0)
        data = f.read()
        start = data.rfind(b"\n") + 1
        tail = data[start:]
        if keep is not None:
            append(keep, tail + b"\n", repair=False)
        f.truncate(start)
        f.flush()
        os.fsync(f.fileno())
    return tail


def append(path: Path, data: bytes, repair: bool = True) -> None:
    """Append ``data`` (whole lines) durably: the torn tail cut off first (unless ``repair`` is off),
    then one write, flush, fsync."""
    if repair:
        cut_torn_tail(path)
    with open_private(path, append=True) as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def replace(path: Path, data: bytes) -> None:
    """Make ``path`` hold ``data``, all or nothing: a temporary file beside it, fsync'd, renamed over it,
    and the folder fsync'd so the rename survives a power cut."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open_private(tmp) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_folder(path.parent)


def fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def canonical(obj: msgspec.Struct) -> bytes:
    """What a line's MAC covers: the struct's encoding without its ``mac`` field."""
    fields: dict[str, Any] = msgspec.structs.asdict(obj)
    del fields["mac"]
    return _encoder.encode(fields)


def sign(obj: S, key: bytes, label: str) -> S:
    """``obj`` with its ``mac`` under ``key`` for the purpose ``label``."""
    return msgspec.structs.replace(obj, mac=mac(key, label, canonical(obj)))


def verifies(obj: msgspec.Struct, key: bytes, label: str) -> bool:
    return mac_ok(key, label, canonical(obj), getattr(obj, "mac", None))


def encode_line(obj: msgspec.Struct, key: bytes, label: str) -> bytes:
    """The signed line of ``obj``, with its newline."""
    return _encoder.encode(sign(obj, key, label)) + b"\n"
