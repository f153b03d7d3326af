"""The gate on libzmq: the previous gate, kept for CURVE seats and for ``ARENA_GATE=libzmq``.

``arena.referee.gate`` (which speaks ZMTP itself) is the default; launch.py starts this one for a
remote seat with CURVE (SPEC 12), or for every zmq bot when the referee's environment has
``ARENA_GATE=libzmq`` (a way back, kept for a release).  Both write the same lines and notices.

The referee never holds a socket a bot can write to.  Each bot gets a gate
process, started in the bot's own compartment (its sandbox, its limits), that
binds a ROUTER for that bot alone, starts the bot, and relays between the
bot's socket and two pipes to the referee: one JSON message per line.  Pipes
are bounded by the kernel, so whatever a bot sends, the referee reads at its
own pace and only what it asks for; anything libzmq must hold (a multipart
message is assembled whole before it can be read) is held here, under this
process's own memory cap, never in the referee.

What reaches the referee (stdout, one line each):

- a message from the bot, with any raw newline in it turned into a space
  (outside JSON strings a newline is whitespace; inside one it is invalid
  anyway), and a space put before one that starts with a NUL byte, so no
  message of the bot's can ever be read as a notice (the referee's decoder
  then refuses it as it refuses any NUL outside a string);
- a notice, which starts with a NUL byte and can never be a JSON message:
  ``\\0bound ENDPOINT``; ``\\0connected`` (a peer completed the ZeroMQ
  handshake; once); ``\\0multipart N`` (a message of N frames, dropped);
  ``\\0oversized N`` (a frame of N bytes, dropped); ``\\0overflow MIB`` (a
  message too big for the gate's memory cap: the gate ends); ``\\0stranger``
  (the first message from a routing id that is not the bot's token);
  ``\\0dropped N`` (N messages dropped because the referee was not reading);
  ``\\0exit CODE``.

Lines from the referee (stdin) go to the bot's socket, never blocking: a bot
that does not read loses messages, it cannot stall the gate.  The gate exits
when the bot exits (after a last ``\\0exit``), and kills the bot when the
referee closes its stdin.

Only the standard library and pyzmq are imported, so the gate starts fast.
A remote seat of a tournament also gets ``ARENA_GATE_CURVE`` (the Z85 secret of the
referee's CURVE key pair): its socket is then a CURVE server, so the connection is
encrypted and a client that does not know the referee's public key cannot connect.

Usage (the referee runs it; ARENA_TOKEN and ARENA_GATE_BIND in the environment)::

    python gate.py [BOT ARGV...]      # no argv: a remote seat, the gate only listens
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time

import zmq

MAX_MESSAGE_BYTES = 1 << 20  # the protocol's limit; bigger frames are reported, not relayed
FRAME_CAP_BYTES = 4 * MAX_MESSAGE_BYTES  # libzmq drops a connection that sends a bigger frame
OUT_CAP_BYTES = 4 * MAX_MESSAGE_BYTES  # unread lines held for the referee before dropping
IN_CAP_BYTES = 8 * MAX_MESSAGE_BYTES  # unread referee lines held before reading stdin pauses
MEMORY_CAP_BYTES = 512 << 20  # the gate's own data (RLIMIT_DATA): a multipart bomb ends here
STRANGER_REPLIES_PER_S = 10
RCVHWM = 8


class Overflow(Exception):
    """The bot sent a message larger than the gate's memory cap: the gate reports it and ends."""


