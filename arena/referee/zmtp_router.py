"""A ROUTER's connections on a bot's endpoint, as libzmq keeps them, over the ZMTP codec (``zmtp``).

``Router`` holds the listening socket and the connections of one bot's endpoint for an owner that
polls them (the referee's ``endpoint`` and the ``gate`` process): I/O, but no loop of its own.
Standard library only, like the codec: the gate imports both inside the sandbox (``-I -S``),
where they lie side by side (``launch.gate_files``).
"""

from __future__ import annotations

import socket
import time

if __package__:  # imported, as arena.referee.zmtp_router
    from arena.referee.zmtp import GREETING, READ_BYTES, READY, ProtocolError, Zmtp, command, frame
else:  # the gate's script, in the sandbox: zmtp.py beside this file is on its path
    from zmtp import GREETING, READ_BYTES, READY, ProtocolError, Zmtp, command, frame  # type: ignore[import-not-found,no-redef]

STRANGER_REPLIES_PER_S = 10  # the error answering a routing id other than the bot's, at most this often
STRANGER_REPLY = frame(b'{"v":1,"type":"error","game":null,"seq":null,"kind":"token","retry":false,'
                       b'"reason":"unknown token: connect with the token the referee gave you (ARENA_TOKEN)"}')
STRANGER_BYTES = 4096  # a message on a connection that is not the bot's is answered and dropped, never held
HANDSHAKE_BYTES = 4096  # a READY with metadata is a few hundred bytes


STRANGER_UNITS = 256  # a connection not under the token is closed once it sent this many frames and commands
STRANGER_READ_BYTES = 4096  # what one read takes from such a connection (the bot's own: READ_BYTES)


class Conn:
    """One connection: its socket, its codec, the bytes waiting to be written to it."""

    __slots__ = ("fd", "out", "sock", "zmtp")

    def __init__(self, sock: socket.socket, token: bytes) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.zmtp = Zmtp(command_limit=HANDSHAKE_BYTES, token=token, stranger_limit=STRANGER_BYTES)
        self.out = bytearray()


