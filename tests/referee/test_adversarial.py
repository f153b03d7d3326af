"""Adversarial bots one at a time: each failure is named right (its kind: docs/ARCHITECTURE.md
section 4), the honest bot is unaffected, and nothing the bot started survives, grandchildren
included."""

from __future__ import annotations

import pytest

from arena.settings import Limits, TimeControl
from tests.conftest import arena_processes, misbehave, run_game

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.usefixtures("no_leaks")]

FAST = TimeControl(start_ms=10000, decision_ms=300, grace_ms=50)


def kinds_of(result, seat):
    return {e.kind for e in result.failure_log if e.seat == seat}


@pytest.mark.parametrize("mode,expected", [
    ("crash_random", {"crash"}),
    ("sigstop", {"timeout", "disconnect"}),
    ("fork_child", {"crash"}),
    ("exit_clean", {"crash"}),
])
def test_adversarial_bot(mode, expected, tmp_path):
    result, _ = run_game("basic", [misbehave(mode), "greedy"], tmp_path, seed=21, time_control=FAST)
    got = kinds_of(result, 0)
    assert got and got <= expected, (mode, result.failure_log)
    assert not result.failures[1]
    assert result.end_reason


def test_connect_twice_does_not_disturb_the_game(tmp_path):
    result, _ = run_game("basic", [misbehave("connect_twice"), "greedy"], tmp_path, seed=22, time_control=FAST)
    assert kinds_of(result, 0) <= {"stale", "token"}, result.failure_log  # never a timeout or a disconnect
    assert len(result.latencies_ms[0]) > 10, "the first connection stopped playing after the second one"
    assert not result.failures[1] and result.end_reason


def test_forked_grandchild_is_killed(tmp_path):
    run_game("basic", [misbehave("fork_child"), "greedy"], tmp_path, seed=23, time_control=FAST)
    assert not arena_processes()


def test_memory_limit(tmp_path):
    result, _ = run_game("basic", [misbehave("mem_hog"), "greedy"], tmp_path, seed=24,
                         time_control=TimeControl(start_ms=10000, decision_ms=2000),
                         limits={0: Limits(memory_mb=200)})
    res = [e for e in result.failure_log if e.seat == 0 and e.kind == "resource"]
    assert res and "limits.memory_mb" in res[0].reason
    assert result.forfeited == [0]  # resource: forfeit by default


def test_process_limit(tmp_path):
    result, _ = run_game("basic", [misbehave("spawner"), "greedy"], tmp_path, seed=25,
                         time_control=TimeControl(start_ms=10000, decision_ms=2000),
                         limits={0: Limits(processes=5)})
    res = [e for e in result.failure_log if e.seat == 0 and e.kind == "resource"]
    assert res and "limits.processes" in res[0].reason


def test_cpu_limit(tmp_path):
    # A bot that spins: RLIMIT_CPU stops it with SIGXCPU, recorded as a resource failure.
    spin = "python3 -c \"import sys; [0 for _ in iter(int, 1)]\""
    result, _ = run_game("basic", [spin, "greedy"], tmp_path, seed=26,
                         time_control=TimeControl(start_ms=20000, decision_ms=300, grace_ms=50),
                         limits={0: Limits(cpu_seconds=1)})  # a start clock a loaded machine cannot run out
    kinds = kinds_of(result, 0)
    assert "resource" in kinds, result.failure_log


def test_oversized_and_non_utf8(tmp_path):
    # The real-process oversized and malformed tests; the referee's side of both, and the timeout policy's
    # forfeit, are judged in-process in test_referee_logic.py.
    for mode, kind in (("huge", "oversized"), ("not_json", "malformed")):
        result, _ = run_game("basic", [misbehave(mode), "greedy"], tmp_path / mode, seed=27, time_control=FAST)
        assert kind in kinds_of(result, 0)
        assert not result.failures[1]
