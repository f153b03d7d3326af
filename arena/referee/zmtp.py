"""ZMTP 3.1, the wire protocol of ZeroMQ, on a bot's side of the arena: its codec and a ROUTER's connections.

The one reader of a bot's ZeroMQ bytes, shared by the endpoint the referee holds for a bot
(``arena.referee.endpoint``) and the gate process (``arena.referee.gate``).  ``Zmtp`` (bytes from
a peer in, events out, no I/O) speaks the server side of RFC 23/37 with the NULL mechanism, as a
``ROUTER``: the greeting, the READY handshake (the peer's socket type and routing id), PING, and
frames, each frame's size read from its header before its body, so a message over its limit is
reported at once and the rest of it skipped unread.  ``Router`` keeps the connections of one bot's
endpoint as libzmq's ROUTER does, for an owner that polls them.  Standard library only: the gate
imports it inside the sandbox (``-I -S``).
"""

from __future__ import annotations

import socket
import struct
import time

MAX_MESSAGE_BYTES = 1 << 20  # the protocol's limit; bigger messages are reported, not relayed
COMMAND_CAP_BYTES = 1 << 16  # a READY with metadata is a few hundred bytes
READ_BYTES = 1 << 16  # what a reader takes from a socket at once; a longer body is gathered, not buffered
PEER_TYPES = (b"DEALER", b"REQ", b"ROUTER")  # the socket types libzmq lets talk to a ROUTER
STRANGER_REPLIES_PER_S = 10  # the error answering a routing id other than the bot's, at most this often


class ProtocolError(Exception):
    """The peer broke ZMTP: its connection is closed."""


def _greeting() -> bytes:
    # signature (0xFF, 8 bytes padding, 0x7F), version 3.1, mechanism NULL, as-server 0, filler
    return b"\xff" + bytes(8) + b"\x7f\x03\x01" + b"NULL".ljust(20, b"\0") + bytes(32)


GREETING = _greeting()


def frame(body: bytes, more: bool = False, command: bool = False) -> bytes:
    """One ZMTP frame: flags, size (1 byte, or 8 when over 255), body."""
    flags = (1 if more else 0) | (4 if command else 0)
    if len(body) < 256:
        return bytes((flags, len(body))) + body
    return struct.pack(">BQ", flags | 2, len(body)) + body


def command(name: bytes, data: bytes = b"") -> bytes:
    return frame(bytes((len(name),)) + name + data, command=True)


def properties(props: dict[bytes, bytes]) -> bytes:
    return b"".join(bytes((len(k),)) + k + struct.pack(">I", len(v)) + v for k, v in props.items())


def parse_properties(data: bytes) -> dict[bytes, bytes]:
    """A READY command's metadata, names lower-cased (RFC 37: they are case-insensitive)."""
    out: dict[bytes, bytes] = {}
    pos = 0
    while pos < len(data):
        n = data[pos]
        name = data[pos + 1:pos + 1 + n]
        pos += 1 + n
        if n == 0 or len(name) < n or pos + 4 > len(data):
            raise ProtocolError("a malformed property in READY")
        (size,) = struct.unpack_from(">I", data, pos)
        pos += 4
        if pos + size > len(data):
            raise ProtocolError("a property longer than READY")
        out[name.lower()] = data[pos:pos + size]
        pos += size
    return out


READY = command(b"READY", properties({b"Socket-Type": b"ROUTER"}))

Event = tuple[str, object]


