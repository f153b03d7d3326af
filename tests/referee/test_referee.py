"""The referee with real bot processes over ZeroMQ: every preset, hiding, failures, hygiene."""

from __future__ import annotations

import json

import pytest

from arena.referee.entries import Timed
from arena.rules.presets import PRESETS
from arena.rules.record import Header, replay
from arena.settings import FailurePolicy, TimeControl
from tests.conftest import arena_processes, misbehave, run_game

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.usefixtures("no_leaks")]

FAST = TimeControl(start_ms=10000, decision_ms=400, grace_ms=50)


def read_record(path):
    lines = [json.loads(x) for x in open(path)]
    return lines[0], lines[1:]


@pytest.mark.parametrize("variant", list(PRESETS))
def test_every_preset_plays_to_the_end_between_processes(variant, tmp_path):
    lo, hi = PRESETS[variant].players
    seats = [lo, hi] if variant in ("basic", "czech") else [min(hi, 3)]
    for n in seats:
        bots = (["greedy", "random"] * 4)[:n]
        result, _ = run_game(variant, bots, tmp_path / str(n), seed=n)
        assert sorted(result.placings)[0] == 1 and len(result.placings) == n
        assert all(not f for f in result.failures), result.failures
        header, entries = read_record(tmp_path / str(n) / "record.jsonl")
        game = replay(Header.from_data(header), entries)
        assert game.totals == result.totals


def test_six_and_five_seat_tables(tmp_path):
    for n, variant in ((6, "german"), (5, "international")):
        result, _ = run_game(variant, ["greedy"] * n, tmp_path / str(n), seed=2)
        assert len(result.totals) == n and result.end_reason


def test_same_seed_same_record(tmp_path):
    a, _ = run_game("german", ["greedy", "random", "greedy"], tmp_path / "a", seed=5)
    b, _ = run_game("german", ["greedy", "random", "greedy"], tmp_path / "b", seed=5)
    strip = lambda rec: [line.entry if isinstance(line, Timed) else line for line in rec]  # noqa: E731
    assert strip(a.record) == strip(b.record)
    assert any(isinstance(line, Timed) for line in a.record)


def test_spy_never_sees_another_hand_or_the_stock(tmp_path):
    _result, _ = run_game("basic", [misbehave("spy"), "greedy", "greedy"], tmp_path, seed=3)
    _header, entries = read_record(tmp_path / "record.jsonl")
    received = [json.loads(x[4:]) for x in open(tmp_path / "logs" / "s0.log") if x.startswith("SPY ")]
    assert received, "the spy received nothing"
    text = "\n".join(json.dumps(m) for m in received)
    assert '"hands"' not in text and '"stock"' not in text.replace('"stock_size"', "").replace('"source": "stock"', "").replace('["stock"', "").replace('"stock"]', "").replace(', "stock"', "")
    for m in received:
        if m["type"] == "event" and m["event"]["kind"] == "draw" and m["event"]["source"] == "stock":
            assert "card" not in m["event"]
    # Per deal: the cards other seats still held at the end, and the stock, never reached the spy.
    deal_msgs: dict[int, list[str]] = {}
    current = 0
    for m in received:
        if m["type"] == "event" and m["event"]["kind"] == "deal_start":
            current = m["event"]["deal"]
        deal_msgs.setdefault(current, []).append(json.dumps(m))
    public: set[str] = set()  # cards that were face up at some point of the deal
    for e in entries:
        if e["e"] == "deal_start":
            public = {e["upcard"]}
        elif e["e"] == "play":
            public.update(c for a in e["actions"] for c in a.get("cards", [a.get("card")]) if c)
            if e["discard"]:
                public.add(e["discard"])
        elif e["e"] == "rebuild" and e.get("upcard"):
            public.add(e["upcard"])
        elif e["e"] == "deal_end":
            secret = {c for seat, hand in enumerate(e["hands"]) if seat != 0 for c in hand} - public
            seen = "\n".join(deal_msgs.get(e["deal"], []))
            leaked = [c for c in secret if f'"{c}"' in seen]
            assert not leaked, f"deal {e['deal']}: the spy saw {leaked} from another hand"


def failures_of(result, seat):
    return [e for e in result.failure_log if e.seat == seat]


# The referee's logic for every kind (malformed, oversized, illegal, stale, timeout, exit_clean, ...) is
# tested in-process (test_referee_logic.py); each kind keeps one real-process test: crash here, timeout in
# test_hang_times_out_and_referee_plays_on, illegal in test_illegal_meld_..., stale in the flood test,
# malformed and oversized in test_adversarial.py::test_oversized_and_non_utf8.
@pytest.mark.parametrize("mode,kind", [
    ("crash", "crash"),
])
def test_broken_bot_failure_is_recorded_and_game_finishes(mode, kind, tmp_path):
    result, _ = run_game("basic", [misbehave(mode), "greedy"], tmp_path, seed=11, time_control=FAST)
    kinds = [e.kind for e in failures_of(result, 0)]
    assert kind in kinds, (mode, result.failure_log)
    assert all(e.reason for e in failures_of(result, 0))
    assert not result.failures[1], "the honest bot was affected"
    header, entries = read_record(tmp_path / "record.jsonl")
    assert any(e.get("e") == "failure" and e["kind"] == kind for e in entries)
    replay(Header.from_data(header), entries)  # the record still verifies


