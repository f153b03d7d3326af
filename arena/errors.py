"""The one base of the arena's errors, and what the command line makes of them.

Every error that can stop a command (a bad file, a folder of another tournament, a journal line
that does not verify, a bot that cannot start) derives from ``ArenaError``: it carries its exit code,
any lines to say before it (``details``: one sentence per bad line or bot) and, set by the command
that knows it, the command line that continues (``retry``).  ``arena.cli`` catches it in one place
and prints ``error: <sentence>``, never a traceback.  Classes keep their older bases too
(``ValueError``, ``RuntimeError``) so code that catches those still does.

The rules engine's errors (``CardError``, ``MeldError``, ``RulesError``, ...) are not here: the
engine imports nothing of the arena outside ``arena.rules``; the command that calls it says them.
"""

from __future__ import annotations

from typing import ClassVar


class ArenaError(Exception):
    """An error a person can act on: ``str(e)`` is one sentence; ``exit_code`` what the command exits with."""

    exit_code: ClassVar[int] = 2
    retry: str | None = None  # the command line that continues (e.g. ``arena run FILE --resume``)

    def details(self) -> list[str]:
        """Lines said before the sentence (one per bad journal line, per bot that cannot take part)."""
        return []

    def sentence(self) -> str:
        """The one sentence the command line prints after ``error:``."""
        return str(self)

