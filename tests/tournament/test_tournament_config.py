"""Tournament TOML files: defaults, resolved round trip, and one clear error per problem."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from arena.rules.options import resolve
from arena.tournament.config import (
    BUNDLED_BOTS,
    ConfigError,
    ConfigFileError,
    FailurePolicy,
    TimeControl,
    Tournament,
    load,
    read_resolved,
    starter_toml,
    validate_file,
    write_resolved,
)

GOOD = """\
name = "club"
variant = "basic"
seats = 3

[[bots]]
name = "a"
command = "random"

[[bots]]
name = "b"
command = "greedy"

[[bots]]
name = "c"
command = "random"
"""


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def one_error(tmp_path: Path, text: str) -> ConfigError:
    t, errors = validate_file(write(tmp_path, text))
    assert t is None
    assert len(errors) == 1, [str(e) for e in errors]
    return errors[0]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def test_minimal_file_gets_every_default(tmp_path: Path) -> None:
    t, errors = validate_file(write(tmp_path, GOOD))
    assert errors == []
    assert isinstance(t, Tournament)
    assert t.bot_names == ("a", "b", "c")
    assert t.rules == resolve("basic")
    assert (t.seats, t.deal_sets, t.seating, t.max_tables) == (3, 2, "all", None)
    assert t.time == TimeControl(10000, 1000, 0, 0, 50, clock="cpu")  # tournaments charge CPU time by default
    assert t.failures == FailurePolicy()
    assert t.failures.policy("illegal") == "retry"
    assert t.failures.policy("crash") == "forfeit"
    assert t.failures.strikes == 3
    assert (t.concurrency, t.seed, t.output, t.ladder_points) == (1, 1, "results/club", False)
    assert Path(t.base_dir) == tmp_path.resolve()
    assert t.output_dir == tmp_path.resolve() / "results" / "club"
    assert t.bots[0].transport == "zmq" and t.bots[0].is_bundled()


def test_a_file_without_a_key_gets_the_value_types_default(tmp_path: Path) -> None:
    """The defaults are written once, in Tournament, BotSpec and Executor: a file that leaves a key out
    gets the field's default, and every field a file may set is a key the checker accepts."""
    from dataclasses import MISSING, fields

    from arena.settings import BotSpec
    from arena.tournament.config import TOP_KEYS, Executor
    from arena.tournament.config_bots import BOT_KEYS
    from arena.tournament.config_executor import EXECUTOR_KEYS

    t, errors = validate_file(write(tmp_path, GOOD))
    assert errors == [] and t is not None
    given = {"name", "variant", "seats", "bots", "output", "base_dir", "rules"}  # the file's or derived from it
    for f in fields(Tournament):
        if f.name in given or f.name in ("deal_key", "source", "arena_files"):
            continue
        factory = f.default_factory
        default = f.default if f.default is not MISSING else factory() if callable(factory) else None
        assert getattr(t, f.name) == default, f.name
        assert f.name in TOP_KEYS, f.name
    assert t.bots[0].transport == BotSpec.transport and t.bots[0].limits == BotSpec.limits
    assert t.executor == Executor()
    assert set(TOP_KEYS) == {f.name for f in fields(Tournament)} - {"deal_key", "source", "arena_files"} | {"deals_id"}
    assert set(BOT_KEYS) >= {f.name for f in fields(BotSpec)}
    assert set(EXECUTOR_KEYS) == {f.name for f in fields(Executor)} - {"upload"}
    for key in set(TOP_KEYS) - {"name", "variant", "seats", "bots"}:  # each is read by name, not refused as unknown
        _, errs = validate_file(write(tmp_path, f"{key} = 0.5\n" + GOOD))
        assert errs and all(e.key.startswith(key) and "unknown key" not in e.message for e in errs), (key, errs)


