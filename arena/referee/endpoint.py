"""A ZeroMQ bot's endpoint held by the referee itself: ZMTP 3.1 on a Unix socket of that bot's alone.

The default way a bot on the ``zmq`` transport is reached (SPEC 1).  The referee listens on a
socket file in a private folder of its own, bound into the bot's sandbox at
``/tmp/arena-bot.sock`` (or named to the bot as it is, without a sandbox); the bot's DEALER
connects there.  There is no process between them: a decision is one write and one read on
each side, as on the stdio transport, where a gate process (``arena.referee.gate``) cost a
hop and its own CPU on each.

Every isolation property of the gate holds here, because the socket is read exactly as a
stdio bot's pipe is (``arena.referee.channel``): only when the referee asks for this bot, one
chunk at a time, through the codec the gate uses too (``zmtp.Zmtp``), which reads each frame's size from
its header before its body.  So what a bot sends costs the referee at most one message of
``MAX_MESSAGE_BYTES`` on the bot's own connection plus ``STRANGER_BYTES`` on each of at most
``MAX_CONNECTIONS - 1`` others (a message over either is reported and skipped unread, a
multipart one dropped), a bot that floods fills its own socket's kernel buffer and waits, no
bot's traffic is read while another bot is asked, and nothing a bot writes can pass for the
referee's own notices: those are made here, never parsed from the bot's bytes.

What comes out of ``next_item`` is what a gate's pipe gives (``Line``, ``Notice``, ``Closed``):
``Notice("connected")`` once a peer completed the handshake, ``Notice("stranger")`` at the first
message under another routing id than the bot's token, ``Notice("multipart", N)``,
``Notice("oversized", N)``; ``Closed()`` once the compartment's first process has ended (its
pidfd, handed over by ``watch``) and what the bot sent before was read.
"""

from __future__ import annotations

import os
import select
import socket
import stat
import subprocess
import time
from collections import deque
from pathlib import Path

from arena.referee.channel import Closed, Item, Line, Notice
from arena.referee.zmtp import GREETING, READY, STRANGER_REPLIES_PER_S, ProtocolError, Zmtp, command, frame
from protocol.messages import MAX_MESSAGE_BYTES

MAX_CONNECTIONS = 8  # a bot needs one (two while its library reconnects); more are closed at once
STRANGER_BYTES = 4096  # a message on a connection that is not the bot's is answered and dropped, never held
COMMAND_BYTES = 1 << 12  # a handshake command (READY with metadata) is a few hundred bytes
READ_BYTES = 1 << 16
OUTBOX_CAP_BYTES = 8 * MAX_MESSAGE_BYTES  # as a pipe channel's: a bot that stops reading is disconnected
LAST_WORDS_CHUNKS = 16  # what is read of each connection once the compartment ended
STRANGER_REPLY = frame(b'{"v":1,"type":"error","game":null,"seq":null,"kind":"token","retry":false,'
                       b'"reason":"unknown token: connect with the token the referee gave you (ARENA_TOKEN)"}')
IN = select.POLLIN | select.POLLHUP | select.POLLERR


class _Conn:
    __slots__ = ("fd", "out", "sock", "zmtp")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.zmtp = Zmtp(limit=STRANGER_BYTES, command_limit=COMMAND_BYTES)  # raised once it is the bot's
        self.out = bytearray()


