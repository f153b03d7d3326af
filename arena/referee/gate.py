"""The gate: a bot's ZeroMQ endpoint served by a process of its own beside the bot.

A bot on the ``tcp`` transport and a remote seat are reached through a gate (a bot on the default
``ipc`` endpoint is read by the referee itself, ``arena.referee.endpoint``).  The gate is started
in the bot's own compartment (its sandbox, its limits), listens for that bot alone, starts the
bot, and relays between the bot's connection and two pipes to the referee: one JSON message per
line.  Pipes are bounded by the kernel, so whatever a bot sends, the referee reads at its own
pace and only what it asks for.

It speaks ZMTP 3.1 itself through ``arena.referee.zmtp`` (the NULL mechanism, as a ROUTER),
single-threaded on epoll, standard library only: no libzmq, no I/O thread.  Each frame's size is
read from its header before its body, so a frame over the protocol's limit, or a multipart message
whose frames add up past it, is reported at once and the rest of it skipped unread into any buffer:
nothing a peer sends is held beyond one message of ``MAX_MESSAGE_BYTES`` per connection.
``arena.referee.gate_libzmq`` is the previous gate, on libzmq: it serves CURVE (remote seats of a
tournament, SPEC 12) and whoever sets ``ARENA_GATE=libzmq`` (launch.py picks the file).

What reaches the referee (stdout, one line each):

- a message from the bot, with any raw newline in it turned into a space
  (outside JSON strings a newline is whitespace; inside one it is invalid
  anyway), and a space put before one that starts with a NUL byte, so no
  message of the bot's can ever be read as a notice (the referee's decoder
  then refuses it as it refuses any NUL outside a string);
- a notice, which starts with a NUL byte and can never be a JSON message:
  ``\\0bound ENDPOINT``; ``\\0connected`` (a peer completed the ZMTP
  handshake; once); ``\\0multipart N`` (a message of N frames, dropped);
  ``\\0oversized N`` (a message of at least N bytes, skipped as it arrives);
  ``\\0stranger`` (the first message from a routing id that is not the bot's
  token); ``\\0dropped N`` (N messages dropped because the referee was not
  reading); ``\\0exit CODE``.

Lines from the referee (stdin) go to the bot's connection, never blocking: a
bot that does not read loses messages, it cannot stall the gate.  The gate
exits when the bot exits (after a last ``\\0exit``), and kills the bot when
the referee closes its stdin.

Usage (the referee runs it; ARENA_TOKEN and ARENA_GATE_BIND in the environment)::

    python gate.py [BOT ARGV...]      # no argv: a remote seat, the gate only listens
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import socket
import stat
import sys
import time

if __package__:  # imported, as arena.referee.gate
    from arena.referee.zmtp import MAX_MESSAGE_BYTES, frame
    from arena.referee.zmtp_router import Conn, Router
else:  # run as a script, in the sandbox with -I -S: zmtp.py and zmtp_router.py lie beside this file (launch.py shows them)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from zmtp import MAX_MESSAGE_BYTES, frame  # type: ignore[import-not-found,no-redef]
    from zmtp_router import Conn, Router  # type: ignore[import-not-found,no-redef]
    del sys.path[0]

OUT_CAP_BYTES = 4 * MAX_MESSAGE_BYTES  # unread lines held for the referee before dropping
IN_CAP_BYTES = 8 * MAX_MESSAGE_BYTES  # unread referee lines held before reading stdin pauses
SEND_CAP_BYTES = 8 * MAX_MESSAGE_BYTES  # bytes queued for a connection that is not reading
MEMORY_CAP_BYTES = 512 << 20  # the gate's own data (RLIMIT_DATA), as the libzmq gate's
MAX_CONNECTIONS = 64  # a bot that opens more gets them closed (its own may hold one message, others 4 KiB)


# -- the gate process -----------------------------------------------------------------------
class Gate(Router):
    def __init__(self, bind: str, token: bytes) -> None:
        listener, self.endpoint, self.ipc_path = _listen(bind)
        super().__init__(listener, token, MAX_CONNECTIONS, SEND_CAP_BYTES)
        self.sel = selectors.DefaultSelector()
        self.sel.register(listener, selectors.EVENT_READ, "listen")
        self.out = bytearray()  # lines for the referee
        self.inbuf = bytearray()  # bytes from the referee, not a whole line yet
        self.dropped = 0
        self.reap_due = True  # a child may have ended: SIGCHLD came (its wakeup pipe), or a quiet round passed
        os.set_blocking(0, False)
        os.set_blocking(1, False)

    # -- to the referee -----------------------------------------------------------
    def emit(self, line: bytes) -> None:
        if len(self.out) + len(line) + 1 > OUT_CAP_BYTES:
            self.dropped += 1
            return
        if self.dropped:
            self.out += b"\0dropped %d\n" % self.dropped
            self.dropped = 0
        self.out += line
        self.out += b"\n"

    def flush(self) -> None:
        while self.out:
            try:
                n = os.write(1, self.out)
            except BlockingIOError:
                return
            del self.out[:n]

    # -- the Router's owner ------------------------------------------------------
    def watch(self, c: Conn, write: bool) -> None:
        events = selectors.EVENT_READ | selectors.EVENT_WRITE if write else selectors.EVENT_READ
        try:
            self.sel.modify(c.sock, events, c)
        except KeyError:
            self.sel.register(c.sock, events, c)

    def unwatch(self, c: Conn) -> None:
        try:
            self.sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass

    def stop_listening(self) -> None:
        self.sel.unregister(self.listener)
        self.listener.close()

    def on_message(self, data: bytes) -> None:
        if b"\n" in data or b"\r" in data:
            data = data.replace(b"\n", b" ").replace(b"\r", b" ")
        if data.startswith(b"\0"):  # the notices' mark is the gate's alone
            data = b" " + data
        self.emit(data)

    def on_notice(self, word: str, arg: str = "") -> None:
        self.emit(b"\0" + word.encode() + (b" " + arg.encode() if arg else b""))

    # -- from the referee ---------------------------------------------------------------
    def from_referee(self) -> bool:
        """Relay whole lines from stdin to the bot; False when the referee closed it."""
        try:
            chunk = os.read(0, 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        inbuf = self.inbuf
        if not inbuf and chunk.endswith(b"\n") and chunk.count(b"\n") == 1:
            self.to_bot(chunk[:-1])  # the common case: one whole line
            return True
        inbuf += chunk
        start = 0
        frames = []  # every whole line of the chunk (events, then a request) goes out in one write
        while (nl := inbuf.find(b"\n", start)) >= 0:
            frames.append(frame(bytes(inbuf[start:nl])))
            start = nl + 1
        del inbuf[:start]
        if frames and self.bot is not None:
            self.queue(self.bot, b"".join(frames))
        if len(inbuf) > IN_CAP_BYTES:  # the referee never sends such a line
            inbuf.clear()
        return True

    def to_bot(self, data: bytes) -> None:
        if self.bot is not None:  # not connected: the message is lost, as over any ROUTER
            self.queue(self.bot, frame(data))

    def pump(self, timeout: float) -> bool:
        """One round of the loop; False when the referee closed stdin."""
        ready = self.sel.select(timeout)
        if not ready:
            self.reap_due = True  # a quiet round: look for ended children anyway (SIGCHLD is the fast way)
        for key, events in ready:
            c = key.data
            if c == "child":
                try:
                    os.read(key.fd, 4096)  # the signal's wakeup bytes
                except BlockingIOError:
                    pass
                self.reap_due = True
            elif c == "listen":
                self.accept()
            elif c == "in":
                if not self.from_referee():
                    return False
            elif c == "out":
                pass  # written below
            else:
                if events & selectors.EVENT_WRITE and c.fd in self.conns:
                    self.write(c)
                if events & selectors.EVENT_READ and c.fd in self.conns:
                    self.read(c)
        self.flush()
        return True

    def linger(self, seconds: float) -> None:
        """Pass the referee's last words on to the bot for at most ``seconds``."""
        deadline = time.monotonic() + seconds
        while self.bot is not None and self.bot.out and time.monotonic() < deadline:
            select_s = max(0.0, deadline - time.monotonic())
            for key, events in self.sel.select(min(0.05, select_s)):
                if key.data is self.bot and events & selectors.EVENT_WRITE:
                    self.write(self.bot)

    def close(self) -> None:
        self.close_all()
        self.listener.close()
        if self.ipc_path:
            try:
                os.unlink(self.ipc_path)
            except OSError:
                pass


