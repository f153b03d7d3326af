"""The referee's end of one bot's pipes: newline-framed messages, bounded both ways.

Every bot is reached through two pipes: the stdin and stdout of its gate (a
ZeroMQ bot, see ``arena.referee.gate``) or of the bot itself (a stdio bot).  A
``Channel`` reads only when the referee asks it to, so a bot that floods
fills its own pipe (the kernel holds at most a pipe's buffer) and is then
blocked or dropped on its side; nothing it sends can grow the referee's
memory past ``LINE_CAP_BYTES`` of unfinished line plus the lines of one read,
or delay the reading of another bot's pipe.

What comes out of ``next_item`` is one of:

- ``Line(data)``: a message, not yet decoded (the decoder bounds it further);
- ``Notice(word, arg)``: a line from the gate that starts with a NUL byte
  (``bound``, ``multipart``, ``oversized``, ``stranger``, ``dropped``, ``exit``), only on a
  channel made with ``notices=True`` (a gate's).  Only the gate can write one: the bot's
  messages reach the pipe through the gate, which never relays a line that starts with NUL
  (``arena.referee.gate``), and the bot holds no descriptor of the pipe.  A stdio bot writes
  its pipe itself, so its channel takes no notices at all: a NUL line from it is a message
  (which the decoder refuses), never a word of the referee's own side;
- ``Oversized(n)``: a line longer than the protocol's limit (its bytes are
  skipped up to the next newline);
- ``Closed()``: end of file: the gate or the bot has gone.

Writes never block: what the pipe does not take waits in an outbox of at most
``OUTBOX_CAP_BYTES``; a bot whose outbox overflows has stopped reading and is
treated as disconnected.
"""

from __future__ import annotations

import os
import select
import time
from collections import deque
from dataclasses import dataclass

from protocol.messages import MAX_MESSAGE_BYTES

LINE_CAP_BYTES = MAX_MESSAGE_BYTES + 256  # a line longer than this is oversized (room for a CR and spaces)
READ_BYTES = 1 << 16
OUTBOX_CAP_BYTES = 8 * MAX_MESSAGE_BYTES


@dataclass(slots=True)
class Line:  # not frozen: one per message, and a frozen dataclass's __init__ costs twice as much
    data: bytes


@dataclass(frozen=True)
class Notice:
    word: str
    arg: str


@dataclass(frozen=True)
class Oversized:
    size: int


@dataclass(frozen=True)
class Closed:
    pass


Item = Line | Notice | Oversized | Closed


class Channel:
    """Messages to and from one bot over a pair of pipe descriptors (owned: ``close`` closes them)."""

    def __init__(self, read_fd: int, write_fd: int, notices: bool = True) -> None:
        self.read_fd = read_fd
        self.notices = notices  # False: the writer is the bot itself (stdio), nothing it writes is a notice
        self.write_fd = write_fd
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._in = bytearray()
        self._skipping = 0  # bytes of an oversized line skipped so far (0: not skipping)
        self._items: deque[Item] = deque()
        self._out = bytearray()
        self.eof = False
        self.write_closed = False
        self.lines = 0  # lines read that were messages
        self.bytes_read = 0
        self._poll = select.poll()
        self._poll.register(read_fd, select.POLLIN)

    # -- reading -----------------------------------------------------------------
    def next_item(self, timeout_s: float) -> Item | None:
        """The next item, waiting at most ``timeout_s``; None if nothing came in time."""
        if self._items:
            return self._items.popleft()
        if self.eof:
            return Closed()
        if self._out:
            self.flush()
        if not self._poll.poll(max(0, int(timeout_s * 1000 + 0.999))):
            return None
        self._read()
        return self._items.popleft() if self._items else None

    def pending(self) -> bool:
        return bool(self._items)

    def _read(self) -> None:
        try:
            chunk = os.read(self.read_fd, READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.eof = True
            if self._in and not self._skipping:
                self._line(bytes(self._in))
            self._in.clear()
            self._items.append(Closed())
            return
        self.bytes_read += len(chunk)
        if not self._in and not self._skipping and chunk.find(b"\n") == len(chunk) - 1:
            self._line(chunk[:-1])  # the common case: one whole line
            return
        start = 0
        while (nl := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start:nl]
            start = nl + 1
            if self._skipping:
                self._skipping = 0
                continue
            if self._in:
                self._in += piece
                piece = bytes(self._in)
                self._in.clear()
            self._line(piece)
        rest = chunk[start:]
        if self._skipping:
            self._skipping += len(rest)
        elif rest:
            self._in += rest
            if len(self._in) > LINE_CAP_BYTES:
                self._items.append(Oversized(len(self._in)))
                self._skipping = len(self._in)
                self._in.clear()

    def _line(self, data: bytes) -> None:
        if len(data) > LINE_CAP_BYTES:
            self._items.append(Oversized(len(data)))
            return
        if self.notices and data.startswith(b"\0"):
            word, _, arg = data[1:].decode("utf-8", "replace").partition(" ")
            self._items.append(Notice(word, arg))
            return
        data = data.rstrip(b"\r")
        if data.strip():
            self.lines += 1
            self._items.append(Line(data))

    # -- writing -------------------------------------------------------------------
    def send(self, data: bytes) -> bool:
        """Queue one message (a line) and write what the pipe takes; False if the bot is not reading."""
        if self.write_closed or len(self._out) + len(data) + 1 > OUTBOX_CAP_BYTES:
            return False
        self._out += data
        self._out += b"\n"
        return self.flush()

    def send_many(self, batch: list[bytes]) -> bool:
        """Queue several messages and write them at once (one write, one wake-up of the reader);
        False if the bot is not reading: then none is queued."""
        size = sum(len(d) + 1 for d in batch)
        if self.write_closed or len(self._out) + size > OUTBOX_CAP_BYTES:
            return False
        for d in batch:
            self._out += d
            self._out += b"\n"
        return self.flush()

    def flush(self) -> bool:
        while self._out and not self.write_closed:
            try:
                n = os.write(self.write_fd, self._out)
            except BlockingIOError:
                return True
            except OSError:  # the reader has gone
                self.write_closed = True
                self._out.clear()
                return False
            del self._out[:n]
        return not self.write_closed

    def close_write(self) -> None:
        """Send what is queued (waiting at most a moment) and then end of file: the gate relays it and exits."""
        deadline = time.monotonic() + 0.5
        while self._out and not self.write_closed and time.monotonic() < deadline:
            self.flush()
            if self._out:
                select.select([], [self.write_fd], [], 0.05)
        try:
            os.close(self.write_fd)
        except OSError:
            pass
        self.write_closed = True
        self.write_fd = -1

    @property
    def backlog(self) -> int:
        return len(self._out)

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            if fd < 0:
                continue
            try:
                os.close(fd)
            except OSError:
                pass
        self.read_fd = self.write_fd = -1
        self.eof = self.write_closed = True
