"""A tournament's results folder as a run uses it: its key, its resolved file, its lock and its guard.

``prepare`` checks the folder and writes the resolved tournament into it (a new folder gets a new key,
unless the organiser put one there; ``--resume`` may grow the tournament, ``growth``); ``counted`` reads
the journal lines that count.  One run at a time per folder: ``folder_lock`` holds an exclusive lock
on ``run.lock`` (released by the kernel however the process ends), and ``FolderGuard`` checks that the
folder, its lock file and the files the run watches are still the ones it started with, so the run
never reports a game it did not record.  ``sweep`` kills what an earlier, killed run left behind (bots
carry the folder in ``ARENA_RUN``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO

from arena.integrity import KEY_FILE, KeyFileError, folder_key, make_key
from arena.tournament import growth, schedule, signed_log
from arena.tournament.config import RESOLVED_FILE, ConfigFileError, Tournament, read_resolved, write_resolved
from arena.tournament.executor import RunError
from arena.tournament.journal import (
    LOCK_FILE,
    JournalContents,
    JournalError,
    check,
    lock_folder,
    read,
    reason,
    set_aside,
)

GROWS = ("bots", "deal_sets", "history")  # what --resume may change: the tournament grows (growth.py)


def prepare(t: Tournament, out: Path, resume: bool) -> tuple[bytes, bytes | None]:
    """Check the results folder, write the resolved tournament into it; returns the folder's key and,
    when ``--resume`` grew the tournament, the resolved file as it was (to put back if a check fails).

    A new folder gets a new key, unless the organiser put one there (to deal a tournament again
    exactly as in the folder the key comes from); a folder that holds this tournament keeps its
    key (a journal whose key is gone cannot be verified, so it is refused).
    """
    existing = out / RESOLVED_FILE
    if existing.exists():
        contents = read(out, _key(out))
        held = len(contents.entries) + len(contents.bad)
        if not resume and held:
            raise RunError(f"{out} already holds {held} finished game(s): use --resume to continue, "
                           f"or --out to start a new folder")
        if resume:
            old = resolved_of(out)
            t = replace(t, history=old.history)  # the folder keeps the schedule's history, not the file
            where = {"base_dir": "", "output": "", "sandbox": True}  # the same games, however the folder was named or bots confined
            if old.to_toml_data() | where != t.to_toml_data() | where:
                keeps = sorted((set(old.to_toml_data()) | set(t.to_toml_data())) - {*where, *GROWS})
                why = growth.growth_problem(old, t, keeps)
                if why is not None:
                    raise RunError(f"{out} holds a different tournament ({why}); --resume needs the same file, or "
                                   "one with more deal_sets or more bots (or run with --out to start a new folder)")
                key = _key(out) or _first_key(out, held)
                before = existing.read_bytes()
                write_resolved(growth.grown(old, t), out)  # the games played keep their indices
                return key, before
            return _key(out) or _first_key(out, held), None
        key = _key(out) or _first_key(out, held)
    elif resume and (out / "journal.jsonl").exists():
        raise RunError(f"{out} has a journal but no {RESOLVED_FILE}; it cannot be resumed")
    else:
        key = _key(out) or _new_key(out)
    write_resolved(t, out)
    return key, None


def put_back(out: Path, before: bytes) -> None:
    """The resolved tournament as it was before a growth that a check then refused."""
    signed_log.replace(out / RESOLVED_FILE, before)


def _key(out: Path) -> bytes | None:
    try:
        return folder_key(out)
    except KeyFileError as e:
        raise RunError(str(e)) from None


def _first_key(out: Path, held: int) -> bytes:
    """The key of a folder that has none yet: only while its journal holds nothing to verify."""
    if held:
        raise RunError(f"{out} has no {KEY_FILE}, so the {held} line(s) of its journal cannot be verified; "
                       f"restore the key file, or start a new folder with --out")
    return _new_key(out)


def _new_key(out: Path) -> bytes:
    try:
        return make_key(out)
    except KeyFileError as e:
        raise RunError(str(e)) from None


def counted(t: Tournament, out: Path, key: bytes, drop_bad_lines: bool) -> tuple[JournalContents, list[str]]:
    """The journal's lines that count, and the sentences of the bad lines set aside.

    Bad lines (a MAC that does not verify, an index outside the schedule, a second result
    for a game) raise BadJournal, or with ``drop_bad_lines`` go to ``journal.rejected.jsonl``.
    """
    total = schedule.total_games(t)
    if not drop_bad_lines:
        return check(out, key, total), []
    contents = read(out, key, total)
    try:
        dropped = set_aside(out, contents)
    except JournalError as e:
        raise RunError(str(e)) from None
    return read(out, key, total), dropped


def resolved_of(out: Path) -> Tournament:
    try:
        return read_resolved(out)
    except ConfigFileError as e:
        first = e.errors[0] if e.errors else "?"
        raise RunError(f"{out / RESOLVED_FILE} is not a tournament this runner wrote ({first})") from None


@contextmanager
def folder_lock(out: Path) -> Iterator[IO[bytes]]:
    """Hold the results folder's lock; RunError if another run holds it."""
    try:
        f = lock_folder(out)
    except BlockingIOError:
        raise RunError(f"{out} is in use by another `arena run` (it holds {out / LOCK_FILE}); "
                       f"wait for it to finish or use --out for another folder") from None
    except OSError as e:
        raise RunError(f"cannot write in the results folder {out}: {reason(e)}") from None
    with f:
        yield f


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class FolderGuard:
    """The results folder as this run locked it; ``check`` raises RunError once it is not that any more."""

    def __init__(self, out: Path, lock: IO[bytes]) -> None:
        self.out = out
        self.lock = lock
        self.folder = _identity(os.stat(out))
        self.files: dict[str, tuple[int, int]] = {}

    def watch(self, name: str) -> None:
        """Also check that ``name`` in the folder stays the same file from now on."""
        self.files[name] = _identity(os.stat(self.out / name))

    def check(self) -> None:
        if self._identity_of(self.out, f"the results folder {self.out}") != self.folder:
            raise RunError(f"the results folder {self.out} was deleted or replaced while the run was using it")
        held = {LOCK_FILE: _identity(os.fstat(self.lock.fileno()))} | self.files
        for name, ident in held.items():
            what = f"the run's file {self.out / name}"
            if self._identity_of(self.out / name, what) != ident:
                raise RunError(f"{what} was replaced by another file while the run was using it")

    @staticmethod
    def _identity_of(path: Path, what: str) -> tuple[int, int]:
        try:
            return _identity(os.stat(path))
        except FileNotFoundError:
            raise RunError(f"{what} was deleted or moved while the run was using it") from None
        except OSError as e:
            raise RunError(f"cannot check {what}: {reason(e)}") from None


def sweep_earlier_run(out: Path) -> int:
    """Kill processes left by an earlier, killed run of ``out`` (we hold its lock: none is ours)."""
    from arena.referee.launch import RUN_MARKER, sweep

    return sweep(RUN_MARKER, str(out), only_descendants=False)
