"""What the commands print of a results folder: the standings so far, the games done, the tables
(with their legend), a path as the organiser typed it, and the one handling of a folder being read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from arena.errors import ArenaError

if TYPE_CHECKING:
    pass

from arena.cli.app import fail


def _standings_now(folder: Path) -> str:
    """The standings of a running tournament, or why they cannot be shown yet (never stops the run)."""
    from arena.tournament import standings, standings_text

    try:
        return standings_text.render_standings(standings.compute(folder), "table")
    except Exception as e:  # noqa: BLE001 - a display problem must not stop a run
        return f"(standings not available yet: {e})"


def _done_count(folder: Path) -> int:
    from arena.tournament.journal import done_indices

    try:
        return len(done_indices(folder))
    except (OSError, ValueError):
        return 0  # the run itself says what is wrong with the folder (or its key file)


SET_ASIDE = "set aside in journal.rejected.jsonl: "  # said once per bad line (the standings' notes carry it too)


def _render(folder: Path, fmt: str, drop_bad_lines: bool = False, wide: bool = False) -> str:
    """The standings of a results folder; one sentence if they cannot be read, a sentence per bad line.
    The table comes with a legend of its columns; the wait for the ratings is announced."""
    from arena.tournament import standings, standings_text
    from arena.untrusted import shown

    typer.echo("computing the standings (ratings and their intervals)...", err=True)
    with _reading_results(folder, f"arena standings {_shown_path(folder)}"):
        st = standings.compute(folder, drop_bad_lines=drop_bad_lines)
    for why in st.set_aside:
        typer.echo(shown(f"warning: {SET_ASIDE}{why.removeprefix(SET_ASIDE)}"), err=True)
    text = standings_text.render_standings(st, fmt, wide)
    return text + _legend(text) if fmt == "table" else text


# What each column of the standings table means, said under it (only the columns it shows).
LEGEND = (
    ("Rating", "strength on the Elo scale (mean 1500), fitted from every placing (> or <: a 95% bound for a bot "
               "that never lost or never won; ?: provisional, few games); ±95%: its 95% interval"),
    ("1st%", "share of games placed first"),
    ("Place", "mean placing (1 is first)"),
    ("Avg place", "mean placing (1 is first)"),
    ("Margin ±CI", "mean score margin over the opponents at the same table (above 0 is better), with its 95% "
                   "interval"),
    ("SoS", "mean rating of the opponents met"),
    ("Settled", "chance that the bot is truly ahead of the next one in the table"),
    ("Fails", "failures charged to the bot (timeouts, crashes, illegal moves, ...)"),
    ("W-L-D", "games both played at one table: the first placed higher, lower, the same"),
    ("LOS", "likelihood of superiority: the confidence that the first is the stronger, from its wins minus losses "
            "in each deal-set"),
)


def _legend(table: str) -> str:
    import textwrap

    head = " ".join(line for line in table.splitlines() if line.startswith(("┃", "|")))
    words = [f"{name}: {meaning}" for name, meaning in LEGEND if f" {name} " in head]
    if not words:
        return ""
    return textwrap.fill("Columns. " + "; ".join(words) + ".", width=100, break_on_hyphens=False) + "\n"


def _shown_path(path: Path) -> str:
    """A path as a user reads it: normalised (no ``..``), relative to the current folder when inside it,
    on one line (``shown``)."""
    import os.path

    from arena.untrusted import shown

    absolute = os.path.normpath(os.path.abspath(path))
    relative = os.path.relpath(absolute)
    return shown(absolute if relative.startswith("..") else relative)


@contextmanager
def _reading_results(folder: Path, retry: str) -> Iterator[None]:
    """Whatever stops a results folder from being read becomes one sentence and exit 2 (a sentence per
    bad journal line, with ``retry``: the command that sets them aside)."""
    from arena.tournament.config import ConfigFileError

    try:
        yield
    except ConfigFileError as e:
        fail(f"cannot read the results in {folder}: {e.errors[0] if e.errors else e}")
    except OSError as e:
        fail(f"cannot read the results in {folder}: {e.filename or folder}: {e.strerror or e}")
    except ArenaError as e:
        e.retry = retry
        raise
