"""The suite's shared fixtures and guards: each pytest process's own process marker, ``no_leaks``,
and the tier guard (``tests/tier_guard.py``) that fails a fast-tier test which starts a process or
runs too long.

Helpers the test modules share live in ``tests/helpers.py`` (re-exported here for older imports).
"""

from __future__ import annotations

import os
import secrets
import sys

# Every pytest process (each pytest-xdist worker too) marks the processes it starts with a marker of its
# own, set before arena.referee.launch reads it: ``no_leaks`` and the referee's exit sweep then see only
# this worker's processes, never a sibling worker's (which would fail its test, or kill its bots).
os.environ["ARENA_SESSION"] = f"tests-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{secrets.token_hex(6)}"

import signal
from collections.abc import Iterator

import psutil
import pytest
import zmq

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

# pytest rewrites each test module's asserts and caches the result in __pycache__ unless bytecode writing is
# off, as PYTHONDONTWRITEBYTECODE makes it here: then every worker of every run rewrote all ~200 test modules
# again (~5 s of CPU each). The test modules are imported after this conftest, so their rewrites are cached.
sys.dont_write_bytecode = False

# A suite started in the background by a shell without job control inherits SIGINT ignored, and so
# would every arena command it starts (Python keeps an ignored SIGINT): the tests that stop one with
# SIGINT, as a person does with Ctrl-C, would see it play on. A handler, unlike SIG_IGN, is not inherited.
signal.signal(signal.SIGINT, signal.default_int_handler)

if os.environ["ARENA_SESSION"] != launch.SESSION:
    raise RuntimeError("arena.referee.launch was imported before tests/conftest.py set this process's marker")


# The parallel tier (pytest -n 4 --dist loadgroup) hands tests to its workers a few at a time in
# collection order, so the tier ends when its last long test does: the longest start first (these, in
# this order, then the other slow tests), and the fast tests fill in the end.
LONGEST_FIRST = (
    "tests/tournament/test_league_run.py::test_kill_9",
    "tests/tournament/test_soak.py",
    "tests/ladder/test_ladder_serve.py",
    "tests/ladder/test_ladder_run.py",
    "tests/ladder/test_ladder_cluster.py",
    "tests/cli/test_newbot.py",
    "tests/tournament/test_match.py",
    "tests/tournament/test_league_top_run.py",
    "tests/tournament/test_runner.py::test_kill_9",
    "tests/tournament/test_growth.py",
    "tests/tournament/test_remote_tournament.py",
    "tests/security/test_results_integrity.py",
    "tests/tournament/test_league_run.py",
    "tests/tournament/test_poststop.py",
)


# Modules whose tests share a costly module-scoped fixture (a tournament, a browser, a cluster): their
# tests run in one worker, one after another, else each worker that runs any of them, or runs them
# between other modules' tests, builds the fixture again.
ONE_WORKER = (
    "tests/report/test_report_browser.py",
    "tests/tournament/test_cluster.py",
    "tests/security/test_secrets.py",
    "tests/security/test_results_private.py",
    "tests/protocol/test_spec_matches_referee.py",
)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Iterator[None]:
    for item in items:  # before pytest-xdist reads the groups
        module = item.nodeid.split("::", 1)[0]
        if module in ONE_WORKER and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(module))
    yield  # pytest orders the items by their fixtures
    items.sort(key=collection_rank)  # stable: each file's own order is kept


def pytest_configure(config: pytest.Config) -> None:
    # pytest 9.2 changed the node ids pytest-xdist (3.8) marks its groups on: the groups are silently lost,
    # and tests that share a shell or a fixture run in several workers and fail saying nothing of why.
    if getattr(config.option, "dist", "no") == "loadgroup" and tuple(map(int, pytest.__version__.split(".")[:2])) >= (9, 2):
        raise pytest.UsageError(f"pytest {pytest.__version__} loses pytest-xdist's test groups (pytest-xdist#1386); "
                                "install the versions of pyproject.toml's test extra (pytest<9.2)")


def collection_rank(item: pytest.Item) -> tuple[int, int]:
    """Where a test is collected: the LONGEST_FIRST ones in that order, the other slow ones, the fast."""
    if not item.get_closest_marker("slow"):
        return 2, 0
    for i, prefix in enumerate(LONGEST_FIRST):
        if item.nodeid.startswith(prefix):
            return 0, i
    return 1, 0


@pytest.fixture
def ctx() -> Iterator[zmq.Context[zmq.Socket[bytes]]]:
    """A libzmq context for peers a test makes, destroyed without lingering."""
    c: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    yield c
    c.destroy(linger=0)


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
