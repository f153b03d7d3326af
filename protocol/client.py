"""Python client library for arena bots (protocol v1, see ``SPEC.md``).

Subclass :class:`Bot`, set ``name``, override :meth:`Bot.draw` and
:meth:`Bot.play`, and call ``MyBot().run()``::

    class Lazy(Bot):
        name = "lazy"

        def draw(self, obs):
            return "stock"

        def play(self, obs):
            return {"actions": [], "discard": obs.drawn or obs.hand[0]}

    if __name__ == "__main__":
        Lazy().run()

The endpoint comes from ``--endpoint E`` on the command line (else
``ARENA_ENDPOINT``), the token from ``ARENA_TOKEN`` (the referee never puts it
on a command line; ``--token T`` is still read, for a bot started by hand).
A remote seat of a tournament is a CURVE server: give the referee's public key
with ``--server-key K`` or ``ARENA_SERVER_KEY`` (SPEC 12).  With ``--stdio`` the
bot speaks the stdio transport instead (SPEC 14.3: no endpoint, no token), and
its own prints go to stderr.
An exception raised by the bot's own code is printed to stderr with the game
and seq it was answering, and re-raised: the process exits non-zero and the
referee records a crash.  A ``shutdown`` message makes :func:`run` return 0.
"""

from __future__ import annotations

import os
import struct
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import msgspec

if TYPE_CHECKING:
    import zmq

from protocol.codec import _REQUEST_PREFIX, decode_from_referee, encode
from protocol.messages import (
    SUPPORTED_VERSIONS,
    Action,
    Draw,
    Error,
    Event,
    GameOver,
    Hello,
    KnownEvent,
    MessageError,
    NewGame,
    Observation,
    Play,
    Request,
    Shutdown,
    Source,
    Welcome,
)

__all__ = ["Bot", "BotError", "endpoint_and_token", "run", "run_stdio", "server_key"]


class BotError(RuntimeError):
    """The session could not start or went wrong on the protocol level (not the bot's own code)."""


def endpoint_and_token(argv: Sequence[str] | None = None, env: dict[str, str] | None = None) -> tuple[str, str]:
    """Read ``--endpoint``/``--token`` (also ``--endpoint=E``) from argv, else ARENA_ENDPOINT/ARENA_TOKEN."""
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ) if env is None else env
    found: dict[str, str] = {}
    for i, a in enumerate(args):
        for key in ("endpoint", "token"):
            flag = f"--{key}"
            if a == flag and i + 1 < len(args):
                found[key] = args[i + 1]
            elif a.startswith(flag + "="):
                found[key] = a[len(flag) + 1 :]
    endpoint = found.get("endpoint") or env.get("ARENA_ENDPOINT")
    token = found.get("token") or env.get("ARENA_TOKEN")
    if not endpoint or not token:
        raise BotError("no endpoint/token: pass --endpoint E --token T, or set ARENA_ENDPOINT and ARENA_TOKEN "
                       "(or --stdio, for the stdio transport)")
    return endpoint, token


