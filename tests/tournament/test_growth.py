"""A finished tournament grows: more deal-sets or more bots, and --resume plays only the new games,
with every journaled game keeping its index, its table, its deal and its seating."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from arena.tournament.growth import Generation
from arena.tournament.schedule import game_at, iter_games, total_games

KEY = bytes(range(32))
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class T:
    bot_names: tuple[str, ...]
    seats: int
    deal_sets: int = 1
    seating: str = "all"
    max_tables: int | None = None
    seed: int = 1
    twin_suits: str = "same"
    format: str = "round_robin"
    challengers: tuple[str, ...] = ()
    history: tuple[Generation, ...] = field(default_factory=tuple)


def _identity(g) -> tuple:
    return (frozenset(g.bots), g.set, g.seats)


@pytest.mark.parametrize("seats,before,after", [
    (2, (("a", "b", "c"), 1), (("a", "b", "c"), 3)),          # more deal-sets
    (2, (("a", "b", "c"), 2), (("a", "b", "c", "d"), 2)),     # one more bot
    (3, (("a", "b", "c", "d"), 1), (("a", "b", "x", "c", "d", "e"), 2)),  # both, a bot added in the middle
])
def test_grown_schedule_keeps_every_old_game_and_adds_exactly_the_new_ones(seats, before, after):
    old = T(before[0], seats, before[1])
    grown = T(after[0], seats, after[1], history=(Generation(*before),))
    fresh = T(after[0], seats, after[1])
    old_games = list(iter_games(old, KEY))
    new_games = [game_at(grown, i, KEY) for i in range(total_games(grown))]
    # Block 0 is the old schedule, game for game: index, table, seats, set, seating, deal and id.
    assert new_games[:len(old_games)] == old_games
    # Together the blocks are every game of the grown field exactly once.
    assert total_games(grown) == total_games(fresh)
    assert sorted(map(_identity, new_games), key=repr) == sorted(map(_identity, iter_games(fresh, KEY)), key=repr)
    # Duplicate play still holds in the new block: one deal seed per (table, set), shared by its seatings,
    # never one of another set; a table number is one table (the same bots) in every block.
    seeds: dict[tuple[int, int], set[int]] = {}
    for g in new_games:
        seeds.setdefault((g.table, g.set), set()).add(g.deal_seed)
    assert all(len(s) == 1 for s in seeds.values())
    assert len({next(iter(s)) for s in seeds.values()}) == len(seeds)
    tables = {}
    for g in new_games:
        assert tables.setdefault(g.table, frozenset(g.bots)) == frozenset(g.bots)
    assert len({g.game_id for g in new_games}) == len(new_games)
    assert list(iter_games(grown, KEY)) == new_games


@pytest.mark.parametrize("before,after", [
    ((("a", "b", "c"), 1), (("a", "b", "c"), 3)),          # more deal-sets: every table keeps its number
    ((("a", "b", "c"), 2), (("a", "b", "x", "c"), 3)),     # a bot added in the middle: new tables, new numbers
])
def test_a_table_keeps_its_number_when_the_tournament_grows(before, after):
    old = T(before[0], 2, before[1])
    grown = T(after[0], 2, after[1], history=(Generation(*before),))
    number = {frozenset(g.bots): g.table for g in iter_games(old, KEY)}
    games = [game_at(grown, i, KEY) for i in range(total_games(grown))]
    for g in games:  # the table of the same bots is the same table, whatever block its new deal-sets are in
        assert number.setdefault(frozenset(g.bots), g.table) == g.table, (g.bots, g.table, number)
    assert len(set(number.values())) == len(number)  # and no two tables share a number
    assert sorted(number.values()) == list(range(len(number)))  # new tables numbered after the old ones


def test_growing_twice_stacks_generations():
    g0, g1 = Generation(("a", "b"), 1), Generation(("a", "b", "c"), 1)
    twice = T(("a", "b", "c", "d"), 2, 2, history=(g0, g1))
    games = [game_at(twice, i, KEY) for i in range(total_games(twice))]
    assert games[:2] == list(iter_games(T(("a", "b"), 2, 1), KEY))
    assert total_games(twice) == total_games(T(("a", "b", "c", "d"), 2, 2))
    assert len({_identity(g) for g in games}) == len(games)


def _file(path: Path, bots: list[str], deal_sets: int, deals: int = 1) -> None:
    entries = "".join(f'[[bots]]\nname = "{b}"\ncommand = "{"random" if b.startswith("random") else "greedy"}"\n'
                      for b in bots)
    path.write_text(f'''name = "grow"
variant = "basic"
seats = 2
deal_sets = {deal_sets}
concurrency = 2
seed = 4
sandbox = false
output = "out"
[rules]
end = "deals"
deals = {deals}
{entries}''')


def _arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.mark.slow
def test_resume_plays_only_the_new_games_of_a_grown_tournament(tmp_path):
    file = tmp_path / "t.toml"
    _file(file, ["greedy", "random"], 1)
    first = _arena("run", str(file), "--progress", "none")
    assert first.returncode == 0, first.stderr
    journal = tmp_path / "out" / "journal.jsonl"
    before = journal.read_bytes()
    assert len(before.splitlines()) == 2  # one table, one set, two seatings
    _file(file, ["greedy", "random", "greedy-2"], 2)  # a bot more and a deal-set more
    grown = _arena("run", str(file), "--resume", "--progress", "none", "--format", "json")
    assert grown.returncode == 0, grown.stderr
    assert "10 game(s) played, 2 already done" in grown.stderr
    assert journal.read_bytes().startswith(before)  # the games played stay as they were
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert sorted(e["index"] for e in lines) == list(range(12))
    standings = json.loads(grown.stdout)
    assert {r["bot"]: r["games"] for r in standings["rows"]} == {"greedy": 8, "random": 8, "greedy-2": 8}
    again = _arena("run", str(file), "--resume", "--progress", "none")
    assert again.returncode == 0 and "0 game(s) played, 12 already done" in again.stderr
    verified = _arena("standings", str(tmp_path / "out"))
    assert verified.returncode == 0, verified.stderr
    # What cannot grow is refused, saying why.
    _file(file, ["greedy", "random", "greedy-2"], 2, deals=2)
    refused = _arena("run", str(file), "--resume")
    assert refused.returncode == 2 and "rules changed" in refused.stderr, refused.stderr
    _file(file, ["greedy", "greedy-2"], 2)
    refused = _arena("run", str(file), "--resume")
    assert refused.returncode == 2 and "random are no longer in the file" in refused.stderr, refused.stderr


@pytest.mark.slow
def test_a_growth_refused_by_the_start_up_check_leaves_the_folder_as_it_was(tmp_path):
    file = tmp_path / "t.toml"
    _file(file, ["greedy", "random"], 1)
    first = _arena("run", str(file), "--progress", "none")
    assert first.returncode == 0, first.stderr
    resolved = tmp_path / "out" / "tournament.toml"
    before = resolved.read_bytes()
    quitter = f'[[bots]]\nname = "quitter"\ncommand = "{sys.executable} -c \\"raise SystemExit(3)\\""\n'
    file.write_text(file.read_text() + quitter)
    refused = _arena("run", str(file), "--resume", "--progress", "none")
    assert refused.returncode == 2 and "did not start" in refused.stderr and "quitter" in refused.stderr, refused.stderr
    assert resolved.read_bytes() == before  # the growth did not stand
    _file(file, ["greedy", "random"], 1)  # the organiser takes the bot out again
    again = _arena("run", str(file), "--resume", "--progress", "none")
    assert again.returncode == 0, again.stderr
    assert "0 game(s) played, 2 already done" in again.stderr


@pytest.mark.slow
def test_raising_deal_sets_does_not_flag_a_bot_whose_folder_holds_the_file(tmp_path):
    import shutil

    shutil.copy(ROOT / "tests" / "bots" / "broken.py", tmp_path / "mybot.py")
    file = tmp_path / "t.toml"
    events = tmp_path / "events.jsonl"  # written by the arena beside the bot's program

    def write(deal_sets: int) -> None:
        file.write_text(f'name = "here"\nvariant = "basic"\nseats = 2\ndeal_sets = {deal_sets}\nsandbox = false\n'
                        f'output = "out"\n[rules]\nend = "deals"\ndeals = 1\n'
                        f'[[bots]]\nname = "mine"\ncommand = "{sys.executable} mybot.py honest"\ncwd = "."\n'
                        f'[[bots]]\nname = "greedy"\ncommand = "greedy"\n')

    write(1)
    first = _arena("run", str(file), "--progress", "none", "--events", str(events))
    assert first.returncode == 0, first.stderr
    write(2)
    grown = _arena("run", str(file), "--resume", "--progress", "none", "--events", str(events))
    assert grown.returncode == 0, grown.stderr
    assert "changed" not in grown.stderr and "2 game(s) played, 2 already done" in grown.stderr
    (tmp_path / "mybot.py").write_text((tmp_path / "mybot.py").read_text() + "\n# edited\n")
    write(3)
    edited = _arena("run", str(file), "--resume", "--progress", "none")
    assert edited.returncode == 2 and "bot 'mine' changed" in edited.stderr, edited.stderr
