"""The ``arena`` Typer app: its group (the one handler of ``ArenaError`` and of the values typer's
own types, choices and ranges refuse), ``--version``, and ``fail`` (one sentence on stderr, exit 2)
that every command uses."""

from __future__ import annotations

from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from arena.errors import ArenaError


class _Commands(TyperGroup):
    """The arena's commands, with the one handler of their errors: an ``ArenaError`` from any command
    (and the commands of its sub-apps) becomes its detail lines, ``error: <sentence>`` and its exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.BadParameter as e:  # a subcommand's value its type, choices or range refused
            from arena.cli.choices import bad_value

            if (said := bad_value(e)) is None:
                raise
            fail(said)
        except ArenaError as e:
            from arena.untrusted import shown

            for line in e.details():
                typer.echo(shown(line), err=True)  # a bot's own output or a journal line is quoted in it
            fail(e.sentence(), e.exit_code)


app = typer.Typer(
    cls=_Commands,
    no_args_is_help=True,
    help="Referee and tournament runner for Rummy bots.",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from arena import __version__, compiled

        engine = "compiled engine" if compiled.ENGINE == "compiled" else f"pure-Python engine: {compiled.REASON}"
        typer.echo(f"arena {__version__} ({engine})")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_print_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Referee and tournament runner for Rummy bots."""


def fail(message: str, code: int = 2) -> NoReturn:
    from arena.untrusted import shown

    typer.echo(f"error: {shown(message)}", err=True)  # one line, whatever name or path it quotes
    raise typer.Exit(code)


def _wants_json(fmt: str, as_json: bool) -> bool:
    """``--format text|json`` (a ``TextFormat``; ``--json`` is kept as a hidden spelling of ``--format json``)."""
    return as_json or fmt == "json"
