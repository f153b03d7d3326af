"""The small holes of bots' and entrants' words (issue 21, third round): what a bot says is quoted in
reasons at a bounded size, so a record's size is bounded; a tournament's name and output folder hold
no control characters; a hello name is never markup on the human seat's last screen; ``--listen
:PORT`` is loopback."""

from __future__ import annotations

import json
import sys

import pytest

from arena.referee.game import MAX_RECORDED_FAILURES, REASON_CHARS
from arena.settings import TimeControl
from arena.untrusted import QUOTE_CHARS
from tests.conftest import ROOT, run_game

HOSTILE = str(ROOT / "tests" / "bots" / "hostile.py")
ESC = "\x1b"


# -- a reason quotes at most QUOTE_CHARS of a bot's string; a record's failure lines are bounded ------------

@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
def test_huge_game_ids_and_values_make_no_huge_record(tmp_path):
    result, _ = run_game("basic", [f"{sys.executable} {HOSTILE} huge_words", "greedy"], tmp_path, seed=3,
                         time_control=TimeControl(start_ms=10000, decision_ms=3000, grace_ms=50))
    record = tmp_path / "record.jsonl"
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    fails = [d for d in lines if d.get("e") == "failure"]
    # The bot sent ~8 MiB of game ids at every request: they were counted, and quoted only in part.
    assert result.failures[0]["stale"] > MAX_RECORDED_FAILURES and result.failures[0]["malformed"] >= 1, \
        result.failures
    assert {d["kind"] for d in fails} >= {"stale", "malformed"}
    assert len(fails) <= MAX_RECORDED_FAILURES + 1
    assert all(len(d["reason"]) <= REASON_CHARS and "G" * (QUOTE_CHARS * 2 + 1) not in d["reason"] for d in fails)
    assert any("chars)" in d["reason"] for d in fails)  # the cut is said
    # Before the cut this record was 15.7 MB (20 stale lines quoting a 1 MiB id, and the decoder's detail).
    assert record.stat().st_size < 200_000, record.stat().st_size
    # The honest seat was charged nothing; the game was played to its end (no timeout from 1 MiB errors).
    assert not result.failures[1] and "timeout" not in result.failures[0]
    assert result.end_reason and result.decisions > 20
