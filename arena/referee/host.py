"""The referee's side of the bots: launching them, the handshake, and moving their messages.

``BotHost`` launches each bot in its compartment (``arena.referee.launch.launch``: a
sandbox, and a gate process holding the bot's own ZeroMQ socket, unless the
bot speaks stdio) or, for a remote seat, a gate listening on TCP; it then
runs the handshake under the start clock and moves messages over the
compartment's pipes (``arena.referee.channel``).  It reads a bot's pipe only when
asked for that bot, so no bot's traffic can delay another's.  It knows
nothing of games; ``referee`` does.
"""

from __future__ import annotations

import re
import secrets
import shlex
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from arena.failures import Kind
from arena.referee import datavolume, wire
from arena.referee.channel import Closed, Item, Line, Notice, Oversized
from arena.referee.launch import BotProcess, launch, log_path, log_tail, private_folder
from arena.settings import BotSpec, TimeControl
from protocol.codec import decode_from_bot, encode
from protocol.messages import MAX_MESSAGE_BYTES, SUPPORTED_VERSIONS, Hello, MessageError

REFEREE_NAME = "rummy-arena referee 0.1"
LAST_OUTPUT = "; last output: "  # how a failed start's reason ends when the bot wrote something
STRAY_LINE_BYTES = 200  # of a stdio bot's non-protocol line, in the reason
START_READ_CPU_S = 0.5  # the referee's CPU on a bot's messages before its hello (an honest start: ~1 ms)


CAUSE_LINES, CAUSE_BYTES = 40, 4096  # of a failed start's log, searched for the error that ended it
_ERROR_LINE = re.compile(r"^\s*(\w*(Error|Exception)(\s*\[\w+\])?:|error:|fatal:|panic:)", re.IGNORECASE)
_NODE_MODULE = re.compile(r"Cannot find (module|package) '([^']+)'")
_PYTHON_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")
_NOT_STARTED = re.compile(r"^bwrap: execvp (.*)$", re.MULTILINE)


def start_cause(tail: str, command: str) -> tuple[str, str]:
    """The line of a failed start's output that says why (the last error line, not a runtime's
    version banner after its stack trace) and, for a missing package, the command that installs it."""
    lines = tail.splitlines()
    cause = next((line.strip() for line in reversed(lines) if _ERROR_LINE.match(line)), lines[-1].strip())
    if m := _NODE_MODULE.search(tail):
        return cause, f"its Node packages are not installed: run npm ci --prefix {_script_folder(command)}"
    if m := _PYTHON_MODULE.search(tail):
        return cause, (f"the Python module {m.group(1)!r} is not installed for the interpreter that runs the bot: "
                       f"python3 -m pip install {m.group(1).split('.')[0]}")
    return cause, ""


