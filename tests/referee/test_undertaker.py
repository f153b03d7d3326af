"""A referee killed with SIGKILL leaves nothing running: its undertaker kills what carries its
marker, including the bubblewrap child that waits, forever, for a parent that died while it
set the sandbox up (the leak CI once caught after a kill -9 of a league run)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from arena.referee import sandbox
from tests.helpers import ROOT, gone, kill_9

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60), pytest.mark.usefixtures("no_leaks")]  # real processes

# A stand-in referee: installs the clean-up, starts one process the way the mode says, prints
# the pids that matter, and waits to be killed.
REFEREE = r"""
import os, subprocess, sys, time
from pathlib import Path
from arena.referee import launch, sandbox

env = dict(os.environ, **{launch.REFEREE_MARKER: launch.install_cleanup()})
mode = sys.argv[1]
if mode == "escaped":  # left the referee's tree and never asked for PR_SET_PDEATHSIG
    p = subprocess.Popen(["sleep", "600"], env=env, start_new_session=True)
elif mode == "unmarked":  # not a bot of this referee: no marker
    p = subprocess.Popen(["sleep", "600"], start_new_session=True)
else:  # bwrap's parent blocks on a pipe the test holds, so its child waits on bwrap's eventfd
    block = int(sys.argv[2])
    _info, info = os.pipe()  # bwrap wants somewhere to say its child's pid before it blocks
    argv = sandbox.wrap(["sleep", "600"], Path("/"), (), ())
    argv.remove("--disable-userns")  # bwrap refuses it with --userns-block-fd
    argv[1:1] = ["--userns-block-fd", str(block), "--info-fd", str(info)]
    p = subprocess.Popen(argv, env=env, pass_fds=(block, info), start_new_session=True,
                         preexec_fn=launch.die_with_parent)
undertaker = [c.pid for c in __import__("psutil").Process().children() if c.pid != p.pid]
print(p.pid, *undertaker, launch.private_folder(), flush=True)
time.sleep(600)
"""


def start(mode: str, block: int = -1) -> tuple[subprocess.Popen[str], int, int, Path]:
    referee = subprocess.Popen([sys.executable, "-c", REFEREE, mode, str(block)], cwd=ROOT, stdout=subprocess.PIPE,
                               text=True, start_new_session=True, pass_fds=(block,) if block >= 0 else ())
    assert referee.stdout is not None
    child, undertaker, folder = referee.stdout.readline().split()
    return referee, int(child), int(undertaker), Path(folder)


def test_a_process_that_escaped_the_referee_dies_after_its_sigkill() -> None:
    referee, child, undertaker, folder = start("escaped")
    try:
        assert not gone(child, timeout=0.3), "the escaped process should live while its referee does"
        assert folder.is_dir()
        kill_9(referee)
        assert gone(child), "the escaped process outlived its SIGKILLed referee"
        assert gone(undertaker), "the undertaker should end once its work is done"
        assert not folder.exists(), "the referee's private folder (gates' sockets) was left behind"
    finally:
        kill_9(referee)


def test_the_undertaker_kills_only_what_carries_its_referees_marker() -> None:
    referee, child, undertaker, _folder = start("unmarked")
    try:
        kill_9(referee)
        assert gone(undertaker)
        assert not gone(child, timeout=0.3), "an unmarked process is not the referee's to kill"
    finally:
        kill_9(referee)
        try:
            psutil.Process(child).kill()
        except psutil.NoSuchProcess:
            pass


@pytest.mark.skipif(sandbox.problem() is not None, reason=str(sandbox.problem()))
def test_a_sandbox_child_left_waiting_by_a_killed_bwrap_dies_too() -> None:
    block, unblock = os.pipe()  # held here, so the referee's death does not unblock bwrap's parent
    referee, outer, undertaker, _folder = start("bwrap", block)
    os.close(block)
    try:
        deadline = time.monotonic() + 10
        while not (inner := psutil.Process(outer).children()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert inner, "bwrap did not start its sandbox child"
        waiting = inner[0].pid
        kill_9(referee)
        assert gone(outer), "bwrap dies with its parent (--die-with-parent)"
        assert gone(waiting), "bwrap's sandbox child outlived the referee"
        assert gone(undertaker)
    finally:
        kill_9(referee)
        os.close(unblock)