class Bot:
    """Base class of a bot: override :meth:`draw` and :meth:`play`; the ``on_*`` hooks are optional.

    Attributes set while running: ``welcome`` (the :class:`Welcome`), ``game``
    (the last :class:`NewGame`).
    """

    name: str = "bot"
    author: str | None = None
    handshake_timeout_s: float = 30.0
    """How long :func:`run` waits for `welcome` before giving up (None: forever)."""

    welcome: Welcome | None = None
    game: NewGame | None = None
    busy_s: float = 0.0
    """Time spent on requests, from receiving one to having sent its reply (decoding included)."""
    answered: int = 0

    # -- decisions -------------------------------------------------------------
    def draw(self, observation: Observation) -> str:
        """Return ``"stock"`` or ``"discard"`` (one of ``observation.legal_draws``)."""
        return "stock" if "stock" in observation.legal_draws else observation.legal_draws[0]

    def play(self, observation: Observation) -> dict[str, Any]:
        """Return ``{"actions": [...], "discard": card or None}``; actions are dicts or Meld/Layoff/Swap structs."""
        raise NotImplementedError("override Bot.play")

    # -- hooks -----------------------------------------------------------------
    def on_new_game(self, msg: NewGame) -> None:
        """A game starts (seat, players, rules, clock)."""

    def on_event(self, event: KnownEvent) -> None:
        """A public event: a ``DealStartEvent``, ``DrawEvent``, ... of ``protocol.messages`` (SPEC 6).
        Events of a kind this version does not know are skipped."""

    def on_error(self, msg: Error) -> None:
        """The referee did not accept something; the default prints it to stderr."""
        where = f" (game {msg.game}, seq {msg.seq})" if msg.game is not None else ""
        print(f"[{self.name}] referee error {msg.kind}{where}: {msg.reason}", file=sys.stderr, flush=True)

    def on_game_over(self, msg: GameOver) -> None:
        """A game ended (placings, totals)."""

    # -- running ---------------------------------------------------------------
    def run(self, endpoint: str | None = None, token: str | None = None) -> None:
        """Play until shutdown, then exit the process with :func:`run`'s exit code (2, with one
        sentence on stderr, when the endpoint, token or server key is missing or malformed)."""
        try:
            code = run_stdio(self) if "--stdio" in sys.argv[1:] else run(self, endpoint, token)
        except BotError as e:
            print(f"[{self.name}] error: {e}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None
        raise SystemExit(code)


def _reply(bot: Bot, req: Request) -> Draw | Play:
    """Ask the bot for the decision and build the reply message."""
    if req.decision == "draw":
        source = bot.draw(req.observation)
        if source not in ("stock", "discard"):
            raise TypeError(f"draw() must return 'stock' or 'discard', got {source!r}")
        return Draw(game=req.game, seq=req.seq, source=cast(Source, source))
    result = bot.play(req.observation)
    if not isinstance(result, dict):
        raise TypeError(f"play() must return a dict {{'actions': [...], 'discard': card or None}}, got {result!r}")
    # Actions given as dicts travel as they are: the referee judges them (SPEC 9).
    actions = cast(list[Action], list(result.get("actions") or ()))
    return Play(game=req.game, seq=req.seq, actions=actions, discard=result.get("discard"))


def _call(bot: Bot, what: str, fn: Any, *args: Any) -> Any:
    """Call the bot's code; on an exception print where it happened and re-raise."""
    try:
        return fn(*args)
    except Exception:
        import traceback  # only when the bot's own code raised: an honest run never needs it

        print(f"[{bot.name}] exception in {what}:", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        raise


def server_key(argv: Sequence[str] | None = None, env: dict[str, str] | None = None) -> str | None:
    """The referee's CURVE public key (Z85, 40 characters) from ``--server-key K`` (also ``--server-key=K``),
    else ARENA_SERVER_KEY; None when neither is given (a plain connection, SPEC 12)."""
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ) if env is None else env
    found = None
    for i, a in enumerate(args):
        if a == "--server-key" and i + 1 < len(args):
            found = args[i + 1]
        elif a.startswith("--server-key="):
            found = a[len("--server-key="):]
    key = found or env.get("ARENA_SERVER_KEY") or None
    if key is not None and len(key) != 40:
        raise BotError(f"the server key must be 40 Z85 characters (as the referee printed it), got {len(key)}")
    return key


def run(bot: Bot, endpoint: str | None = None, token: str | None = None) -> int:
    """Connect, handshake and play until ``shutdown``; return the process exit code.

    0 after ``shutdown``; 1 when the referee refuses the handshake or never
    answers it.  Exceptions from the bot's own methods propagate.
    """
    import zmq  # here: a bot on stdio (every bundled bot) starts without it, ~20 ms sooner

    if endpoint is None or token is None:
        e, t = endpoint_and_token()
        endpoint, token = endpoint or e, token or t
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, token.encode("ascii"))
    if (server := server_key()) is not None:  # CURVE: encrypted, and only to the referee that holds that key
        public, secret = zmq.curve_keypair()
        sock.curve_publickey = public
        sock.curve_secretkey = secret
        sock.curve_serverkey = server.encode("ascii")
    # Until welcome, the connection's own events say why nothing arrives (a wrong key, no referee there).
    monitor = sock.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_HANDSHAKE_SUCCEEDED | _handshake_failed())
    sock.connect(endpoint)
    try:
        wants_events = type(bot).on_event is not Bot.on_event
        hello = Hello(name=bot.name, versions=list(SUPPORTED_VERSIONS), author=bot.author, events=wants_events)
        sock.send(encode(hello))
        return _loop(bot, sock, _Handshake(monitor, endpoint, server is not None))
    finally:
        if not monitor.closed:
            sock.disable_monitor()
            monitor.close(linger=0)
        sock.close(linger=0)


