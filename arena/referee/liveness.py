"""Which of a game's compartments ended, asked between two decisions in one system call.

The referee asks after every decision whether a bot that is not on turn has
ended or was flagged over a limit (``Referee._check_gone``).  ``subprocess``'s
own answer is a ``waitpid`` per bot (and the limits' property two more), so
the question cost a few system calls per seat and decision; here it is one
``poll`` over the compartments' pidfds (``BotProcess.pidfd``, readable once its
first process ended) plus the watcher's flag, an attribute.  Where the kernel
gives no pidfds, a compartment is asked the old way (``BotProcess.alive``).
"""

from __future__ import annotations

import select
from typing import Protocol


class Watched(Protocol):
    """What is asked of a compartment: ``compartment.BotProcess``."""

    pidfd: int

    @property
    def flagged(self) -> bool: ...

    def alive(self) -> bool: ...


class Liveness:
    """Answers ``ended(procs)``: the indices of the compartments that ended or were flagged."""

    def __init__(self) -> None:
        self._procs: list[Watched | None] = []
        self._poll = select.poll()
        self._at: dict[int, int] = {}  # pidfd -> index in procs
        self._asked: list[tuple[int, Watched]] = []  # the compartments without a pidfd: asked one by one

    def ended(self, procs: list[Watched | None]) -> list[int]:
        """Indices of ``procs`` (None: no compartment, never reported) that ended or were flagged, in order."""
        if procs != self._procs:  # a seat's compartment changed (identity): register the new set
            self._procs = procs
            self._poll = select.poll()
            self._at = {p.pidfd: i for i, p in enumerate(procs) if p is not None and p.pidfd >= 0}
            for fd in self._at:
                self._poll.register(fd, select.POLLIN)
            self._asked = [(i, p) for i, p in enumerate(procs) if p is not None and p.pidfd < 0]
        # A pidfd closed by kill() reads as POLLNVAL, or as a later file's number: either way the
        # compartment was killed, so reporting it as ended is true.
        out = [self._at[fd] for fd, _ in self._poll.poll(0)] if self._at else []
        out += [i for i, p in self._asked if not p.alive()]
        out += [i for i, p in enumerate(procs) if p is not None and p.flagged]
        return sorted(set(out)) if len(out) > 1 else out