def _script_folder(command: str) -> str:
    """The folder of the script a command runs (where its package.json is, for a Node bot)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    script = next((w for w in words[1:] if not w.startswith("-")), "")
    return str(Path(script).parent) if script else "."


@dataclass
class Peer:
    """One bot seat: its secret token, its compartment, and handshake state."""

    spec: BotSpec
    token: str
    cwd: Path | None = None
    process: BotProcess | None = None
    hello: Hello | None = None
    starts: int = 0
    problem: tuple[Kind, str] | None = None  # (failure kind, reason) of the last failed start
    seq: int = 0
    endpoint: str | None = None  # where its gate listens
    data: Path | None = None  # the bot's writable folder, kept between its games
    lines: int = 0  # messages read from the bot (for check-bot's output check on stdio)
    bad_lines: int = 0  # of which not a JSON object
    bad_sample: bytes | None = None
    # A tournament's remote seat (SPEC 12): the same token, address and CURVE key for every start.
    fixed_token: bool = False
    bind: str | None = None
    curve_secret: str | None = None
    left: str | None = None  # why the person at this seat left (the human seat's quit): a forfeit, not a crash
    log_from: int = 0  # the size of the bot's log when it was last launched: what came before is not this start's

    @property
    def ready(self) -> bool:
        return self.hello is not None and self.problem is None and self.process is not None

    @property
    def label(self) -> str:
        return self.spec.name

    def alive(self) -> bool:
        return self.process is not None and self.process.alive()

    @property
    def wants_events(self) -> bool:
        return self.hello is not None and self.hello.events

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq


class BotHost:
    def __init__(self, time_control: TimeControl, log_dir: Path, listen: str | None = None,
                 announce: Callable[[str], None] | None = None, remote_wait_ms: int = 120_000,
                 sandbox: bool = True, hide: tuple[Path, ...] = (),
                 on_listening: Callable[[Peer], bool] | None = None) -> None:
        self.time = time_control
        # A remote seat's gate listens: the hook may take the seat over (True: it connects the bot itself).
        self.on_listening = on_listening or (lambda _peer: False)
        self.remote_wait_ms = remote_wait_ms  # start clock of remote seats (someone must start the bot)
        self.log_dir = Path(log_dir)
        self.announce = announce or (lambda _msg: None)
        self.listen = listen
        self.sandbox = sandbox
        self.hide = tuple(hide) + (self.log_dir,)
        self._private_dir: Path | None = None  # the bots' sockets (endpoints, gates): made when needed
        self.peers: list[Peer] = []
        self.closed = False

    # -- peers -----------------------------------------------------------------------
    def add(self, spec: BotSpec, cwd: Path | None = None, data: Path | None = None, *, token: str | None = None,
            bind: str | None = None, curve_secret: str | None = None) -> Peer:
        """A seat; ``token``, ``bind`` and ``curve_secret`` make a remote seat persistent (a tournament's)."""
        peer = Peer(spec, token or secrets.token_hex(16), cwd, data=data, fixed_token=token is not None, bind=bind,
                    curve_secret=curve_secret)
        self.peers.append(peer)
        if data is not None:
            datavolume.use(str(data))
        return peer

    def _bind_for(self, peer: Peer) -> str:
        """The TCP address a remote seat's gate listens on: ``--listen`` for the first, a free port after."""
        if peer.bind is not None:
            return peer.bind
        host, _, port = (self.listen or "127.0.0.1:0").rpartition(":")
        host = host or "127.0.0.1"  # ":PORT" is loopback; "0.0.0.0:PORT" names every interface
        first = next((p for p in self.peers if p.spec.remote), None)
        return f"tcp://{host}:{port if first is peer else 0}"

    def start(self, peer: Peer, welcome: bool = True) -> bool:
        """Launch (or wait for) the bot and complete its handshake under the start clock.

        With ``welcome`` False the first hello is taken as it is, versions unchecked, and not
        answered: the caller answers it (check-bot refusing the bot's versions on purpose).
        """
        self._release(peer)
        peer.problem = peer.left = None
        if peer.starts and not peer.fixed_token:
            peer.token = secrets.token_hex(16)  # a fresh token for every restart
        peer.starts += 1
        try:
            self.launch(peer)
        except (OSError, ValueError) as e:
            peer.problem = ("crash", f"could not start {peer.spec.command!r}: {e}")
            return False
        start_ms = self.remote_wait_ms if peer.spec.remote else self.time.start_ms
        deadline = time.monotonic() + start_ms / 1000
        connected = False  # a peer completed the ZeroMQ handshake with the bot's endpoint or gate
        cpu_start = time.thread_time()  # the referee's own CPU on what the bot sends before its hello
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            item = self.recv(peer, min(left, 0.05))
            if time.thread_time() - cpu_start > START_READ_CPU_S:  # no decision's clock charges it: a cap
                peer.problem = ("malformed", f"sent so much before its hello that reading it took the referee over "
                                             f"{START_READ_CPU_S:g} s of CPU: send hello first, and nothing else "
                                             "until welcome")
                return self._give_up(peer)
            if item is None:
                continue
            if isinstance(item, Closed):
                assert peer.process is not None  # launch() above set it
                peer.process.wait_exit(1.0)
                peer.problem = self._exit_problem(peer)
                return self._give_up(peer)
            if isinstance(item, Notice):
                if item.word == "flood":  # the endpoint stopped reading: no hello can come now
                    peer.problem = ("malformed", f"sent {item.arg} ZeroMQ frames and commands before its hello: send "
                                                 "hello first, and nothing else until welcome")
                    return self._give_up(peer)
                connected = connected or item.word in ("connected", "stranger")
                continue
            if isinstance(item, Oversized):
                self.send_error(peer, "oversized", f"expected hello: a message of {item.size} bytes, over the "
                                                   f"{MAX_MESSAGE_BYTES}-byte limit", retry=True)
                continue
            if peer.spec.speaks == "stdio" and not item.data.lstrip().startswith(b"{"):
                peer.problem = self._not_a_message(peer, item.data)
                return self._give_up(peer)
            if self._handshake(peer, item.data, welcome):
                assert peer.process is not None
                peer.process.note_infra()
                return True
            if peer.problem is not None:
                return self._give_up(peer)
        if connected:
            peer.problem = ("token", f"connected but no hello arrived under its token within {start_ms} ms: "
                                     "check that the DEALER's routing id is set to the token (ARENA_TOKEN) "
                                     "before connecting")
        elif peer.process is not None and not peer.process.alive():
            peer.problem = self._exit_problem(peer)
        else:
            fix = ("the seat's bot must connect with the token and address printed for it" if peer.spec.remote else
                   "send hello as the bot's first message (SPEC 2); if it is only slow to start, raise the start "
                   "clock (--start-ms, or start_ms in [time])")
            peer.problem = ("timeout", f"did not say hello within the start clock of {start_ms} ms: {fix}")
        return self._give_up(peer)

    def launch(self, peer: Peer) -> None:
        """Start the peer's compartment without a handshake (OSError or ValueError if it cannot start)."""
        log = self.log_path(peer)
        try:
            peer.log_from = log.stat().st_size  # a log kept from earlier runs goes on growing
        except OSError:
            peer.log_from = 0
        if peer.spec.remote:
            peer.process = launch(peer.spec, peer.token, log, listen=self._bind_for(peer),
                                  curve_secret=peer.curve_secret)
        else:
            peer.process = launch(peer.spec, peer.token, log, peer.cwd, sandbox=self.sandbox,
                                  hide=self.hide, private_dir=self._private(),
                                  data=peer.data)

    def log_path(self, peer: Peer) -> Path:
        """Where the bot's output goes (stdout and stderr; stderr only for a stdio bot)."""
        return log_path(self.log_dir, peer.spec.name)

    def _private(self) -> Path:
        if self._private_dir is None:
            self._private_dir = private_folder()
        return self._private_dir

    def _exit_problem(self, peer: Peer) -> tuple[Kind, str]:
        assert peer.process is not None
        # The sandbox could not run the command (no such program): as a launch that failed, not a crash of it
        if m := _NOT_STARTED.search(self.output_of_start(peer, 3, 1000)):
            return "crash", f"could not start the bot: {m.group(1).strip()}"
        limits = peer.process.died_of_limits()
        kind: Kind = "resource" if limits else "crash"
        over = f": it {peer.process.violation}" if limits and peer.process.violation else ""  # which limit, and its key
        return kind, f"{peer.process.exit_description()} before saying hello{over}{self._log_hint(peer)}"

    def _not_a_message(self, peer: Peer, data: bytes) -> tuple[Kind, str]:
        """A stdio bot printed a line that is no message before its hello (print-debugging, most often):
        shown, and logged, at once rather than after the whole start clock."""
        shown = data[:STRAY_LINE_BYTES].decode("utf-8", "replace").rstrip()
        if peer.process is not None:
            peer.process.write_log(b"[arena] stray line on stdout before hello: " + data[:STRAY_LINE_BYTES] + b"\n")
        return ("malformed", f"printed {shown!r} on stdout before its hello: print debug output to stderr; "
                             "stdout carries only protocol lines (one JSON message per line)")

    def output_of_start(self, peer: Peer, lines: int, max_bytes: int) -> str:
        """The last ``lines`` lines the bot wrote since its last launch (never an earlier run's, in a
        log folder that is used again), at most ``max_bytes`` of them.  Once the bot has ended, its log's
        copier is first given the moment it needs to write the last of it (``settle_log``)."""
        if peer.process is not None:
            peer.process.settle_log()
        path = self.log_path(peer)
        try:
            size = path.stat().st_size
        except OSError:
            return ""
        new = size - peer.log_from if size >= peer.log_from else size  # smaller: the log was rotated since
        return log_tail(path, lines=lines, max_bytes=min(max_bytes, new)) if new > 0 else ""

    def _log_hint(self, peer: Peer) -> str:
        if peer.process is None:
            return ""
        tail = self.output_of_start(peer, CAUSE_LINES, CAUSE_BYTES)
        if not tail:
            return ""
        cause, fix = start_cause(tail, peer.spec.command)
        return f"{LAST_OUTPUT}{cause[:300]}" + (f"; {fix}" if fix else "")

    def _give_up(self, peer: Peer) -> bool:
        problem = peer.problem
        self._release(peer)
        peer.problem = problem
        return False

    def _handshake(self, peer: Peer, data: bytes, welcome: bool = True) -> bool:
        try:
            msg = decode_from_bot(data)
        except MessageError as e:
            self.send_error(peer, e.kind, f"expected hello: {e.reason}", retry=True)
            return False
        if not isinstance(msg, Hello):
            self.send_error(peer, "protocol", f"say hello first, not {type(msg).__name__.lower()}", retry=True)
            return False
        if not welcome:
            peer.hello = msg
            return True
        versions = msg.versions or [msg.v]
        if not set(versions) & set(SUPPORTED_VERSIONS):
            reason = f"no common protocol version: you speak {versions}, the referee speaks {list(SUPPORTED_VERSIONS)}"
            self._reply(peer, wire.version_refusal(reason, list(SUPPORTED_VERSIONS)))
            peer.problem = ("malformed", reason)
            return False
        peer.hello = msg
        self._reply(peer, wire.welcome(REFEREE_NAME))
        return True

    # -- messages ---------------------------------------------------------------------------
    def _reply(self, peer: Peer, msg: msgspec.Struct) -> bool:
        return self.send(peer, encode(msg))

    def send(self, peer: Peer, data: bytes) -> bool:
        """Queue one message for the bot; False if it is gone or has stopped reading (never blocks)."""
        return peer.process is not None and peer.process.channel.send(data)

    def send_many(self, peer: Peer, batch: list[bytes]) -> bool:
        """Queue messages for the bot in one write (events and the request after them)."""
        return peer.process is not None and peer.process.channel.send_many(batch)

    def send_error(self, peer: Peer, kind: str, reason: str, retry: bool, game: str | None = None,
                   seq: int | None = None) -> None:
        self._reply(peer, wire.error(kind, reason, retry, game, seq))

    def recv(self, peer: Peer, timeout_s: float) -> Item | None:
        """The next item from this bot's pipe, or None after ``timeout_s``.  No other bot's pipe is
        read.  The gate's notices of the bot's address and exit status are taken note of here."""
        proc = peer.process
        if proc is None:
            return Closed()
        item = proc.channel.next_item(timeout_s)
        if isinstance(item, Line):
            peer.lines += 1
            if not item.data.lstrip().startswith(b"{"):
                peer.bad_lines += 1
                peer.bad_sample = peer.bad_sample or item.data[:200]
        elif isinstance(item, Notice):
            if item.word == "exit":
                proc.note_exit(item.arg)
            elif item.word == "bound" and peer.endpoint is None:  # once per start: the token is announced once
                peer.endpoint = item.arg
                if peer.spec.remote and not self.on_listening(peer):
                    self._announce_remote(peer)
        return item

    def _announce_remote(self, peer: Peer) -> None:
        assert peer.endpoint is not None
        host, _, port = peer.endpoint.rpartition(":")
        if host in ("tcp://0.0.0.0", "tcp://*"):
            host = f"tcp://{socket.gethostname()}"
        public = f"{host}:{port}"
        self.announce(f"waiting for {peer.spec.name}: connect a DEALER to {public} with routing id (token) "
                      f"{peer.token}; e.g. ARENA_TOKEN={peer.token} ... --endpoint {public}")

    # -- shutdown ---------------------------------------------------------------------------
    def stop_peer(self, peer: Peer, reason: str = "done", wait_s: float = 1.0) -> None:
        """Ask one bot to shut down, wait a little, then make sure it is gone."""
        if peer.ready and peer.alive():
            self._tell_shutdown(peer, reason)
            self.wait_gone(peer, time.monotonic() + wait_s)
        self._release(peer)

    def _tell_shutdown(self, peer: Peer, reason: str) -> None:
        self._reply(peer, wire.shutdown(reason))
        if peer.spec.remote and peer.process is not None:  # its gate ends once it has passed this on
            peer.process.channel.close_write()

    def wait_gone(self, peer: Peer, deadline: float) -> None:
        """Wait until the bot's compartment has ended, or ``deadline``; its output is read meanwhile."""
        while peer.process is not None and peer.process.alive():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if isinstance(self.recv(peer, min(0.05, left)), Closed):
                peer.process.wait_exit(max(0.0, deadline - time.monotonic()))
                return

    def _release(self, peer: Peer) -> None:
        if peer.process is not None:
            peer.process.kill()
            peer.process = None
        peer.hello = None
        peer.endpoint = None

    def close(self, reason: str = "the referee is done") -> None:
        """Shut every bot down (one second in all to exit by itself), kill what is left."""
        if self.closed:
            return
        self.closed = True
        live = [p for p in self.peers if p.ready and p.alive()]
        for p in live:
            self._tell_shutdown(p, reason)
        deadline = time.monotonic() + 1.0
        for p in live:
            self.wait_gone(p, deadline)
        for p in self.peers:
            self._release(p)
        for p in self.peers:
            if p.data is not None:
                datavolume.done_with(str(p.data))
        if self._private_dir is not None:
            shutil.rmtree(self._private_dir, ignore_errors=True)

    def __enter__(self) -> BotHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

