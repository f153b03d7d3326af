"""One error base: every error a command can stop on is an ``ArenaError`` (keeping its older base), and the
command line's one handler says it as ``error: <sentence>`` with its exit code, never a traceback."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from arena import cli
from arena.cli.app import _Commands
from arena.errors import ArenaError
from arena.integrity import KeyFileError
from arena.newbot import NewBotError
from arena.record_check import RecordError
from arena.referee.compliance import CheckError
from arena.tournament.config import ConfigFileError
from arena.tournament.deals import DealSuiteError
from arena.tournament.executor_dask import ClusterError
from arena.tournament.fingerprints import FingerprintError
from arena.tournament.journal import BadJournal, JournalError
from arena.tournament.runner import BotProblems, RunError, RunStopped

runner = CliRunner()


@pytest.mark.parametrize("cls, old", [
    (KeyFileError, ValueError), (NewBotError, ValueError), (RecordError, ValueError), (CheckError, RuntimeError),
    (ConfigFileError, ValueError), (DealSuiteError, ValueError), (FingerprintError, ValueError),
    (JournalError, RuntimeError), (BadJournal, ValueError), (RunError, RuntimeError), (RunStopped, RunError),
    (BotProblems, RunError), (ClusterError, RunError),
])
def test_every_command_error_is_an_arena_error_and_keeps_its_old_base(cls, old):
    assert issubclass(cls, ArenaError) and issubclass(cls, old)
    assert cls.exit_code == 2


class _Odd(ArenaError):
    exit_code = 3

    def details(self) -> list[str]:
        return ["first\x1b[2J line", "second line"]


def _app_raising(error: BaseException) -> typer.Typer:
    app = typer.Typer(cls=_Commands)

    @app.command()
    def boom() -> None:
        raise error

    @app.command()
    def other() -> None:  # two commands, so `boom` is a sub-command as the arena's are
        pass

    return app


def test_the_one_handler_says_details_then_the_sentence_with_the_exit_code():
    result = runner.invoke(_app_raising(_Odd("the thing is wrong")), ["boom"])
    assert result.exit_code == 3
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.splitlines()
    assert lines == ["first\\x1b[2J line", "second line", "error: the thing is wrong"]  # a detail cannot drive the terminal


def test_an_error_that_is_not_the_arenas_is_not_swallowed():
    result = runner.invoke(_app_raising(KeyError("x")), ["boom"])
    assert isinstance(result.exception, KeyError)


def test_a_real_command_error_goes_through_the_handler(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli.app, ["new-bot", "no/such name", "--lang", "python"])
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and len(result.output.splitlines()) == 1
