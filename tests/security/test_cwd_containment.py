"""What a tournament's paths may name: a bot's ``cwd`` (what its sandbox shows), the results folder
(``name``/``output``): never the tournament's own folder or file, another bot's, or the host's."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.usefixtures("no_leaks")]

HEAD = 'variant = "basic"\nseats = 2\ndeal_sets = 1\n[rules]\ndeals = 1\n'


def arena(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def errors_by_key(stderr: str) -> dict[str, str]:
    out = {}
    for line in stderr.splitlines():
        parts = line.split(": ", 2)
        if len(parts) == 3:
            out[parts[1]] = parts[2]
    return out


BUNDLED = '[[bots]]\nname = "a"\ncommand = "random"\n[[bots]]\nname = "b"\ncommand = "random"\n'


@pytest.mark.parametrize(("top", "key", "words"), [
    ('name = ".."\n', "name", "does not start with '.'"),
    ('name = "."\n', "name", "does not start with '.'"),
    ('name = "t"\noutput = "."\n', "output", "is the tournament's folder"),
    ('name = "t"\noutput = ".."\n', "output", "holds the tournament's folder"),
])
def test_a_results_folder_that_is_or_holds_the_tournaments_own_is_refused_and_nothing_is_touched(
        tmp_path: Path, top: str, key: str, words: str) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    text = top + HEAD + BUNDLED
    (folder / "t.toml").write_text(text)
    mode = stat.S_IMODE(folder.stat().st_mode)
    done = arena("run", "t.toml", cwd=folder)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert words in errors_by_key(done.stderr).get(key, ""), done.stderr
    assert (folder / "t.toml").read_text() == text and stat.S_IMODE(folder.stat().st_mode) == mode
    assert sorted(os.listdir(folder)) == ["t.toml"]


def test_validate_refuses_a_cwd_that_shows_the_bot_what_is_not_its_own_with_its_key(tmp_path: Path) -> None:
    """``cwd = "."`` (the tournament file, every entrant's folder), an absolute host folder, a link on
    the way, a dot-named folder, a folder holding another bot's program or the results: each refused
    with its key, nothing run; two bots sharing one folder stay allowed (SECURITY.md)."""
    for sub in ("bots/att", "bots/victim", "shared", ".hidden", "elsewhere"):
        (tmp_path / sub).mkdir(parents=True)
        (tmp_path / sub / "bot.py").write_text("print('hi')\n")
    (tmp_path / "bots" / "victim.py").write_text("print('victim')\n")
    (tmp_path / "bots" / "bot.py").write_text("print(1)\n")
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    cases = {".": "not that folder itself", str(ROOT): "absolute path", "link": "symbolic link",
             ".hidden": "do not start with '.'", "bots": "holds the program of bots[1]",
             "out": "the results folder"}
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "bot.py").write_text("print('hi')\n")
    for cwd, words in cases.items():
        text = (f'name = "t"\noutput = "out"\n{HEAD}[[bots]]\nname = "att"\ncommand = "python3 bot.py"\n'
                f'cwd = "{cwd}"\n[[bots]]\nname = "victim"\ncommand = "python3 bots/victim.py"\n')
        (tmp_path / "t.toml").write_text(text)
        done = arena("validate", "t.toml", cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert words in errors_by_key(done.stderr).get("bots[0].cwd", ""), (cwd, done.stderr)
    shared = (f'name = "t"\noutput = "out"\n{HEAD}[[bots]]\nname = "a"\ncommand = "python3 bot.py"\n'
              'cwd = "shared"\n[[bots]]\nname = "b"\ncommand = "python3 bot.py"\ncwd = "shared"\n')
    (tmp_path / "t.toml").write_text(shared)
    done = arena("validate", "t.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
