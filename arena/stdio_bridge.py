"""The stdio transport: a bot that speaks JSON lines on stdin/stdout, carried onto ZeroMQ.

A bridge thread owns a DEALER connected to the referee's ROUTER with the bot's
token as routing id, exactly as a ZeroMQ bot would.  Each line the bot writes
on stdout becomes one message; each message for the bot becomes one line on
its stdin.  The referee cannot tell the difference, so clocks, limits and
failure rules are identical for both transports.  Writes to the bot never
block the bridge: a bot that stops reading just stops getting messages.

Details that keep the bridge safe whatever the bot does:

- The bridge works on its own duplicates of the pipe descriptors, so the
  process supervisor closing the bot's pipes (``BotProcess.kill``) can never
  pull a descriptor out from under the thread, nor let a reused descriptor
  number reach another process's pipe.
- A line longer than the transport cap is sent as one oversized message (the
  referee rejects it as ``oversized``) and the rest of that line is dropped.
- If the referee's queue is full the message is dropped (as ZeroMQ would drop
  it for a socket bot), never blocking and never killing the bridge.
- A bridge started for a token stops any earlier bridge of the same token
  first, so a restarted bot never races its predecessor's connection; a
  bridge ends by itself when its bot has exited and its output is drained,
  even if a stray child process still holds the pipe.
- ``lines``, ``bad_lines`` and ``bad_sample`` count what the bot wrote (a bad
  line is one that is not a JSON object), for ``arena check-bot``.
"""

from __future__ import annotations

import json
import os
import threading

import zmq

from arena.bots import BotProcess
from arena.host import TRANSPORT_CAP_BYTES

MAX_PENDING_TO_BOT = 8 * TRANSPORT_CAP_BYTES
POLL_MS = 50

_live: dict[str, StdioBridge] = {}
_live_lock = threading.Lock()


def _is_json_object(line: bytes) -> bool:
    if not line.lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, UnicodeDecodeError):
        return False


class StdioBridge:
    def __init__(self, ctx: zmq.Context, process: BotProcess, endpoint: str, token: str) -> None:
        self.ctx = ctx
        self.process = process
        self.endpoint = endpoint
        self.token = token
        self.lines = 0  # lines the bot wrote (messages forwarded)
        self.bad_lines = 0  # of which not a JSON object
        self.bad_sample: bytes | None = None  # the first such line (truncated)
        self.dropped = 0  # messages dropped because a queue was full
        self.partial = 0  # bytes of an unfinished line (no newline yet) when last looked at
        self._stop = threading.Event()
        self._ready = threading.Event()
        proc = process.proc
        assert proc.stdout is not None and proc.stdin is not None, "launch the bot with pipe_stdio=True"
        self._out_fd = os.dup(proc.stdout.fileno())
        self._in_fd = os.dup(proc.stdin.fileno())
        with _live_lock:
            old = _live.get(token)
            _live[token] = self
        if old is not None:
            old.stop()
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"stdio-{process.spec.name}")
        self.thread.start()
        self._ready.wait(5)

    def stop(self) -> None:
        self._stop.set()
        if self.thread is not threading.current_thread():
            self.thread.join(timeout=2)
        with _live_lock:
            if _live.get(self.token) is self:
                del _live[self.token]

    @property
    def running(self) -> bool:
        return self.thread.is_alive()

    def _forward(self, sock: zmq.Socket, line: bytes) -> None:
        self.lines += 1
        if not _is_json_object(line):
            self.bad_lines += 1
            if self.bad_sample is None:
                self.bad_sample = line[:200]
        try:
            sock.send(line, zmq.NOBLOCK)
        except zmq.Again:
            self.dropped += 1

    def _run(self) -> None:
        sock = self.ctx.socket(zmq.DEALER)
        out_fd, in_fd = self._out_fd, self._in_fd
        try:
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.ROUTING_ID, self.token.encode("ascii"))
            sock.connect(self.endpoint)
            os.set_blocking(out_fd, False)
            os.set_blocking(in_fd, False)
            poller = zmq.Poller()
            poller.register(sock, zmq.POLLIN)
            poller.register(out_fd, zmq.POLLIN)
            from_bot = bytearray()
            to_bot = bytearray()
            skipping = False  # dropping the rest of an over-long line
            stdin_open = True
            self._ready.set()
            while not self._stop.is_set():
                want_write = bool(to_bot) and stdin_open
                if want_write:
                    poller.register(in_fd, zmq.POLLOUT)
                events = dict(poller.poll(POLL_MS))
                if want_write:
                    poller.unregister(in_fd)
                if not events and self.process.proc.poll() is not None:
                    break  # the bot is gone and its output is drained (even if a stray child holds the pipe)
                if sock in events:
                    while True:
                        try:
                            msg = sock.recv(zmq.NOBLOCK)
                        except zmq.Again:
                            break
                        if len(to_bot) < MAX_PENDING_TO_BOT:
                            to_bot += msg + b"\n"
                        else:
                            self.dropped += 1
                if out_fd in events:
                    try:
                        chunk = os.read(out_fd, 1 << 16)
                    except BlockingIOError:
                        chunk = None
                    except OSError:
                        chunk = b""
                    if chunk == b"":  # the bot closed its stdout (or exited)
                        if from_bot.strip() and not skipping:
                            self._forward(sock, bytes(from_bot).rstrip(b"\r"))
                        break
                    if chunk:
                        from_bot += chunk
                        while (nl := from_bot.find(b"\n")) >= 0:
                            line = bytes(from_bot[:nl]).rstrip(b"\r")
                            del from_bot[: nl + 1]
                            if skipping:
                                skipping = False
                                continue
                            if line.strip():
                                self._forward(sock, line)
                        if len(from_bot) > TRANSPORT_CAP_BYTES:
                            if not skipping:
                                self._forward(sock, bytes(from_bot[:TRANSPORT_CAP_BYTES]))  # rejected as oversized
                            skipping = True
                            from_bot.clear()
                        self.partial = len(from_bot)
                if want_write and in_fd in events:
                    try:
                        n = os.write(in_fd, to_bot)
                        del to_bot[:n]
                    except BlockingIOError:
                        pass
                    except OSError:  # the bot closed its stdin or exited
                        to_bot.clear()
                        stdin_open = False
        except zmq.ZMQError:
            pass
        finally:
            self._ready.set()
            sock.close(linger=0)
            for fd in (out_fd, in_fd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            with _live_lock:
                if _live.get(self.token) is self:
                    del _live[self.token]


def start_bridge(ctx: zmq.Context, process: BotProcess, endpoint: str, token: str) -> StdioBridge:
    return StdioBridge(ctx, process, endpoint, token)