def test_seating_defaults_to_williams_above_four_seats(tmp_path: Path) -> None:
    bots = "".join(f'\n[[bots]]\nname = "b{i}"\ncommand = "random"\n' for i in range(5))
    t, errors = validate_file(write(tmp_path, 'name = "x"\nvariant = "basic"\nseats = 5\n' + bots))
    assert errors == [] and t is not None
    assert t.seating == "williams"


def test_full_file_and_resolved_round_trip(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "mybot.sh").write_text("#!/bin/sh\n")
    (tmp_path / "bots" / "mybot.sh").chmod(0o755)
    text = GOOD + """
[[bots]]
name = "mine"
command = "./mybot.sh --fast"
cwd = "bots"
transport = "stdio"
env = { LEVEL = "3" }
limits = { memory_mb = 256, cpu_seconds = 30 }

[rules]
target = 50

[time]
decision_ms = 200
bank_ms = 5000

[failures]
illegal = "forfeit"
strikes = 1
"""
    text = text.replace('seats = 3', 'seats = 3\nmax_tables = 2\nseating = "rotate"\nladder_points = true\nseed = 9')
    t, errors = validate_file(write(tmp_path, text))
    assert errors == [], [str(e) for e in errors]
    assert t is not None
    assert t.rules.target == 50 and t.rules == resolve("basic", {"target": 50})
    mine = t.bot("mine")
    assert (mine.cwd, mine.transport, mine.env, mine.limits.memory_mb, mine.limits.processes) == (
        "bots", "stdio", {"LEVEL": "3"}, 256, None)
    assert t.time.decision_ms == 200 and t.time.start_ms == 10000
    assert t.failures.illegal == "forfeit" and t.failures.strikes == 1
    assert (t.max_tables, t.seating, t.ladder_points, t.seed) == (2, "rotate", True, 9)

    data = t.to_toml_data()
    assert data["rules"] == t.rules.to_data()       # every option, fully resolved
    assert set(resolve("basic").to_data()) <= set(data["rules"])
    out = tmp_path / "results"
    path = write_resolved(t, out)
    assert path == out / "tournament.toml"
    again, errors = validate_file(path)
    assert errors == []
    assert again == t
    assert read_resolved(out) == t
    assert tomllib.loads(path.read_text())["failures"]["timeout"] == "default"


def test_starter_file_validates(tmp_path: Path) -> None:
    text = starter_toml()
    assert text.startswith("#")
    t, errors = validate_file(write(tmp_path, text))
    assert errors == []
    assert t is not None and set(t.bot_names) <= BUNDLED_BOTS


def test_unknown_key_has_did_you_mean_and_line(tmp_path: Path) -> None:
    text = GOOD.replace('seats = 3', 'seats = 3\nseeed = 4')
    e = one_error(tmp_path, text)
    assert e.key == "seeed"
    assert "did you mean 'seed'" in e.message
    assert e.line == line_of(text, "seeed")
    assert f":{e.line}: seeed:" in str(e)


def test_unknown_key_in_a_bot_points_at_that_bot(tmp_path: Path) -> None:
    text = GOOD + '\n[[bots]]\nname = "d"\ncommand = "random"\ntrasport = "zmq"\n'
    e = one_error(tmp_path, text)
    assert e.key == "bots[3].trasport"
    assert "did you mean 'transport'" in e.message
    assert e.line == line_of(text, "trasport")


def test_unknown_rule_option(tmp_path: Path) -> None:
    text = GOOD + "\n[rules]\ntargt = 50\n"
    e = one_error(tmp_path, text)
    assert e.key == "rules.targt"
    assert "did you mean 'target'" in e.message
    assert e.line == line_of(text, "targt")


def test_bad_rule_value(tmp_path: Path) -> None:
    text = GOOD + '\n[rules]\nace = "sideways"\n'
    e = one_error(tmp_path, text)
    assert e.key == "rules.ace" and "sideways" in e.message
    assert e.line == line_of(text, "sideways")


