"""The start-up check (`arena validate --start`, `arena run`) and resume refusing a changed bot.

Real ``arena`` processes, real bots in their sandboxes: a missing program, a bot
that exits before its hello, bots that pass; a bot's file edited between a run and
its ``--resume``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import CLI, settle

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks"), pytest.mark.timeout(120)]

HEAD = """\
name = "start"
variant = "basic"
seats = 2
deal_sets = 1
records = false

[rules]
deals = 1

[time]
decision_ms = 10000
start_ms = 8000
"""

QUITTER = """\
import sys
print("reading config.json", flush=True)
print("quitter: config.json is missing", file=sys.stderr)
sys.exit(3)
"""


def bot(name: str, command: str, cwd: str | None = None) -> str:
    return f'\n[[bots]]\nname = "{name}"\ncommand = "{command}"\n' + (f'cwd = "{cwd}"\n' if cwd else "")


def cli(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CLI + [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=110)


def bad_file(tmp_path: Path) -> Path:
    (tmp_path / "quitter.py").write_text(QUITTER)
    file = tmp_path / "bad.toml"
    # `env` hides the script from the file check (it is not python's first word): only starting it shows it is missing
    file.write_text(HEAD + bot("ghost", "env python3 ghost_bot_typo.py") + bot("quitter", "python3 quitter.py")
                    + bot("greedy", "greedy"))
    return file


def sentences(stderr: str) -> dict[str, str]:
    return {line.split("'")[1]: line for line in stderr.splitlines() if line.startswith("bot '")}


@pytest.mark.timing  # asserts on the check's wall time
def test_validate_start_names_each_bot_that_does_not_start(tmp_path):
    file = bad_file(tmp_path)
    assert cli("validate", file).returncode == 0  # the file itself is fine
    started = time.monotonic()
    got = cli("validate", file, "--start")
    elapsed = time.monotonic() - started
    assert got.returncode == 2, got.stderr
    assert "Traceback" not in got.stderr
    said = sentences(got.stderr)
    assert set(said) == {"ghost", "quitter"}, got.stderr
    assert "exited with code 2 before saying hello" in said["ghost"]
    assert "ghost_bot_typo.py': [Errno 2] No such file or directory" in said["ghost"]
    assert "exited with code 3 before saying hello" in said["quitter"]
    assert "reading config.json | quitter: config.json is missing" in said["quitter"]
    assert got.stderr.strip().splitlines()[-1] == "error: 2 bot(s) did not start"
    assert elapsed < 30, f"the start-up check took {elapsed:.1f} s"
    assert not settle()


def test_run_stops_before_the_first_game_when_a_bot_does_not_start(tmp_path):
    file = bad_file(tmp_path)
    out = tmp_path / "out"
    got = cli("run", file, "--out", out)
    assert got.returncode == 2, got.stderr
    assert set(sentences(got.stderr)) == {"ghost", "quitter"}, got.stderr
    assert "2 bot(s) did not start" in got.stderr and "so no game was played" in got.stderr
    assert not (out / "journal.jsonl").exists() or not (out / "journal.jsonl").read_bytes()
    assert (out / "logs" / "startup" / "quitter.log").read_text().count("config.json") == 2
    # --resume runs the check too
    got = cli("run", file, "--out", out, "--resume")
    assert got.returncode == 2 and set(sentences(got.stderr)) == {"ghost", "quitter"}, got.stderr
    assert not settle()


def test_validate_start_passes_when_every_bot_says_hello(tmp_path):
    shutil.copy(ROOT / "tests" / "bots" / "broken.py", tmp_path / "honest.py")
    file = tmp_path / "good.toml"
    file.write_text(HEAD + bot("honest", "python3 honest.py honest") + bot("greedy", "greedy")
                    + bot("random", "random"))
    got = cli("validate", file, "--start")
    assert got.returncode == 0, got.stderr
    assert "ok:" in got.stdout and "every bot started and said hello" in got.stdout
    assert not settle()


def _drop_last_game(out: Path) -> None:
    lines = (out / "journal.jsonl").read_bytes().splitlines(keepends=True)
    (out / "journal.jsonl").write_bytes(b"".join(lines[:-1]))


def test_resume_refuses_a_changed_bot_unless_told_to_accept_it(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "bots" / "broken.py", folder / "bot.py")
    shutil.copy(ROOT / "tests" / "bots" / "broken.py", tmp_path / "plain.py")
    file = tmp_path / "t.toml"
    file.write_text(HEAD + bot("mine", "python3 bot.py honest", cwd="mine") + bot("plain", "python3 plain.py honest")
                    + bot("greedy", "greedy"))
    out = tmp_path / "out"
    got = cli("run", file, "--out", out, "--format", "csv")
    assert got.returncode == 0, got.stderr
    prints = [json.loads(x) for x in (out / "bots.jsonl").read_text().splitlines()]
    assert [p["bot"] for p in prints] == ["mine", "plain", "greedy"]
    assert prints[0]["what"] == "folder mine"
    assert prints[1]["what"] == "program file plain.py"
    assert prints[2]["what"].endswith("sample_bots/greedy.py")
    games = len((out / "journal.jsonl").read_bytes().splitlines())

    _drop_last_game(out)
    with open(folder / "bot.py", "a") as f:
        f.write("# tuned\n")
    with open(tmp_path / "plain.py", "a") as f:
        f.write("# tuned too\n")
    before = (out / "journal.jsonl").read_bytes()
    got = cli("run", file, "--out", out, "--resume")
    assert got.returncode == 2, got.stderr
    said = sentences(got.stderr)
    assert set(said) == {"mine", "plain"}, got.stderr
    assert "changed since this results folder was first run: its folder mine (sha256 " in said["mine"]
    assert "its program file plain.py (sha256 " in said["plain"]
    assert "--accept-changed" in got.stderr.strip().splitlines()[-1]
    assert (out / "journal.jsonl").read_bytes() == before

    got = cli("run", file, "--out", out, "--resume", "--accept-changed", "--format", "csv")
    assert got.returncode == 0, got.stderr
    warned = [line for line in got.stderr.splitlines() if line.startswith("warning: bot '")]
    assert len(warned) == 2 and all("--accept-changed" in w for w in warned), got.stderr
    assert len((out / "journal.jsonl").read_bytes().splitlines()) == games
    assert len((out / "bots.jsonl").read_text().splitlines()) == 5  # the two new fingerprints appended

    _drop_last_game(out)  # the accepted bots are now what the folder holds: no refusal
    got = cli("run", file, "--out", out, "--resume", "--format", "csv")
    assert got.returncode == 0, got.stderr
    assert "warning: bot '" not in got.stderr
    assert not settle()