class Zmtp:
    """One peer's side of a ZMTP 3 connection as a server: bytes in, events out.

    Events: ``("ready", identity)`` once the handshake is done; ``("message", body)`` for a
    single-frame message; ``("multipart", frames)`` for a multipart one (its bodies dropped);
    ``("oversized", bytes)`` as soon as a message is known to be over ``limit`` (its rest is
    skipped); ``("ping", context)`` (answer with ``pong``); ``("flood", units)`` for a message that
    ends past ``flood_at`` frames and commands.  What is buffered is at most one
    frame's header plus one body of ``limit`` bytes plus the last chunk fed.
    """

    def __init__(self, limit: int = MAX_MESSAGE_BYTES, command_limit: int = COMMAND_CAP_BYTES,
                 token: bytes | None = None, stranger_limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self.command_limit = command_limit
        # With a token: a peer whose READY names another routing id gets ``stranger_limit`` from then on,
        # decided here, before a byte after its READY is read (its messages are only answered and dropped).
        self.token = token
        self.stranger_limit = stranger_limit
        self.buf = bytearray()
        self.greeted = False  # the peer's 64-byte greeting was read
        self.ready = False  # its READY was read
        self.identity = b""
        self.skip = 0  # bytes of the current frame's body still to skip
        self.skip_more = False  # that frame's MORE flag
        self.frames = 0  # frames so far of the message being read
        self.total = 0  # its bytes so far
        self.over = False  # the message was reported oversized: its rest is skipped
        # A long body arriving in many reads is gathered as its chunks and joined once (appending each to
        # ``buf`` would copy what came before again and again): the chunks so far, the bytes still due.
        self.parts: list[bytes] = []
        self.due = 0
        self.due_more = False
        self.units = 0  # frames and commands read so far: what reading this peer has cost, counted
        # A message that ends after this many units is reported ``("flood", units)`` instead: where it
        # stands in the stream decides, not how the bytes happened to be split into reads.
        self.flood_at: float = float("inf")

    def feed(self, data: bytes) -> list[Event]:
        events: list[Event] = []
        if self.due:
            take = data[:self.due]
            self.parts.append(take)
            self.due -= len(take)
            if self.due:
                return events
            body, self.parts = b"".join(self.parts), []
            self._end(body, self.due_more, events)
            data = data[len(take):]
        buf = self.buf
        if not buf and self.ready and not self.skip and len(data) >= 2 and data[0] == 0 and len(data) == data[1] + 2:
            self._end(data[2:], False, events)  # the common case: one whole short frame
            return events
        buf += data
        pos = 0
        end = len(buf)
        while True:
            if self.skip:
                n = min(self.skip, end - pos)
                pos += n
                self.skip -= n
                if self.skip:
                    break
                self._end(None, self.skip_more, events)
                continue
            if not self.greeted:
                if end - pos < 64:
                    self._check_signature(bytes(buf[pos:end]))
                    break
                self._check_greeting(bytes(buf[pos:pos + 64]))
                self.greeted = True
                pos += 64
                continue
            if end - pos < 2:
                break
            flags = buf[pos]
            if flags & 0xF8:
                raise ProtocolError(f"reserved frame flags {flags:#x}")
            if flags & 2:
                if end - pos < 9:
                    break
                (size,) = struct.unpack_from(">Q", buf, pos + 1)
                head = 9
            else:
                size = buf[pos + 1]
                head = 2
            if flags & 4 or not self.ready:
                if not flags & 4:
                    raise ProtocolError("a message before the handshake")
                if flags & 1 or size > self.command_limit:
                    raise ProtocolError("a multipart or oversized command")
                if end - pos < head + size:
                    break
                self._command(bytes(buf[pos + head:pos + head + size]), events)
                pos += head + size
                continue
            more = bool(flags & 1)
            if self.over or size > self.limit - self.total:
                if not self.over:
                    self.over = True
                    events.append(("oversized", self.total + size))
                self.skip, self.skip_more = size, more
                pos += head
                if not size:  # nothing to skip: the frame ends here
                    self._end(None, more, events)
                continue
            if end - pos < head + size:
                if size > READ_BYTES:  # a long body: its chunks are gathered, not appended to buf
                    self.parts, self.due, self.due_more = [bytes(buf[pos + head:end])], head + size - (end - pos), more
                    pos = end
                break
            body = bytes(buf[pos + head:pos + head + size])
            pos += head + size
            self._end(body, more, events)
        del buf[:pos]
        return events

    def _end(self, body: bytes | None, more: bool, events: list[Event]) -> None:
        """A frame has ended (``body`` None: it was skipped)."""
        self.units += 1
        self.frames += 1
        if body is not None:
            self.total += len(body)
        if more:
            return
        if not self.over:
            if self.frames > 1:
                events.append(("multipart", self.frames))
            elif self.units > self.flood_at:
                events.append(("flood", self.units))
            else:
                assert body is not None
                events.append(("message", body))
        self.frames = self.total = 0
        self.over = False

    @staticmethod
    def _check_signature(part: bytes) -> None:
        if part[:1] not in (b"", b"\xff") or (len(part) >= 10 and not part[9] & 1):
            raise ProtocolError("not a ZMTP 3 greeting")
        if len(part) >= 11 and part[10] < 3:
            raise ProtocolError(f"ZMTP version {part[10]} (3 or later is needed)")

    def _check_greeting(self, g: bytes) -> None:
        self._check_signature(g)
        if g[12:32].rstrip(b"\0") != b"NULL":
            raise ProtocolError("a security mechanism other than NULL")

    def _command(self, body: bytes, events: list[Event]) -> None:
        self.units += 1
        n = body[0] if body else 0
        name, data = body[1:1 + n], body[1 + n:]
        if len(name) < n or not n:
            raise ProtocolError("a malformed command")
        if not self.ready:
            if name != b"READY":
                raise ProtocolError(f"{name!r} before READY")
            props = parse_properties(data)
            if props.get(b"socket-type") not in PEER_TYPES:
                raise ProtocolError(f"socket type {props.get(b'socket-type')!r} cannot talk to a ROUTER")
            self.identity = props.get(b"identity", b"")
            if self.token is not None and self.identity != self.token:
                self.limit = min(self.limit, self.stranger_limit)
            self.ready = True
            events.append(("ready", self.identity))
        elif name == b"PING":
            events.append(("ping", data[2:18]))
        elif name == b"ERROR":
            raise ProtocolError("the peer sent ERROR")
        # other commands (SUBSCRIBE, CANCEL, PONG) mean nothing to a ROUTER


# -- a ROUTER's connections (I/O, but no loop of its own: its owner polls) ------------------------
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