class Endpoint:
    """One bot's ZMTP endpoint: a listening Unix socket at ``path`` and the connections made to it."""

    def __init__(self, path: Path, token: str) -> None:
        self.path = str(path)
        self.token = token.encode("ascii", "replace")
        try:
            if stat.S_ISSOCK(os.lstat(self.path).st_mode):  # a socket a killed referee left
                os.unlink(self.path)
        except OSError:
            pass
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(self.path)
            # Reached only through the bind mount into the bot's sandbox (the folder is the referee's,
            # 0700), whose user is one of its own: it may connect, whoever it is.
            os.chmod(self.path, 0o666)
            self._listener.listen(MAX_CONNECTIONS)
        except OSError:
            self._listener.close()
            raise
        self._listener.setblocking(False)
        self._poll = select.poll()
        self._poll.register(self._listener, select.POLLIN)
        self._conns: dict[int, _Conn] = {}
        self._bot: _Conn | None = None
        self._items: deque[Item] = deque()
        self._pidfd = -1
        self._process: subprocess.Popen[bytes] | None = None
        self._writing = 0  # connections with bytes queued (registered for POLLOUT)
        self._announced = False
        self._stranger_seen = False
        self._stranger_budget = float(STRANGER_REPLIES_PER_S)
        self._stranger_at = time.monotonic()
        self.eof = False
        self.write_closed = False

    def watch(self, pidfd: int, process: subprocess.Popen[bytes]) -> None:
        """The compartment whose end closes this endpoint: its pidfd (-1 where the kernel has none:
        then its process is asked at every read)."""
        self._pidfd, self._process = pidfd, process
        if pidfd >= 0:
            self._poll.register(pidfd, select.POLLIN)

    # -- reading -----------------------------------------------------------------------
    def next_item(self, timeout_s: float) -> Item | None:
        """The next item, waiting at most ``timeout_s``; None if nothing came in time."""
        if self._items:
            return self._items.popleft()
        if self.eof:
            return Closed()
        ended = False
        for fd, ev in self._poll.poll(max(0, int(timeout_s * 1000 + 0.999))):
            if fd == self._pidfd:
                ended = True
                continue
            if fd == self._listener.fileno():
                self._accept()
                continue
            c = self._conns.get(fd)
            if c is None:
                continue
            if ev & select.POLLOUT:
                self._write(c)
            if ev & IN and c.fd in self._conns:
                self._read(c)
        if ended or (self._pidfd < 0 and self._process is not None and self._process.poll() is not None):
            self._last_words()
            self._items.append(Closed())
            self.eof = True
        return self._items.popleft() if self._items else None

    def pending(self) -> bool:
        return bool(self._items)

    def _accept(self) -> None:
        for _ in range(MAX_CONNECTIONS):
            try:
                sock, _addr = self._listener.accept()
            except OSError:  # none waiting (or out of descriptors: whoever opened them waits)
                return
            if len(self._conns) >= MAX_CONNECTIONS:
                sock.close()
                continue
            sock.setblocking(False)
            c = _Conn(sock)
            self._conns[c.fd] = c
            self._poll.register(c.fd, select.POLLIN)
            self._queue(c, GREETING + READY)

    def _read(self, c: _Conn) -> None:
        try:
            data = c.sock.recv(READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(c)
            return
        try:
            events = c.zmtp.feed(data)
        except ProtocolError:
            self._drop(c)
            return
        mine = c is self._bot
        for kind, arg in events:
            if kind == "message":
                assert isinstance(arg, bytes)
                if mine:
                    if arg.strip():
                        self._items.append(Line(arg))
                else:
                    self._stranger(c)
            elif kind in ("multipart", "oversized"):
                if mine:
                    self._items.append(Notice(kind, str(arg)))
                else:
                    self._stranger(c)
            elif kind == "ready":
                self._ready(c, arg)
                mine = c is self._bot
            elif kind == "ping":
                assert isinstance(arg, bytes)
                self._queue(c, command(b"PONG", arg))

    def _ready(self, c: _Conn, identity: object) -> None:
        if not self._announced:
            self._announced = True
            self._items.append(Notice("connected", ""))
        if identity != self.token:
            return
        if self._bot is not None:  # as libzmq's ROUTER: a second peer under a routing id in use is refused
            self._drop(c)
            return
        self._bot = c
        c.zmtp.limit = MAX_MESSAGE_BYTES

    def _stranger(self, c: _Conn) -> None:
        if not self._stranger_seen:
            self._stranger_seen = True
            self._items.append(Notice("stranger", ""))
        now = time.monotonic()
        self._stranger_budget = min(STRANGER_REPLIES_PER_S, self._stranger_budget
                                    + (now - self._stranger_at) * STRANGER_REPLIES_PER_S)
        self._stranger_at = now
        if self._stranger_budget >= 1:
            self._stranger_budget -= 1
            self._queue(c, STRANGER_REPLY)

    def _last_words(self) -> None:
        """The compartment ended: what its connections hold (the bot's last messages) is read, boundedly."""
        for c in list(self._conns.values()):
            for _ in range(LAST_WORDS_CHUNKS):
                if c.fd not in self._conns or not _readable(c.fd):
                    break
                self._read(c)

    # -- writing -----------------------------------------------------------------------
    def send(self, data: bytes) -> bool:
        """Queue one message and write what the socket takes; False if the bot is not reading."""
        return self.send_many([data])

    def send_many(self, batch: list[bytes]) -> bool:
        """Queue messages for the bot in one write; False if the bot is not reading (then none is
        queued).  With no connection under the bot's token they are lost, as over any ROUTER."""
        if self.write_closed:
            return False
        c = self._bot
        if c is None:
            return True
        payload = b"".join([frame(d) for d in batch]) if len(batch) > 1 else frame(batch[0])
        if len(c.out) + len(payload) > OUTBOX_CAP_BYTES:
            return False
        self._queue(c, payload)
        return True

    def _queue(self, c: _Conn, data: bytes) -> None:
        """Write now what the socket takes, keep the rest for when it is writable."""
        if c.out:
            c.out += data
            return
        try:
            n = c.sock.send(data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError:
            self._drop(c)
            return
        if n < len(data):
            c.out += data[n:]
            self._writing += 1
            self._poll.modify(c.fd, select.POLLIN | select.POLLOUT)

    def _write(self, c: _Conn) -> None:
        try:
            n = c.sock.send(c.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(c)
            return
        del c.out[:n]
        if not c.out:
            self._writing -= 1
            self._poll.modify(c.fd, select.POLLIN)

    def flush(self) -> bool:
        for c in [c for c in self._conns.values() if c.out]:
            self._write(c)
        return not self.write_closed

    @property
    def backlog(self) -> int:
        return len(self._bot.out) if self._bot is not None else 0

    # -- ending --------------------------------------------------------------------------
    def close_write(self) -> None:
        """Send what is queued (waiting at most a moment), then close every connection."""
        deadline = time.monotonic() + 0.5
        while self._writing and time.monotonic() < deadline:
            self.flush()
            if self._writing:
                select.select([], [c.fd for c in self._conns.values() if c.out], [], 0.05)
        for c in list(self._conns.values()):
            self._drop(c)
        self.write_closed = True

    def _drop(self, c: _Conn) -> None:
        if self._conns.pop(c.fd, None) is None:
            return
        if c.out:
            self._writing -= 1
        try:
            self._poll.unregister(c.fd)
        except (KeyError, ValueError):
            pass
        c.sock.close()
        if c is self._bot:
            self._bot = None

    def close(self) -> None:
        for c in list(self._conns.values()):
            self._drop(c)
        if self._listener.fileno() >= 0:
            self._listener.close()
            try:
                os.unlink(self.path)
            except OSError:
                pass
        self.eof = self.write_closed = True


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])
