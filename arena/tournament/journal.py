"""The results journal: ``journal.jsonl`` in the results folder, one finished game a line.

Owns crash safety of results (DESIGN 6).  ``append`` writes a whole line in one
``write`` then flushes and fsyncs, so a game is either in the journal or not.
A ``kill -9`` mid-write can only leave a truncated final line: ``read`` skips
it (and any other undecodable line) and reports it in ``JournalContents.problems``;
``Journal`` (the appender) first cuts such a tail off, keeping the cut bytes in
``journal.corrupt``, so the next line starts clean.  ``done_indices`` is what
``--resume`` skips.  One process (the runner's main loop) should own the
appender; workers hand it their finished games.

The appender never reports a write it did not make: before and after each
line it checks that the journal's path still names the file it holds open
(not deleted, moved or replaced), and a failed write (a full disk, EIO, a
read-only filesystem, a file size limit) is cut back off the file.  Both end
in ``JournalError``, one sentence naming the file and the cause.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import msgspec

JOURNAL_FILE = "journal.jsonl"
CORRUPT_FILE = "journal.corrupt"


class JournalError(RuntimeError):
    """The journal cannot be written, or is no longer the file being written: one sentence."""


def reason(e: OSError) -> str:
    """The cause of an OSError as words (``No space left on device``)."""
    return e.strerror or str(e)


class JournalEntry(msgspec.Struct, kw_only=True):
    """One finished game; lists are by seat (seat 0 first)."""

    index: int                                  # global game index (schedule.game_at)
    game_id: str
    deal_seed: int
    table: int
    set: int
    seating: int
    seats: list[str]                            # bot name by seat
    placings: list[int]                         # 1 = best, ties share (standard competition)
    totals: list[int]                           # final score totals by seat
    failures: list[dict[str, int]] = msgspec.field(default_factory=list)  # per seat: kind -> count
    forfeited: list[int] = msgspec.field(default_factory=list)           # seats that forfeited
    record: str | None = None                   # path of the game record, relative to the folder
    deals: int = 0                              # deals played
    decisions: int = 0                          # decisions answered by bots
    turn_capped: bool = False                   # a deal ended on max_turns
    duration_s: float = 0.0
    error: str | None = None                    # referee-side problem, if any
    worker_rss_mb: float = 0.0                  # memory of the worker that played it, after the game
    runner_rss_mb: float = 0.0                  # memory of the runner's main process, when journalled


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(JournalEntry)


def encode(entry: JournalEntry) -> bytes:
    return _encoder.encode(entry) + b"\n"


@dataclass
class JournalContents:
    """What ``read`` found: the good entries in file order, and the lines it skipped."""

    entries: list[JournalEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    truncated_tail: bool = False


def journal_path(folder: str | Path) -> Path:
    return Path(folder) / JOURNAL_FILE


def read(folder: str | Path) -> JournalContents:
    """Every complete, decodable entry; a later duplicate of an index is skipped and reported."""
    out = JournalContents()
    path = journal_path(folder)
    if not path.exists():
        return out
    data = path.read_bytes()
    lines = data.split(b"\n")
    last = len(lines) - 1  # lines[last] is b"" when the file ends with a newline
    seen: set[int] = set()
    for no, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = _decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            if no - 1 == last:
                out.truncated_tail = True
                out.problems.append(f"{path}:{no}: ignored an incomplete final line (interrupted write): {e}")
            else:
                out.problems.append(f"{path}:{no}: ignored an undecodable line: {e}")
            continue
        if entry.index in seen:
            out.problems.append(f"{path}:{no}: ignored a second entry for game {entry.index}")
            continue
        seen.add(entry.index)
        out.entries.append(entry)
    return out


def done_indices(folder: str | Path) -> set[int]:
    """Indices of the games already in the journal (what ``--resume`` skips)."""
    return {e.index for e in read(folder).entries}


def repair(folder: str | Path) -> bytes:
    """Cut an unterminated final line off the journal; returns the bytes cut (also saved)."""
    path = journal_path(folder)
    if not path.exists():
        return b""
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return b""
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return b""
        f.seek(0)
        data = f.read()
        keep = data.rfind(b"\n") + 1
        tail = data[keep:]
        with open(Path(folder) / CORRUPT_FILE, "ab") as c:
            c.write(tail + b"\n")
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return tail


class Journal:
    """Appender for one results folder; use as a context manager or call ``close``."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.path = journal_path(self.folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.repaired = repair(self.folder)
            self._f = open(self.path, "ab", buffering=0)
        except OSError as e:
            raise JournalError(f"cannot open the journal {self.path}: {reason(e)}") from None

    def check(self) -> None:
        """JournalError unless the journal's path still names the open file (not deleted or replaced)."""
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            raise JournalError(f"the journal {self.path} was deleted or moved while the run was writing it") from None
        except OSError as e:
            raise JournalError(f"cannot check the journal {self.path}: {reason(e)}") from None
        held = os.fstat(self._f.fileno())
        if held.st_nlink == 0 or (named.st_dev, named.st_ino) != (held.st_dev, held.st_ino):
            raise JournalError(f"the journal {self.path} was replaced by another file while the run was writing it")

    def append(self, entry: JournalEntry) -> None:
        """Write one line durably (write, flush, fsync), to the file the path still names."""
        self.check()
        fd = self._f.fileno()
        start = os.fstat(fd).st_size
        try:
            view = memoryview(encode(entry))
            while view:
                written = self._f.write(view)
                view = view[written or 0:]
            self._f.flush()
            os.fsync(fd)
        except OSError as e:
            self._cut(start)
            raise JournalError(f"cannot write the journal {self.path}: {reason(e)}") from None
        self.check()

    def _cut(self, size: int) -> None:
        """Best effort: take a partly written line back off (``repair`` would cut it on resume anyway)."""
        try:
            os.ftruncate(self._f.fileno(), size)
        except OSError:
            pass

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def append(folder: str | Path, entry: JournalEntry) -> None:
    """One-shot append (opens, repairs a torn tail, writes, fsyncs, closes)."""
    with Journal(folder) as j:
        j.append(entry)
