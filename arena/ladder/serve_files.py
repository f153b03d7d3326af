"""What ``arena ladder serve`` may read of a ladder folder: an allow-list of relative paths, opened without links.

Every file the server reads under DIR goes through ``read_under``: the path is split into plain
components (no empty part, no ``.`` or ``..``, no backslash or NUL), each folder is opened with
``O_NOFOLLOW`` relative to the one before, and the last part must be a regular file opened with
``O_NOFOLLOW`` too, so a link planted anywhere on the way (to ``/etc``, to a key, to another
entrant's folder) is refused, not followed.  Which paths are asked for at all is decided by the
patterns here: a game record of a batch or of the final, an entrant's own log.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

RECORD_RE = re.compile(r"(batches/\d{6}|final)/records/[A-Za-z0-9_-]{1,64}\.jsonl")
MAX_RECORD = 64 << 20   # bytes of a record the viewer is given
LOG_TAIL = 4000         # characters of an entrant's own log shown beside a failure


def log_re(entrant: str) -> re.Pattern[str]:
    """The logs that are ``entrant``'s own bot's output (one per batch and version)."""
    return re.compile(rf"entrants/{re.escape(entrant)}/v\d{{1,6}}/logs/\d{{6}}\.log")


def plain_parts(rel: str) -> list[str] | None:
    """``rel`` as path components, or None if it could leave the folder (``..``, absolute, odd characters)."""
    if not rel or "\\" in rel or "\x00" in rel or rel.startswith("/"):
        return None
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    return parts


def read_under(root: Path, rel: str, limit: int) -> bytes | None:
    """The first ``limit`` bytes of the regular file ``root/rel`` (None: no such file, a link, not plain)."""
    parts = plain_parts(rel)
    if parts is None:
        return None
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for p in parts[:-1]:
            nxt = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        ffd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        try:
            if not stat.S_ISREG(os.fstat(ffd).st_mode):
                return None  # a pipe or a device would block or never end
            chunks: list[bytes] = []
            left = limit
            while left > 0:
                chunk = os.read(ffd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(ffd)
    except OSError:
        return None
    finally:
        os.close(fd)


def tail_under(root: Path, rel: str, chars: int = LOG_TAIL) -> str | None:
    """The last ``chars`` characters of a text file under ``root`` (decoded leniently), or None."""
    data = read_under(root, rel, 16 << 20)
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    return text if len(text) <= chars else "\u2026" + text[-chars:]
