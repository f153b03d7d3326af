"""ZMTP 3.1, the wire protocol of ZeroMQ, on a bot's side of the arena: its codec.

The one reader of a bot's ZeroMQ bytes, shared by the endpoint the referee holds for a bot
(``arena.referee.endpoint``) and the gate process (``arena.referee.gate``), through the
connections of ``zmtp_router``.  ``Zmtp`` (bytes from a peer in, events out, no I/O) speaks the
server side of RFC 23/37 with the NULL mechanism, as a ``ROUTER``: the greeting, the READY
handshake (the peer's socket type and routing id), PING, and frames, each frame's size read from
its header before its body, so a message over its limit is reported at once and the rest of it
skipped unread.  Standard library only: the gate imports it inside the sandbox (``-I -S``).
"""

from __future__ import annotations

import struct

MAX_MESSAGE_BYTES = 1 << 20  # the protocol's limit; bigger messages are reported, not relayed
COMMAND_CAP_BYTES = 1 << 16  # a READY with metadata is a few hundred bytes
READ_BYTES = 1 << 16  # what a reader takes from a socket at once; a longer body is gathered, not buffered
PEER_TYPES = (b"DEALER", b"REQ", b"ROUTER")  # the socket types libzmq lets talk to a ROUTER


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
