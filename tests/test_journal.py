"""The JSON Lines journal: durable appends, a torn final line ignored and repaired, no write to a lost file."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from arena.tournament import journal
from arena.tournament.journal import (
    CORRUPT_FILE,
    JOURNAL_FILE,
    Journal,
    JournalEntry,
    JournalError,
    append,
    done_indices,
    encode,
    read,
)


def entry(i: int) -> JournalEntry:
    return JournalEntry(
        index=i, game_id=f"g{i:06d}-t0-s0-p{i}", deal_seed=123456789 + i, table=0, set=0, seating=i,
        seats=["a", "b", "c"], placings=[1, 2, 2], totals=[40, 0, 0],
        failures=[{}, {"timeout": 1}, {}], forfeited=[], record=f"records/g{i}.jsonl", deals=3,
    )


def test_append_and_read_back(tmp_path: Path) -> None:
    with Journal(tmp_path) as j:
        for i in range(3):
            j.append(entry(i))
    append(tmp_path, entry(3))
    contents = read(tmp_path)
    assert contents.problems == [] and not contents.truncated_tail
    assert contents.entries == [entry(i) for i in range(4)]
    assert contents.entries[1].failures[1] == {"timeout": 1}
    assert done_indices(tmp_path) == {0, 1, 2, 3}
    lines = (tmp_path / JOURNAL_FILE).read_bytes().split(b"\n")
    assert len(lines) == 5 and lines[-1] == b""


def test_missing_journal_is_empty(tmp_path: Path) -> None:
    assert read(tmp_path).entries == [] and done_indices(tmp_path) == set()


def test_truncated_last_line_is_ignored_and_reported(tmp_path: Path) -> None:
    append(tmp_path, entry(0))
    append(tmp_path, entry(1))
    torn = encode(entry(2))[:25]  # kill -9 in the middle of a write
    with open(tmp_path / JOURNAL_FILE, "ab") as f:
        f.write(torn)
    contents = read(tmp_path)
    assert [e.index for e in contents.entries] == [0, 1]
    assert contents.truncated_tail
    assert len(contents.problems) == 1 and "incomplete final line" in contents.problems[0]
    assert done_indices(tmp_path) == {0, 1}

    # the next append cuts the torn tail off first, so nothing is glued to it
    append(tmp_path, entry(2))
    contents = read(tmp_path)
    assert [e.index for e in contents.entries] == [0, 1, 2] and contents.problems == []
    assert (tmp_path / CORRUPT_FILE).read_bytes().startswith(torn)


def test_corrupt_middle_line_and_duplicates_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(encode(entry(0)) + b"{not json}\n" + encode(entry(1)) + encode(entry(0)))
    contents = read(tmp_path)
    assert [e.index for e in contents.entries] == [0, 1]
    assert len(contents.problems) == 2 and not contents.truncated_tail


def test_an_append_to_a_deleted_or_replaced_journal_is_refused(tmp_path: Path) -> None:
    with Journal(tmp_path) as j:
        j.append(entry(0))
        (tmp_path / JOURNAL_FILE).unlink()
        with pytest.raises(JournalError, match="was deleted or moved"):
            j.append(entry(1))
    with Journal(tmp_path) as j:
        j.append(entry(1))
        copy = tmp_path / "copy.jsonl"
        copy.write_bytes((tmp_path / JOURNAL_FILE).read_bytes())
        copy.replace(tmp_path / JOURNAL_FILE)
        with pytest.raises(JournalError, match="was replaced by another file"):
            j.append(entry(2))
    assert done_indices(tmp_path) == {1}  # nothing went to the replaced file's copy


def test_a_failed_write_is_one_sentence_and_leaves_no_partial_line(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with Journal(tmp_path) as j:
        j.append(entry(0))
        before = (tmp_path / JOURNAL_FILE).read_bytes()

        def full_disk(fd: int) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(journal.os, "fsync", full_disk)
        with pytest.raises(JournalError) as info:
            j.append(entry(1))
    assert str(info.value) == f"cannot write the journal {tmp_path / JOURNAL_FILE}: No space left on device"
    assert (tmp_path / JOURNAL_FILE).read_bytes() == before  # the half-recorded line was cut off again
