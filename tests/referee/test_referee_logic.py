"""The referee's rules of engagement, on a fake host (tests/fakehost.py): scripted bots in this
process and a fake clock, so every failure kind, policy, clock and record is judged without a
process or a real wait.  Each test names the real-process test that still covers its process side."""

from __future__ import annotations

import json

import pytest

from arena.referee.channel import Notice, Oversized
from arena.rules.record import Header, replay
from arena.settings import FailurePolicy, TimeControl
from protocol.messages import MAX_MESSAGE_BYTES, Event, GameOver, NewGame, Request
from tests.fakehost import Burn, Exit, Sleep, greedy, honest, legal_reply, on_request, play

FAST = TimeControl(start_ms=10000, decision_ms=400, grace_ms=50)
ILLEGAL_MELD = [{"type": "meld", "cards": ["AS", "AS", "AS"]}]


def failures_of(result, seat):
    return [e for e in result.failure_log if e.seat == seat]


def read_record(path):
    lines = [json.loads(x) for x in open(path)]
    return lines[0], lines[1:]


def _nth_play(n: int):
    plays = [0]

    def bot(msg):
        if isinstance(msg, Request) and msg.decision == "play":
            plays[0] += 1
            if plays[0] == n:
                return [{**legal_reply(msg), "actions": ILLEGAL_MELD}]
        return honest(msg)
    return bot


# What tests/bots/misbehave.py does in each mode, scripted (a factory: a scripted bot counts its requests) (the real-process test of each kind in brackets).
BROKEN = {
    # timeout [test_referee.py::test_hang_times_out_and_referee_plays_on]: asleep past its limit, then answers late
    "sleep": lambda: on_request(3, lambda r: [Sleep(FAST.decision_ms * 3 + 300), legal_reply(r)]),
    # malformed [test_adversarial.py::test_oversized_and_non_utf8, not_json]
    "not_json": lambda: on_request(3, lambda r: [b"\xff\xfe this is not json"]),
    "wrong_shape": lambda: on_request(3, lambda r: [{"v": 1, "type": "draw", "game": r.game, "seq": r.seq, "source": 7}]),
    # oversized [test_adversarial.py::test_oversized_and_non_utf8, huge]: the gate's notice, and a stdio pipe's line
    "huge": lambda: on_request(3, lambda r: [Notice("oversized", str(2 << 20))]),
    "huge_line": lambda: on_request(3, lambda r: [Oversized(2 << 20)]),
    # illegal [test_referee.py::test_illegal_meld_gets_engine_reason_and_retry_then_default]
    "illegal_once": lambda: _nth_play(2),
    # stale [test_referee.py::test_flood_of_stale_messages_is_dropped]: the wrong seq, then the right one
    "stale": lambda: on_request(3, lambda r: [{**legal_reply(r), "seq": r.seq - 1}, legal_reply(r)]),
    # crash [test_referee.py::test_broken_bot_failure_is_recorded_and_game_finishes[crash]]
    "exit_clean": lambda: on_request(4, lambda r: [Exit(0)]),
}
KIND = {"sleep": "timeout", "not_json": "malformed", "wrong_shape": "malformed", "huge": "oversized",
        "huge_line": "oversized", "illegal_once": "illegal", "stale": "stale", "exit_clean": "crash"}


@pytest.mark.parametrize("mode", list(BROKEN))
def test_broken_bot_failure_is_recorded_and_game_finishes(mode, tmp_path):
    """Ported from test_referee.py (its crash case still runs a real process there)."""
    result, host = play("basic", [BROKEN[mode](), greedy()], tmp_path, seed=11, time_control=FAST)
    kinds = [e.kind for e in failures_of(result, 0)]
    assert kinds and kinds[0] == KIND[mode], (mode, result.failure_log)  # the first failure is the one scripted
    assert all(e.reason for e in failures_of(result, 0))
    assert not result.failures[1], "the honest bot was affected"
    header, entries = read_record(tmp_path / "record.jsonl")
    assert any(e.get("e") == "failure" and e["kind"] == KIND[mode] for e in entries)
    replay(Header.from_data(header), entries)  # the record still verifies
    told = [e.kind for e in host.seat(host.peers[0]).errors]
    if KIND[mode] == "crash":
        assert not told  # a gone bot is told nothing
    else:
        assert KIND[mode] in told, told


