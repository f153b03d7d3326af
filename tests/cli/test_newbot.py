"""`arena new-bot NAME --lang LANG`: the folder it writes is a bot that passes `arena check-bot` in every
preset (the C one compiled with cc here), a README whose commands work from that folder, and a tournament
file that enters the bot against the samples and runs (arena/newbot.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.newbot import LANGUAGES, NewBotError, new_bot
from tests.conftest import ROOT
from tests.doc_examples import examples

ARENA = [sys.executable, "-m", "arena.cli"]


def run(cmd: list[str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, start_new_session=True)


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A README line as a user types it: `arena` is the command on PATH."""
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=240,
                          start_new_session=True, env=os.environ | {"COLUMNS": "120"})


@pytest.mark.slow
@pytest.mark.timeout(300)  # three check-bot runs of every preset and a tournament: ~35 s unloaded
@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_the_bot_passes_check_bot_and_its_readme_and_tournament_work(lang: str, tmp_path: Path, no_leaks):
    got = run([*ARENA, "new-bot", f"my-{lang}", "--lang", lang], tmp_path)
    assert got.returncode == 0, got.stderr
    folder = tmp_path / f"my-{lang}"
    spec = LANGUAGES[lang]
    assert sorted(p.name for p in folder.iterdir()) == sorted([spec.file, "README.md", "tournament.toml"])
    assert f"cd {folder.name}" in got.stdout and "{{" not in "".join(p.read_text() for p in folder.iterdir())
    readme = [e for e in examples(folder / "README.md", "README.md") if e.file is None]
    commands = [e.command for e in readme]
    if lang == "c":
        assert commands[0] == "cc -O2 -o bot bot.c"
    assert any(c.startswith("arena check-bot") for c in commands) and any("arena run tournament.toml" in c
                                                                          for c in commands)
    for command in commands:  # every command of its README, in order, from the bot's folder
        done = shell(command, folder)
        assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        if command.startswith("arena check-bot"):
            assert "24 passed, 0 failed" in done.stdout, done.stdout  # every preset, every check
        if command.startswith("arena play") and "--record" in command:
            entries = [json.loads(x) for x in (folder / "game.jsonl").read_text().splitlines()[1:]]
            assert sum(1 for e in entries if e["e"] == "play" and e["seat"] == 1) > 5  # the bot played
            assert not any(e["e"] in ("failure", "forfeit") for e in entries)
    assert (folder / "game.html").is_file()
    t = tomllib.loads((folder / "tournament.toml").read_text())
    mine = next(b for b in t["bots"] if b["name"] == folder.name)
    assert mine["command"] == spec.command and mine.get("transport", "zmq") == spec.transport
    got = run([*ARENA, "standings", str(folder / "results"), "--format", "json"], folder)
    assert got.returncode == 0, got.stderr
    row = next(r for r in json.loads(got.stdout)["rows"] if r["bot"] == folder.name)
    assert row["games"] == 8 and not any(row["failures"].values())  # 2 opponents x 2 deal-sets x 2 seatings
    assert (folder / "results" / "report.html").is_file()


def test_names_languages_and_folders_it_cannot_use_are_one_sentence(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in (["new-bot", "a b"], ["new-bot", "../up"], ["new-bot", "x", "--lang", "rust"], ["new-bot", "-x"]):
        got = runner.invoke(app, args)
        assert got.exit_code == 2, (args, got.output)
        assert "Traceback" not in got.output
    got = runner.invoke(app, ["new-bot", "x", "--lang", "rust"])
    assert "expected one of python, js, c" in got.output
    assert runner.invoke(app, ["new-bot", "x"]).exit_code == 0
    again = runner.invoke(app, ["new-bot", "x", "--lang", "c"])
    assert again.exit_code == 2 and "already exists" in again.output
    assert (tmp_path / "x" / "bot.py").is_file() and not (tmp_path / "x" / "bot.c").exists()
    with pytest.raises(NewBotError):
        new_bot("", "python", tmp_path)


def test_the_templates_are_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["arena"]
    templates = ROOT / "arena"
    shipped = {p for pattern in data for p in templates.glob(pattern) if p.is_file()}
    needed = {p for p in (templates / "templates" / "newbot").rglob("*") if p.is_file()}
    assert needed and needed <= shipped
