"""Liveness (arena/referee/liveness.py): one poll says which compartments ended or were flagged."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from arena.referee.compartment import _pidfd
from arena.referee.liveness import Liveness, Watched

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]


class Proc:
    """What Liveness asks of a compartment, around a real process."""

    def __init__(self, argv: list[str], pidfd: bool = True) -> None:
        self.popen = subprocess.Popen(argv, start_new_session=True)
        self.pidfd = _pidfd(self.popen.pid) if pidfd else -1
        self.flagged = False

    def alive(self) -> bool:
        return self.popen.poll() is None

    def close(self) -> None:
        self.popen.kill()
        self.popen.wait()
        if self.pidfd >= 0:
            os.close(self.pidfd)


def _until(pred, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("pidfd", [True, False])
def test_an_ended_and_a_flagged_compartment_are_reported_the_live_one_never(pidfd: bool) -> None:
    live, short, flagged = (Proc(["sleep", "30"], pidfd), Proc(["sleep", "0.2"], pidfd), Proc(["sleep", "30"], pidfd))
    try:
        if pidfd:
            assert live.pidfd >= 0  # this kernel has pidfds: the poll path is the one tested
        watch = Liveness()
        procs: list[Watched | None] = [live, None, short, flagged]
        assert watch.ended(procs) == []
        assert _until(lambda: watch.ended(procs) == [2])  # the process is not reaped: the pidfd alone tells
        flagged.flagged = True
        assert watch.ended(procs) == [2, 3]
        assert live.alive()
    finally:
        for p in (live, short, flagged):
            p.close()
