"""An adaptive league with ``top = K`` end to end through the CLI: uneven rounds recorded and played as chosen,
the Top K% column, and a resume mid-round (from a journal cut short) choosing the same tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.tournament.league_objective import WARMUP
from tests.helpers import cli, games, journal_lines, same_deals_as, settle, standings_json
from tests.tournament.league_helpers import ROUND, league_file, read_index

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

ROUNDS = WARMUP + 2  # two uneven rounds after the even ones


def top_file(tmp_path: Path) -> Path:
    path = league_file(tmp_path, "adaptive")
    text = path.read_text().replace('format = "adaptive"\n', 'format = "adaptive"\ntop = 3\n')
    text = text.replace(f"games = {ROUND * 3}\n", f"games = {ROUND * ROUNDS}\n")
    assert "top = 3" in text and f"games = {ROUND * ROUNDS}" in text
    path.write_text(text)
    return path


def tables_by_round(folder: Path) -> list[list[tuple[str, ...]]]:
    out: list[list[tuple[str, ...]]] = [[] for _ in range(ROUNDS)]
    for e in sorted(journal_lines(folder), key=lambda e: e["index"]):
        if e["index"] % 4 == 0:  # a table's first seating (rotate: 4 games a table)
            out[e["index"] // ROUND].append(tuple(sorted(e["seats"])))
    return out


@pytest.mark.timeout(400)
def test_a_top_league_plays_its_recorded_rounds_and_resumes_mid_round_to_the_same_tables(tmp_path) -> None:
    file = top_file(tmp_path)
    ref = tmp_path / "ref"
    got = cli("run", file, "--out", ref, "--format", "json", timeout=300)
    assert got.returncode == 0, got.stderr
    assert not settle(), "processes left after the run"
    assert sorted(e["index"] for e in journal_lines(ref)) == list(range(ROUND * ROUNDS))
    recorded = [[tuple(sorted(t)) for t in json.loads(line)["tables"]]
                for line in (ref / "rounds.jsonl").read_text().splitlines()]
    assert [sorted(r) for r in recorded] == [sorted(r) for r in tables_by_round(ref)]
    assert all(len(set(t)) == 4 for r in recorded for t in r)  # a bot holds at most one seat of a table
    st = standings_json(ref)
    assert st["top"] == 3 and abs(sum(r["top_pct"] for r in st["rows"]) - 3) < 1e-6
    assert "Top 3%" in cli("standings", ref).stdout

    out = tmp_path / "cut"
    same_deals_as(ref, out)
    for name in ("tournament.toml", "bots.jsonl"):  # not rounds.jsonl: the uneven round is chosen again
        (out / name).write_bytes((ref / name).read_bytes())
    lines = sorted((ref / "journal.jsonl").read_bytes().splitlines(keepends=True), key=read_index)
    cut = (ROUNDS - 1) * ROUND + 3  # 3 games into the last (uneven) round
    (out / "journal.jsonl").write_bytes(b"".join(lines[:cut]))
    got = cli("run", file, "--out", out, "--resume", "--format", "json", timeout=300)
    assert got.returncode == 0, got.stderr
    assert f"{ROUND * ROUNDS - cut} game(s) played, {cut} already done" in got.stderr, got.stderr
    assert games(out) == games(ref)
    assert tables_by_round(out) == tables_by_round(ref)
