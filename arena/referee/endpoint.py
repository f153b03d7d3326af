"""A ZeroMQ bot's endpoint held by the referee itself: ZMTP 3.1 on a Unix socket of that bot's alone.

The default way a bot on the ``zmq`` transport is reached (SPEC 1).  The referee listens on a
socket file in a private folder of its own, bound into the bot's sandbox at
``/tmp/arena-bot.sock`` (or named to the bot as it is, without a sandbox); the bot's DEALER
connects there.  There is no process between them: a decision is one write and one read on
each side, as on the stdio transport, where a gate process (``arena.referee.gate``) cost a
hop and its own CPU on each.

Every isolation property of the gate holds here, because the socket is read exactly as a
stdio bot's pipe is (``arena.referee.channel``): only when the referee asks for this bot, one
chunk at a time, through the connections and codec the gate uses too (``zmtp_router.Router``), which
read each frame's size from its header before its body.  So what a bot sends costs the referee
at most one message of
``MAX_MESSAGE_BYTES`` on the bot's own connection plus ``STRANGER_BYTES`` on each of at most
``MAX_CONNECTIONS - 1`` others (a message over either is reported and skipped unread, a
multipart one dropped), a bot that floods fills its own socket's kernel buffer and waits, no
bot's traffic is read while another bot is asked, and nothing a bot writes can pass for the
referee's own notices: those are made here, never parsed from the bot's bytes.

What comes out of ``next_item`` is what a gate's pipe gives (``Line``, ``Notice``, ``Closed``):
``Notice("connected")`` once a peer completed the handshake, ``Notice("stranger")`` at the first
message under another routing id than the bot's token, ``Notice("multipart", N)``,
``Notice("oversized", N)``; ``Closed()`` once the compartment's first process has ended (its
pidfd, handed over by ``watch_end``) and what the bot sent before was read.
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
from arena.referee.zmtp import frame
from arena.referee.zmtp_router import Conn, Router
from protocol.messages import MAX_MESSAGE_BYTES

MAX_CONNECTIONS = 8  # a bot needs one (two while its library reconnects); more are closed at once
MAX_ACCEPTS = 64  # connections over the endpoint's life (its bot's session): then connect is refused
OUTBOX_CAP_BYTES = 8 * MAX_MESSAGE_BYTES  # as a pipe channel's: a bot that stops reading is disconnected
# What the referee reads for one request (or a start): frames and commands of any connection.  A reply
# is one frame; a heartbeat, a few stale replies (game.MAX_JUNK) stay far below.  Past it the endpoint
# says "flood" and reads nothing more until its next request: the referee's work on a bot's bytes is
# bounded per request, whatever the clock, since no compartment pays for it.
UNITS_PER_REQUEST = 1024
LAST_WORDS_BYTES = MAX_MESSAGE_BYTES + (1 << 16)  # read of the bot's connection once its compartment ended
LAST_WORDS_ITEMS = 16
IN = select.POLLIN | select.POLLHUP | select.POLLERR


class Endpoint(Router):
    """One bot's ZMTP endpoint: a listening Unix socket at ``path`` and the connections made to it."""

    def __init__(self, path: Path, token: str) -> None:
        self.path = str(path)
        try:
            if stat.S_ISSOCK(os.lstat(self.path).st_mode):  # a socket a killed referee left
                os.unlink(self.path)
        except OSError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.path)
            # Reached only through the bind mount into the bot's sandbox (the folder is the referee's,
            # 0700), whose user is one of its own: it may connect, whoever it is.
            os.chmod(self.path, 0o666)
            listener.listen(MAX_CONNECTIONS)
        except OSError:
            listener.close()
            raise
        listener.setblocking(False)
        super().__init__(listener, token.encode("ascii", "replace"), MAX_CONNECTIONS, OUTBOX_CAP_BYTES,
                         max_accepts=MAX_ACCEPTS)
        self._poll = select.poll()
        self._poll.register(listener, select.POLLIN)
        self._listener_fd = listener.fileno()  # kept: a closed listener's number may be a connection's later
        self._items: deque[Item] = deque()
        self._pidfd = -1
        self._process: subprocess.Popen[bytes] | None = None
        self._flooded = False  # "flood" was said for this request
        self.eof = False
        self.write_closed = False

    def watch(self, c: Conn, write: bool) -> None:
        self._poll.register(c.fd, select.POLLIN | select.POLLOUT if write else select.POLLIN)  # or modify

    def unwatch(self, c: Conn) -> None:
        try:
            self._poll.unregister(c.fd)
        except (KeyError, ValueError):
            pass

    def stop_listening(self) -> None:
        if self.listener.fileno() >= 0:
            self._poll.unregister(self.listener)
            self.listener.close()

    def on_message(self, data: bytes) -> None:
        if data and not data.isspace():  # as a blank line on a pipe: nothing (without copying a long body)
            self._items.append(Line(data))

    def on_notice(self, word: str, arg: str = "") -> None:
        if word == "flood":
            if self._flooded:
                return
            self._flooded = True
        self._items.append(Notice(word, arg))

    def allowance(self) -> float:
        return UNITS_PER_REQUEST - self.units

    def watch_end(self, pidfd: int, process: subprocess.Popen[bytes]) -> None:
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
            elif fd == self._listener_fd:
                self.accept()
            elif (c := self.conns.get(fd)) is not None:
                if ev & select.POLLOUT:
                    self.write(c)
                if ev & IN and c.fd in self.conns:
                    if self.units > UNITS_PER_REQUEST:
                        self.on_notice("flood", str(self.units))
                        if not ended:
                            time.sleep(min(timeout_s, 0.05))  # the rest waits unread; poll would say so at once
                        break
                    self.read(c)
        if ended or (self._pidfd < 0 and self._process is not None and self._process.poll() is not None):
            self._last_words()
            self._items.append(Closed())
            self.eof = True
        return self._items.popleft() if self._items else None

    def pending(self) -> bool:
        return bool(self._items)

    def _last_words(self) -> None:
        """The compartment ended: what the bot's connection holds (its last reply) is read, up to one
        message's bytes, while fewer than ``LAST_WORDS_ITEMS`` messages wait and the request's allowance
        lasts; another connection's is not read at all."""
        c, read = self.bot, 0
        while c is not None and c.fd in self.conns and read < LAST_WORDS_BYTES and len(self._items) < LAST_WORDS_ITEMS \
                and self.units <= UNITS_PER_REQUEST and _readable(c.fd):
            read += self.read(c)

    # -- writing -----------------------------------------------------------------------
    def send(self, data: bytes) -> bool:
        """Queue one message and write what the socket takes; False if the bot is not reading."""
        return self.send_many([data])

    def send_many(self, batch: list[bytes]) -> bool:
        """Queue messages for the bot in one write; False if the bot is not reading (then none is
        queued).  With no connection under the bot's token they are lost, as over any ROUTER."""
        if self.write_closed:
            return False
        self.units, self._flooded = 0, False  # a new request: the reading allowance starts again
        if self.bot is None:
            return self.listening  # lost, as over a ROUTER, while the bot may still connect; else disconnected
        payload = b"".join([frame(d) for d in batch]) if len(batch) > 1 else frame(batch[0])
        return self.queue(self.bot, payload)

    def flush(self) -> bool:
        for c in [c for c in self.conns.values() if c.out]:
            self.write(c)
        return not self.write_closed

    @property
    def backlog(self) -> int:
        return len(self.bot.out) if self.bot is not None else 0

    # -- ending --------------------------------------------------------------------------
    def close_write(self) -> None:
        """Send what is queued (waiting at most a moment), then close every connection."""
        deadline = time.monotonic() + 0.5
        while (waiting := [c.fd for c in self.conns.values() if c.out]) and time.monotonic() < deadline:
            select.select([], waiting, [], 0.05)
            self.flush()
        self.close_all()
        self.write_closed = True

    def close(self) -> None:
        self.close_all()
        self.listener.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass
        self.eof = self.write_closed = True


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])
