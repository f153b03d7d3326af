"""What the ladder's end-to-end tests share: the ``arena ladder`` command line, a small ladder, a
test bot submitted in this process, and the games every batch played."""

from __future__ import annotations

import http.client
import shutil
import subprocess
from pathlib import Path

from arena.ladder import layout
from arena.tournament.journal import read
from tests import helpers
from tests.helpers import ROOT

CLI = [*helpers.CLI, "ladder"]
LADDER_BOT = ROOT / "tests" / "bots" / "ladder_bot.py"


def cli(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return helpers.cli("ladder", *args, timeout=timeout)


def make_ladder(tmp_path: Path, check: bool = False, edits: dict[str, str] | None = None) -> Path:
    root = tmp_path / "lad"
    got = cli("init", root, "--variant", "basic", "--seats", "2", "--name", "cup")
    assert got.returncode == 0, got.stderr
    text = (root / layout.LADDER_FILE).read_text()
    text = text.replace("deal_sets = 2", "deal_sets = 1").replace("new_games = 30", "new_games = 4")
    if not check:
        text = text.replace("check = true", "check = false")  # the door's check has its own test
    for old, new in (edits or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    # the ladder bot never melds: to 100 points a game is ~4,000 decisions; to 10, two deals (~400)
    (root / layout.LADDER_FILE).write_text(text + "\n[rules]\ntarget = 10\n")
    return root


def bot(tmp_path: Path, mode: str, name: str | None = None) -> Path:
    folder = tmp_path / "src" / (name or mode)
    folder.mkdir(parents=True)
    shutil.copy(LADDER_BOT, folder / "bot.py")
    (folder / "bot.toml").write_text(f'command = "python3 bot.py {mode}"\n')
    return folder


def enter(root: Path, tmp_path: Path, name: str, mode: str = "honest") -> None:
    """Submit in this process (the command's own output is the door test's): no interpreter to start."""
    from arena.ladder.submit import submit

    out = submit(root, bot(tmp_path, mode, name), name)
    assert out.accepted, out


def all_games(root: Path) -> list[tuple[str, int]]:
    return sorted((f.name, e.index) for f in layout.batch_dirs(root) for e in read(f).entries)


def raw(base: str, path: str, method: str = "GET", body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request exactly as written (no client-side normalising of the path)."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()
