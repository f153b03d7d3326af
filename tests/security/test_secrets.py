"""Secrets stay secret and results are tamper-evident.

Deal seeds and game ids come from the results folder's secret key, not from
anything a bot is told; every journal line and game record is signed with it;
`arena standings` and `arena run --resume` refuse (exit 2, one sentence per
line, with its number) a forged line, an index outside the schedule and a
second result for a game, unless told to set them aside; `arena replay
--verify` checks a record's MAC where the key is at hand.

The real runs here are a 2-game tournament and two short `arena play` games.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner, Result

from arena.cli import app
from arena.integrity import KEY_FILE, make_key
from arena.referee.game import GameResult, write_record
from arena.rules.log import GameStart
from arena.tournament.journal import REJECTED_FILE, JournalEntry
from tests.conftest import ROOT
from tests.helpers import CLI

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("no_leaks")]

GAME_ID = re.compile(r"^g[0-9a-f]{16}$")

# 2 bots heads-up, one deal-set: 2 games, the same deal under both seatings.
TWO_GAMES = """\
name = "secrets"
variant = "basic"
seats = 2
deal_sets = 1
concurrency = 1
seed = 3

[rules]
target = 30

[[bots]]
name = "greedy"
command = "greedy"

[[bots]]
name = "greedy-2"
command = "greedy"
"""


def cli(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CLI + [str(a) for a in args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def invoke(*args: str | Path) -> Result:
    """An `arena` command in this process (no bot is started by standings or replay)."""
    return CliRunner().invoke(app, [str(a) for a in args])


def lines(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "journal.jsonl").read_text().splitlines() if x.strip()]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tournament file and the results folder of one finished run of it."""
    base = tmp_path_factory.mktemp("secrets")
    file = base / "t.toml"
    file.write_text(TWO_GAMES)
    got = cli("run", file, "--out", base / "a", "--format", "csv")
    assert got.returncode == 0, got.stderr
    return file, base / "a"