def _handshake_failed() -> int:
    import zmq

    return zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH


def monitor_event(frames: list[bytes]) -> int:
    """The event (``zmq.EVENT_*``) of one message from a socket monitor, or 0 for anything else.

    libzmq's monitor message is two frames: a uint16 event and a uint32 value in the host's byte
    order, then the endpoint.  Read here rather than with ``zmq.utils.monitor``, which imports
    ``zmq.asyncio`` and with it all of asyncio: a third of a bot's start for six bytes."""
    if len(frames) != 2 or len(frames[0]) != 6:
        return 0
    event, _value = struct.unpack("=HI", frames[0])
    return int(event)


class _Handshake:
    """What the connection's monitor said before welcome: whether it connected, and why a handshake failed."""

    def __init__(self, monitor: zmq.Socket[bytes], endpoint: str, curve: bool) -> None:
        self.monitor, self.endpoint, self.curve = monitor, endpoint, curve
        self.connected = False

    def refused(self) -> str | None:
        """Read the monitor's events; the sentence saying why the referee refused the connection, if it did."""
        import zmq

        while self.monitor.poll(0):
            event = monitor_event(self.monitor.recv_multipart())
            if event in (zmq.EVENT_CONNECTED, zmq.EVENT_HANDSHAKE_SUCCEEDED):
                self.connected = True
            elif event & _handshake_failed():
                if self.curve:  # ZeroMQ reports a wrong key and a plain listener alike (no detail, or protocol)
                    return (f"the referee at {self.endpoint} refused the encrypted connection: the server key "
                            "(--server-key or ARENA_SERVER_KEY) is not its key (copy the key the referee printed; "
                            "arena run writes it to OUT/remote.txt), or that referee does not encrypt (arena play "
                            "--listen does not: drop the key)")
                return (f"the referee at {self.endpoint} expects an encrypted connection: give the key it printed "
                        "with --server-key K or ARENA_SERVER_KEY (SPEC 12)")
        return None

    def timed_out(self, seconds: float) -> str:
        if not self.connected:
            return (f"could not connect to {self.endpoint} within {seconds} s: check the host and port the "
                    "referee printed, and that it is waiting for this bot")
        return (f"connected to {self.endpoint}, but no welcome within {seconds} s: check the token (ARENA_TOKEN "
                "or --token) the referee printed for this seat")

    def close(self, sock: zmq.Socket[bytes]) -> None:
        sock.disable_monitor()
        self.monitor.close(linger=0)


class _Envelope(msgspec.Struct):
    type: str = ""


_peek = msgspec.json.Decoder(_Envelope).decode
_REQUEST_START = _REQUEST_PREFIX  # how encode() starts a request; it only skips the peek, the decode that follows judges


def _await_first(bot: Bot, sock: zmq.Socket[bytes], hs: _Handshake) -> str | None:
    """Wait for the referee's first message; the sentence saying why none comes, if so."""
    import zmq

    deadline = None if bot.handshake_timeout_s is None else time.monotonic() + bot.handshake_timeout_s
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    poller.register(hs.monitor, zmq.POLLIN)
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return hs.timed_out(bot.handshake_timeout_s or 0.0)
        ready = dict(poller.poll(None if left is None else max(1, int(left * 1000))))
        if sock in ready:
            return None
        if (why := hs.refused()) is not None:
            return why


