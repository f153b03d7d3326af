"""Small things a new user trips over: --version, -h, help text, where `arena play` writes, seat names,
rule overrides for `arena play`, and replaying a tournament game exactly with `arena play`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.rules.presets import PRESETS

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("variants", "meld", "simulate", "play", "replay", "run", "standings", "validate", "init", "check-bot")


def arena(*args: str, cwd: Path = ROOT, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, **kw)


def _entries(record: Path) -> list[dict]:
    """A record's entries without the referee's latencies (which differ between any two runs)."""
    lines = [json.loads(line) for line in record.read_text().splitlines()[1:]]
    return [{k: v for k, v in e.items() if k != "ms"} for e in lines]


@pytest.mark.slow
def test_version_short_help_and_no_type_placeholders():
    from arena import __version__, compiled

    engine = "compiled engine" if compiled.ENGINE == "compiled" else f"pure-Python engine: {compiled.REASON}"
    assert arena("--version").stdout.strip() == f"arena {__version__} ({engine})"
    for command in COMMANDS:
        shown = arena(command, "-h", env={**os.environ, "COLUMNS": "100"})
        assert shown.returncode == 0, (command, shown.stderr)
        assert "Usage: arena " + command in shown.stdout
        assert not re.search(r"<(bool|int|str|float|path|list\[)", shown.stdout), (command, shown.stdout)
    completion = arena("--help")
    assert "--install-completion" in completion.stdout


@pytest.mark.slow
def test_play_writes_a_new_named_folder_each_time_and_names_seats_by_hello(tmp_path):
    stdio_bot = f"stdio:{sys.executable} {ROOT / 'tests' / 'bots' / 'stdio_lines.py'} honest"
    folders = []
    for _ in range(2):
        done = arena("play", "basic", "greedy", stdio_bot, "--seed", "4", "--no-sandbox", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        said = re.search(r"writing the record and the bots' logs to (\S+)/", done.stderr)
        assert said, done.stderr
        folders.append(tmp_path / said.group(1))
        assert f"record: {said.group(1)}/record.jsonl" in done.stdout
    assert folders[0] != folders[1] and all((f / "record.jsonl").is_file() for f in folders)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena-play"]  # nothing else in the current folder
    header = json.loads((folders[0] / "record.jsonl").read_text().splitlines()[0])
    assert header["seats"] == ["greedy", "stdio-honest"]  # the stdio bot's hello name, not "python3"
    named = arena("play", "basic", "greedy", "greedy", "--seed", "4", "--name", "alice", "--name", "bob",
                  "--record", str(tmp_path / "n.jsonl"), "--quiet")
    assert named.returncode == 0, named.stderr
    assert json.loads((tmp_path / "n.jsonl").read_text().splitlines()[0])["seats"] == ["alice", "bob"]


@pytest.mark.slow
def test_play_rules_overrides_and_their_errors(tmp_path):
    done = arena("play", "basic", "greedy", "greedy", "--seed", "2", "--rules", "end=deals", "--rules", "deals=2",
                 "--rules", 'hand_size={"2" = 8, "3-6" = 6}', "--record", str(tmp_path / "r.jsonl"), "--quiet")
    assert done.returncode == 0, done.stderr
    rules = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])["rules"]
    assert rules["end"] == "deals" and rules["deals"] == 2 and rules["hand_size"]["2"] == 8
    assert "after 2 deal(s)" in done.stdout
    for bad, words in ((["--rules", "dealz=2"], "did you mean 'deals'"), (["--rules", "deals"], "KEY=VALUE"),
                       (["--name", "only-one"], "one non-empty name per seat")):
        refused = arena("play", "basic", "greedy", "greedy", *bad, "--record", str(tmp_path / "x.jsonl"))
        assert refused.returncode == 2 and words in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr


def _override(value: object) -> str:
    return json.dumps(value) if not isinstance(value, dict) else "{" + ", ".join(
        f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items()) + "}"


@pytest.mark.slow
def test_play_replays_a_tournament_game_exactly(tmp_path):
    (tmp_path / "t.toml").write_text('''
name = "again"
variant = "german"
seats = 2
deal_sets = 1
concurrency = 1
seed = 3
sandbox = false
output = "out"
[rules]
deals = 2
hand_size = 11
[[bots]]
name = "one"
command = "greedy"
[[bots]]
name = "two"
command = "greedy"
''')
    ran = arena("run", str(tmp_path / "t.toml"))
    assert ran.returncode == 0, ran.stderr
    record = sorted((tmp_path / "out" / "records").glob("*.jsonl"))[0]
    header = json.loads(record.read_text().splitlines()[0])
    preset = PRESETS["german"].to_data()
    overrides = [f"{k}={_override(v)}" for k, v in header["rules"].items() if k != "name" and preset.get(k) != v]
    assert overrides  # deals and hand_size at least
    again = tmp_path / "again.jsonl"
    args = ["play", "german", "greedy", "greedy", "--seed", str(header["seed"]), "--no-sandbox", "--quiet",
            "--record", str(again)]
    for item in overrides:
        args += ["--rules", item]
    for name in header["seats"]:
        args += ["--name", name]
    played = arena(*args)
    assert played.returncode == 0, played.stderr
    assert _entries(again) == _entries(record)
    assert json.loads(again.read_text().splitlines()[0])["rules"] == header["rules"]