@pytest.fixture
def copy(played: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the finished results folder to meddle with."""
    out = tmp_path / "copy"
    shutil.copytree(played[1], out)
    return out


# -- secrets --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_run_makes_a_private_key_and_game_ids_carry_no_seed(played: tuple[Path, Path]) -> None:
    _, out = played
    key = out / KEY_FILE
    assert key.stat().st_size == 32 and key.stat().st_mode & 0o777 == 0o600
    entries = lines(out)
    assert [e["index"] for e in entries] == [0, 1]
    seeds = []
    for e in entries:
        assert GAME_ID.match(e["game_id"]), e["game_id"]
        assert e["deal_seed"] is None  # journal lines carry no deal seed
        assert len(e["mac"]) == 64
        header = json.loads((out / e["record"]).read_text().splitlines()[0])
        assert header["game_id"] == e["game_id"] and len(header["mac"]) == 64
        assert str(header["seed"]) not in e["game_id"] and "seed" not in e["game_id"]
        seeds.append(header["seed"])
    assert seeds[0] == seeds[1]  # duplicate play: one deal for both seatings
    assert entries[0]["game_id"] != entries[1]["game_id"]


@pytest.mark.slow
def test_two_folders_get_the_same_schedule_with_different_deals(played: tuple[Path, Path], tmp_path: Path) -> None:
    file, first = played
    got = cli("run", file, "--out", tmp_path / "b", "--format", "csv")
    assert got.returncode == 0, got.stderr
    a, b = lines(first), lines(tmp_path / "b")
    assert [(e["index"], e["seats"], e["table"], e["set"]) for e in a] == [(e["index"], e["seats"], e["table"], e["set"]) for e in b]
    def seeds(folder: Path) -> set[int]:
        return {json.loads((folder / e["record"]).read_text().splitlines()[0])["seed"] for e in lines(folder)}

    assert seeds(first).isdisjoint(seeds(tmp_path / "b"))
    assert {e["game_id"] for e in a}.isdisjoint(e["game_id"] for e in b)
    assert (first / KEY_FILE).read_bytes() != (tmp_path / "b" / KEY_FILE).read_bytes()


@pytest.mark.slow
def test_play_with_a_seed_is_reproducible_and_its_game_id_is_not_the_seed(tmp_path: Path) -> None:
    records = []
    for n in range(2):
        record = tmp_path / f"r{n}.jsonl"
        got = cli("play", "basic", "greedy", "greedy", "--seed", "4242", "--record", record, "--quiet")
        assert got.returncode == 0, got.stderr
        records.append([json.loads(x) for x in record.read_text().splitlines()])
    ids = [r[0].pop("game_id") for r in records]
    assert all(re.fullmatch(r"play-[0-9a-f]{8}", i) for i in ids) and ids[0] != ids[1]
    assert records[0][0]["seed"] == 4242  # the person running it keeps the seed; bots are never shown a record
    timeless = [[{k: v for k, v in e.items() if k != "ms"} for e in r] for r in records]
    assert timeless[0] == timeless[1]


# -- tamper-evident journal ---------------------------------------------------------------------

def forge(folder: Path, index: int, winner: int = 0) -> bytes:
    """A well-formed winning line for game ``index``, as a bot would write it: no key, so no valid MAC."""
    e = msgspec.json.decode(msgspec.json.encode(lines(folder)[0]), type=JournalEntry)
    e.index, e.placings = index, [1 if s == winner else 2 for s in range(len(e.seats))]
    return msgspec.json.encode(e) + b"\n"


@pytest.mark.slow
def test_standings_name_every_line_that_cannot_be_counted(copy: Path) -> None:
    journal = copy / "journal.jsonl"
    genuine = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(genuine[0] + forge(copy, 1) + forge(copy, 7) + genuine[0] + genuine[1])
    got = invoke("standings", copy, "--format", "csv")
    assert got.exit_code == 2
    err = [x for x in got.output.splitlines() if not x.startswith("computing ")]  # a progress note
    assert err[0] == (f"{journal}:2: the MAC of game 1's line does not verify: the runner did not write this line, "
                      f"or it was changed since")
    assert err[1].startswith(f"{journal}:3: the MAC of game 7's line does not verify")
    assert err[2] == f"{journal}:4: a second result for game 0 (its first is on line 1)"
    assert err[3].startswith(f"error: 3 line(s) of {journal} cannot be counted, so nothing was counted")
    assert "--drop-bad-lines" in err[3] and len(err) == 4

    dropped = invoke("standings", copy, "--format", "csv", "--drop-bad-lines")
    assert dropped.exit_code == 0, dropped.output
    assert sum(line.startswith("warning: set aside") for line in dropped.output.splitlines()) == 3
    assert journal.read_bytes() == genuine[0] + genuine[1]
    assert (copy / REJECTED_FILE).read_bytes() == forge(copy, 1) + forge(copy, 7) + genuine[0]
    assert invoke("standings", copy, "--format", "csv").exit_code == 0


@pytest.mark.slow
def test_an_index_outside_the_schedule_is_refused_even_with_a_valid_mac(copy: Path) -> None:
    from arena.tournament.journal import encode

    entry = msgspec.json.decode(msgspec.json.encode(lines(copy)[0]), type=JournalEntry)
    entry.index = 2  # the schedule has games 0 and 1
    with open(copy / "journal.jsonl", "ab") as f:
        f.write(encode(entry, (copy / KEY_FILE).read_bytes()))
    got = invoke("standings", copy)
    assert got.exit_code == 2
    assert f"{copy / 'journal.jsonl'}:3: game index 2 is outside the schedule (games 0 to 1)" in got.output


@pytest.mark.slow
def test_resume_refuses_a_forged_line_then_drops_it_and_reuses_the_key(played: tuple[Path, Path], copy: Path) -> None:
    file = played[0]
    journal = copy / "journal.jsonl"
    genuine = journal.read_bytes().splitlines(keepends=True)
    key = (copy / KEY_FILE).read_bytes()
    journal.write_bytes(genuine[0] + forge(copy, 1, winner=1))  # game 1 not played yet: a forged win for it

    refused = cli("run", file, "--out", copy, "--resume", "--format", "csv")
    assert refused.returncode == 2
    assert f"{journal}:2: the MAC of game 1's line does not verify" in refused.stderr
    assert [x for x in refused.stderr.splitlines() if x.startswith("error:")][0].endswith(
        f"arena run {file} --resume --out {copy} --drop-bad-lines")
    assert journal.read_bytes() == genuine[0] + forge(copy, 1, winner=1)  # nothing was changed

    resumed = cli("run", file, "--out", copy, "--resume", "--format", "csv", "--drop-bad-lines")
    assert resumed.returncode == 0, resumed.stderr
    assert "warning: set aside in journal.rejected.jsonl:" in resumed.stderr
    assert (copy / KEY_FILE).read_bytes() == key
    replayed = lines(copy)
    assert [e["index"] for e in replayed] == [0, 1]
    original = json.loads(genuine[1])
    assert replayed[1]["deal_seed"] == original["deal_seed"] and replayed[1]["game_id"] == original["game_id"]


@pytest.mark.slow
def test_resume_without_the_key_is_refused(played: tuple[Path, Path], copy: Path) -> None:
    (copy / KEY_FILE).unlink()
    got = cli("run", played[0], "--out", copy, "--resume")
    assert got.returncode == 2
    assert f"has no {KEY_FILE}, so the 2 line(s) of its journal cannot be verified" in got.stderr


# -- tamper-evident records -----------------------------------------------------------------------

@pytest.mark.slow
def test_replay_verify_checks_the_record_mac(copy: Path, tmp_path: Path) -> None:
    record = copy / "records" / "g000000.jsonl"
    ok = invoke("replay", "--verify", record)
    assert ok.exit_code == 0 and ok.output.rstrip().endswith("MAC verified"), ok.output

    elsewhere = tmp_path / "alone.jsonl"
    shutil.copyfile(record, elsewhere)
    assert invoke("replay", "--verify", elsewhere).output.rstrip().endswith("no key: MAC not checked")
    assert invoke("replay", "--verify", elsewhere, "--key", copy / KEY_FILE).output.rstrip().endswith("MAC verified")
    other = tmp_path / "other"
    other.mkdir()
    wrong = invoke("replay", "--verify", elsewhere, "--key", other / KEY_FILE)
    assert wrong.exit_code == 2 and "cannot read the key file" in wrong.output
    make_key(other)
    assert invoke("replay", "--verify", elsewhere, "--key", other / KEY_FILE).exit_code == 1

    text = record.read_text().splitlines()
    for i, line in enumerate(text[1:], start=1):  # an edited entry, still a legal game: the engine cannot tell
        e = json.loads(line)
        if "ms" in e:
            e["ms"] = e["ms"] + 1000.0
            text[i] = json.dumps(e)
            break
    record.write_text("\n".join(text) + "\n")
    bad = invoke("replay", "--verify", record)
    assert bad.exit_code == 1
    assert f"{record}: does not verify: MAC does not verify under {copy / KEY_FILE}" in bad.output

    header = json.loads(text[0])
    del header["mac"]
    record.write_text("\n".join([json.dumps(header)] + text[1:]) + "\n")
    stripped = invoke("replay", "--verify", record)
    assert stripped.exit_code == 1 and "carries no MAC" in stripped.output


def test_write_record_signs_only_with_a_key(tmp_path: Path) -> None:
    result = GameResult(game_id="x", seed=1, seats=["a", "b"], placings=[1, 2], totals=[1, 0], failures=[{}, {}],
                        forfeited=[], end_reason="deals", deals=0, turn_capped=0, decisions=0,
                        latencies_ms=[[], []], record=[GameStart(1, 2, [["7H", "KC"]], 1)])
    header = {"record": 2, "seed": 1, "players": 2, "rules": {}}
    write_record(tmp_path / "plain.jsonl", result, header)
    write_record(tmp_path / "signed.jsonl", result, header, key=bytes(32))
    assert "mac" not in json.loads((tmp_path / "plain.jsonl").read_text().splitlines()[0])
    signed = json.loads((tmp_path / "signed.jsonl").read_text().splitlines()[0])
    assert len(signed["mac"]) == 64 and {k: v for k, v in signed.items() if k != "mac"} == header
