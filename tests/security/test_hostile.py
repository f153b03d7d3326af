"""Hostile bots, each a real process written from the spec: whatever they send or start, the
referee survives, the game ends, the honest seats are charged nothing, the referee's memory
stays bounded, and no process outlives the game (escaped ones included)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time

import psutil
import pytest

from arena.settings import Limits, TimeControl
from bench.flood import PeakRss
from tests.conftest import ROOT, hostile, run_game

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180), pytest.mark.usefixtures("no_leaks")]

FAST = TimeControl(start_ms=10000, decision_ms=300, grace_ms=50)


def failures_of(result, seat):
    return [e for e in result.failure_log if e.seat == seat]


def kinds_of(result, seat):
    return {e.kind for e in failures_of(result, seat)}


def honest_clean(result, seats):
    for s in seats:
        assert not result.failures[s], (s, failures_of(result, s))


@pytest.mark.parametrize("sandbox", [True, False])
def test_deeply_nested_reply_is_malformed_not_a_crash(tmp_path, sandbox):
    result, _ = run_game("basic", [hostile("deep"), "greedy"], tmp_path, seed=31, time_control=FAST, sandbox=sandbox)
    assert "malformed" in kinds_of(result, 0), result.failure_log
    honest_clean(result, [1])
    assert result.end_reason


def test_deeply_nested_hello_is_refused_and_the_next_hello_accepted(tmp_path):
    result, _ = run_game("basic", [hostile("deep_hello"), "greedy"], tmp_path, seed=32, time_control=FAST)
    # Refused before the game, so nothing is charged, and the bot was told why (its log shows the error).
    assert not failures_of(result, 0), result.failure_log
    assert "got an error of kind malformed" in (tmp_path / "logs" / "s0.log").read_text()
    assert result.decisions > 10 and result.end_reason
    honest_clean(result, [1])


def test_deeply_nested_stdio_line_is_malformed(tmp_path):
    result, _ = run_game("basic", [hostile("stdio_deep"), "greedy"], tmp_path, seed=33, time_control=FAST,
                         transports={0: "stdio"})
    assert "malformed" in kinds_of(result, 0), result.failure_log
    assert "timeout" not in kinds_of(result, 0)
    honest_clean(result, [1])


def test_resource_kill_of_the_seat_not_on_turn(tmp_path):
    # The hog grows right after its own reply, while the other seat decides: it is killed and
    # forfeits between two decisions; the honest seat's decision in flight stands.
    result, _ = run_game("basic", [hostile("offturn_mem"), "greedy"], tmp_path, seed=34,
                         time_control=TimeControl(start_ms=10000, decision_ms=2000),
                         limits={0: Limits(memory_mb=200)})
    res = failures_of(result, 0)
    assert [e.kind for e in res] == ["resource"] and "limits.memory_mb" in res[0].reason, res
    assert result.forfeited == [0] and result.end_reason == "forfeit"
    honest_clean(result, [1])


@pytest.mark.timing  # asserts on honest seats' decisions against a flood's
@pytest.mark.parametrize("clock", ["cpu"])
def test_flood_from_fifty_sockets_does_not_starve_honest_bots(tmp_path, clock):
    # The flood is the flooder's own business: its gate, in its own compartment, takes it. On 2 cores
    # the flooder and its gate still take the machine, so the honest bots are timed on the CPU clock.
    tc = TimeControl(start_ms=10000, decision_ms=20, grace_ms=50, clock=clock)
    result, _ = run_game("basic", [hostile("flood"), "greedy", "greedy"], tmp_path, seed=35, time_control=tc,
                         overrides={"deals": 2})
    assert result.decisions > 50
    honest_clean(result, [1, 2])


def test_multipart_and_big_messages_do_not_grow_the_referee(tmp_path):
    with PeakRss() as rss:
        result, _ = run_game("basic", [hostile("multipart"), "greedy"], tmp_path, seed=36,
                             time_control=TimeControl(start_ms=10000, decision_ms=5000))
    assert rss.growth_mib < 64, f"the referee grew by {rss.growth_mib:.0f} MiB"
    # The bomb is charged (malformed, or oversized when it overflows the gate), unless libzmq in the
    # gate cannot even take it in and drops the connection, when it is lost like any frame over 4 MiB.
    # A lost bomb leaves its request unanswered (timeout); a reply after the fresh request is stale.
    got = kinds_of(result, 0)
    assert got and got <= {"malformed", "oversized", "crash", "timeout", "stale"}, result.failure_log
    honest_clean(result, [1])
    assert result.end_reason


def _escaped(tag: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if p.info["cmdline"] == ["sleep", tag]:
            found.append(p)
    return found


def test_escaped_process_dies_with_the_sandbox(tmp_path):
    tag = f"{3600 + secrets.randbelow(10**6) / 10**7:.7f}"
    try:
        result, _ = run_game("basic", [hostile("escape"), "greedy"], tmp_path, seed=37,
                             time_control=TimeControl(start_ms=10000, decision_ms=2000),
                             env={0: {"ESCAPE_TAG": tag}})
        assert not result.failures[0] and not result.failures[1]
        assert not _escaped(tag), "an escaped process outlived the game"
    finally:
        for p in _escaped(tag):
            p.kill()


def test_without_the_sandbox_an_escaped_process_dies_when_the_referee_ends(tmp_path):
    # No sandbox, so no PID namespace: the escapee is adopted by the referee (a subreaper), and,
    # with an empty environment, carries no marker; the referee kills it as it ends.
    tag = f"{3600 + secrets.randbelow(10**6) / 10**7:.7f}"
    try:
        got = subprocess.run([sys.executable, "-m", "arena", "play", "basic", hostile("escape"), "greedy",
                              "--seed", "37", "--no-sandbox", "--record", str(tmp_path / "game.jsonl")],
                             cwd=ROOT, env={**os.environ, "ESCAPE_TAG": tag}, capture_output=True, text=True,
                             timeout=120)
        assert got.returncode == 0, got.stderr
        assert not _escaped(tag), "an escaped process outlived the referee"
    finally:
        for p in _escaped(tag):
            p.kill()


def test_escaped_processes_count_toward_the_process_limit(tmp_path):
    tag = f"{3600 + secrets.randbelow(10**6) / 10**7:.7f}"
    try:
        result, _ = run_game("basic", [hostile("escape"), "greedy"], tmp_path, seed=38,
                             time_control=TimeControl(start_ms=10000, decision_ms=2000),
                             env={0: {"ESCAPE_TAG": tag, "ESCAPES": "12"}}, limits={0: Limits(processes=6)})
        res = failures_of(result, 0)
        assert res and res[0].kind == "resource" and "limits.processes" in res[0].reason, res
        honest_clean(result, [1])
        assert not _escaped(tag)
    finally:
        for p in _escaped(tag):
            p.kill()


@pytest.mark.parametrize("mode,limits,word", [
    ("shm_hog", Limits(memory_mb=150), "limits.memory_mb"),
    ("threads", Limits(processes=10), "limits.processes"),
    ("cpu_orphans", Limits(cpu_seconds=3), "limits.cpu_seconds"),
])
def test_limits_cover_what_no_process_owns(tmp_path, mode, limits, word):
    # Memory kept in /dev/shm, threads, and CPU burnt by orphans that the gate reaps all count.
    result, _ = run_game("basic", [hostile(mode), "greedy"], tmp_path, seed=39,
                         time_control=TimeControl(start_ms=10000, decision_ms=15000), limits={0: limits})
    res = failures_of(result, 0)
    assert res and res[0].kind == "resource" and word in res[0].reason, res
    honest_clean(result, [1])


@pytest.mark.timing  # asserts on the referee's CPU against the game's wall time
def test_a_thousand_idle_processes_do_not_make_the_referee_busy(tmp_path):
    # Measuring a tree of 1,000 processes ten times a second would keep the referee's CPU busy; its
    # scans and the watcher's passes come at most every 9 times their own cost instead.
    wall, cpu = time.monotonic(), time.process_time()
    result, _ = run_game("basic", [hostile("idle_procs"), "greedy"], tmp_path, seed=39,
                         time_control=TimeControl(start_ms=10000, decision_ms=15000),
                         limits={0: Limits(memory_mb=1 << 20, cpu_seconds=600, processes=5000)})  # none reached
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    honest_clean(result, [0, 1])  # the hostile seat too: it broke no rule and no limit
    assert cpu < 0.4 * wall, f"the referee used {cpu:.1f} s of CPU in a {wall:.1f} s game"


@pytest.mark.timing  # asserts on the referee's CPU time (with a wide margin: the cap is 0.5 s)
def test_what_a_bot_sends_before_its_hello_costs_the_referee_a_bounded_cpu(tmp_path, no_leaks):
    # no decision's clock runs yet, so nothing would charge the referee's reading to the bot: a cap does
    from arena.referee.host import START_READ_CPU_S, BotHost
    from arena.settings import BotSpec

    with BotHost(TimeControl(start_ms=15_000, decision_ms=1000), tmp_path / "logs") as host:
        peer = host.add(BotSpec(name="junk", command=hostile("junk_hello")))
        cpu, wall = time.thread_time(), time.monotonic()
        assert not host.start(peer)
        cpu, wall = time.thread_time() - cpu, time.monotonic() - wall
    assert peer.problem is not None and peer.problem[0] == "malformed" and "before its hello" in peer.problem[1], \
        peer.problem
    assert cpu < START_READ_CPU_S + 1.0 and wall < 14, (cpu, wall)  # refused long before its start clock


ZMTP_RAW = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'zmtp_raw.py'}"


@pytest.mark.parametrize("mode, reason", [("commands", "frames and commands while seq"),
                                          ("more", "frames and commands while seq"),
                                          ("lastwords", "not a UTF-8 JSON object")])
def test_what_no_zeromq_library_sends_is_bounded_too(mode, reason, tmp_path):
    # ZMTP by hand (no sandbox: the bot parses the referee's frames with the arena's codec): commands a ROUTER
    # ignores before every reply, strangers' never-ending messages, 200,000 last words before an exit
    with PeakRss() as rss:
        result, _ = run_game("basic", [f"{ZMTP_RAW} {mode}", "greedy"], tmp_path, seed=47, sandbox=False,
                             time_control=TimeControl(start_ms=10000, decision_ms=1000, grace_ms=50))
    mine = [f for f in result.failure_log if f.seat == 0]  # a stranger is the bot's own connection: charged to it
    assert mine and any(reason in f.reason for f in mine), mine
    honest_clean(result, [1])
    assert rss.growth_mib < 16, f"the referee grew by {rss.growth_mib:.0f} MiB"