def test_illegal_meld_gets_engine_reason_and_retry_then_default(tmp_path):
    policy = FailurePolicy(illegal="retry", strikes=2)
    result, _ = run_game("basic", [misbehave("illegal"), "greedy"], tmp_path, seed=4, policy=policy, time_control=FAST)
    ill = [e for e in failures_of(result, 0) if e.kind == "illegal"]
    assert ill and "not in your hand" in ill[0].reason and "RULES" in ill[0].reason
    assert ill[0].action == "retry" and any(e.action == "default" for e in ill)
    assert result.end_reason


def test_hang_times_out_and_referee_plays_on(tmp_path):
    # One short deal: every later turn of the hanging bot costs a whole timeout. A 500 ms limit: the
    # honest seat (about 1 ms a decision) is never timed out, even on a loaded machine.
    result, _ = run_game("basic", [misbehave("hang"), "greedy"], tmp_path, seed=8,
                         time_control=TimeControl(start_ms=10000, decision_ms=500, grace_ms=50),
                         overrides={"end": "deals", "deals": 1, "max_turns": 12})
    kinds = [e.kind for e in failures_of(result, 0)]
    assert kinds.count("timeout") >= 1
    assert result.end_reason and not result.failures[1]


@pytest.mark.timing  # asserts on an honest seat's clock under a flood
def test_flood_of_stale_messages_is_dropped(tmp_path):
    result, _ = run_game("basic", [misbehave("flood"), "greedy"], tmp_path, seed=9, time_control=FAST,
                         policy=FailurePolicy(stale="retry", strikes=1000))
    assert result.failures[0]["stale"] >= 200
    assert not result.failures[1]


@pytest.mark.parametrize("imposter_first", [True, False])
def test_connecting_with_another_seats_token(imposter_first, tmp_path):
    # The imposter uses the honest seat's token; either order of start is caught as "token".
    if imposter_first:
        commands, other = [misbehave("other_token"), "greedy"], {0: 1}
        bad, good = 0, 1
    else:
        commands, other = ["greedy", misbehave("other_token")], {1: 0}
        bad, good = 1, 0
    result, _ = run_game("basic", commands, tmp_path, seed=12, other_token_of=other,
                         time_control=TimeControl(start_ms=1500, decision_ms=400, grace_ms=50))
    kinds = [e.kind for e in failures_of(result, bad)]
    assert kinds == ["token"], result.failure_log
    assert not result.failures[good]
    assert result.end_reason


def test_bot_that_never_says_hello(tmp_path):
    result, _ = run_game("basic", [misbehave("no_hello"), "greedy"], tmp_path, seed=13,
                         time_control=TimeControl(start_ms=800, decision_ms=400, grace_ms=50))
    kinds = [e.kind for e in failures_of(result, 0)]
    assert kinds and kinds[0] in ("token", "timeout")


def test_command_that_does_not_exist(tmp_path):
    result, _ = run_game("basic", ["/nonexistent/bot --x", "greedy"], tmp_path, seed=14, time_control=FAST)
    f = failures_of(result, 0)
    assert f[0].kind == "crash" and "could not start" in f[0].reason


def test_chatty_bot_log_is_capped_and_keeps_the_latest_output(tmp_path):
    result, _ = run_game("basic", [misbehave("chatty"), "greedy"], tmp_path, seed=15, time_control=FAST)
    assert not result.failures[0]
    log = tmp_path / "logs" / "s0.log"
    older = tmp_path / "logs" / "s0.log.1"
    assert log.exists() and older.exists()
    assert log.stat().st_size <= 1 << 20 and older.stat().st_size <= 1 << 20  # 6 MiB written, 2 MiB kept
    assert b"CHATTY END" in log.read_bytes() + older.read_bytes()  # the latest output, not only the first MiB


def test_no_process_survives(tmp_path):
    run_game("basic", ["greedy", misbehave("hang")], tmp_path, seed=1,
             time_control=TimeControl(start_ms=10000, decision_ms=100, grace_ms=10),
             overrides={"end": "deals", "deals": 1, "max_turns": 12})
    assert not arena_processes()


def test_a_crash_entry_carries_the_bots_last_output_and_its_log(tmp_path):
    result, _ = run_game("basic", [misbehave("crash"), "greedy"], tmp_path, seed=18, time_control=FAST)
    crash = next(f for f in result.failure_log if f.kind == "crash")
    assert crash.log and crash.log.endswith("s0.log") and "===== game test-18: seat 0" in open(crash.log).read()
    assert crash.output and "exiting with code 3" in crash.output  # what the bot printed before it died
