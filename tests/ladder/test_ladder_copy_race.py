"""The ladder's door copies a submission as root: a folder of it swapped for a link between the walk
and the copy (the entrant's race, made deterministic here) must not make it copy the link's target."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena.ladder import submit
from arena.ladder.layout import LadderError


@pytest.mark.parametrize("depth", [1, 2])
def test_a_folder_swapped_for_a_link_after_the_walk_is_refused_not_copied(tmp_path: Path, depth: int) -> None:
    secret = tmp_path / "rootonly" / "deep" / "secret"
    secret.parent.mkdir(parents=True)
    secret.write_text("the organiser's")
    secret.chmod(0o600)
    src = tmp_path / "entrant"
    inner = src / "sub" / "deep" if depth == 2 else src / "sub"
    (src / "sub" / "deep").mkdir(parents=True)
    (src / "sub" / "deep" / "secret").write_text("decoy")
    (src / "bot.toml").write_text('command = "python3 bot.py"\n')
    items = submit._walk(src, 1000, 1 << 30)
    shutil.rmtree(inner)  # the entrant's swap, in the window between the walk and the copy
    os.symlink(secret.parent if depth == 2 else secret.parent.parent, inner)
    dest = tmp_path / "dest"
    with pytest.raises(LadderError, match="changed to a link"):
        submit._copy(src, items, dest)
    copied = dest / "sub" / "deep" / "secret"
    assert not copied.exists() or copied.read_text() != "the organiser's"
    # an unchanged submission is copied whole
    shutil.rmtree(src)
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "a.py").write_text("print(1)")
    items = submit._walk(src, 1000, 1 << 30)
    submit._copy(src, items, tmp_path / "ok")
    assert (tmp_path / "ok" / "sub" / "a.py").read_text() == "print(1)"
