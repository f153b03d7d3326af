"""The Python client library against a tiny in-test referee (a pyzmq ROUTER)."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import zmq

import protocol
from protocol import codec as mc
from protocol import messages as m
from protocol.client import BotError, endpoint_and_token

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 10_000

TEST_BOT = textwrap.dedent(
    '''
    import json, os, sys
    import msgspec
    from protocol.client import Bot
    from protocol import Meld

    LOG = open(os.environ["TEST_BOT_LOG"], "a")

    def note(**kw):
        LOG.write(json.dumps(kw) + "\\n"); LOG.flush()

    class TestBot(Bot):
        name = "testbot"
        author = "tests"

        def draw(self, obs):
            if os.environ.get("TEST_BOT_FAIL") == "draw":
                raise RuntimeError("boom in draw")
            return "discard" if "discard" in obs.legal_draws else "stock"

        def play(self, obs):
            return {"actions": [Meld(cards=obs.hand[:3]), {"type": "layoff", "meld": 0, "cards": [obs.hand[3]], "end": "low"}],
                    "discard": obs.hand[-1]}

        def on_new_game(self, msg):
            note(hook="new_game", game=msg.game, seat=msg.seat, rules=msg.rules)

        def on_event(self, event):
            note(hook="event", type=type(event).__name__, event=msgspec.to_builtins(event))

        def on_error(self, msg):
            note(hook="error", kind=msg.kind, retry=msg.retry)

        def on_game_over(self, msg):
            note(hook="game_over", placings=msg.placings)

    TestBot().run()
    '''
)


def observation(phase: str) -> m.Observation:
    hand = ["5H", "6H", "7H", "8H", "KC"]
    return m.Observation(
        seat=1, deal=1, turn=1, phase=phase, dealer=0, current=1,  # type: ignore[arg-type]
        hand=hand if phase == "play" else hand[:-1], drawn="KC" if phase == "play" else None,
        took_discard=phase == "play", discard=["2C"], stock_size=30, hand_sizes=[4, len(hand)],
        totals=[0, 0], in_game=[True, True], opened=[False, False],
        melds=[m.TableMeld(id=0, owner=0, kind="run", cards=["9S", "TS", "JK"], wilds=[None, None, "JS"])],
        opening_requirement=0, rebuilds=0, must_go_out_to_meld=False,
        legal_draws=["stock", "discard"] if phase == "draw" else [],
    )


class Referee:
    """A ROUTER with helpers to talk to one bot."""

    def __init__(self) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.sock.setsockopt(zmq.MAXMSGSIZE, m.MAX_MESSAGE_BYTES)
        port = self.sock.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.token = secrets.token_hex(16)

    def recv(self) -> m.Hello | m.Draw | m.Play:
        assert self.sock.poll(WAIT_MS), "no message from the bot"
        frames = self.sock.recv_multipart()
        assert len(frames) == 2, frames
        assert frames[0] == self.token.encode()
        return mc.decode_from_bot(frames[1])

    def send(self, msg: Any) -> None:
        self.sock.send_multipart([self.token.encode(), mc.encode(msg)])

    def close(self) -> None:
        self.sock.close(linger=0)
        self.ctx.term()


@contextmanager
def launched(script: Path, ref: Referee, *, via_env: bool = False, extra_env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), **(extra_env or {}))
    cmd = [sys.executable, str(script)]
    if via_env:
        env.update(ARENA_ENDPOINT=ref.endpoint, ARENA_TOKEN=ref.token)
    else:
        cmd += ["--endpoint", ref.endpoint, "--token", ref.token]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


@pytest.fixture
def ref() -> Iterator[Referee]:
    r = Referee()
    try:
        yield r
    finally:
        r.close()


@pytest.fixture
def bot_script(tmp_path: Path) -> Path:
    p = tmp_path / "testbot.py"
    p.write_text(TEST_BOT)
    return p


def handshake(ref: Referee) -> m.Hello:
    hello = ref.recv()
    assert isinstance(hello, m.Hello)
    ref.send(m.Welcome(name="test-referee", max_message_bytes=m.MAX_MESSAGE_BYTES, protocol=1))
    return hello


def new_game(game: str = "g1") -> m.NewGame:
    return m.NewGame(
        game=game, seat=1, players=["a", "testbot"], rules={"name": "basic", "go_out": "any"},
        clock=m.Clock(decision_ms=1000, bank_ms=0, increment_ms=0, grace_ms=50),
    )


def request(decision: str, seq: int, game: str = "g1") -> m.Request:
    return m.Request(
        game=game, seq=seq, decision=decision, observation=observation(decision),  # type: ignore[arg-type]
        clock=m.DecisionClock(decision_ms=1000, bank_ms_left=0),
    )


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=WAIT_MS / 1000)
    return proc.returncode, err.decode(errors="replace")


@pytest.mark.slow
def test_full_session(ref: Referee, bot_script: Path, tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    with launched(bot_script, ref, extra_env={"TEST_BOT_LOG": str(log)}) as proc:
        hello = handshake(ref)
        assert (hello.name, hello.author, hello.versions, hello.v) == ("testbot", "tests", [1], 1)

        ref.send(new_game())
        ref.send({"v": 1, "type": "from_the_future", "x": 1})  # unknown types are ignored
        ref.send(m.Event(game="g1", event=m.DealStartEvent(deal=1, dealer=0, hand_sizes=[4, 4], upcard="2C", stock_size=30)))
        ref.send({"v": 1, "type": "event", "game": "g1", "event": {"kind": "from_the_future", "x": 1}})  # skipped
        ref.send(request("draw", 7))
        draw = ref.recv()
        assert isinstance(draw, m.Draw)
        assert (draw.game, draw.seq, draw.source) == ("g1", 7, "discard")

        ref.send(m.Error(game="g1", seq=7, kind="stale", reason="just testing", retry=False))
        ref.send({"v": 1, "type": "event", "game": "g1",
                  "event": {"kind": "draw", "seat": 1, "source": "discard", "card": "2C", "new_field": True}})
        ref.send(request("play", 8))
        play = ref.recv()
        assert isinstance(play, m.Play)
        assert (play.game, play.seq, play.discard) == ("g1", 8, "KC")
        assert play.actions == [m.Meld(cards=["5H", "6H", "7H"]), m.Layoff(meld=0, cards=["8H"], end="low")]

        ref.send(m.GameOver(game="g1", placings=[2, 1], totals=[0, 40], reason="test over"))
        ref.send(m.Shutdown(reason="done"))
        code, err = finish(proc)
        assert code == 0, err

    hooks = [json.loads(line) for line in log.read_text().splitlines()]
    assert [h["hook"] for h in hooks] == ["new_game", "event", "error", "event", "game_over"]
    assert hooks[0] == {"hook": "new_game", "game": "g1", "seat": 1, "rules": {"name": "basic", "go_out": "any"}}
    assert hooks[1]["type"] == "DealStartEvent" and hooks[1]["event"]["stock_size"] == 30
    # a field this version does not know is ignored; an event kind it does not know is skipped
    assert hooks[3] == {"hook": "event", "type": "DrawEvent",
                        "event": {"kind": "draw", "seat": 1, "source": "discard", "card": "2C"}}
    assert '"kind":"from_the_future"' not in err
    assert hooks[4]["placings"] == [2, 1]


@pytest.mark.slow
def test_endpoint_from_environment_and_two_games(ref: Referee, bot_script: Path, tmp_path: Path) -> None:
    with launched(bot_script, ref, via_env=True, extra_env={"TEST_BOT_LOG": str(tmp_path / "log")}) as proc:
        handshake(ref)
        for game, seq in (("g1", 1), ("g2", 2)):
            ref.send(new_game(game))
            ref.send(request("draw", seq, game))
            reply = ref.recv()
            assert (reply.game, reply.seq) == (game, seq)  # type: ignore[union-attr]
            ref.send(m.GameOver(game=game, placings=[1, 2], totals=[5, 0], reason="r"))
        ref.send(m.Shutdown(reason="done"))
        assert finish(proc)[0] == 0


@pytest.mark.slow
def test_exception_in_bot_code_is_reported_and_crashes(ref: Referee, bot_script: Path, tmp_path: Path) -> None:
    env = {"TEST_BOT_LOG": str(tmp_path / "log"), "TEST_BOT_FAIL": "draw"}
    with launched(bot_script, ref, extra_env=env) as proc:
        handshake(ref)
        ref.send(new_game())
        ref.send(request("draw", 3))
        code, err = finish(proc)
    assert code != 0
    assert "draw() for game g1 seq 3" in err and "boom in draw" in err and "Traceback" in err


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["version", "token"])
def test_refused_handshake_exits_1(ref: Referee, bot_script: Path, tmp_path: Path, kind: str) -> None:
    with launched(bot_script, ref, extra_env={"TEST_BOT_LOG": str(tmp_path / "log")}) as proc:
        ref.recv()
        ref.send(m.Error(kind=kind, reason="no", retry=False, supported_versions=[1] if kind == "version" else None))  # type: ignore[arg-type]
        assert finish(proc)[0] == 1


@pytest.mark.slow
def test_spec_minimal_bot_plays(ref: Referee, tmp_path: Path) -> None:
    text = protocol.__file__ and Path(protocol.__file__).with_name("SPEC.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- minimal-bot -->\n```python\n(.*?)```", text, flags=re.S)
    assert found, "SPEC.md lost its minimal bot"
    code_lines = found.group(1).strip().splitlines()
    assert len(code_lines) <= 30
    script = tmp_path / "minimal.py"
    script.write_text(found.group(1))
    with launched(script, ref) as proc:
        assert handshake(ref).name == "minimal"
        ref.send(new_game())
        ref.send(request("draw", 1))
        draw = ref.recv()
        assert isinstance(draw, m.Draw) and draw.source == "stock" and draw.seq == 1
        ref.send(request("play", 2))
        play = ref.recv()
        # took_discard is true and KC was drawn, so KC may not be discarded: the highest other card is 8H
        assert isinstance(play, m.Play) and play.seq == 2 and play.actions == [] and play.discard == "8H"
        ref.send(m.Shutdown(reason="done"))
        code, err = finish(proc)
        assert code == 0, err


def test_endpoint_and_token_parsing() -> None:
    assert endpoint_and_token(["--endpoint", "tcp://h:1", "--token", "ab"], {}) == ("tcp://h:1", "ab")
    assert endpoint_and_token(["--x", "--endpoint=tcp://h:2", "--token=cd"], {}) == ("tcp://h:2", "cd")
    env = {"ARENA_ENDPOINT": "tcp://h:3", "ARENA_TOKEN": "ef"}
    assert endpoint_and_token([], env) == ("tcp://h:3", "ef")
    assert endpoint_and_token(["--token", "zz"], env) == ("tcp://h:3", "zz")
    with pytest.raises(BotError):
        endpoint_and_token([], {})
