"""The CLI's fixed sets (arena/cli/choices.py) are the sets their owners define, and a value typer
refuses (not one of the set, out of range, not a number) is one sentence naming the option."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.cli import choices as c


@pytest.mark.slow  # imports the standings, the match runner and the policies: seconds
def test_each_set_is_its_owners() -> None:
    from arena.newbot import LANGUAGES
    from arena.policies import POLICIES
    from arena.settings import CLOCKS, FAILURE_KINDS
    from arena.tournament.match import TESTS
    from arena.tournament.progress import MODES
    from arena.tournament.standings_text import FORMATS

    owners: list[tuple[Any, tuple[str, ...]]] = [
        (c.TableFormat, FORMATS), (c.Clock, CLOCKS), (c.FailureKind, FAILURE_KINDS), (c.ProgressMode, MODES),
        (c.MatchTest, TESTS), (c.SelfPlayPolicy, tuple(POLICIES)), (c.Language, tuple(LANGUAGES))]
    for kind, owner in owners:
        assert tuple(m.value for m in kind) == tuple(owner), kind


def test_a_member_is_the_string_it_names() -> None:
    member = c.Clock("cpu")
    assert member == "cpu" and str(member) == "cpu" and f"{member}" == "cpu" and type(str(member)) is str


@pytest.mark.parametrize("args,said", [
    (["simulate", "basic", "--policy", "grede"], "--policy: expected one of random, greedy, greedy-eps10, "
     "house-easy, house-medium, house-hard, got 'grede'; did you mean 'greedy'?"),
    (["simulate", "basic", "--games", "0"], "--games: expected at least 1, got 0"),
    (["simulate", "basic", "--games", "ten"], "--games: expected a whole number (at least 1), got 'ten'"),
    (["simulate", "basic", "--seed", "x"], "--seed: expected a whole number, got 'x'"),
    (["variants", "--format", "yaml"], "--format: expected one of text, json, got 'yaml'"),
    (["play", "basic", "greedy", "greedy", "--clock", "cpux"], "--clock: expected one of cpu, wall, got 'cpux'; "
     "did you mean 'cpu'?"),
    (["play", "basic", "greedy", "greedy", "--time-ms", "0"], "--time-ms: expected at least 1, got 0"),
    (["play", "basic", "greedy", "greedy", "--grace-ms", "-1"], "--grace-ms: expected at least 0, got -1"),
    (["play", "basic", "greedy", "greedy", "--human-time", "0.5"], "--human-time: expected 1 to 86400, got 0.5"),
    (["replay", "x.jsonl", "--deal", "0"], "--deal: expected at least 1, got 0"),
    (["match", "a", "b", "--variant", "basic", "--concurrency", "999"], "--concurrency: expected 1 to 256, got 999"),
    (["check-bot", "greedy", "--time-ms", "0"], "--time-ms: expected at least 1, got 0"),
    (["games", ".", "--kind", "timeot"], "--kind: expected one of timeout, crash, disconnect, illegal, malformed, "
     "oversized, stale, token, resource, got 'timeot'; did you mean 'timeout'?"),
    (["standings", ".", "--format", "xml"], "--format: expected one of table, md, csv, json, got 'xml'"),
    (["report", ".", "--refresh-s", "-1"], "--refresh-s: expected at least 0, got -1"),
    (["run", "t.toml", "--progress", "fast"], "--progress: expected one of auto, bar, lines, none, got 'fast'"),
    (["run", "t.toml", "--report-every", "0"], "--report-every: expected at least 1, got 0"),
    (["new-bot", "x", "--lang", "rust"], "--lang: expected one of python, js, c, got 'rust'"),
])
def test_a_refused_value_is_one_sentence(args: list[str], said: str) -> None:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert res.stderr.splitlines() == [f"error: {said}"], res.stderr  # nothing else: no usage box, no traceback


def test_a_missing_argument_keeps_typers_usage() -> None:
    res = CliRunner().invoke(app, ["meld"])
    assert res.exit_code == 2 and "Missing argument 'VARIANT'" in res.stderr and "Usage: " in res.stderr
