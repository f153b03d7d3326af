"""Results (issue 21, class 5): results folders and records are the organiser's alone whatever the
umask, a remote seat listens on loopback unless the file says otherwise, a record's MAC binds it to
its game, no journal line carries a deal seed, and a deal suite is shared without the MAC key."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import CLI

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# 2 bots heads-up, two deal-sets: 4 short games, records kept.
FOUR_GAMES = """\
name = "private"
variant = "basic"
seats = 2
deal_sets = 2
concurrency = 1
seed = 3
{extra}
[rules]
target = 30

[[bots]]
name = "greedy"
command = "greedy"

[[bots]]
name = "greedy-2"
command = "greedy"
"""


def run(*args: str | Path, umask: int | None = None, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CLI + [str(a) for a in args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def tournament(tmp_path: Path, name: str = "t.toml", extra: str = "") -> Path:
    file = tmp_path / name
    file.write_text(FOUR_GAMES.format(extra=extra))
    return file


def lines(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "journal.jsonl").read_text().splitlines() if x.strip()]


def nobody_reads(path: Path) -> bool:
    """Whether an unprivileged local user (a real process as uid 65534) can read ``path``."""
    got = subprocess.run(NOBODY + ["cat", str(path)], capture_output=True, timeout=10)
    return got.returncode == 0


def public_folder() -> Path:
    """A folder every local user may enter (pytest's own tmp folders are 0700: they would hide everything)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-public-"))
    os.chmod(folder, 0o755)
    return folder


@pytest.fixture(scope="module")
def played() -> Iterator[Path]:
    """A finished run of FOUR_GAMES under umask 0 (every file would be world-writable if made by default)."""
    base = public_folder()
    try:
        out = base / "out"
        got = run("run", tournament(base), "--out", out, "--format", "csv", umask=0)
        assert got.returncode == 0, got.stderr
        yield out
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def public() -> Iterator[Path]:
    base = public_folder()
    yield base
    shutil.rmtree(base, ignore_errors=True)


# -- 3. private results ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to act as another user")
def test_a_results_folder_is_the_organisers_alone_whatever_the_umask(played: Path) -> None:
    assert mode(played) == 0o700
    for name in ("journal.jsonl", "secret.key"):
        assert mode(played / name) == 0o600, name
    records = sorted((played / "records").glob("*.jsonl"))
    assert len(records) == 4 and all(mode(r) == 0o600 for r in records)
    # another local user, as a real process: nothing inside can be read, not even with the folder's files world-readable
    for path in [played / "journal.jsonl", played / "secret.key", records[0], *sorted((played / "logs").glob("*"))[:1]]:
        os.chmod(path, 0o644) if path.is_file() else None
        assert not nobody_reads(path), path


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to act as another user")
def test_play_writes_a_private_record_and_logs_whatever_the_umask(public: Path) -> None:
    tmp_path = public
    record = tmp_path / "g.jsonl"
    got = run("play", "basic", "greedy", "greedy", "--seed", "3", "--record", record, "--quiet", umask=0)
    assert got.returncode == 0, got.stderr
    assert mode(record) == 0o600 and mode(tmp_path / "logs") == 0o700
    assert not nobody_reads(record)
    control = tmp_path / "control.txt"  # the probe is not vacuous: a world-readable file here is read
    control.write_text("x")
    os.chmod(control, 0o644)
    assert nobody_reads(control)
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    got = subprocess.run(CLI + ["play", "basic", "greedy", "greedy", "--seed", "3", "--quiet"], cwd=home,
                         capture_output=True, text=True, timeout=90, preexec_fn=lambda: os.umask(0),
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 0, got.stderr
    [folder] = (home / "arena-play").iterdir()
    assert mode(folder) == 0o700 and mode(folder / "record.jsonl") == 0o600


# -- 6. loopback by default -----------------------------------------------------------------------

def test_a_tournaments_remote_seat_listens_on_loopback_unless_the_file_says_otherwise(tmp_path: Path) -> None:
    from arena.tournament.config import validate_text

    text = FOUR_GAMES.format(extra="") + '\n[[bots]]\nname = "alice"\nremote = true\n'
    t, errors = validate_text(text, base_dir=tmp_path)
    assert t is not None, errors
    assert t.executor.listen.startswith("127.0.0.1:")
    t, errors = validate_text(text + '\n[executor]\nlisten = "0.0.0.0:6000"\n', base_dir=tmp_path)
    assert t is not None and t.executor.listen == "0.0.0.0:6000", errors


# -- 5. a record's MAC binds it to its game -------------------------------------------------------

@pytest.mark.slow
def test_two_records_swapped_between_games_do_not_verify(played: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from arena.cli import app

    def verify(record: Path) -> tuple[int, str]:
        got = CliRunner().invoke(app, ["replay", "--verify", str(record)])
        return got.exit_code, got.output

    out = tmp_path / "copy"
    shutil.copytree(played, out)
    a, b = out / "records" / "g000000.jsonl", out / "records" / "g000001.jsonl"
    assert verify(a)[0] == 0 and verify(a)[1].rstrip().endswith("MAC verified")
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    for record, index in ((a, 0), (b, 1)):
        code, text = verify(record)
        assert code == 1 and f"not the record of game {index}" in text, text
    b.write_bytes(data_b)  # one record copied over another is refused the same way
    assert verify(a)[0] == 1 and verify(b)[0] == 0


# -- 4. no deal seed in the journal ---------------------------------------------------------------

def record_deals(folder: Path) -> list[tuple[int, list]]:
    """(seed, first deal's hands) of every record of a results folder, by game index."""
    out = []
    for record in sorted((folder / "records").glob("g*.jsonl")):
        rows = [json.loads(x) for x in record.read_text().splitlines() if x.strip()]
        deal = next(r for r in rows[1:] if r.get("e") == "deal_start")
        out.append((rows[0]["seed"], deal["hands"]))
    return out


@pytest.mark.slow
def test_journal_lines_carry_no_deal_seed_and_the_organisers_tools_derive_it(played: Path) -> None:
    from arena.tournament.journal import read, with_seeds

    raw = (played / "journal.jsonl").read_text()
    entries = lines(played)
    assert len(entries) == 4 and all(e["deal_seed"] is None for e in entries)
    seeds = [seed for seed, _ in record_deals(played)]
    assert not any(str(s) in raw for s in seeds)
    assert [e.deal_seed for e in with_seeds(played, read(played).entries)] == seeds


# -- 7. a deal suite shared without the MAC key ---------------------------------------------------

@pytest.mark.slow
def test_two_folders_with_one_deal_suite_deal_the_same_cards_and_sign_their_own(played: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite" / "deals.key"
    suite.parent.mkdir()
    file = tournament(tmp_path, extra=f'deals = "{suite}"')
    for out in ("a", "b"):
        got = run("run", file, "--out", tmp_path / out, "--format", "csv")
        assert got.returncode == 0, got.stderr
    assert mode(suite) == 0o600 and len(suite.read_bytes()) == 32  # made by the first run, reused by the second
    a, b = tmp_path / "a", tmp_path / "b"
    assert (a / "secret.key").read_bytes() != (b / "secret.key").read_bytes()
    assert record_deals(a) == record_deals(b)  # the same cards, seat for seat
    assert record_deals(a) != record_deals(played)  # the same tournament without the suite: other cards
    assert {e["game_id"] for e in lines(a)}.isdisjoint(e["game_id"] for e in lines(b))
    assert suite.read_bytes().hex() not in (a / "tournament.toml").read_text()
    # a folder is never resumed with another suite
    suite.write_bytes(os.urandom(32))
    got = run("run", file, "--out", a, "--resume", "--format", "csv")
    assert got.returncode == 2 and "is not the deal suite this results folder was dealt with" in got.stderr, got.stderr
    assert "Traceback" not in got.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
def test_match_with_one_deal_suite_deals_the_same_cards_in_two_folders(tmp_path: Path) -> None:
    suite = tmp_path / "deals.key"
    for out in ("a", "b", "c"):
        shared: list[str | Path] = ["--deals", suite] if out != "c" else []
        got = run("match", "greedy", "random", "--variant", "basic", "--max-pairs", "2", "--out", tmp_path / out,
                  *shared)
        assert got.returncode in (0, 1), got.stderr
    assert mode(suite) == 0o600
    assert record_deals(tmp_path / "a") == record_deals(tmp_path / "b") != record_deals(tmp_path / "c")
    assert len(record_deals(tmp_path / "a")) == 4
