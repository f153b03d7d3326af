"""Leagues end to end through the CLI: a swiss and an adaptive run with the sample bots, a resume
mid-round (from a journal cut short, both formats; after kill -9, adaptive) choosing the same tables as
an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from arena.tournament.journal import read
from tests.helpers import (
    CLI,
    ROOT,
    built_once,
    cli,
    count_lines,
    games,
    journal_lines,
    same_deals_as,
    settle,
    standings_json,
)
from tests.tournament.league_helpers import ROUND, ROUNDS, league_file, read_index

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

def tables_by_round(folder: Path) -> list[set[tuple[str, ...]]]:
    out: list[set[tuple[str, ...]]] = [set() for _ in range(ROUNDS)]
    for e in journal_lines(folder):
        out[e["index"] // ROUND].add(tuple(sorted(e["seats"])))
    return out


@pytest.fixture(scope="session", params=["swiss", "adaptive"])
def reference(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    def build(base: Path) -> None:
        got = cli("run", league_file(base, request.param), "--out", base / "results", "--format", "json", timeout=240)
        assert got.returncode == 0, got.stderr
        assert not settle(), "processes left after the reference run"
    base = built_once(tmp_path_factory, f"league-{request.param}", build)
    return base / f"{request.param}.toml", base / "results"  # the file league_file wrote


@pytest.mark.timeout(300)
def test_a_league_plays_its_budget_in_rounds_every_bot_once_a_round(reference) -> None:
    _file, out = reference
    lines = journal_lines(out)
    assert sorted(e["index"] for e in lines) == list(range(ROUND * ROUNDS))
    for tables in tables_by_round(out):
        assert len(tables) == 2
        seated = [b for t in tables for b in t]
        assert len(seated) == len(set(seated)) == 8  # every bot at most once a round; one sits out
    recorded = [json.loads(line)["tables"] for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert [{tuple(sorted(t)) for t in r} for r in recorded] == tables_by_round(out)  # as chosen, in order
    st = standings_json(out)
    assert st["league"] is True
    assert [r["settled"] is None for r in st["rows"]] == [False] * 8 + [True]
    assert all(0.0 <= r["settled"] <= 1.0 for r in st["rows"][:-1])
    shown = cli("standings", out)
    assert "Settled" in shown.stdout


@pytest.mark.timeout(300)
def test_resume_mid_round_chooses_the_same_tables(reference, tmp_path) -> None:
    file, ref = reference
    out = tmp_path / "cut"
    same_deals_as(ref, out)
    for name in ("tournament.toml", "bots.jsonl"):  # not rounds.jsonl: round 1 is chosen again from the journal
        (out / name).write_bytes((ref / name).read_bytes())
    lines = (ref / "journal.jsonl").read_bytes().splitlines(keepends=True)
    by_index = sorted(lines, key=lambda raw: read_index(raw))
    (out / "journal.jsonl").write_bytes(b"".join(by_index[:ROUND + 3]))  # round 0 and 3 games of round 1
    got = cli("run", file, "--out", out, "--resume", "--format", "json", timeout=240)
    assert got.returncode == 0, got.stderr
    assert f"{ROUND * ROUNDS - ROUND - 3} game(s) played, {ROUND + 3} already done" in got.stderr, got.stderr
    assert games(out) == games(ref)
    assert tables_by_round(out) == tables_by_round(ref)





# Adaptive only: what a kill -9 can break (the journal and rounds logs, the sweep, the resume) is the
# same code for every format, and the format's own part, choosing the same tables again from a journal
# cut mid-round, is the test above, for both; adaptive's tables depend on the results, so it is the
# stricter of the two.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("reference", ["adaptive"], indirect=True)
def test_kill_9_mid_league_then_resume_equals_an_uninterrupted_run(reference, tmp_path) -> None:
    _file, ref = reference
    # sandboxed: without the sandbox a kill -9 of the run leaves its bots to the next run's sweep
    file = league_file(tmp_path, _file.stem, sandbox=True)
    out = tmp_path / "killed"
    journal = out / "journal.jsonl"
    same_deals_as(ref, out)
    with open(tmp_path / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(CLI + ["run", str(file), "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + 150
        while count_lines(journal) < ROUND + 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    killed_at = len(read(out).entries)
    assert ROUND < killed_at < ROUND * ROUNDS, killed_at
    assert not settle(), "processes of the killed run are still alive"
    got = cli("run", file, "--out", out, "--resume", "--format", "json", timeout=240)
    assert got.returncode == 0, got.stderr
    assert sorted(e["index"] for e in journal_lines(out)) == list(range(ROUND * ROUNDS))
    assert games(out) == games(ref)
    assert tables_by_round(out) == tables_by_round(ref)
    # the same ratings (fitted in index order); margins are summed in journal order, so equal to rounding only
    rated = [[(r["bot"], r["rating"], r["settled"]) for r in standings_json(f)["rows"]] for f in (out, ref)]
    assert rated[0] == rated[1]
