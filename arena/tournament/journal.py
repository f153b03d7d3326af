"""The results journal: ``journal.jsonl`` in the results folder, one finished game a line.

Owns crash safety of results (docs/ARCHITECTURE.md section 5).  ``append``
writes a whole line in one ``write`` then flushes and fsyncs, so a game is
either in the journal or not.
A ``kill -9`` mid-write can only leave a truncated final line, which is the
torn tail of every signed log (``arena.tournament.signed_log``): ``read`` skips
it and reports it in ``JournalContents.problems``; ``Journal`` (the appender)
first cuts it off, keeping the cut bytes in ``journal.corrupt``, so the next
line starts clean.  ``done_indices`` is what
``--resume`` skips.  One process (the runner's main loop) should own the
appender; workers hand it their finished games.

The appender never reports a write it did not make: before and after each
line it checks that the journal's path still names the file it holds open
(not deleted, moved or replaced), and a failed write (a full disk, EIO, a
read-only filesystem, a file size limit) is cut back off the file.  Both end
in ``JournalError``, one sentence naming the file and the cause.

Every line carries a MAC (``mac``: HMAC-SHA256 under the results folder's
secret key, over the line's canonical encoding without the ``mac`` field).
``read`` accepts only lines that verify, whose index is in the schedule (when
it is told the schedule's size) and that are the first result of their game;
every other line is a ``BadLine`` with its line number and one sentence, and
``check`` turns any of them into ``BadJournal``.  ``set_aside`` moves bad
lines into ``journal.rejected.jsonl``, byte for byte, for whoever decides to
go on without them.

A line carries no deal seed (``deal_seed`` is null; lines of older runs have
it): whoever saw a journal mid-run could otherwise deal the twins of a
deal-set still to be played.  ``with_seeds`` gives the organiser's tools the
seeds back, derived from the key (``arena.tournament.deals``).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO

import msgspec

from arena.errors import ArenaError
from arena.integrity import folder_key, open_private, private_folder
from arena.tournament import signed_log

LOCK_FILE = "run.lock"  # held by whoever writes the journal: a run, or standings setting lines aside
JOURNAL_FILE = "journal.jsonl"
CORRUPT_FILE = "journal.corrupt"
REJECTED_FILE = "journal.rejected.jsonl"
MAC_LABEL = "journal"


class JournalError(ArenaError, RuntimeError):
    """The journal cannot be written, or is no longer the file being written: one sentence."""


class BadJournal(ArenaError, ValueError):
    """Journal lines that cannot be counted: ``problems`` has one sentence per line, with its number."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        super().__init__(f"{len(problems)} line(s) of the journal {path} cannot be counted")
        self.path = path
        self.problems = problems

    def details(self) -> list[str]:
        return self.problems

    def sentence(self) -> str:
        if self.retry is None:
            return str(self)
        return (f"{len(self.problems)} line(s) of {self.path} cannot be counted, so nothing was counted; to move "
                f"them to journal.rejected.jsonl and count the rest, run: {self.retry} --drop-bad-lines")


def reason(e: OSError) -> str:
    """The cause of an OSError as words (``No space left on device``)."""
    return e.strerror or str(e)


class JournalEntry(msgspec.Struct, kw_only=True):
    """One finished game; lists are by seat (seat 0 first)."""

    index: int                                  # global game index (schedule.game_at)
    game_id: str
    deal_seed: int | None = None                # not written (SECURITY.md, Secrets): see ``with_seeds``
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
    mac: str = ""                               # HMAC-SHA256 of the line without this field (signed)


_decoder = msgspec.json.Decoder(JournalEntry)


def canonical(entry: JournalEntry) -> bytes:
    """What a line's MAC covers: the entry's encoding without the ``mac`` field."""
    return signed_log.canonical(entry)


def signed(entry: JournalEntry, key: bytes) -> JournalEntry:
    """``entry`` with its MAC under ``key``."""
    return signed_log.sign(entry, key, MAC_LABEL)


def verifies(entry: JournalEntry, key: bytes) -> bool:
    return signed_log.verifies(entry, key, MAC_LABEL)


def encode(entry: JournalEntry, key: bytes) -> bytes:
    """The journal line of ``entry``, signed under ``key``."""
    return signed_log.encode_line(entry, key, MAC_LABEL)


@dataclass(frozen=True)
class BadLine:
    """A journal line that is not counted: its number, its bytes, and why (one sentence)."""

    number: int
    raw: bytes
    why: str