def _loop(bot: Bot, sock: zmq.Socket[bytes], hs: _Handshake | None = None) -> int:
    log = sys.stderr
    wants_events = type(bot).on_event is not Bot.on_event
    while True:
        if bot.welcome is None and hs is not None:
            why = _await_first(bot, sock, hs)
            if why is not None:
                print(f"[{bot.name}] {why}", file=log, flush=True)
                return 1
        elif bot.welcome is None and bot.handshake_timeout_s is not None \
                and not sock.poll(int(bot.handshake_timeout_s * 1000)):
            print(f"[{bot.name}] no welcome from the referee within {bot.handshake_timeout_s} s", file=log)
            return 1
        welcomed = bot.welcome is not None
        code = _handle(bot, sock.recv(), sock.send, wants_events)
        if not welcomed and bot.welcome is not None and hs is not None:
            hs.close(sock)
        if code is not None:
            return code


def run_stdio(bot: Bot) -> int:
    """Play over the stdio transport (SPEC 14.3: one message per line on stdin and stdout) until
    ``shutdown`` or the end of stdin; return the process exit code, as :func:`run` does.

    Whatever the bot's own code prints goes to stderr (its log): stdout carries the protocol only."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    stdout, sys.stdout = sys.stdout, sys.stderr  # a print() of the bot's can never be read as a message

    def send(data: bytes) -> None:
        out.write(data + b"\n")

    try:
        wants_events = type(bot).on_event is not Bot.on_event
        send(encode(Hello(name=bot.name, versions=list(SUPPORTED_VERSIONS), author=bot.author, events=wants_events)))
        for line in sys.stdin.buffer:
            code = _handle(bot, line.rstrip(b"\r\n"), send, wants_events)
            if code is not None:
                return code
        return 0  # end of stdin: the referee is gone
    finally:
        sys.stdout = stdout
        out.close()


def _handle(bot: Bot, data: bytes, send: Callable[[bytes], Any], wants_events: bool) -> int | None:
    """Act on one message from the referee (``send`` takes the encoded reply); the exit code once
    the session is over (0 on shutdown, 1 when the handshake was refused), else None."""
    log = sys.stderr
    received = time.perf_counter()
    if data.startswith(_REQUEST_START):
        kind = "request"  # how the referee starts every request: no need to read the whole message twice
    else:
        try:
            kind = _peek(data).type
        except msgspec.DecodeError:
            kind = ""
    if kind == "event" and not wants_events:
        return None  # nobody listens: skip decoding it
    try:
        msg = decode_from_referee(data)
    except MessageError as e:
        if kind != "event":  # an event of a kind this version does not know is skipped (SPEC 6)
            print(f"[{bot.name}] ignoring a message I cannot read ({e}): {data[:200]!r}", file=log, flush=True)
        return None
    if isinstance(msg, Request):
        reply = _call(bot, f"{msg.decision}() for game {msg.game} seq {msg.seq}", _reply, bot, msg)
        send(encode(reply))
        bot.busy_s += time.perf_counter() - received
        bot.answered += 1
    elif isinstance(msg, Event):
        _call(bot, "on_event()", bot.on_event, msg.event)
    elif isinstance(msg, NewGame):
        bot.game = msg
        _call(bot, "on_new_game()", bot.on_new_game, msg)
    elif isinstance(msg, GameOver):
        _call(bot, "on_game_over()", bot.on_game_over, msg)
    elif isinstance(msg, Welcome):
        bot.welcome = msg
    elif isinstance(msg, Error):
        _call(bot, "on_error()", bot.on_error, msg)
        if bot.welcome is None and msg.kind in ("version", "token"):
            return 1  # the handshake was refused
    elif isinstance(msg, Shutdown):
        return 0
    return None
