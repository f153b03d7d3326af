"""A fake ``BotHost`` for the referee's logic: scripted bots in the test's own process, on a fake clock.

``play_one`` asks its host to ``send_many`` a seat's messages, to ``recv`` the seat's next pipe item
(``arena.referee.channel``: Line / Notice / Oversized / Closed) and to ``send_error``; it asks a peer's
compartment whether it is alive, how much CPU it used, how it ended.  ``FakeHost`` answers all of that
without a process: each message the referee sends is decoded as a real bot would get it
(``decode_from_referee``) and handed to the seat's scripted bot, a callable that returns what the bot
does next (``Script``: lines or messages to deliver, or events such as ``Sleep``, ``Burn``, ``Exit``,
a gate ``Notice``, ``Oversized``).  Time is a ``FakeClock`` given to ``play_one(clocks=...)``: a bot
that sleeps or computes moves the fake clock only, so a timeout is judged without any real wait.

What stays a real process's job (the pipe, the gate, the sandbox, the kernel's limits) is tested with
real bots (tests/referee/test_referee.py, test_adversarial.py, tests/security).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from arena.referee import wire
from arena.referee.channel import Closed, Item, Line, Notice, Oversized
from arena.referee.game import GameResult, play_one
from arena.referee.host import Peer
from arena.rules.options import resolve
from arena.settings import BotSpec, FailurePolicy, TimeControl
from protocol.codec import decode_from_referee, encode
from protocol.messages import Error, Hello, Request


# -- what a scripted bot can do ------------------------------------------------------------------
@dataclass(frozen=True)
class Sleep:
    """Wait ``ms`` of fake wall time before the items after it are delivered (no CPU used)."""

    ms: float


@dataclass(frozen=True)
class Burn:
    """Compute for ``ms`` of fake CPU (and as much fake wall time) before the items after it."""

    ms: float


@dataclass(frozen=True)
class Exit:
    """The compartment ends (its pipe closes): exit ``code`` (negative: killed by that signal);
    ``violation``: the limit the watcher says it went over (a resource failure)."""

    code: int = 0
    violation: str | None = None


Action = bytes | str | dict[str, Any] | msgspec.Struct | Sleep | Burn | Exit | Notice | Oversized
Script = Iterable[Action] | None  # None or []: the bot sends nothing
ScriptedBot = Callable[[Any], Script]  # gets each decoded message (NewGame, Request, Event, Error, ...)


class FakeClock:
    """The referee's clocks (``arena.referee.game.Clocks``): fake wall time moved by the host,
    and a thread CPU clock that stays still (the referee's own work costs the seats nothing here)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.cpu = 0.0

    def monotonic(self) -> float:
        return self.now

    def thread_time(self) -> float:
        return self.cpu


class FakeProcess:
    """What the referee asks of a seat's compartment (``compartment.BotProcess``), in memory."""

    pidfd = -1  # no pidfd: liveness asks alive()

    def __init__(self, clock: FakeClock, log_path: Path) -> None:
        self.clock = clock
        self.log_path = log_path
        self.code: int | None = None
        self.ends_at: float | None = None  # fake time the compartment ends
        self.violation: str | None = None
        self._violation_at: str | None = None
        self.burns: list[tuple[float, float]] = []  # fake wall intervals of CPU use

    def alive(self) -> bool:
        if self.ends_at is not None and self.clock.now >= self.ends_at:
            self.violation = self._violation_at
            return False
        return True

    @property
    def flagged(self) -> bool:
        return False

    def cpu_seconds(self) -> float:
        now = self.clock.now
        return sum(max(0.0, min(end, now) - start) for start, end in self.burns)

    def write_log(self, data: bytes) -> None:
        with open(self.log_path, "ab") as f:
            f.write(data)

    def wait_exit(self, seconds: float) -> bool:
        return not self.alive()

    def exit_description(self) -> str:
        if self.alive():
            return "still running"
        assert self.code is not None
        return f"killed by signal {-self.code}" if self.code < 0 else f"exited with code {self.code}"

    def died_of_limits(self) -> bool:
        return not self.alive() and self.violation is not None

    def kill(self) -> None:
        if self.alive():
            self.ends_at, self.code = self.clock.now, -9


@dataclass
class Seat:
    """One scripted seat: its peer (a real ``Peer`` holding a ``FakeProcess``), its bot, its pipe."""

    peer: Peer
    bot: ScriptedBot
    pipe: deque[tuple[float, Item]] = field(default_factory=deque)  # (fake time it arrives, item)
    received: list[Any] = field(default_factory=list)  # every message the bot got, decoded
    errors: list[Any] = field(default_factory=list)  # the referee's error messages among them


class FakeHost:
    """``BotHost``'s side that ``play_one`` uses: ``send_many``, ``recv``, ``send_error``."""

    def __init__(self, log_dir: Path) -> None:
        self.clock = FakeClock()
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.seats: dict[int, Seat] = {}  # id(peer) -> its seat
        self.peers: list[Peer] = []

    def add(self, name: str, bot: ScriptedBot, events: bool = True, problem: tuple[Any, str] | None = None) -> Peer:
        """A seat whose bot has said hello (or, with ``problem``, one that never started)."""
        peer = Peer(BotSpec(name=name, command=f"scripted {name}"), token="fake")
        if problem is None:
            peer.process = FakeProcess(self.clock, self.log_dir / f"{name}.log")  # type: ignore[assignment]
            peer.hello = Hello(name=f"scripted-{name}", events=events)
        else:
            peer.problem = problem
        self.seats[id(peer)] = Seat(peer, bot)
        self.peers.append(peer)
        return peer

    def seat(self, peer: Peer) -> Seat:
        return self.seats[id(peer)]

    # -- what the referee calls ----------------------------------------------------------------
    def send_many(self, peer: Peer, batch: list[bytes]) -> bool:
        proc = peer.process
        if proc is None or not proc.alive():
            return False
        for data in batch:
            self._deliver(self.seat(peer), data)
        return True

    def send_error(self, peer: Peer, kind: str, reason: str, retry: bool, game: str | None = None,
                   seq: int | None = None) -> None:
        self.send_many(peer, [encode(wire.error(kind, reason, retry, game, seq))])

    def recv(self, peer: Peer, timeout_s: float) -> Item | None:
        """The next item that arrives within ``timeout_s`` of fake time (the clock moves to its
        arrival), else None with the clock moved by the whole timeout."""
        seat = self.seat(peer)
        clock = self.clock
        if seat.pipe and seat.pipe[0][0] <= clock.now + timeout_s:
            at, item = seat.pipe.popleft()
            clock.now = max(clock.now, at)
            if isinstance(item, Closed):
                seat.pipe.appendleft((at, item))  # end of file stays
            return item
        clock.now += timeout_s
        return None

    # -- the scripted bot's side ----------------------------------------------------------------
    def _deliver(self, seat: Seat, data: bytes) -> None:
        msg = decode_from_referee(data)
        seat.received.append(msg)
        if isinstance(msg, Error):
            seat.errors.append(msg)
        proc = seat.peer.process
        assert isinstance(proc, FakeProcess)
        if seat.pipe and isinstance(seat.pipe[-1][1], Closed):
            return  # the bot is gone: nothing more comes from it
        at = max(self.clock.now, seat.pipe[-1][0] if seat.pipe else 0.0)
        for action in seat.bot(msg) or ():
            if isinstance(action, Sleep):
                at += action.ms / 1000
            elif isinstance(action, Burn):
                proc.burns.append((at, at + action.ms / 1000))
                at += action.ms / 1000
            elif isinstance(action, Exit):
                proc.ends_at, proc.code, proc._violation_at = at, action.code, action.violation
                seat.pipe.append((at, Closed()))
                return
            elif isinstance(action, (Notice, Oversized)):
                seat.pipe.append((at, action))
            else:
                seat.pipe.append((at, Line(_as_bytes(action))))


def _as_bytes(action: bytes | str | dict[str, Any] | msgspec.Struct) -> bytes:
    if isinstance(action, bytes):
        return action
    if isinstance(action, str):
        return action.encode()
    if isinstance(action, dict):
        return json.dumps(action).encode()
    return encode(action)


# -- scripted bots --------------------------------------------------------------------------------
def legal_reply(req: Request) -> dict[str, Any]:
    """A legal reply, as tests/bots/misbehave.py gives one: draw from the stock, discard the drawn card."""
    base = {"v": 1, "game": req.game, "seq": req.seq}
    if req.decision == "draw":
        return {**base, "type": "draw", "source": "stock"}
    obs = req.observation
    discard = obs.drawn if obs.drawn and not obs.took_discard else obs.hand[0]
    return {**base, "type": "play", "actions": [], "discard": discard}


def honest(msg: Any) -> Script:
    """Answers every request at once with ``legal_reply``."""
    return [legal_reply(msg)] if isinstance(msg, Request) else None


def on_request(n: int | Callable[[int], bool], then: Callable[[Request], Script],
               otherwise: ScriptedBot = honest) -> ScriptedBot:
    """A bot that is ``otherwise`` except at its ``n``-th request (or the requests ``n(k)`` picks), where it does
    ``then(request)``."""
    pick = n if callable(n) else (lambda k: k == n)
    count = [0]

    def bot(msg: Any) -> Script:
        if isinstance(msg, Request):
            count[0] += 1
            if pick(count[0]):
                return then(msg)
        return otherwise(msg)
    return bot


def greedy() -> ScriptedBot:
    """The greedy sample bot (sample_bots/policy_bot.py) answering in-process, through the client
    library's own reply builder."""
    from protocol.client import _reply
    from protocol.messages import NewGame
    from sample_bots.policy_bot import PolicyBot

    bot = PolicyBot("greedy")

    def scripted(msg: Any) -> Script:
        if isinstance(msg, NewGame):
            bot.on_new_game(msg)
        if isinstance(msg, Request):
            return [_reply(bot, msg)]
        return None
    return scripted


def play(variant: str, bots: list[ScriptedBot], tmp_path: Path, seed: int = 1,
         policy: FailurePolicy = FailurePolicy(),
         time_control: TimeControl = TimeControl(start_ms=10000, decision_ms=1000, grace_ms=50),
         overrides: dict[str, Any] | None = None, seat_times: dict[int, TimeControl] | None = None,
         record: bool = True) -> tuple[GameResult, FakeHost]:
    """Play one game between scripted bots (seat i named ``s{i}``), as tests/helpers.py run_game does
    between processes; the record goes to ``tmp_path / "record.jsonl"``."""
    host = FakeHost(tmp_path / "logs")
    peers = [host.add(f"s{i}", bot) for i, bot in enumerate(bots)]
    result = play_one(host, peers, resolve(variant, overrides or {}), seed, f"test-{seed}",  # type: ignore[arg-type]
                      time_control, policy, tmp_path / "record.jsonl" if record else None,
                      seat_times=[(seat_times or {}).get(i) for i in range(len(peers))], clocks=host.clock)
    return result, host