def test_a_late_reply_to_a_timed_out_request_is_dropped_uncharged(tmp_path):
    """Ported from test_referee.py::test_broken_bot_failure_is_recorded_and_game_finishes[sleep]'s late answer."""
    result, host = play("basic", [BROKEN["sleep"](), greedy()], tmp_path, seed=11, time_control=FAST)
    kinds = [e.kind for e in failures_of(result, 0)]
    # Asleep 1.5 s: requests 3, 4 and 5 time out (450 ms each), request 6 is answered once it wakes;
    # the three late replies are dropped, none charged as stale, and it is told no stale error.
    assert kinds == ["timeout"] * 3, result.failure_log
    assert result.failures[0] == {"timeout": 3}
    assert "stale" not in [e.kind for e in host.seat(host.peers[0]).errors]


def test_reasons_of_the_scripted_failures(tmp_path):
    """What each reason says (the real-process tests assert only that there is one)."""
    expect = {"sleep": "no draw reply within 400 ms", "huge": f"over the {MAX_MESSAGE_BYTES}-byte limit",
              "wrong_shape": "source", "illegal_once": "not in your hand", "stale": "while seq 3",
              "exit_clean": "the bot exited with code 0 while deciding"}
    for mode, words in expect.items():
        result, _ = play("basic", [BROKEN[mode](), greedy()], tmp_path / mode, seed=11, time_control=FAST)
        reason = failures_of(result, 0)[0].reason
        assert words in reason, (mode, reason)


def test_illegal_retry_then_default_after_the_strikes(tmp_path):
    """The policy's strikes: ported beside test_referee.py::test_illegal_meld_gets_engine_reason_and_retry_then_default
    (which stays, the real-process illegal test)."""
    always = on_request(lambda k: True, lambda r: [{**legal_reply(r), "actions": ILLEGAL_MELD}]
                        if r.decision == "play" else [legal_reply(r)])
    result, host = play("basic", [always, greedy()], tmp_path, seed=4, time_control=FAST,
                        policy=FailurePolicy(illegal="retry", strikes=2))
    ill = failures_of(result, 0)
    assert [e.action for e in ill[:3]] == ["retry", "retry", "default"]
    assert all(e.kind == "illegal" for e in ill) and "RULES" in ill[0].reason
    errors = host.seat(host.peers[0]).errors
    assert [e.retry for e in errors[:3]] == [True, True, False]
    assert not result.failures[1] and result.end_reason


def test_forfeit_policy_places_bot_last_and_two_seat_game_ends(tmp_path):
    """Ported from test_referee.py (illegal's process side: test_illegal_meld_gets_engine_reason_and_retry_then_default)."""
    always = on_request(lambda k: True, lambda r: [{**legal_reply(r), "actions": ILLEGAL_MELD}]
                        if r.decision == "play" else [legal_reply(r)])
    result, host = play("basic", [always, greedy()], tmp_path, seed=4, time_control=FAST,
                        policy=FailurePolicy(illegal="forfeit"))
    assert result.forfeited == [0]
    assert result.placings == [2, 1]
    assert result.end_reason == "forfeit"
    assert [e.action for e in failures_of(result, 0)] == ["forfeit"]
    assert isinstance(host.seat(host.peers[0]).received[-1], GameOver)  # a forfeited bot is told the result


def test_forfeit_others_play_on(tmp_path):
    """Ported from test_referee.py (a crash's process side: test_broken_bot_failure_is_recorded_and_game_finishes[crash])."""
    crash = on_request(5, lambda r: [Exit(3)])
    result, _ = play("basic", [crash, greedy(), greedy()], tmp_path, seed=6, time_control=FAST,
                     policy=FailurePolicy(crash="forfeit"))
    assert result.forfeited == [0] and result.placings[0] == 3
    assert result.end_reason == "target"
    assert [e.kind for e in failures_of(result, 0)] == ["crash"]
    assert not result.failures[1] and not result.failures[2]