class Gate:
    def __init__(self, bind: str, token: bytes, curve_secret: bytes | None = None) -> None:
        self.token = token
        self.ctx = zmq.Context(io_threads=1)
        self.sock = self.ctx.socket(zmq.ROUTER)
        if curve_secret:  # a remote seat of a tournament: only CURVE clients that know our public key (SPEC 12)
            self.sock.curve_secretkey = curve_secret
            self.sock.curve_publickey = zmq.curve_public(curve_secret)
            self.sock.curve_server = True
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.sock.setsockopt(zmq.RCVHWM, RCVHWM)
        self.sock.setsockopt(zmq.SNDHWM, 1000)
        self.sock.setsockopt(zmq.MAXMSGSIZE, FRAME_CAP_BYTES)
        self.sock.bind(bind)
        self.endpoint = self.sock.getsockopt(zmq.LAST_ENDPOINT).decode()  # type: ignore[union-attr]  # LAST_ENDPOINT is a bytes option
        # Told once when a peer completes the ZeroMQ handshake, so that a bot that connects and
        # then says nothing can be told apart from one that never connected.
        self.monitor: zmq.Socket | None = self.sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
        self.out = bytearray()  # lines for the referee
        self.inbuf = bytearray()  # bytes from the referee, not a whole line yet
        self.dropped = 0
        self.stranger_seen = False
        self.stranger_budget = float(STRANGER_REPLIES_PER_S)
        self.stranger_at = time.monotonic()
        os.set_blocking(0, False)
        os.set_blocking(1, False)

    # -- to the referee -----------------------------------------------------------
    def emit(self, line: bytes) -> None:
        if len(self.out) + len(line) + 1 > OUT_CAP_BYTES:
            self.dropped += 1
            return
        if self.dropped:
            notice = b"\0dropped %d\n" % self.dropped
            self.dropped = 0
            self.out += notice
        self.out += line + b"\n"

    def flush(self) -> None:
        while self.out:
            try:
                n = os.write(1, self.out)
            except BlockingIOError:
                return
            del self.out[:n]

    # -- from the bot ---------------------------------------------------------------
    def from_bot(self) -> None:
        """Read what is queued on the bot's socket (a bounded batch: stdin gets its turn too)."""
        for _ in range(256):
            try:
                frames = self.sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            except MemoryError:  # a multipart message bigger than this process may hold
                raise Overflow from None
            ident = frames[0]
            if ident != self.token:
                self.stranger(ident)
                continue
            if len(frames) != 2:
                self.emit(b"\0multipart %d" % (len(frames) - 1))
                continue
            data = frames[1]
            if len(data) > MAX_MESSAGE_BYTES:
                self.emit(b"\0oversized %d" % len(data))
                continue
            if b"\n" in data or b"\r" in data:
                data = data.replace(b"\n", b" ").replace(b"\r", b" ")
            if data.startswith(b"\0"):  # the notices' mark is the gate's alone
                data = b" " + data
            self.emit(data)

    def stranger(self, ident: bytes) -> None:
        if not self.stranger_seen:
            self.stranger_seen = True
            self.emit(b"\0stranger")
        now = time.monotonic()
        self.stranger_budget = min(STRANGER_REPLIES_PER_S, self.stranger_budget + (now - self.stranger_at) * STRANGER_REPLIES_PER_S)
        self.stranger_at = now
        if self.stranger_budget < 1:
            return
        self.stranger_budget -= 1
        self.send(ident, b'{"v":1,"type":"error","game":null,"seq":null,"kind":"token","retry":false,'
                         b'"reason":"unknown token: connect with the token the referee gave you (ARENA_TOKEN)"}')

    def connected(self) -> None:
        assert self.monitor is not None
        self.monitor.recv_multipart()
        self.emit(b"\0connected")
        self.sock.disable_monitor()
        self.monitor.close(0)
        self.monitor = None

    def send(self, ident: bytes, data: bytes) -> None:
        try:
            self.sock.send_multipart([ident, data], zmq.NOBLOCK, copy=len(data) < 65536)
        except zmq.ZMQError:
            pass  # not connected, or not reading: the message is lost, as over any socket

    # -- from the referee ---------------------------------------------------------------
    def from_referee(self) -> bool:
        """Relay whole lines from stdin to the bot; False when the referee closed it."""
        try:
            chunk = os.read(0, 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        self.inbuf += chunk
        start = 0
        while (nl := self.inbuf.find(b"\n", start)) >= 0:
            self.send(self.token, bytes(self.inbuf[start:nl]))
            start = nl + 1
        del self.inbuf[:start]
        if len(self.inbuf) > IN_CAP_BYTES:  # the referee never sends such a line
            self.inbuf.clear()
        return True


def _reap(bot_pid: int) -> int | None:
    """Reap every exited child (the gate may be PID 1 of the sandbox, and adopt orphans); the bot's code if it ended."""
    code = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return code
        if pid == 0:
            return code
        if pid == bot_pid:
            code = os.waitstatus_to_exitcode(status)


def _exit_code(code: int) -> int:
    return 128 - code if code < 0 else code


def _not_dumpable() -> None:
    """Keep the bot out of the gate: no ptrace, and its /proc files (fds, memory) closed to the bot's user."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    _not_dumpable()
    token = os.environ.get("ARENA_TOKEN", "").encode("ascii", "replace")
    curve = os.environ.pop("ARENA_GATE_CURVE", "").encode("ascii", "replace") or None
    gate = Gate(os.environ.pop("ARENA_GATE_BIND", "ipc:///tmp/arena-bot.sock"), token, curve)
    gate.emit(b"\0bound " + gate.endpoint.encode())
    gate.flush()
    bot_pid = 0
    if argv:
        os.environ["ARENA_ENDPOINT"] = gate.endpoint
        try:
            bot_pid = os.posix_spawnp(argv[0], argv + ["--endpoint", gate.endpoint], os.environ, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, 2, 1)])
        except OSError as e:
            gate.emit(b"\0exit 127 could not start the bot: " + str(e).encode("utf-8", "replace"))
            os.set_blocking(1, True)
            gate.flush()
            return 127
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))  # the bot keeps its own
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    poller = zmq.Poller()
    poller.register(gate.sock, zmq.POLLIN)
    poller.register(0, zmq.POLLIN)
    poller.register(gate.monitor, zmq.POLLIN)
    waiting_out = False  # fd 1 registered for POLLOUT: the referee's pipe was full
    try:
        while True:
            try:
                ready = poller.poll(100)
                for what, _ in ready:
                    if what is gate.sock:
                        gate.from_bot()
                    elif what is gate.monitor:
                        poller.unregister(what)
                        gate.connected()
                    elif what == 0 and not gate.from_referee():
                        gate.sock.close(linger=500)  # the referee is done: pass its last words on, then go
                        return 0
            except Overflow:
                gate.out.clear()
                gate.emit(b"\0overflow %d" % (MEMORY_CAP_BYTES >> 20))
                os.set_blocking(1, True)
                gate.flush()
                return 1
            gate.flush()
            if bool(gate.out) != waiting_out:
                waiting_out = not waiting_out
                if waiting_out:
                    poller.register(1, zmq.POLLOUT)
                else:
                    poller.unregister(1)
            code = _reap(bot_pid) if bot_pid else None
            if code is not None:
                bot_pid = 0
                gate.from_bot()  # what it sent just before exiting
                gate.emit(b"\0exit %d" % code)
                os.set_blocking(1, True)
                gate.flush()
                return _exit_code(code)
    finally:
        if bot_pid:
            try:
                os.kill(bot_pid, signal.SIGKILL)
            except OSError:
                pass
        if gate.monitor is not None:  # an open monitor socket would keep ctx.term() waiting forever
            gate.sock.disable_monitor()
            gate.monitor.close(0)
        gate.sock.close(0 if not gate.sock.closed else None)
        gate.ctx.term()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
