"""bench/league_real.py's league file: its sandboxed entrants' folder lies in the tournament's folder and holds
what the eps bot imports, readable by the seats' users, and the file validates (no bot is started)."""

from __future__ import annotations

import stat

import pytest

from arena.tournament.config import validate_file
from bench import league_real


@pytest.mark.slow  # copies and compiles the engine's packages (about 2 MB)
def test_the_real_league_file_validates_with_its_entrants_folder(tmp_path) -> None:
    league_real.bot_folder(tmp_path / "bot")
    file = tmp_path / "league.toml"
    file.write_text(league_real.tournament(8, 16, 2, 0.6, 2, True))
    t, errors = validate_file(file, check_output=False)
    assert errors == [] and t is not None
    assert (t.format, t.top, t.games, t.sandbox) == ("adaptive", 2, 16, True)
    eps = [float(b.env["EPS"]) for b in t.bots]
    assert eps == sorted(eps) and eps[0] == 0.0 and abs(eps[-1] - 0.6) < 1e-9
    folder = tmp_path / "bot"
    for part in ("league_eps_bot.py", "arena/policies.py", "protocol/client.py", "sample_bots/policy_bot.py"):
        mode = (folder / part).stat().st_mode
        assert mode & stat.S_IROTH, part  # the seats run as other users
    assert list(folder.rglob("*.pyc"))  # compiled: the sandbox's read-only view caches nothing
