"""One game between bots over the protocol (docs/ARCHITECTURE.md sections 3 and 4).

``play_game`` deals through the engine, asks each seat's bot the two
decisions of a turn, applies the answers through the engine (which alone
decides what is legal), broadcasts the public events, and enforces the clocks
and the failure policy.  Whatever a bot does, the game ends and the referee
does not crash: every failure is recorded with its kind and reason and
handled by the policy (``retry``, ``default`` move, or ``forfeit``).

The game record is the engine's log with the referee's own lines woven in
(``arena.referee.entries``): ``Failure`` entries, and the latency in ms of
every answered decision beside its draw or play entry (``Timed``).  Every
message is built and read through ``arena.referee.wire``.

One loop (``_decide``) asks a seat for a decision until it has a move or
the policy gives up on the bot; ``_ask`` returns a typed outcome
(``Answered`` or ``Failed``), which ``on_outcome`` (a public hook, used by
``arena check-bot``) sees before the referee acts on it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena.failures import Kind
from arena.failures import row as failure_row
from arena.referee import wire
from arena.referee.channel import Closed, Notice, Oversized
from arena.referee.endpoint import UNITS_PER_REQUEST
from arena.referee.entries import Failure, Line, Timed, encode_line
from arena.referee.host import BotHost, Peer
from arena.referee.launch import log_tail
from arena.referee.liveness import Liveness
from arena.rules.actions import STOCK, IllegalAction, Play
from arena.rules.game import CheckedPlay, Game, Phase
from arena.rules.log import DealEnd, DrawEntry, Entry, PlayEntry
from arena.rules.options import RuleSet
from arena.rules.record import header_of
from arena.rules.suits import SuitMap
from arena.settings import FailurePolicy, TimeControl
from arena.untrusted import clipped
from protocol.codec import decode_from_bot, encode
from protocol.messages import MAX_MESSAGE_BYTES, Clock, Draw, Hello, MessageError
from protocol.messages import Play as PlayMessage

MAX_RECORDED_STALE = 20  # per seat and game; more are counted, not written out
MAX_RECORDED_FAILURES = 50  # per seat and game, all kinds (stale among them); more are counted, not written out
# A reason's size (SPEC 9): a bot's string quoted in it is cut to untrusted.QUOTE_CHARS (80) characters,
# a decoder's detail (which quotes the bot's values) to DETAIL_CHARS, and the whole reason to REASON_CHARS.
DETAIL_CHARS, REASON_CHARS = 160, 400
FAILURE_OUTPUT_LINES, FAILURE_OUTPUT_BYTES = 10, 2048  # what a failure entry keeps of the bot's last output
CPU_POLL_S = 0.005  # how often the CPU clock of a deciding bot is read while it thinks
WALL_CEILING_FACTOR = 4  # CPU clock: a decision also ends after this many times its limit in wall time...
WALL_CEILING_MIN_MS = 1000  # ...and never sooner than this: a loaded machine must not time out a bot that computes
OUTBOX_FLUSH = 64  # queued events per bot that are sent without waiting for its next request
# Messages that answer nothing asked (stale, out of turn, a hello again) a request tolerates; one
# more is a ``stale`` failure: the referee decodes at most MAX_JUNK + 1 messages per request.
MAX_JUNK = 8


class Clocks(Protocol):
    """The two clocks a decision is timed by: the ``time`` module itself, or a test's fake
    (tests/fakehost.py) so timeouts are judged without waiting."""

    def monotonic(self) -> float: ...

    def thread_time(self) -> float: ...


@dataclass
class SeatState:
    seat: int
    peer: Peer
    bank_left: int
    strikes: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    stale_recorded: int = 0
    recorded: int = 0  # failure entries written for this seat in this game (MAX_RECORDED_FAILURES)
    referee_plays: bool = False  # the bot is gone for this game: the referee plays safe moves
    latencies: list[float] = field(default_factory=list)
    answered_ms: float | None = None  # latency of the decision being applied, if the bot answered it
    outbox: list[bytes] = field(default_factory=list)  # encoded events not sent yet (see Referee._flush)
    timed_out: set[int] = field(default_factory=set)  # seqs that timed out: their late replies are not charged again
    time: TimeControl = TimeControl()  # this seat's clocks (a person's seat may have a longer limit)
    cpu_clock: bool = False  # charged the CPU of its compartment (Referee._cpu_clock, once a game)


@dataclass(frozen=True, slots=True)
class Answered:
    """The bot answered the open request in time, with a reply of the kind asked (not yet checked legal)."""

    message: Draw | PlayMessage
    ms: float  # the time charged


@dataclass(frozen=True, slots=True)
class Failed:
    """The request failed; the failure was recorded and the policy chose ``outcome``."""

    outcome: str  # "retry", "default" or "forfeit"


Outcome = Answered | Failed


@dataclass
class GameResult:
    game_id: str
    seed: int
    seats: list[str]
    placings: list[int]
    totals: list[int]
    failures: list[dict[str, int]]
    forfeited: list[int]
    end_reason: str
    deals: int
    turn_capped: int
    decisions: int
    latencies_ms: list[list[float]]
    record: list[Line]
    record_path: str | None = None
    failure_log: list[Failure] = field(default_factory=list)
    hellos: list[str | None] = field(default_factory=list)  # the name each seat's bot gave in its hello


class Referee:
    """Plays one game on a ``BotHost`` whose peers have been started."""

    def __init__(self, host: BotHost, peers: list[Peer], rules: RuleSet, seed: int, game_id: str,
                 time_control: TimeControl, policy: FailurePolicy,
                 on_entry: Callable[[Line], None] | None = None,
                 suit_map: SuitMap | None = None, seat_times: Sequence[TimeControl | None] = (),
                 clocks: Clocks = time) -> None:
        self.host = host
        self.clocks = clocks
        self.rules = rules
        self.game_id = game_id
        self.time = time_control
        self.policy = policy
        self.on_entry = on_entry or (lambda _e: None)
        self.game = Game(rules, len(peers), seed, suit_map)
        times = [(seat_times[i] if i < len(seat_times) else None) or time_control for i in range(len(peers))]
        self.seats = [SeatState(i, p, times[i].bank_ms, time=times[i]) for i, p in enumerate(peers)]
        for st in self.seats:
            st.cpu_clock = self._cpu_clock(st)
        # who follows the events (a bot that said events: false in its hello never gets one built)
        self._followers = [st for st in self.seats if st.peer.ready and st.peer.wants_events]
        self.record: list[Line] = []
        self.hellos: list[str | None] = []
        self.failure_log: list[Failure] = []
        self.decisions = 0
        self._liveness = Liveness()

    # -- the game loop ---------------------------------------------------------------
    def run(self) -> GameResult:
        g = self.game
        rules_data = self.rules.to_data()
        names = [s.peer.spec.name for s in self.seats]
        # Who played each seat: the hello of the bot behind that seat's own gate (None: it never said one).
        self.hellos = [st.peer.hello.name if st.peer.hello is not None else None for st in self.seats]
        for st in self.seats:
            if st.peer.ready:
                if st.peer.process is not None:  # the bot's log says where each game starts
                    st.peer.process.write_log(f"\n===== game {self.game_id}: seat {st.seat} of {names} =====\n".encode())
                tc = st.time
                clock = Clock(decision_ms=tc.decision_ms, bank_ms=tc.bank_ms, increment_ms=tc.increment_ms,
                              grace_ms=tc.grace_ms, clock=tc.clock)
                self._send(st, encode(wire.new_game(self.game_id, st.seat, names, rules_data, clock)))
        self._absorb(list(g.log))
        # Bots that never started are charged after the deal is recorded: their forfeit is an engine
        # entry of this game, so it follows game_start in the record (and is recorded once).
        for st in self.seats:
            if not st.peer.ready:
                kind, reason = st.peer.problem or ("timeout", "the bot is not connected")
                self._fail(st, kind, reason, startup=True)
        while not g.over:
            st = self.seats[g.current]
            st.answered_ms = None
            move = self._decide(st, "draw" if g.phase is Phase.DRAW else "play")
            if move is not None:
                self._absorb(g.draw(move) if isinstance(move, str) else g.play(move), st.answered_ms)
            self._check_gone()
        result = encode(wire.game_over(self.game_id, g.placings(), g.totals, g.end_reason))
        for st in self.seats:
            # Forfeited bots are told too (SPEC 9); bots that are gone are not.
            if st.peer.ready and st.peer.alive() and (not st.referee_plays or st.seat in g.forfeited):
                self._send(st, result)
        return self._result()

    def _result(self) -> GameResult:
        g = self.game
        return GameResult(
            game_id=self.game_id, seed=g.seed, seats=[s.peer.spec.name for s in self.seats],
            placings=g.placings(), totals=list(g.totals), failures=[dict(s.failures) for s in self.seats],
            forfeited=list(g.forfeited), end_reason=g.end_reason, deals=g.deal_no,
            turn_capped=sum(1 for e in g.log if isinstance(e, DealEnd) and e.reason == "turn_cap"),
            decisions=self.decisions, latencies_ms=[s.latencies for s in self.seats], record=self.record,
            failure_log=self.failure_log, hellos=self.hellos,
        )

    def _absorb(self, entries: list[Entry], answered_ms: float | None = None) -> None:
        """Record engine entries (the action's latency beside its entry) and broadcast their public events."""
        listeners = [st for st in self._followers if not st.referee_plays] if self._followers else None
        for entry in entries:
            line: Line = entry
            # on the action itself (a stock rebuild may come before a draw)
            if answered_ms is not None and isinstance(entry, (DrawEntry, PlayEntry)):
                line = Timed(entry, answered_ms)
                answered_ms = None
            self.record.append(line)
            self.on_entry(line)
            if not listeners:
                continue  # no bot follows the events: none is built
            for ev in wire.events(entry):
                data = encode(wire.event(self.game_id, ev))
                for st in listeners:
                    st.outbox.append(data)
                    if len(st.outbox) >= OUTBOX_FLUSH:
                        self._flush(st)

    def _flush(self, st: SeatState) -> None:
        """Send a bot its queued events.  Events wait until the bot is next sent anything, so a
        bot wakes once per request instead of once per event; each bot still gets every event,
        in order, before the request or game_over that follows it (in the same write)."""
        if st.outbox:
            self.host.send_many(st.peer, st.outbox)
            st.outbox.clear()

    def _send(self, st: SeatState, data: bytes) -> bool:
        batch = [*st.outbox, data]
        st.outbox.clear()
        return self.host.send_many(st.peer, batch)

    # -- decisions ------------------------------------------------------------------------
    def _decide(self, st: SeatState, decision: str) -> str | Play | CheckedPlay | None:
        """Ask ``st`` for a draw source or a play until it gives a legal one, or the policy
        says otherwise: the default move, or None when the seat forfeited."""
        while True:
            if st.referee_plays:
                return self._default(decision)
            outcome = self.on_outcome(st, decision, self._ask(st, decision))
            if isinstance(outcome, Answered):
                cpu_clock = st.cpu_clock
                tick = self.clocks.thread_time() if cpu_clock else 0.0
                try:
                    move = self._legal(outcome.message)
                except IllegalAction as e:
                    policy = self._fail(st, "illegal", str(e), seq=st.peer.seq)
                else:  # on the CPU clock the referee's own work on the reply is the seat's too
                    ours = (self.clocks.thread_time() - tick) * 1000 if cpu_clock else 0.0
                    self._accept(st, outcome.ms + ours)
                    return move
            else:
                policy = outcome.outcome
            if policy == "retry":
                continue
            if policy == "default":
                return self._default(decision)
            return None  # forfeited

    def _legal(self, msg: Draw | PlayMessage) -> str | CheckedPlay:
        """The engine move of a reply, checked by the engine (IllegalAction says why not); a checked
        play is applied without being judged again."""
        if isinstance(msg, Draw):
            self.game.verify_draw(msg.source)
            return msg.source
        return self.game.verify_play(wire.play_from_message(msg))

    def _default(self, decision: str) -> str | Play:
        """The ``default`` move (docs/ARCHITECTURE.md section 4): draw from the stock, discard safely."""
        return STOCK if decision == "draw" else self.game.safe_play()

    def on_outcome(self, st: SeatState, decision: str, outcome: Outcome) -> Outcome:
        """Hook: sees every request's outcome before the referee acts on it (``st.peer.seq`` is the
        request's seq) and may replace it, e.g. with ``Failed(self.reject(...))``.  Returns it as is."""
        return outcome

    def reject(self, st: SeatState, kind: Kind, reason: str, seq: int | None = None) -> str:
        """Treat the request as failed with ``kind``: recorded, told to the bot, the policy's outcome returned."""
        return self._fail(st, kind, reason, seq=seq)

    def _accept(self, st: SeatState, latency_ms: float) -> None:
        self.decisions += 1
        st.answered_ms = round(latency_ms, 3)
        st.latencies.append(st.answered_ms)
        over = latency_ms - st.time.decision_ms
        if over > 0:
            st.bank_left = max(0, st.bank_left - int(over + 0.999))
        st.bank_left += st.time.increment_ms

    @staticmethod
    def _cpu_clock(st: SeatState) -> bool:
        return st.time.clock == "cpu" and st.peer.process is not None and not st.peer.spec.remote

    def _ask(self, st: SeatState, decision: str) -> Outcome:
        """Send a request and wait for its reply: ``Answered``, or ``Failed`` with the policy's outcome
        once the failure is recorded.  Only this bot's pipe is read meanwhile.  On the CPU clock the
        decision is charged the CPU of the bot's compartment and the referee's own CPU on the bot's
        messages (decoding, dropping); at most ``MAX_JUNK`` messages that answer nothing are taken."""
        peer, tc = st.peer, st.time
        seq = peer.next_seq()
        data = encode(wire.request(self.game_id, seq, decision, self.game.observation(st.seat),
                                   tc.decision_ms, st.bank_left))
        batch = st.outbox  # the events it has not seen yet, and the request, in one write
        batch.append(data)
        st.outbox = []
        proc = peer.process
        cpu_clock = st.cpu_clock and proc is not None
        cpu0 = proc.cpu_seconds() if cpu_clock and proc is not None else 0.0
        t0 = self.clocks.monotonic()
        if not self.host.send_many(peer, batch):
            if not peer.alive():
                return Failed(self._died(st, decision))
            return Failed(self._fail(st, "disconnect", "the bot is not connected or stopped reading its messages"))
        limit_ms = tc.decision_ms + st.bank_left + tc.grace_ms
        wall_ms = (tc.wall_ms or max(WALL_CEILING_FACTOR * limit_ms, WALL_CEILING_MIN_MS)) if cpu_clock else limit_ms
        deadline = t0 + wall_ms / 1000
        used_ms = ours_ms = 0.0  # the bot's compartment's CPU, and the referee's own on its messages
        junk = 0
        while True:
            left = deadline - self.clocks.monotonic()
            if left <= 0:
                break
            if not cpu_clock:  # the wall clock charges latency: no CPU clock is read
                item = self.host.recv(peer, left)
                if item is None:
                    continue
                charged = (self.clocks.monotonic() - t0) * 1000  # on arrival: the referee's decoding is not the bot's
                taken = self._take(st, item, seq, decision)
            else:
                assert proc is not None
                tick = self.clocks.thread_time()  # the referee's CPU on this bot's messages: reading them (waiting costs none)
                item = self.host.recv(peer, min(left, CPU_POLL_S))
                if item is None:
                    ours_ms += (self.clocks.thread_time() - tick) * 1000
                used_ms = max(0.0, (proc.cpu_seconds() - cpu0) * 1000) + ours_ms
                if used_ms > limit_ms:
                    break
                if item is None:
                    continue
                try:
                    taken = self._take(st, item, seq, decision)
                finally:
                    spent = (self.clocks.thread_time() - tick) * 1000
                    ours_ms += spent
                charged = used_ms + spent
            if isinstance(taken, Failed):
                return taken
            if taken == "junk":
                junk += 1
                if junk > MAX_JUNK:
                    return Failed(self._fail(st, "stale", f"more than {MAX_JUNK} messages answering nothing asked "
                                                          f"(stale, out of turn, a hello) while seq {seq} is asked",
                                             seq=seq))
                continue
            if isinstance(taken, str):  # a notice: nothing to charge
                continue
            if charged > limit_ms:
                used_ms = charged
                break  # arrived, but over the limit
            return Answered(taken, charged)
        if not peer.alive():
            return Failed(self._died(st, decision))
        st.timed_out.add(seq)
        budget = f"{tc.decision_ms} ms (+{st.bank_left} ms bank, +{tc.grace_ms} ms grace)"
        if cpu_clock and used_ms > limit_ms:
            reason = (f"no {decision} reply within {budget} of CPU time ({used_ms:.0f} ms used, {ours_ms:.0f} ms "
                      "of it the referee's on its messages)")
        elif cpu_clock:
            reason = f"no {decision} reply within the wall-clock ceiling of {wall_ms} ms"
        else:
            reason = f"no {decision} reply within {budget}"
        return Failed(self._fail(st, "timeout", reason, seq=seq))

    def _take(self, st: SeatState, item: Any, seq: int, decision: str) -> Draw | PlayMessage | Failed | str:
        """One item from the bot's pipe while ``seq`` is asked: the reply (of the kind asked, not yet
        checked legal), ``Failed``, ``"junk"`` (a message that answers nothing asked, dropped) or
        ``"notice"`` (a gate notice with nothing to charge)."""
        peer = st.peer
        if isinstance(item, Closed):
            return Failed(self._died(st, decision))
        if isinstance(item, Oversized):
            return Failed(self._fail(st, "oversized", f"a message of {item.size} bytes, over the "
                                                      f"{MAX_MESSAGE_BYTES}-byte limit", seq=seq))
        if isinstance(item, Notice):
            outcome = self._notice(st, item, seq)
            return Failed(outcome) if outcome is not None else "notice"
        try:
            msg = decode_from_bot(item.data)
        except MessageError as e:
            if e.shape and e.seq is not None and (e.seq != seq or e.game != self.game_id):
                self._stale(st, e.seq, f"a reply to seq {e.seq} (game {clipped(e.game)}) while seq {seq} is "
                                       "asked, and of the wrong shape")
                return "junk"
            return Failed(self._fail(st, e.kind, clipped(e.reason, DETAIL_CHARS), seq=seq))
        if isinstance(msg, Hello):
            self.host.send_error(peer, "protocol", "hello again in the middle of a game is ignored", retry=False,
                                 game=self.game_id, seq=seq)
            return "junk"
        if msg.game != self.game_id or msg.seq != seq:
            kind = "draw" if isinstance(msg, Draw) else "play"
            self._stale(st, msg.seq if msg.game == self.game_id else None,
                        f"a {kind} reply for seq {msg.seq} of game {clipped(msg.game)} "
                        f"while seq {seq} of game {self.game_id} is asked")
            return "junk"
        want = Draw if decision == "draw" else PlayMessage
        if not isinstance(msg, want):
            return Failed(self._fail(st, "malformed", f"asked for a {decision} decision, got a "
                                                      f"{'draw' if isinstance(msg, Draw) else 'play'} reply", seq=seq))
        return msg

    def _notice(self, st: SeatState, notice: Notice, seq: int) -> str | None:
        """What the bot's gate reports about its socket: a failure outcome, or None (nothing to charge)."""
        if notice.word == "multipart":
            return self._fail(st, "malformed", f"a multipart message ({notice.arg} frames): send every message "
                                               "as one frame", seq=seq)
        if notice.word == "oversized":
            return self._fail(st, "oversized", f"a message of {notice.arg} bytes, over the {MAX_MESSAGE_BYTES}-byte "
                                               "limit", seq=seq)
        if notice.word == "overflow":
            if st.peer.process is not None:
                st.peer.process.wait_exit(1.0)
            return self._overflowed(st, notice.arg, "", seq)
        if notice.word == "flood":  # the endpoint reads no more for this request (endpoint.UNITS_PER_REQUEST)
            return self._fail(st, "malformed", f"{notice.arg} ZeroMQ frames and commands while seq {seq} is asked, "
                                               f"more than {UNITS_PER_REQUEST}: send one message per reply and "
                                               "nothing else", seq=seq)
        if notice.word == "dropped":
            self._stale(st, None, f"{notice.arg} messages were dropped unread: sent while no request was open")
        return None

    @staticmethod
    def _exit(peer: Peer) -> str:
        return peer.process.exit_description() if peer.process is not None else "disconnected"

    def _died(self, st: SeatState, decision: str | None) -> str:
        """Record a bot whose compartment ended: over a resource limit, or a crash (or a person who left)."""
        if st.peer.left is not None:
            return self._left(st, st.peer.left)
        proc = st.peer.process
        if proc is not None:
            proc.wait_exit(1.0)
        while_ = f" while deciding {decision}" if decision else " between its turns"
        last = self._last_notice(st.peer)
        if last is not None and last.word == "overflow":
            return self._overflowed(st, last.arg, while_)
        if proc is not None and proc.violation is not None:
            return self._fail(st, "resource", f"the bot {proc.violation}{while_}")
        kind: Kind = "resource" if proc is not None and proc.died_of_limits() else "crash"
        return self._fail(st, kind, f"the bot {self._exit(st.peer)}{while_}")

    def _left(self, st: SeatState, reason: str) -> str:
        """A person left the seat (the human seat's ``q``): a forfeit with their reason, whatever the
        policy, since no one is left to retry for and the referee does not play a person's seat."""
        st.failures["disconnect"] += 1
        reason = clipped(reason, REASON_CHARS)
        self._log_failure(st, "disconnect", reason, "forfeit", final=True)
        st.referee_plays = True
        self._absorb(self.game.forfeit(st.seat, reason, "disconnect"))
        return "forfeit"

    def _overflowed(self, st: SeatState, mib: str, while_: str, seq: int | None = None) -> str:
        """The gate ended on a message too big for it (its memory cap is ``mib`` MiB)."""
        return self._fail(st, "oversized", f"a multipart message too big for its gate (which may hold {mib} MiB)"
                                           f"{while_}: the connection was closed", seq=seq)

    def _last_notice(self, peer: Peer) -> Notice | None:
        """The gate's last notice before it ended (what is left in a dead bot's pipe is bounded)."""
        last = None
        for _ in range(10_000):
            item = self.host.recv(peer, 0)
            if item is None or isinstance(item, Closed):
                break
            if isinstance(item, Notice) and item.word != "exit":
                last = item
        return last

    def _check_gone(self) -> None:
        """Between two decisions: bots that ended (or were killed over a limit) while not on turn
        are charged now, so a game never changes under a decision in flight (one poll of the
        compartments' pidfds for all seats, ``arena.referee.liveness``)."""
        for i in self._liveness.ended([st.peer.process for st in self.seats]):
            st = self.seats[i]
            if self.game.over:
                return
            if st.referee_plays or not st.peer.ready or st.peer.process is None:
                continue
            self._died(st, None)

    # -- failures ---------------------------------------------------------------------------
    def _stale(self, st: SeatState, seq: int | None, reason: str) -> None:
        """Stale and out-of-turn replies are dropped and logged, never applied; a late reply to a
        request already charged as a timeout is dropped without a second charge."""
        if seq is not None and seq in st.timed_out:
            return
        st.failures["stale"] += 1
        reason = clipped(reason, REASON_CHARS)
        if st.stale_recorded < MAX_RECORDED_STALE:
            st.stale_recorded += 1
            self._log_failure(st, "stale", reason, "dropped")
            self.host.send_error(st.peer, "stale", f"dropped: {reason}", retry=False, game=self.game_id, seq=seq)

    def _log_failure(self, st: SeatState, kind: Kind, reason: str, action: str, final: bool = False) -> None:
        """Write a failure entry, unless this seat already has MAX_RECORDED_FAILURES in this game (its
        failures are still counted in ``failures`` and the policy still applies); the ``final`` one,
        after which the seat asks nothing more (forfeit, or gone), is always written: one more at most."""
        if st.recorded >= MAX_RECORDED_FAILURES and not final:
            return
        st.recorded += 1
        g = self.game
        proc = st.peer.process
        # What the bot last wrote, and where the rest is: read only for failures worth reading (not stale).
        log = str(proc.log_path) if proc is not None else None
        output = (log_tail(proc.log_path, FAILURE_OUTPUT_LINES, FAILURE_OUTPUT_BYTES) or None) \
            if proc is not None and kind != "stale" else None
        entry = Failure(st.seat, st.peer.spec.name, kind, clipped(reason, REASON_CHARS), action, g.deal_no,
                        g.turn + 1, output=output, log=log)
        self.record.append(entry)
        self.failure_log.append(entry)
        self.on_entry(entry)

    def _fail(self, st: SeatState, kind: Kind, reason: str, seq: int | None = None, startup: bool = False) -> str:
        """Record a failure and apply the policy: returns "retry", "default" or "forfeit"."""
        reason = clipped(reason, REASON_CHARS)  # as recorded, told to the bot and given to the forfeit
        st.failures[kind] += 1
        row = failure_row(kind)
        policy = self.policy.policy(kind)
        gone = startup or row.gone or not st.peer.alive()
        if policy == "retry":
            st.strikes += 1
            if gone or st.strikes > self.policy.strikes:
                policy = "default"
        action = policy if not (gone and policy == "default") else "referee plays safe moves for the rest of the game"
        self._log_failure(st, kind, reason, action, final=gone or policy == "forfeit")
        if not gone:
            self.host.send_error(st.peer, row.told or "protocol", reason, retry=policy == "retry", game=self.game_id,
                                 seq=seq)
        if policy == "forfeit":
            entries = self.game.forfeit(st.seat, reason, kind)
            st.referee_plays = True
            self._absorb(entries)
            return "forfeit"
        if gone:
            st.referee_plays = True
        return policy


def write_record(path: Path, result: GameResult, header: dict[str, Any], key: bytes | None = None) -> None:
    """Write a game record as JSON Lines: a header line, then one line per entry.

    With ``key`` (a tournament's secret key) the header also carries ``mac``: the HMAC of the
    header without it and of every entry line, which ``arena replay --verify`` checks.
    """
    from arena.integrity import MAC_FIELD, open_private, record_mac

    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [encode_line(line) for line in result.record]
    if key is not None:
        header = {**header, MAC_FIELD: record_mac(key, header, lines)}
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open_private(tmp) as f:  # mode 0600: a record is the organiser's (SECURITY.md, Secrets)
        f.write(json.dumps(header).encode() + b"\n")
        for line in lines:
            f.write(line + b"\n")
    tmp.replace(path)


def play_one(host: BotHost, peers: list[Peer], rules: RuleSet, seed: int, game_id: str, time_control: TimeControl,
             policy: FailurePolicy, record_path: Path | None = None,
             on_entry: Callable[[Line], None] | None = None,
             suit_map: SuitMap | None = None, seat_times: Sequence[TimeControl | None] = (),
             clocks: Clocks = time) -> GameResult:
    """Play a game and (optionally) write its record; ``suit_map`` relabels the suits of every deck;
    ``seat_times`` gives a seat clocks of its own (None, or a seat past its end: ``time_control``);
    ``clocks`` times the decisions (a test's fake clock)."""
    ref = Referee(host, peers, rules, seed, game_id, time_control, policy, on_entry, suit_map, seat_times, clocks)
    result = ref.run()
    if record_path is not None:
        header = header_of(ref.game, tuple(result.seats), game_id=game_id, bots=result.hellos).to_data()
        write_record(record_path, result, header=header)
        result.record_path = str(record_path)
    return result
