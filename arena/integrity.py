"""Secret keys and MACs: unpredictable deals and tamper-evident results.

A tournament's results folder holds one secret key (``secret.key``: 32 random
bytes, mode 0600), made by the first ``arena run`` of the folder and reused by
every ``--resume``.  Sandboxed bots never see the results folder, so nothing a
bot is told or can read gives the key, and from the key come:

- the deal seed of every deal-set (``derive_int``), so no bot can compute a
  deck from the schedule, the game id or the tournament file;
- opaque game ids (``derive_hex``), which say nothing of table, set or seat;
- the MAC of every journal line and game record (``mac``), HMAC-SHA256, so a
  line or record the runner did not write, or one changed since, is found.

Every HMAC input starts with a label naming its purpose (``deal``, ``game-id``,
``journal``, ``record``), so a value made for one purpose never passes for
another.

Results are the organiser's alone: ``private_folder`` makes a results folder
(or a record's logs folder) mode 0700 and ``open_private`` a file mode 0600,
whatever the umask, so no other local user reads a journal, a record, a log
or the key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from arena.errors import ArenaError

KEY_FILE = "secret.key"
KEY_BYTES = 32
MAC_FIELD = "mac"


class KeyFileError(ArenaError, ValueError):
    """A key file that cannot be read or made, or is not a key: one sentence."""


def _digest(key: bytes, label: str, data: bytes) -> bytes:
    return hmac.new(key, label.encode() + b"\0" + data, hashlib.sha256).digest()


def mac(key: bytes, label: str, data: bytes) -> str:
    """HMAC-SHA256 of ``data`` under ``key`` for the purpose ``label``, as 64 hex digits."""
    return _digest(key, label, data).hex()


def mac_ok(key: bytes, label: str, data: bytes, claimed: object) -> bool:
    """Whether ``claimed`` is the MAC of ``data`` (compared in constant time)."""
    return isinstance(claimed, str) and hmac.compare_digest(mac(key, label, data), claimed)


def _parts(parts: Iterable[object]) -> bytes:
    return "\0".join(str(p) for p in parts).encode()


def derive_int(key: bytes, label: str, *parts: object, bits: int = 63) -> int:
    """A number of ``bits`` bits that only the key's holder can compute from ``parts``."""
    return int.from_bytes(_digest(key, label, _parts(parts)), "big") >> (256 - bits)


def derive_hex(key: bytes, label: str, *parts: object, digits: int = 16) -> str:
    """``digits`` hex digits that only the key's holder can compute from ``parts``."""
    return _digest(key, label, _parts(parts)).hex()[:digits]


# -- private files --------------------------------------------------------------------------------

def private_folder(folder: str | Path) -> Path:
    """``folder`` (made with its parents if missing) readable by its owner only: mode 0700, set
    explicitly so that no umask widens it; an existing folder of an older run is narrowed too."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def open_private(path: str | Path, append: bool = False, buffering: int = -1) -> BinaryIO:
    """``path`` opened for writing (truncated, or for appending) with mode 0600 whatever the umask
    (an existing file is narrowed to 0600 too)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC) | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return os.fdopen(fd, "ab" if append else "wb", buffering=buffering)


# -- the key file -----------------------------------------------------------------------------

def key_path(folder: str | Path) -> Path:
    return Path(folder) / KEY_FILE


def read_key(path: str | Path) -> bytes:
    """The key in ``path``; KeyFileError if it cannot be read or is not 32 bytes."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise KeyFileError(f"cannot read the key file {path}: {e.strerror or e}") from None
    if len(data) != KEY_BYTES:
        raise KeyFileError(f"{path} is not a key file of this arena (it must hold exactly {KEY_BYTES} bytes, "
                           f"it holds {len(data)})")
    return data


def folder_key(folder: str | Path) -> bytes | None:
    """The results folder's key, or None when it has none."""
    path = key_path(folder)
    if not path.exists():
        return None
    return read_key(path)


def make_key(folder: str | Path) -> bytes:
    """Write a new random key into ``folder`` (mode 0600, replacing any key there) and return it."""
    path = key_path(folder)
    tmp = path.with_name(f".{KEY_FILE}.{secrets.token_hex(4)}.tmp")
    key = secrets.token_bytes(KEY_BYTES)
    try:
        private_folder(folder)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise KeyFileError(f"cannot write the key file {path}: {e.strerror or e}") from None
    return key


# -- game records -----------------------------------------------------------------------------

RECORD_LABEL = "record"


def record_body(header: dict[str, Any], entry_lines: Iterable[bytes]) -> bytes:
    """What a record's MAC covers: its header as written without the MAC, then every entry line."""
    head = {k: v for k, v in header.items() if k != MAC_FIELD}
    return json.dumps(head).encode() + b"\n" + b"".join(line.rstrip(b"\r\n") + b"\n" for line in entry_lines)


def record_mac(key: bytes, header: dict[str, Any], entry_lines: Iterable[bytes]) -> str:
    return mac(key, RECORD_LABEL, record_body(header, entry_lines))