def test_policy_forfeit_on_timeout_ends_two_seat_game(tmp_path):
    """Ported from test_adversarial.py (a hang's process side: test_referee.py::test_hang_times_out_and_referee_plays_on)."""
    hang = on_request(lambda k: k >= 3, lambda r: None)
    result, host = play("basic", [hang, greedy()], tmp_path, seed=28, time_control=FAST,
                        policy=FailurePolicy(timeout="forfeit"))
    assert result.forfeited == [0] and result.placings == [2, 1]
    assert host.clock.now - 1000.0 == pytest.approx((400 + 50) / 1000, abs=0.02)  # one timeout, on the fake clock


def test_late_reply_then_on_time(tmp_path):
    """Ported from test_referee.py (was timing-marked; the timeout's process side: test_hang_times_out_and_referee_plays_on)."""
    tc = TimeControl(start_ms=10000, decision_ms=200, bank_ms=100, grace_ms=20)
    late = on_request(3, lambda r: [Sleep((r.clock.decision_ms + r.clock.bank_ms_left) + 400), legal_reply(r)])
    result, _ = play("basic", [late, greedy()], tmp_path, seed=16, time_control=tc)
    kinds = [e.kind for e in failures_of(result, 0)]
    # The late answer arrives and is dropped, never applied, and not charged a second time as stale.
    assert "timeout" in kinds and "stale" not in kinds
    assert kinds.count("timeout") <= 2
    assert len(result.latencies_ms[0]) > 10 and max(result.latencies_ms[0][-5:]) < 200


def test_bank_pays_for_a_slow_decision_then_is_spent(tmp_path):
    """The bank and increment on the wall clock, in fake ms: over the decision limit comes out of the bank."""
    tc = TimeControl(start_ms=10000, decision_ms=100, bank_ms=300, increment_ms=0, grace_ms=0)
    slow = on_request(lambda k: k in (3, 4), lambda r: [Sleep(250), legal_reply(r)])
    result, host = play("basic", [slow, greedy()], tmp_path, seed=3, time_control=tc)
    reqs = [m for m in host.seat(host.peers[0]).received if isinstance(m, Request)]
    assert [r.clock.bank_ms_left for r in reqs[:5]] == [300, 300, 300, 150, 0]
    # the 4th request's 250 ms: 100 of limit + 150 of bank, all it had left: answered in time
    assert [e.kind for e in failures_of(result, 0)] == []
    assert result.latencies_ms[0][2:4] == [pytest.approx(250, abs=1), pytest.approx(250, abs=1)]


def test_a_seat_with_its_own_clock(tmp_path):
    """Ported from test_referee.py (the spy bot's log read back; here the messages the scripted bot got)."""
    tc = TimeControl(start_ms=10000, decision_ms=150, grace_ms=20)
    own = TimeControl(start_ms=10000, decision_ms=2000, bank_ms=500, grace_ms=20, clock="wall")
    slow = on_request(lambda k: True, lambda r: [Sleep(1000), legal_reply(r)])  # fine on its own clock only
    result, host = play("basic", [slow, honest], tmp_path, seed=17, time_control=tc, seat_times={0: own},
                        overrides={"end": "deals", "deals": 1, "max_turns": 10})
    assert not result.failures[0] and not result.failures[1]
    clocks = []
    for peer in host.peers:
        got = host.seat(peer).received
        clocks.append({(m.clock.decision_ms, m.clock.bank_ms) for m in got if isinstance(m, NewGame)}
                      | {(m.clock.decision_ms, m.clock.bank_ms_left) for m in got if isinstance(m, Request)})
    assert clocks[0] == {(2000, 500)} and clocks[1] == {(150, 0)}


