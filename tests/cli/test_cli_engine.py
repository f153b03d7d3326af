"""The engine's command line: ``arena variants``, ``arena meld``, ``arena simulate``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.rules.options import DESCRIPTIONS, OPTION_NAMES
from arena.rules.presets import PRESETS

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_meld_german_run_with_joker_json() -> None:
    res = run("meld", "german", "7H", "8H", "JK", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["valid"] is True and data["kind"] == "run"
    assert data["wilds"] == ["9H"] and data["stands_for"] == [None, None, "9H"]
    assert data["opening_value"] == 24 and data["cards"] == ["7H", "8H", "JK"]


def test_meld_german_two_jokers_is_invalid_and_says_why() -> None:
    res = run("meld", "german", "7H", "JK", "JK")
    assert res.exit_code == 1
    assert "invalid" in res.stdout and "max_wilds_per_meld" in res.stdout and "RULES 4.3" in res.stdout


def test_meld_invalid_json() -> None:
    res = run("meld", "czech", "7C", "7C", "7D", "--json")
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert data["valid"] is False and "set_distinct_suits" in data["reason"]


def test_meld_text_output_names_the_wilds() -> None:
    res = run("meld", "parlett", "3h", "4h", "jk", "6h")
    assert res.exit_code == 0
    assert "valid run" in res.stdout and "JK = 5H" in res.stdout


def test_meld_star_marks_only_wild_rank_cards() -> None:
    # no preset has a wild rank, so a star on a natural card is refused with the rule
    res = run("meld", "basic", "5H*", "6H", "7H", "--json")
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert data["valid"] is False and "RULES 4.3" in data["reason"]
    assert json.loads(run("meld", "basic", "5H", "6H", "7H", "--json").stdout)["opening_value"] == 18


def test_meld_bad_card_is_an_input_error() -> None:
    res = run("meld", "german", "7H", "8X", "JK")
    assert res.exit_code == 2
    assert "RULES 1" in res.stderr and "Traceback" not in res.output


def test_meld_unknown_variant() -> None:
    res = run("meld", "germn", "7H", "8H", "9H")
    assert res.exit_code == 2 and "did you mean 'german'" in res.stderr


def test_variants_json_lists_every_preset() -> None:
    res = run("variants", "--json")
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert list(data) == [*PRESETS, "descriptions"]
    assert data["german"]["initial_meld"] == 30 and data["czech"]["end"] == "elimination"
    assert data["descriptions"] == DESCRIPTIONS


def test_variants_table() -> None:
    res = run("variants")
    assert res.exit_code == 0 and "wrotham" in res.stdout and "meld_all_at_once_deals" in res.stdout


def test_variants_table_shows_every_option_and_what_it_means() -> None:
    # On a terminal wide enough that no description wraps (the table fits narrower ones by wrapping).
    out = runner.invoke(app, ["variants"], env={"COLUMNS": "400"}).stdout
    for opt in OPTION_NAMES:  # also options every preset leaves unset (wild_rank) or basic does (deals)
        assert opt in out, opt
    assert DESCRIPTIONS["max_wilds_per_meld"] in out and DESCRIPTIONS["go_out"] in out


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_simulate_czech_four_players_is_deterministic_and_ends_by_elimination() -> None:
    args = ("simulate", "czech", "--players", "4", "--games", "50", "--seed", "1")
    first, second = run(*args), run(*args)
    assert first.exit_code == 0 and second.exit_code == 0, first.output
    assert first.stdout == second.stdout
    lines = first.stdout.strip().splitlines()
    games = [line for line in lines if line.startswith("game ")]
    assert len(games) == 50
    assert all(" end elimination " in line for line in games)
    assert "ends {'elimination': 50}" in lines[-1]
    assert "decisions/s" in first.stderr


def test_simulate_json_rows() -> None:
    res = run("simulate", "basic", "--games", "3", "--seed", "7", "--json", "--policy", "greedy", "--policy", "random")
    assert res.exit_code == 0
    rows = [json.loads(line) for line in res.stdout.strip().splitlines()]
    assert [r["seed"] for r in rows[:3]] == [7, 8, 9]
    assert rows[-1]["summary"]["games"] == 3 and rows[-1]["summary"]["policies"] == ["greedy", "random"]
    for r in rows[:3]:
        assert sorted(r["placings"]) in ([1, 2], [1, 1])


@pytest.mark.parametrize("args, needle", [
    (("simulate", "czech", "--players", "7"), "--players"),
    (("simulate", "basic", "--games", "0"), "--games"),
    (("simulate", "basic", "--policy", "clever"), "--policy"),
])
def test_simulate_bad_input(args: tuple[str, ...], needle: str) -> None:
    res = run(*args)
    assert res.exit_code == 2 and needle in res.stderr
