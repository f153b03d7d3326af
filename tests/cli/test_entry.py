"""The console entry (``arena.cli.main``) builds only the command a line names, and that command
behaves exactly as in the whole app: the same help, the same refusals."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from arena.cli import app, command_alone

LINES = (["play", "--help"], ["run", "--help"], ["ladder", "--help"], ["ladder", "serve", "--help"],
         ["play", "basic", "greedy", "--time-ms", "0"], ["validate", "no-such.toml"], ["meld", "--help"])


@pytest.mark.parametrize("args", LINES, ids=" ".join)
def test_a_command_alone_answers_as_in_the_whole_app(args):
    alone = command_alone(args)
    assert alone is not app and len(alone.registered_commands) + len(alone.registered_groups) == 1
    whole, one = CliRunner().invoke(app, args), CliRunner().invoke(alone, args)
    assert (one.exit_code, one.output) == (whole.exit_code, whole.output)


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["plya"], ["--version", "play"]], ids=" ".join)
def test_a_line_that_names_no_command_first_gets_the_whole_app(args):
    assert command_alone(args) is app