def test_cpu_clock_charges_cpu_not_waiting(tmp_path):
    """The CPU clock: a bot that waits (no CPU) is not timed out until the wall ceiling; one that computes
    past its limit is, with the CPU it used in the reason (process side: test_clock_fairness.py)."""
    tc = TimeControl(start_ms=10000, decision_ms=100, grace_ms=20, clock="cpu")
    one_deal = {"end": "deals", "deals": 1}
    waits = on_request(3, lambda r: [Sleep(900), legal_reply(r)])  # 7x its 120 ms; the ceiling is 1 s
    result, _ = play("basic", [waits, greedy()], tmp_path / "wait", seed=5, time_control=tc, overrides=one_deal)
    assert not result.failures[0], result.failure_log
    assert result.latencies_ms[0][2] == 0  # charged its CPU (none), not the 900 ms it waited
    # 300 ms of CPU: over at 120 ms; the next request still finds it computing for the rest (180 ms)
    computes = on_request(3, lambda r: [Burn(300), legal_reply(r)])
    result, _ = play("basic", [computes, greedy()], tmp_path / "burn", seed=5, time_control=tc, overrides=one_deal)
    first, second = failures_of(result, 0)
    assert first.kind == second.kind == "timeout" and "of CPU time" in first.reason, first.reason
    assert "(12" in first.reason and "ms used, 0 ms of it the referee's" in first.reason, first.reason
    stuck = on_request(3, lambda r: [Sleep(1500), legal_reply(r)])
    result, _ = play("basic", [stuck, greedy()], tmp_path / "stuck", seed=5, time_control=tc, overrides=one_deal)
    # 1.5 s asleep: past the ceiling (1 s) once; the next request is answered when it wakes, its late reply dropped
    (only,) = failures_of(result, 0)
    assert only.kind == "timeout" and "wall-clock ceiling of 1000 ms" in only.reason, only.reason


def test_too_many_messages_answering_nothing_is_a_stale_failure(tmp_path):
    """MAX_JUNK: at most 8 stale replies a request; the 9th is a stale failure (process side:
    test_referee.py::test_flood_of_stale_messages_is_dropped)."""
    flood = on_request(3, lambda r: [{**legal_reply(r), "seq": 10_000 + i} for i in range(200)] + [legal_reply(r)])
    result, _ = play("basic", [flood, greedy()], tmp_path, seed=9, time_control=FAST,
                     policy=FailurePolicy(stale="retry", strikes=1000))
    stale = failures_of(result, 0)
    assert result.failures[0]["stale"] >= 9
    assert any("more than 8 messages answering nothing" in e.reason for e in stale)
    assert not result.failures[1]


def test_resource_violation_forfeits_by_default(tmp_path):
    """A compartment killed over a limit is a resource failure, a forfeit by default (process side:
    test_adversarial.py::test_memory_limit)."""
    hog = on_request(2, lambda r: [Sleep(50), Exit(-9, violation="went over limits.memory_mb = 200")])
    result, _ = play("basic", [hog, greedy()], tmp_path, seed=24, time_control=FAST)
    (f,) = failures_of(result, 0)
    assert f.kind == "resource" and "limits.memory_mb" in f.reason and f.action == "forfeit"
    assert result.forfeited == [0]


def test_a_bot_that_dies_between_turns_is_charged_before_its_next_turn(tmp_path):
    """Liveness between decisions: a crash after an event, not during a request (process side:
    test_adversarial.py::test_adversarial_bot[crash_random])."""
    seen = [0]

    def dies_on_event(msg):
        if isinstance(msg, Event):
            seen[0] += 1
            if seen[0] == 12:
                return [Exit(4)]
        return honest(msg)
    result, _ = play("basic", [dies_on_event, greedy()], tmp_path, seed=21, time_control=FAST)
    (f,) = failures_of(result, 0)
    assert f.kind == "crash" and "exited with code 4" in f.reason
    assert "between its turns" in f.reason or "while deciding" in f.reason
    assert not result.failures[1] and result.end_reason


def test_a_seat_that_never_started_is_charged_after_the_deal(tmp_path):
    """A start's failure becomes the game's first failure entry, after game_start (process side:
    test_referee.py::test_command_that_does_not_exist)."""
    from arena.referee.game import play_one
    from arena.rules.options import resolve
    from tests.fakehost import FakeHost

    host = FakeHost(tmp_path / "logs")
    peers = [host.add("s0", honest, problem=("crash", "could not start 'x': no such file")), host.add("s1", honest)]
    result = play_one(host, peers, resolve("basic", {}), 1, "g", FAST, FailurePolicy(), tmp_path / "r.jsonl",
                      clocks=host.clock)
    (f,) = failures_of(result, 0)
    assert f.kind == "crash" and "could not start" in f.reason
    _header, entries = read_record(tmp_path / "r.jsonl")
    assert [e["e"] for e in entries].index("failure") > [e["e"] for e in entries].index("deal_start")
    assert not result.failures[1] and result.end_reason
