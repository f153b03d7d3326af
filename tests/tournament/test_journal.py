"""The JSON Lines journal: durable appends, a torn final line ignored and repaired, no write to a lost file;
signed lines, and every line that cannot be counted named with its number."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from arena.integrity import KEY_FILE, make_key
from arena.tournament import journal
from arena.tournament.journal import (
    CORRUPT_FILE,
    JOURNAL_FILE,
    REJECTED_FILE,
    BadJournal,
    Journal,
    JournalEntry,
    JournalError,
    check,
    done_indices,
    encode,
    read,
    set_aside,
)

KEY = bytes(range(32))


def append(folder: Path, e: JournalEntry) -> None:
    journal.append(folder, e, KEY)


def entry(i: int) -> JournalEntry:
    return JournalEntry(
        index=i, game_id=f"g{i:06d}-t0-s0-p{i}", deal_seed=123456789 + i, table=0, set=0, seating=i,
        seats=["a", "b", "c"], placings=[1, 2, 2], totals=[40, 0, 0],
        failures=[{}, {"timeout": 1}, {}], forfeited=[], record=f"records/g{i}.jsonl", deals=3,
    )


def test_append_and_read_back(tmp_path: Path) -> None:
    with Journal(tmp_path, KEY) as j:
        for i in range(3):
            j.append(entry(i))
    append(tmp_path, entry(3))
    contents = read(tmp_path, KEY)
    assert contents.problems == [] and contents.bad == [] and not contents.truncated_tail
    assert [journal.msgspec.structs.replace(e, mac="") for e in contents.entries] == [entry(i) for i in range(4)]
    assert all(len(e.mac) == 64 for e in contents.entries)
    assert contents.entries[1].failures[1] == {"timeout": 1}
    assert done_indices(tmp_path, KEY) == {0, 1, 2, 3}
    lines = (tmp_path / JOURNAL_FILE).read_bytes().split(b"\n")
    assert len(lines) == 5 and lines[-1] == b""


def test_missing_journal_is_empty(tmp_path: Path) -> None:
    assert read(tmp_path, KEY).entries == [] and done_indices(tmp_path, KEY) == set()


def test_truncated_last_line_is_ignored_and_reported(tmp_path: Path) -> None:
    append(tmp_path, entry(0))
    append(tmp_path, entry(1))
    torn = encode(entry(2), KEY)[:25]  # kill -9 in the middle of a write
    with open(tmp_path / JOURNAL_FILE, "ab") as f:
        f.write(torn)
    contents = read(tmp_path, KEY)
    assert [e.index for e in contents.entries] == [0, 1]
    assert contents.truncated_tail and contents.bad == []  # a torn tail loses nothing: it is only a note
    assert len(contents.problems) == 1 and "incomplete final line" in contents.problems[0]
    assert done_indices(tmp_path, KEY) == {0, 1}

    # the next append cuts the torn tail off first, so nothing is glued to it
    append(tmp_path, entry(2))
    contents = read(tmp_path, KEY)
    assert [e.index for e in contents.entries] == [0, 1, 2] and contents.problems == []
    assert (tmp_path / CORRUPT_FILE).read_bytes().startswith(torn)


def test_corrupt_middle_line_and_duplicates_are_bad_lines_with_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(encode(entry(0), KEY) + b"{not json}\n" + encode(entry(1), KEY) + encode(entry(0), KEY))
    contents = read(tmp_path, KEY)
    assert [e.index for e in contents.entries] == [0, 1]
    assert [b.number for b in contents.bad] == [2, 4] and not contents.truncated_tail
    assert contents.bad[0].why.startswith(f"{path}:2: not a journal entry")
    assert contents.bad[1].why == f"{path}:4: a second result for game 0 (its first is on line 1)"


def test_an_append_to_a_deleted_or_replaced_journal_is_refused(tmp_path: Path) -> None:
    with Journal(tmp_path, KEY) as j:
        j.append(entry(0))
        (tmp_path / JOURNAL_FILE).unlink()
        with pytest.raises(JournalError, match="was deleted or moved"):
            j.append(entry(1))
    with Journal(tmp_path, KEY) as j:
        j.append(entry(1))
        copy = tmp_path / "copy.jsonl"
        copy.write_bytes((tmp_path / JOURNAL_FILE).read_bytes())
        copy.replace(tmp_path / JOURNAL_FILE)
        with pytest.raises(JournalError, match="was replaced by another file"):
            j.append(entry(2))
    assert done_indices(tmp_path, KEY) == {1}  # nothing went to the replaced file's copy


def test_a_failed_write_is_one_sentence_and_leaves_no_partial_line(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with Journal(tmp_path, KEY) as j:
        j.append(entry(0))
        before = (tmp_path / JOURNAL_FILE).read_bytes()

        def full_disk(fd: int) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(journal.os, "fsync", full_disk)
        with pytest.raises(JournalError) as info:
            j.append(entry(1))
    assert str(info.value) == f"cannot write the journal {tmp_path / JOURNAL_FILE}: No space left on device"
    assert (tmp_path / JOURNAL_FILE).read_bytes() == before  # the half-recorded line was cut off again


# -- signed lines --------------------------------------------------------------------------------

def forged(i: int) -> bytes:
    """A well-formed winning line for game ``i`` that the runner did not write (no key, so no MAC)."""
    e = entry(i)
    e.placings = [1, 2, 3]
    return journal.msgspec.json.encode(e) + b"\n"


def test_forged_out_of_schedule_and_second_results_are_named_with_their_line(tmp_path: Path) -> None:
    for i in range(2):
        append(tmp_path, entry(i))
    path = tmp_path / JOURNAL_FILE
    with open(path, "ab") as f:
        f.write(forged(2))                       # line 3: a game not yet played, MAC missing
        f.write(encode(entry(9), bytes(32)))     # line 4: signed, but under another key
        f.write(encode(entry(0), KEY))           # line 5: a second result for game 0
        f.write(encode(entry(7), KEY))           # line 6: signed, but outside a schedule of 4 games
    contents = read(tmp_path, KEY, total=4)
    assert [e.index for e in contents.entries] == [0, 1]
    assert [b.number for b in contents.bad] == [3, 4, 5, 6]
    whys = [b.why for b in contents.bad]
    assert whys[0] == (f"{path}:3: the MAC of game 2's line does not verify: the runner did not write this line, "
                       f"or it was changed since")
    assert "MAC of game 9's line does not verify" in whys[1]
    assert whys[2] == f"{path}:5: a second result for game 0 (its first is on line 1)"
    assert whys[3] == f"{path}:6: game index 7 is outside the schedule (games 0 to 3)"
    with pytest.raises(BadJournal) as info:
        check(tmp_path, KEY, total=4)
    assert info.value.problems == whys


def test_an_edited_line_does_not_verify(tmp_path: Path) -> None:
    append(tmp_path, entry(0))
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(path.read_bytes().replace(b'"placings":[1,2,2]', b'"placings":[2,1,2]'))
    contents = read(tmp_path, KEY)
    assert contents.entries == [] and [b.number for b in contents.bad] == [1]


def test_the_folder_key_is_used_by_default_and_a_folder_without_one_verifies_nothing(tmp_path: Path) -> None:
    append(tmp_path, entry(0))
    assert read(tmp_path).entries == [] and "has no secret.key" in read(tmp_path).bad[0].why
    key = make_key(tmp_path)
    assert (tmp_path / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert len(key) == 32 and make_key(tmp_path) != key  # a new random key every time
    journal.append(tmp_path, entry(1), (tmp_path / KEY_FILE).read_bytes())
    assert [e.index for e in read(tmp_path).entries] == [1]


def test_set_aside_moves_bad_lines_byte_for_byte(tmp_path: Path) -> None:
    append(tmp_path, entry(0))
    with open(tmp_path / JOURNAL_FILE, "ab") as f:
        f.write(forged(1))
    append(tmp_path, entry(2))
    dropped = set_aside(tmp_path, read(tmp_path, KEY))
    assert len(dropped) == 1 and ":2: the MAC of game 1's line" in dropped[0]
    assert (tmp_path / REJECTED_FILE).read_bytes() == forged(1)
    contents = check(tmp_path, KEY)
    assert [e.index for e in contents.entries] == [0, 2]
    assert set_aside(tmp_path, contents) == []