def test_wrong_type(tmp_path: Path) -> None:
    text = GOOD.replace('seats = 3', 'seats = 3\ndeal_sets = "two"')
    e = one_error(tmp_path, text)
    assert e.key == "deal_sets"
    assert "whole number" in e.message and "'two'" in e.message
    assert e.line == line_of(text, "deal_sets")


def test_wrong_type_in_time_table(tmp_path: Path) -> None:
    text = GOOD + "\n[time]\ndecision_ms = 1.5\n"
    e = one_error(tmp_path, text)
    assert e.key == "time.decision_ms" and e.line == line_of(text, "decision_ms")


def test_missing_bot_command(tmp_path: Path) -> None:
    text = GOOD + '\n[[bots]]\nname = "d"\n'
    e = one_error(tmp_path, text)
    assert e.key == "bots[3].command"
    assert "missing" in e.message
    assert e.line == len(GOOD.splitlines()) + 2  # the [[bots]] header of that bot


def test_bot_command_that_does_not_exist(tmp_path: Path) -> None:
    text = GOOD + '\n[[bots]]\nname = "d"\ncommand = "./no-such-bot --level 2"\n'
    e = one_error(tmp_path, text)
    assert e.key == "bots[3].command"
    assert "'./no-such-bot'" in e.message
    assert e.line == line_of(text, "no-such-bot")
    text2 = GOOD + '\n[[bots]]\nname = "d"\ncommand = "definitely-not-a-program-xyz"\n'
    assert one_error(tmp_path, text2).key == "bots[3].command"


def test_command_on_path_or_relative_file_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_text("")
    (tmp_path / "b.py").chmod(0o755)
    text = GOOD + '\n[[bots]]\nname = "d"\ncommand = "python3 b.py"\n\n[[bots]]\nname = "e"\ncommand = "./b.py"\n'
    t, errors = validate_file(write(tmp_path, text))
    assert errors == [] and t is not None


