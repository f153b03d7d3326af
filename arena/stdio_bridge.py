"""The stdio transport: a bot that speaks JSON lines on stdin/stdout, carried onto ZeroMQ.

A bridge thread owns a DEALER connected to the referee's ROUTER with the bot's
token as routing id, exactly as a ZeroMQ bot would.  Each line the bot writes
on stdout becomes one message; each message for the bot becomes one line on
its stdin.  The referee cannot tell the difference, so clocks, limits and
failure rules are identical for both transports.  Writes to the bot never
block the bridge: a bot that stops reading just stops getting messages.
"""

from __future__ import annotations

import os
import threading

import zmq

from arena.bots import BotProcess
from arena.host import TRANSPORT_CAP_BYTES

MAX_PENDING_TO_BOT = 8 * TRANSPORT_CAP_BYTES


class StdioBridge:
    def __init__(self, ctx: zmq.Context, process: BotProcess, endpoint: str, token: str) -> None:
        self.ctx = ctx
        self.process = process
        self.endpoint = endpoint
        self.token = token
        self._stop = threading.Event()
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"stdio-{process.spec.name}")
        self.thread.start()
        self._ready.wait(5)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=2)

    def _run(self) -> None:
        sock = self.ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.ROUTING_ID, self.token.encode("ascii"))
        sock.connect(self.endpoint)
        proc = self.process.proc
        assert proc.stdout is not None and proc.stdin is not None
        out_fd = proc.stdout.fileno()
        in_fd = proc.stdin.fileno()
        os.set_blocking(out_fd, False)
        os.set_blocking(in_fd, False)
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        poller.register(out_fd, zmq.POLLIN)
        from_bot = bytearray()
        to_bot = bytearray()
        self._ready.set()
        try:
            while not self._stop.is_set():
                if to_bot:
                    poller.register(in_fd, zmq.POLLOUT)
                events = dict(poller.poll(100))
                if to_bot:
                    poller.unregister(in_fd)
                if sock in events:
                    while True:
                        try:
                            msg = sock.recv(zmq.NOBLOCK)
                        except zmq.Again:
                            break
                        if len(to_bot) < MAX_PENDING_TO_BOT:
                            to_bot += msg + b"\n"
                if out_fd in events:
                    try:
                        chunk = os.read(out_fd, 1 << 16)
                    except BlockingIOError:
                        chunk = b""
                    except OSError:
                        break
                    if not chunk and out_fd in events:
                        break  # the bot closed its stdout (or exited)
                    from_bot += chunk
                    while (nl := from_bot.find(b"\n")) >= 0:
                        line = bytes(from_bot[:nl]).rstrip(b"\r")
                        del from_bot[: nl + 1]
                        if line.strip():
                            sock.send(line, zmq.NOBLOCK)
                    if len(from_bot) > TRANSPORT_CAP_BYTES:
                        sock.send(bytes(from_bot[: TRANSPORT_CAP_BYTES]), zmq.NOBLOCK)  # rejected as oversized
                        from_bot.clear()
                if to_bot and in_fd in events:
                    try:
                        n = os.write(in_fd, to_bot)
                        del to_bot[:n]
                    except BlockingIOError:
                        pass
                    except OSError:
                        to_bot.clear()
        except zmq.ZMQError:
            pass
        finally:
            sock.close(linger=0)


def start_bridge(ctx: zmq.Context, process: BotProcess, endpoint: str, token: str) -> StdioBridge:
    return StdioBridge(ctx, process, endpoint, token)
