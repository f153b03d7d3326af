"""The report of a running tournament, rewritten as games finish (``arena run --report``; docs/ARCHITECTURE.md section 8).

``LiveReport.game_done(played)`` rewrites the report once at least ``every``
games were journaled since the last rewrite, but never spends more than
about a sixth of the run's time on it: after a rewrite that took t seconds,
the next waits at least 5t (a 10,000-game report takes seconds, and the
runner's main loop journals no game meanwhile).  ``finish()`` writes the last
one, as a page that no longer reloads (the run has ended, finished or not).
A failure is a warning for the caller, never the end of the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from arena.report.render import write_report

PAUSE_FACTOR = 5.0


class LiveReport:
    def __init__(self, folder: Path, every: int, warn: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.every = every
        self.warn = warn
        self.clock = clock
        self.next_at = 0.0
        self.written = 0
        self.written_at = 0  # games played at the last rewrite

    def game_done(self, played: int) -> None:
        if played - self.written_at >= self.every and self.clock() >= self.next_at:
            self.written_at = played
            self._write(running=True)

    def finish(self) -> Path | None:
        return self._write(running=False)

    def _write(self, running: bool) -> Path | None:
        start = self.clock()
        try:
            path = write_report(self.folder, running=running)
        except Exception as e:  # noqa: BLE001 - the run matters more than its report
            self.warn(f"warning: the report was not written: {type(e).__name__}: {e}")
            return None
        end = self.clock()
        self.next_at = end + PAUSE_FACTOR * (end - start)
        self.written += 1
        return path
