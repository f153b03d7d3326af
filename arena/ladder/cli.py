"""The ``arena ladder`` commands (a typer sub-app registered in ``arena.cli``): thin, errors as one sentence."""

from __future__ import annotations

from typing import NoReturn

import typer

ladder_app = typer.Typer(
    no_args_is_help=True,
    help="Run a competition: a ladder that takes submissions and rates them as games land.",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
