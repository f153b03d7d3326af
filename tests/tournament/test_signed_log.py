"""One torn-tail rule for the three signed logs (journal, bots, rounds) and one durable atomic write."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from arena.tournament import rounds, signed_log
from arena.tournament.fingerprints import BOTS_FILE, Fingerprint, record, recorded

KEY = bytes(range(32))


def test_a_torn_last_line_is_a_note_and_the_complete_lines_keep_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"one\n\ntwo\n{\"tor")
    lines = signed_log.read_lines(path)
    assert lines.complete == [(1, b"one"), (3, b"two")]
    assert (lines.torn, lines.torn_number) == (b'{"tor', 4)
    assert signed_log.read_lines(tmp_path / "missing.jsonl") == signed_log.Lines()


def test_an_append_cuts_the_torn_tail_off_first_keeping_it_where_asked(tmp_path: Path) -> None:
    path, keep = tmp_path / "log.jsonl", tmp_path / "log.corrupt"
    path.write_bytes(b"one\n{\"tor")
    assert signed_log.cut_torn_tail(path, keep) == b'{"tor'
    assert path.read_bytes() == b"one\n" and keep.read_bytes() == b'{"tor\n'
    assert signed_log.cut_torn_tail(path, keep) == b""  # a clean file is left as it is
    path.write_bytes(b"one\ntw")
    signed_log.append(path, b"three\n")
    assert path.read_bytes() == b"one\nthree\n"


def test_replace_is_all_or_nothing_private_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o644)
    signed_log.replace(path, b"new\n")
    assert path.read_bytes() == b"new\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["f.jsonl"]


def _print(bot: str) -> Fingerprint:
    return Fingerprint(bot=bot, command="c" * 64, program="p" * 64, what="command line only")


def test_a_torn_fingerprint_line_is_skipped_not_a_refused_folder(tmp_path: Path) -> None:
    """A run killed while it appended an accepted fingerprint: the earlier lines still count."""
    record(tmp_path, KEY, [_print("a"), _print("b")], fresh=True)
    with open(tmp_path / BOTS_FILE, "ab") as f:
        f.write(b'{"bot":"a","comm')
    assert sorted(recorded(tmp_path, KEY)) == ["a", "b"]
    record(tmp_path, KEY, [_print("c")], fresh=False)  # the torn bytes are cut off first
    assert sorted(recorded(tmp_path, KEY)) == ["a", "b", "c"]
    assert len((tmp_path / BOTS_FILE).read_bytes().splitlines()) == 3


def test_a_torn_round_line_is_cut_off_before_the_next_round(tmp_path: Path) -> None:
    tables = (("a", "b"),)
    rounds.record(tmp_path, KEY, 0, tables, "tag")
    with open(tmp_path / rounds.ROUNDS_FILE, "ab") as f:
        f.write(b'{"round":1,"tab')
    rounds.record(tmp_path, KEY, 1, tables, "tag")
    assert rounds.recorded(tmp_path, KEY, "tag") == {0: tables, 1: tables}
    assert len((tmp_path / rounds.ROUNDS_FILE).read_bytes().splitlines()) == 2
