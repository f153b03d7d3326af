"""The suite's shared fixtures and guards: each pytest process's own process marker, ``no_leaks``,
and the tier guard (``tests/tier_guard.py``) that fails a fast-tier test which starts a process or
runs too long.

Helpers the test modules share live in ``tests/helpers.py`` (re-exported here for older imports).
"""

from __future__ import annotations

import os
import secrets

# Every pytest process (each pytest-xdist worker too) marks the processes it starts with a marker of its
# own, set before arena.referee.launch reads it: ``no_leaks`` and the referee's exit sweep then see only
# this worker's processes, never a sibling worker's (which would fail its test, or kill its bots).
os.environ["ARENA_SESSION"] = f"tests-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{secrets.token_hex(6)}"

from collections.abc import Iterator

import psutil
import pytest

from arena.referee import launch
from tests.helpers import (  # noqa: F401  (re-exported: test modules import them from here too)
    HOSTILE,
    MISBEHAVE,
    ROOT,
    SMALL,
    SMALL_GAMES,
    arena_processes,
    cmdline_of,
    hostile,
    misbehave,
    run_game,
)
from tests.tier_guard import pytest_runtest_call, pytest_runtest_makereport, pytest_runtest_setup  # noqa: F401

if os.environ["ARENA_SESSION"] != launch.SESSION:
    raise RuntimeError("arena.referee.launch was imported before tests/conftest.py set this process's marker")


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """Fails the test if any bot process it started outlives it."""
    yield
    left = arena_processes()
    for p in left:
        try:
            p.kill()
        except psutil.Error:
            pass
    assert not left, f"processes left running: {[cmdline_of(p) for p in left]}"
