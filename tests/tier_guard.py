"""The tier guard, a pytest plugin (tests/conftest.py loads it): a test in the fast tier (no ``slow`` or
``timing`` marker) fails if it, or a fixture it sets up, starts a process, or if it takes long, with
a message naming the marker to add, so ``pytest -m "not slow"`` stays a tier that runs in seconds.

What counts is the time the test would take on an idle machine: its CPU time, and its own time (the
wall clock less the time its thread waited for a CPU, from /proc/thread-self/schedstat), so a loaded
machine fails no test, but a test that sleeps or waits on something slow does.  The bounds are
``ARENA_GUARD_CPU_S`` and ``ARENA_GUARD_OWN_S``, read when each test runs.
"""

from __future__ import annotations

import _posixsubprocess
import os
import subprocess
import time
from collections.abc import Generator, Iterator
from typing import Any

import pytest

TIER_MARKERS = ("slow", "timing")
CPU_S, OWN_S = 1.0, 2.0  # the defaults of ARENA_GUARD_CPU_S and ARENA_GUARD_OWN_S


def _bound(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


_FOUND = pytest.StashKey[str]()  # why a fast-tier test is failed, set by its setup or call
# Every way a test can start a process ends in one of these (subprocess, multiprocessing by spawn,
# forkserver or fork, pty, os.system).
_STARTERS: list[tuple[Any, str]] = [(subprocess, "_fork_exec"), (_posixsubprocess, "fork_exec"), (os, "fork"),
                                    (os, "forkpty"), (os, "posix_spawn"), (os, "posix_spawnp"), (os, "system")]


def _queued_s() -> float:
    """How long this thread has waited for a CPU so far (0 where the kernel does not say)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def _fast_tier(item: pytest.Item) -> bool:
    return not any(item.get_closest_marker(m) for m in TIER_MARKERS)


class _Watch:
    """Records the process starts while a phase of a fast-tier test runs."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self._saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> _Watch:
        for module, name in _STARTERS:
            real = getattr(module, name, None)
            if real is None:
                continue
            self._saved.append((module, name, real))
            setattr(module, name, self._wrap(real, f"{module.__name__}.{name}"))
        return self

    def _wrap(self, real: Any, label: str) -> Any:
        def starting(*args: Any, **kwargs: Any) -> Any:
            self.started.append(label)
            return real(*args, **kwargs)
        return starting

    def __exit__(self, *exc: object) -> None:
        for module, name, real in reversed(self._saved):
            setattr(module, name, real)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    if not _fast_tier(item):
        yield
        return
    with _Watch() as watch:
        yield
    if watch.started:
        item.stash[_FOUND] = f"its fixtures start a process ({watch.started[0]})"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if not _fast_tier(item):
        yield
        return
    # the test's own thread: the process's CPU also holds xdist's and other tests' leftover threads
    wall, cpu, queued = time.monotonic(), time.thread_time(), _queued_s()
    with _Watch() as watch:
        yield
    cpu, own = time.thread_time() - cpu, time.monotonic() - wall - (_queued_s() - queued)
    cpu_s, own_s = _bound("ARENA_GUARD_CPU_S", CPU_S), _bound("ARENA_GUARD_OWN_S", OWN_S)
    if watch.started:
        item.stash[_FOUND] = f"it starts a process ({watch.started[0]})"
    elif cpu > cpu_s:
        item.stash[_FOUND] = f"it took {cpu:.1f} s of CPU (the fast tier allows {cpu_s:g} s)"
    elif own > own_s:
        item.stash[_FOUND] = f"it took {own:.1f} s not counting waits for a CPU (the fast tier allows {own_s:g} s)"



@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    found = item.stash.get(_FOUND, None)
    if found and report.when in ("setup", "call") and report.passed:
        del item.stash[_FOUND]
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} is in the fast tier but {found}: mark it @pytest.mark.slow "
                           "(or @pytest.mark.timing if it asserts on time), or make it fast")
