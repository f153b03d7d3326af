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