def test_a_bare_file_name_is_looked_up_on_path_as_the_launcher_does(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_text("")
    (tmp_path / "b.py").chmod(0o755)
    e = one_error(tmp_path, GOOD + '\n[[bots]]\nname = "d"\ncommand = "b.py"\n')
    assert e.key == "bots[3].command" and "not on PATH" in e.message and "write './b.py'" in e.message


def test_table_bigger_than_the_preset_allows(tmp_path: Path) -> None:
    bots = "".join(f'\n[[bots]]\nname = "b{i}"\ncommand = "random"\n' for i in range(7))
    text = 'name = "x"\nvariant = "basic"\nseats = 7\n' + bots
    e = one_error(tmp_path, text)
    assert e.key == "seats" and "2 to 6" in e.message and e.line == 3


def test_more_seats_than_bots(tmp_path: Path) -> None:
    e = one_error(tmp_path, GOOD.replace("seats = 3", "seats = 4"))
    assert e.key == "seats" and "at most as many seats as bots" in e.message


def test_duplicate_bot_names(tmp_path: Path) -> None:
    text = GOOD + '\n[[bots]]\nname = "b"\ncommand = "random"\n'
    e = one_error(tmp_path, text)
    assert e.key == "bots[3].name" and "unique" in e.message


def test_unknown_variant(tmp_path: Path) -> None:
    e = one_error(tmp_path, GOOD.replace('"basic"', '"germn"'))
    assert e.key == "variant" and "did you mean 'german'" in e.message


def test_bad_failure_policy(tmp_path: Path) -> None:
    e = one_error(tmp_path, GOOD + '\n[failures]\ntimeout = "ignore"\n')
    assert e.key == "failures.timeout" and "retry, default, forfeit" in e.message


def test_toml_syntax_error_is_one_error_with_its_line(tmp_path: Path) -> None:
    text = GOOD.replace('seats = 3', 'seats = 3\nseed = = 2')
    e = one_error(tmp_path, text)
    assert e.line == line_of(text, "seed = = 2")
    assert "not valid TOML" in e.message


def test_every_error_is_reported_at_once(tmp_path: Path) -> None:
    text = """\
name = "x"
variant = "basic"
seats = 9
concurency = 2
deal_sets = 0

[rules]
targt = 1

[[bots]]
name = "a"
command = "random"

[[bots]]
name = "b"
"""
    t, errors = validate_file(write(tmp_path, text))
    assert t is None
    keys = {e.key for e in errors}
    assert keys == {"seats", "concurency", "deal_sets", "rules.targt", "bots[1].command"}
    assert all(e.line is not None for e in errors)
    assert [e.line for e in errors] == sorted(e.line for e in errors)  # type: ignore[type-var]
    with pytest.raises(ConfigFileError) as info:
        load(write(tmp_path, text))
    assert len(info.value.errors) == len(errors)


def test_unreadable_file(tmp_path: Path) -> None:
    t, errors = validate_file(tmp_path / "missing.toml")
    assert t is None and len(errors) == 1 and "cannot read" in errors[0].message


# -- format: round robin or gauntlet ---------------------------------------------------------------

GAUNTLET = GOOD.replace("seats = 3", 'seats = 2\nformat = "gauntlet"\nchallengers = ["c"]')


def test_gauntlet_file_and_its_resolved_copy(tmp_path: Path) -> None:
    t, errors = validate_file(write(tmp_path, GAUNTLET))
    assert errors == [] and t is not None
    assert (t.format, t.challengers) == ("gauntlet", ("c",))
    data = t.to_toml_data()
    assert data["format"] == "gauntlet" and data["challengers"] == ["c"]
    out = tmp_path / "results"
    write_resolved(t, out)
    assert read_resolved(out) == t  # a resumed run plays the same gauntlet
    # challengers are kept in file order, however the list names them
    text = GAUNTLET.replace('["c"]', '["c", "a"]')
    two, errors = validate_file(write(tmp_path, text))
    assert errors == [] and two is not None and two.challengers == ("a", "c")


def test_round_robin_is_the_default_and_is_written_out(tmp_path: Path) -> None:
    t, errors = validate_file(write(tmp_path, GOOD))
    assert errors == [] and t is not None
    assert (t.format, t.challengers) == ("round_robin", ())
    data = t.to_toml_data()
    assert data["format"] == "round_robin" and "challengers" not in data


@pytest.mark.parametrize("change,key,words", [
    ('format = "gauntlet"', "format", "a gauntlet needs challengers"),
    ('format = "gantlet"\nchallengers = ["c"]', "format", "did you mean 'gauntlet'?"),
    ('format = "gauntlet"\nchallengers = []', "challengers", "expected a non-empty array of bot names"),
    ('format = "gauntlet"\nchallengers = "c"', "challengers", "expected a non-empty array of bot names, got 'c'"),
    ('format = "gauntlet"\nchallengers = ["cc"]', "challengers[0]", "did you mean 'c'?"),
    ('format = "gauntlet"\nchallengers = ["c", "c"]', "challengers[1]", "'c' is named twice"),
    ('format = "gauntlet"\nchallengers = ["a", "b"]', "challengers", "needs 2 bot(s) that are not challengers"),
    ('challengers = ["c"]', "challengers", 'only a gauntlet has challengers'),
])
def test_gauntlet_problems_are_one_sentence_each(tmp_path: Path, change: str, key: str, words: str) -> None:
    text = GOOD.replace("seats = 3", "seats = 3\n" + change)
    e = one_error(tmp_path, text)
    assert e.key == key and words in e.message, str(e)
    assert e.line == line_of(text, key.split("[")[0] + " =")


def test_starter_file_mentions_the_formats() -> None:
    text = starter_toml()
    assert 'format = "round_robin"' in text and "gauntlet" in text and "challengers" in text