def _listen(bind: str) -> tuple[socket.socket, str, str | None]:
    """A listening socket for a ZeroMQ endpoint (``ipc://PATH`` or ``tcp://HOST:PORT``), the endpoint
    as bound (the port filled in), and the ipc path to remove at the end."""
    scheme, sep, addr = bind.partition("://")
    if not sep or scheme not in ("ipc", "tcp"):
        raise ValueError(f"unsupported endpoint {bind!r}")
    if scheme == "ipc":
        try:
            if stat.S_ISSOCK(os.stat(addr).st_mode):  # a stale socket, as libzmq replaces it
                os.unlink(addr)
        except OSError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(addr)
        s.listen(64)
        s.setblocking(False)
        return s, bind, addr
    host, _, port = addr.rpartition(":")
    host = host.strip("[]")
    if host in ("*", ""):
        host = "0.0.0.0"
    number = int(port) if port not in ("*", "") else 0
    try:  # IPv4 first, as libzmq binds a name (a bot given "localhost" connects to 127.0.0.1)
        info = socket.getaddrinfo(host, number, socket.AF_INET, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)[0]
    except socket.gaierror:
        info = socket.getaddrinfo(host, number, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    s = socket.socket(info[0], socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(info[4])
    s.listen(64)
    s.setblocking(False)
    bound_host, bound_port = s.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    return s, f"tcp://{shown}:{bound_port}", None


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


def _child_wakeups(gate: Gate) -> None:
    """SIGCHLD wakes the gate's loop through a pipe (``signal.set_wakeup_fd``), so it reaps when a
    child ended instead of asking the kernel after every message."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    gate.sel.register(r, selectors.EVENT_READ, "child")


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
    gate = Gate(os.environ.pop("ARENA_GATE_BIND", "ipc:///tmp/arena-bot.sock"), token)
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
    if bot_pid:  # set after the spawn, so a bot that already ended is found by the first (due) reap
        _child_wakeups(gate)
    gate.sel.register(0, selectors.EVENT_READ, "in")
    waiting_out = False  # fd 1 registered for writing: the referee's pipe was full
    try:
        while True:
            if not gate.pump(0.1):
                gate.linger(0.5)  # the referee is done: pass its last words on, then go
                return 0
            if bool(gate.out) != waiting_out:
                waiting_out = not waiting_out
                if waiting_out:
                    gate.sel.register(1, selectors.EVENT_WRITE, "out")
                else:
                    gate.sel.unregister(1)
            code = None
            if bot_pid and gate.reap_due:  # not a waitpid per message: only when a child may have ended
                gate.reap_due = False
                code = _reap(bot_pid)
            if code is not None:
                bot_pid = 0
                for c in list(gate.conns.values()):  # what it sent just before exiting
                    gate.read(c)
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
        gate.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