class Router:
    """The connections to one bot's endpoint, as libzmq's ROUTER keeps them: a listening socket, at most
    ``max_connections`` peers, the one whose routing id is the token (``bot``) heard, the others answered
    with an error and dropped.  The owner polls the descriptors ``watch`` names and calls ``accept``,
    ``read`` and ``write``; what is heard reaches ``on_message`` and ``on_notice`` (``connected``,
    ``stranger``, ``multipart N``, ``oversized N``).  Nothing is held beyond one message of
    ``MAX_MESSAGE_BYTES`` on the bot's connection and ``STRANGER_BYTES`` on another, and, queued for a
    connection that does not read, the owner's messages up to ``send_cap`` bytes and at most one reply
    of its own (the greeting, a PONG, a stranger's error: none is queued behind another)."""

    def __init__(self, listener: socket.socket, token: bytes, max_connections: int, send_cap: int,
                 max_accepts: int | None = None) -> None:
        self.listener = listener
        self.token = token
        self.max_connections = max_connections
        self.send_cap = send_cap
        self.accepts_left = max_accepts  # None: no end (a remote seat's gate: strangers must not lock the bot out)
        self.listening = True
        self.units = 0  # frames and commands read from every connection since the owner last set it to 0
        self.conns: dict[int, Conn] = {}
        self.bot: Conn | None = None  # the connection under the token
        self.announced = False  # "connected" was said
        self.stranger_seen = False
        self.stranger_budget = float(STRANGER_REPLIES_PER_S)
        self.stranger_at = time.monotonic()

    # -- the owner's part ----------------------------------------------------------------
    def on_message(self, data: bytes) -> None:
        raise NotImplementedError

    def on_notice(self, word: str, arg: str = "") -> None:
        raise NotImplementedError

    def allowance(self) -> float:
        """Frames and commands the owner still reads before a message is a flood (none by default)."""
        return float("inf")

    def watch(self, c: Conn, write: bool) -> None:
        """Poll ``c`` for reading, and for writing too while ``write`` (bytes wait for it)."""
        raise NotImplementedError

    def unwatch(self, c: Conn) -> None:
        raise NotImplementedError

    # -- connections -----------------------------------------------------------------------
    def stop_listening(self) -> None:
        """No more connections (the owner's hook: it stops polling the listener); later ones are refused."""
        raise NotImplementedError

    def accept(self) -> None:
        for _ in range(self.max_connections):
            try:
                sock, _addr = self.listener.accept()
            except OSError:  # none waiting (or out of descriptors: whoever opened them waits)
                return
            if self.accepts_left is not None:
                self.accepts_left -= 1
                if self.accepts_left <= 0:  # a reconnect storm ends here: connect is refused from now on
                    self.listening = False
                    self.stop_listening()
            if len(self.conns) >= self.max_connections:
                sock.close()
                continue
            sock.setblocking(False)
            if sock.family != socket.AF_UNIX:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            c = Conn(sock, self.token)
            self.conns[c.fd] = c
            self.watch(c, False)
            self.queue(c, GREETING + READY)

    def drop(self, c: Conn) -> None:
        if self.conns.pop(c.fd, None) is None:
            return
        self.unwatch(c)
        c.sock.close()
        if c is self.bot:
            self.bot = None

    def queue(self, c: Conn, data: bytes) -> bool:
        """Write now what the socket takes, keep the rest for when it is writable; False (nothing
        sent or queued) if that could hold more than ``send_cap`` bytes for it."""
        if len(c.out) + len(data) > self.send_cap:
            return False
        if c.out:
            c.out += data
            return True
        try:
            n = c.sock.send(data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError:
            self.drop(c)
            return True
        if n < len(data):
            c.out += data[n:]
            self.watch(c, True)
        return True

    def write(self, c: Conn) -> None:
        try:
            n = c.sock.send(c.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.drop(c)
            return
        del c.out[:n]
        if not c.out:
            self.watch(c, False)

    def read(self, c: Conn) -> int:
        """One read of ``c`` (of ``STRANGER_READ_BYTES`` while it is not the bot's): what it holds goes
        through the codec to ``on_message`` and ``on_notice``; the bytes read (0: none, or it closed)."""
        try:
            data = c.sock.recv(READ_BYTES if c is self.bot else STRANGER_READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            data = b""
        if not data:
            self.drop(c)
            return 0
        before = c.zmtp.units
        c.zmtp.flood_at = before + self.allowance()
        try:
            events = c.zmtp.feed(data)
        except ProtocolError:
            self.drop(c)
            return len(data)
        self.units += c.zmtp.units - before
        for kind, arg in events:
            if kind == "ready":
                self._ready(c, arg)
            elif kind == "ping":
                assert isinstance(arg, bytes)
                if not c.out:  # a peer that does not read its PONGs gets no more: nothing piles up for it
                    self.queue(c, command(b"PONG", arg))
            elif c is not self.bot:
                self._stranger(c)
            elif kind == "message":
                assert isinstance(arg, bytes)
                self.on_message(arg)
            elif kind == "flood":  # where the message ended, in the owner's count: its total less what came after
                assert isinstance(arg, int)
                self.on_notice(kind, str(self.units - (c.zmtp.units - arg)))
            else:  # multipart, oversized
                self.on_notice(kind, str(arg))
        if c is not self.bot and c.zmtp.units > STRANGER_UNITS and c.fd in self.conns:
            self.drop(c)  # answered and noted enough: what it sends next is not ours to read
        return len(data)

    def _ready(self, c: Conn, identity: object) -> None:
        if not self.announced:
            self.announced = True
            self.on_notice("connected")
        if identity != self.token:
            return
        if self.bot is not None:  # as libzmq's ROUTER: a second peer under a routing id in use is refused
            self.drop(c)
            return
        self.bot = c

    def _stranger(self, c: Conn) -> None:
        if not self.stranger_seen:
            self.stranger_seen = True
            self.on_notice("stranger")
        now = time.monotonic()
        self.stranger_budget = min(STRANGER_REPLIES_PER_S,
                                   self.stranger_budget + (now - self.stranger_at) * STRANGER_REPLIES_PER_S)
        self.stranger_at = now
        if self.stranger_budget >= 1 and not c.out:  # as PONG: one reply at most waits for a stranger
            self.stranger_budget -= 1
            self.queue(c, STRANGER_REPLY)

    def close_all(self) -> None:
        for c in list(self.conns.values()):
            self.drop(c)