@dataclass
class JournalContents:
    """What ``read`` found: the counted entries in file order, the bad lines, and notes."""

    entries: list[JournalEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # notes that lose nothing (a torn final line)
    bad: list[BadLine] = field(default_factory=list)
    truncated_tail: bool = False


def journal_path(folder: str | Path) -> Path:
    return Path(folder) / JOURNAL_FILE


def read(folder: str | Path, key: bytes | None = None, total: int | None = None) -> JournalContents:
    """Every line that verifies under ``key`` (default: the folder's own key), has an index below
    ``total`` (when given) and is the first result of its game; every other line is a ``BadLine``.

    A torn final line (a write cut short by ``kill -9``) is only a note: ``Journal`` cuts it off.
    """
    out = JournalContents()
    path = journal_path(folder)
    if not path.exists():
        return out
    key = key if key is not None else folder_key(folder)
    lines = signed_log.read_lines(path)
    if lines.torn is not None:
        out.truncated_tail = True
    seen: dict[int, int] = {}
    for no, raw in lines.complete:
        entry, why = _judge(raw, key, total, seen)
        if entry is None:
            out.bad.append(BadLine(no, raw, f"{path}:{no}: {why}"))
            continue
        seen[entry.index] = no
        out.entries.append(entry)
    if lines.torn is not None:
        out.problems.append(f"{path}:{lines.torn_number}: ignored an incomplete final line (interrupted write)")
    return out


def with_seeds(folder: str | Path, entries: list[JournalEntry], key: bytes | None = None) -> list[JournalEntry]:
    """``entries`` with the deal seeds their lines leave out, derived from the folder's resolved
    tournament and key (for the organiser's own statistics); as they are if either is missing."""
    if all(e.deal_seed is not None for e in entries):
        return entries
    from arena.tournament.config import ConfigFileError, read_resolved
    from arena.tournament.deals import DealSuiteError, deal_seed_of

    try:
        key = key if key is not None else folder_key(folder)
        if key is None:
            return entries
        t = read_resolved(folder)
        return [e if e.deal_seed is not None else
                msgspec.structs.replace(e, deal_seed=deal_seed_of(t, key, e.index, e.table, e.set)) for e in entries]
    except (ConfigFileError, DealSuiteError, OSError, ValueError, IndexError):
        return entries


def _judge(raw: bytes, key: bytes | None, total: int | None, seen: dict[int, int]) -> tuple[JournalEntry | None, str]:
    """The entry of a complete line, or None and why it is not counted."""
    try:
        entry = _decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        return None, f"not a journal entry ({e})"
    if key is None:
        return None, "cannot be verified: the results folder has no secret.key"
    if not verifies(entry, key):
        return None, (f"the MAC of game {entry.index}'s line does not verify: the runner did not write "
                      f"this line, or it was changed since")
    if total is not None and not 0 <= entry.index < total:
        return None, f"game index {entry.index} is outside the schedule (games 0 to {total - 1})"
    if entry.index in seen:
        return None, f"a second result for game {entry.index} (its first is on line {seen[entry.index]})"
    return entry, ""


def check(folder: str | Path, key: bytes | None = None, total: int | None = None) -> JournalContents:
    """``read``, or BadJournal naming every line that cannot be counted."""
    contents = read(folder, key, total)
    if contents.bad:
        raise BadJournal(journal_path(folder), [b.why for b in contents.bad])
    return contents


def set_aside(folder: str | Path, contents: JournalContents) -> list[str]:
    """Move ``contents.bad`` out of the journal into ``journal.rejected.jsonl``; returns their sentences.

    The rejected file is appended to (and fsync'd) before the journal is replaced by its good
    lines, so a line is never lost: at worst it is in both files.
    """
    if not contents.bad:
        return []
    folder = Path(folder)
    path = journal_path(folder)
    bad_numbers = {b.number for b in contents.bad}
    lines = path.read_bytes().split(b"\n")
    keep = [raw for no, raw in enumerate(lines, start=1) if no not in bad_numbers and raw.strip()]
    try:
        signed_log.append(folder / REJECTED_FILE, b"".join(b.raw + b"\n" for b in contents.bad))
        signed_log.replace(path, b"".join(raw + b"\n" for raw in keep))
    except OSError as e:
        raise JournalError(f"cannot set bad lines aside in {folder / REJECTED_FILE}: {reason(e)}") from None
    return [b.why for b in contents.bad]


def done_indices(folder: str | Path, key: bytes | None = None) -> set[int]:
    """Indices of the games the journal holds and that verify (what ``--resume`` skips)."""
    return {e.index for e in read(folder, key).entries}


def repair(folder: str | Path) -> bytes:
    """Cut an unterminated final line off the journal; returns the bytes cut (also saved in ``journal.corrupt``)."""
    return signed_log.cut_torn_tail(journal_path(folder), keep=Path(folder) / CORRUPT_FILE)


class Journal:
    """Appender for one results folder, signing every line under ``key``; a context manager."""

    def __init__(self, folder: str | Path, key: bytes) -> None:
        self.folder = Path(folder)
        self.key = key
        self.path = journal_path(self.folder)
        try:
            private_folder(self.folder)  # the organiser's alone (SECURITY.md, Secrets)
            self.repaired = repair(self.folder)
            self._f = open_private(self.path, append=True, buffering=0)
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
            view = memoryview(encode(entry, self.key))
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


def append(folder: str | Path, entry: JournalEntry, key: bytes) -> None:
    """One-shot append (opens, repairs a torn tail, writes, fsyncs, closes)."""
    with Journal(folder, key) as j:
        j.append(entry)


def lock_folder(folder: Path) -> IO[bytes]:
    """The results folder's lock file, locked; closing it (or ending, however) releases the lock.

    Raises BlockingIOError when another process holds it, OSError when it cannot be opened.
    """
    f = open(folder / LOCK_FILE, "a+b")
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        f.close()
        raise
    return f
