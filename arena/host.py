"""The referee's side of the wire: one ROUTER socket and the bots connected to it.

``BotHost`` binds the ROUTER (TCP, port 0 by default so parallel referees never
clash), launches bots (or waits for remote ones), runs the handshake under the
start clock, and moves raw frames: it sends without ever blocking and
receives with a timeout.  It knows nothing of games; ``referee`` does.

Socket hygiene (DESIGN 4): ``ROUTER_MANDATORY`` (a send to a gone or stalled
peer fails at once instead of being dropped), ``LINGER=0``, bounded high-water
marks, and a transport cap of four times the protocol's 1 MiB message limit
(bigger frames make ZeroMQ drop the connection; up to the cap the decoder
rejects them as ``oversized``).
"""

from __future__ import annotations

import errno
import secrets
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import zmq

from arena.bots import BotProcess, launch
from arena.settings import BotSpec, TimeControl
from protocol.messages import (
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Hello,
    MessageError,
    decode_from_bot,
    encode,
)

TRANSPORT_CAP_BYTES = 4 * MAX_MESSAGE_BYTES
_NOBLOCK = int(zmq.NOBLOCK)
_MORE_NOBLOCK = int(zmq.NOBLOCK) | int(zmq.SNDMORE)
HWM = 1000
REFEREE_NAME = "rummy-arena referee 0.1"


@dataclass
class Peer:
    """One bot seat on the wire: its secret token, process, and handshake state."""

    spec: BotSpec
    token: str
    cwd: Path | None = None
    process: BotProcess | None = None
    hello: Hello | None = None
    starts: int = 0
    problem: tuple[str, str] | None = None  # (failure kind, reason) of the last failed start
    bridge: object | None = None  # stdio bridge, when transport = "stdio"
    seq: int = 0

    @property
    def identity(self) -> bytes:
        return self.token.encode("ascii")

    @property
    def ready(self) -> bool:
        return self.hello is not None and self.problem is None

    @property
    def label(self) -> str:
        return self.spec.name

    def alive(self) -> bool:
        return self.process is None or self.process.alive()

    @property
    def wants_events(self) -> bool:
        return self.hello is not None and self.hello.events

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq


@dataclass
class Incoming:
    peer: Peer | None
    identity: bytes
    data: bytes
    at: float = field(default_factory=time.monotonic)


class BotHost:
    def __init__(self, time_control: TimeControl, log_dir: Path, listen: str | None = None,
                 announce: Callable[[str], None] | None = None, remote_wait_ms: int = 120_000) -> None:
        self.time = time_control
        self.remote_wait_ms = remote_wait_ms  # start clock of remote seats (someone must start the bot)
        self.log_dir = Path(log_dir)
        self.announce = announce or (lambda _msg: None)
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.RCVHWM, HWM)
        self.sock.setsockopt(zmq.SNDHWM, HWM)
        self.sock.setsockopt(zmq.MAXMSGSIZE, TRANSPORT_CAP_BYTES)
        if listen:
            host, _, port = listen.rpartition(":")
            host = host or "0.0.0.0"
            self.sock.bind(f"tcp://{host}:{port}")
            bound = self.sock.getsockopt(zmq.LAST_ENDPOINT).decode()
            self.port = int(bound.rsplit(":", 1)[1])
            public = socket.gethostname() if host in ("0.0.0.0", "*") else host
            self.public_endpoint = f"tcp://{public}:{self.port}"
            local = "127.0.0.1" if host in ("0.0.0.0", "*") else host
            self.endpoint = f"tcp://{local}:{self.port}"
        else:
            self.port = self.sock.bind_to_random_port("tcp://127.0.0.1")
            self.endpoint = self.public_endpoint = f"tcp://127.0.0.1:{self.port}"
        self.peers: list[Peer] = []
        self.by_identity: dict[bytes, Peer] = {}
        self.pending: deque[Incoming] = deque()
        self.poller = zmq.Poller()
        self.poller.register(self.sock, zmq.POLLIN)
        self.closed = False

    # -- peers -----------------------------------------------------------------------
    def add(self, spec: BotSpec, cwd: Path | None = None) -> Peer:
        peer = Peer(spec, secrets.token_hex(16), cwd)
        self.peers.append(peer)
        self.by_identity[peer.identity] = peer
        return peer

    def start(self, peer: Peer) -> bool:
        """Launch (or wait for) the bot and complete its handshake under the start clock."""
        peer.hello = None
        peer.problem = None
        if peer.process is not None:
            peer.process.kill()
            peer.process = None
        if peer.starts:
            # A fresh token for every restart: a leftover connection of the old process
            # (a child still holding the socket) must not keep the new one out.
            del self.by_identity[peer.identity]
            peer.token = secrets.token_hex(16)
            self.by_identity[peer.identity] = peer
        peer.starts += 1
        log_path = self.log_dir / f"{_safe(peer.spec.name)}.log"
        if peer.spec.remote:
            self.announce(
                f"waiting for {peer.spec.name}: connect a DEALER to {self.public_endpoint} with routing id "
                f"(token) {peer.token}  (e.g. --endpoint {self.public_endpoint} --token {peer.token})"
            )
        else:
            try:
                if peer.spec.transport == "stdio":
                    from arena.stdio_bridge import start_bridge

                    peer.process = launch(peer.spec, self.endpoint, peer.token, log_path, peer.cwd, pipe_stdio=True)
                    peer.bridge = start_bridge(self.ctx, peer.process, self.endpoint, peer.token)
                else:
                    peer.process = launch(peer.spec, self.endpoint, peer.token, log_path, peer.cwd)
            except (OSError, ValueError) as e:
                peer.problem = ("crash", f"could not start {peer.spec.command!r}: {e}")
                return False
        start_ms = self.remote_wait_ms if peer.spec.remote else self.time.start_ms
        deadline = time.monotonic() + start_ms / 1000
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            item = self.recv(min(left, 0.05))
            if item is None:
                if not peer.alive():
                    peer.problem = self._exit_problem(peer)
                    return self._give_up(peer)
                continue
            if item.peer is peer:
                if self._handshake(peer, item.data):
                    return True
                if peer.problem is not None:
                    return self._give_up(peer)
                continue
            if item.peer is not None and not item.peer.ready and item.peer.starts == 0:
                # A hello under the token of a seat whose bot was never started: only the bot
                # being started now can have sent it.
                peer.problem = ("token", "connected with another seat's token; use the token you were given")
                self._reply(item.identity, {"type": "error", "kind": "token", "reason": peer.problem[1], "retry": False})
                return self._give_up(peer)
            self.handle_stray(item)
        if peer.process is not None and self.port in peer.process.tcp_ports():
            peer.problem = ("token", f"connected but no hello arrived under its token within {start_ms} ms: "
                                     "check that the DEALER's routing id is set to the token before connecting")
        elif peer.process is not None and not peer.alive():
            peer.problem = self._exit_problem(peer)
        else:
            peer.problem = ("timeout", f"did not say hello within the start clock of {start_ms} ms")
        return self._give_up(peer)

    def _exit_problem(self, peer: Peer) -> tuple[str, str]:
        assert peer.process is not None
        kind = "resource" if peer.process.died_of_limits() else "crash"
        return kind, f"{peer.process.exit_description()} before saying hello{self._log_hint(peer)}"

    def _log_hint(self, peer: Peer) -> str:
        if peer.process is None:
            return ""
        try:
            tail = peer.process.log_path.read_bytes()[-300:].decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return f"; last output: {tail.splitlines()[-1]}" if tail else ""

    def _give_up(self, peer: Peer) -> bool:
        problem = peer.problem
        self._release(peer)
        peer.problem = problem
        return False

    def _handshake(self, peer: Peer, data: bytes) -> bool:
        try:
            msg = decode_from_bot(data)
        except MessageError as e:
            self.send_error(peer, e.kind, f"expected hello: {e.reason}", retry=True)
            return False
        if not isinstance(msg, Hello):
            self.send_error(peer, "protocol", f"say hello first, not {type(msg).__name__.lower()}", retry=True)
            return False
        versions = msg.versions or [msg.v]
        if not set(versions) & set(SUPPORTED_VERSIONS):
            reason = f"no common protocol version: you speak {versions}, the referee speaks {list(SUPPORTED_VERSIONS)}"
            self._reply(peer.identity, {"type": "error", "kind": "version", "reason": reason, "retry": False,
                                        "supported_versions": list(SUPPORTED_VERSIONS)})
            peer.problem = ("malformed", reason)
            return False
        peer.hello = msg
        self._reply(peer.identity, {"type": "welcome", "name": REFEREE_NAME, "max_message_bytes": MAX_MESSAGE_BYTES,
                                    "protocol": PROTOCOL_VERSION})
        return True

    # -- frames ---------------------------------------------------------------------------
    def _reply(self, identity: bytes, body: dict[str, object]) -> bool:
        return self.send_raw(identity, encode({"v": PROTOCOL_VERSION, **body}))

    def send_raw(self, identity: bytes, data: bytes) -> bool:
        """Send one frame; False if the peer is gone or not reading (never blocks)."""
        try:
            self.sock.send(identity, _MORE_NOBLOCK)
            self.sock.send(data, _NOBLOCK)
            return True
        except zmq.Again:
            return False
        except zmq.ZMQError as e:
            if e.errno in (errno.EHOSTUNREACH, zmq.EHOSTUNREACH):
                return False
            raise

    def send(self, peer: Peer, data: bytes) -> bool:
        return self.send_raw(peer.identity, data)

    def send_error(self, peer: Peer, kind: str, reason: str, retry: bool, game: str | None = None,
                   seq: int | None = None) -> None:
        self._reply(peer.identity, {"type": "error", "game": game, "seq": seq, "kind": kind, "reason": reason, "retry": retry})

    def recv(self, timeout_s: float) -> Incoming | None:
        """The next frame from any bot, or None after ``timeout_s``."""
        if self.pending:
            return self.pending.popleft()
        if not self.poller.poll(max(0, int(timeout_s * 1000))):
            return None
        frames = self.sock.recv_multipart(copy=True)
        identity = frames[0]
        if len(frames) != 2:
            return Incoming(self.by_identity.get(identity), identity, b"\x00multipart")
        return Incoming(self.by_identity.get(identity), identity, frames[1])

    def handle_stray(self, item: Incoming) -> None:
        """A frame nobody is waiting for: unknown tokens are told so; the rest is dropped."""
        if item.peer is None:
            self._reply(item.identity, {"type": "error", "kind": "token", "retry": False,
                                        "reason": "unknown token: connect with the token the referee gave you"})

    # -- shutdown ---------------------------------------------------------------------------
    def stop_peer(self, peer: Peer, reason: str = "done", wait_s: float = 1.0) -> None:
        """Ask one bot to shut down, wait a little, then make sure it is gone."""
        if peer.process is not None and peer.process.alive() and peer.ready:
            self._reply(peer.identity, {"type": "shutdown", "reason": reason})
            peer.process.wait_exit(wait_s)
        self._release(peer)

    def _release(self, peer: Peer) -> None:
        if peer.process is not None:
            peer.process.kill()
            peer.process = None
        if peer.bridge is not None:
            peer.bridge.stop()  # type: ignore[attr-defined]
            peer.bridge = None
        peer.hello = None

    def close(self, reason: str = "the referee is done") -> None:
        """Shut every bot down (one second in all to exit by itself), kill what is left, close the socket."""
        if self.closed:
            return
        self.closed = True
        live = [p for p in self.peers if p.ready and p.alive()]  # remote bots too: they are told
        for p in live:
            self._reply(p.identity, {"type": "shutdown", "reason": reason})
        deadline = time.monotonic() + 1.0
        for p in live:
            if p.process is not None:
                p.process.wait_exit(max(0.0, deadline - time.monotonic()))
        if any(p.process is None for p in live):
            time.sleep(0.05)  # LINGER is 0: give the shutdown of remote bots a moment on the wire
        for p in self.peers:
            self._release(p)
        self.sock.close(linger=0)
        self.ctx.term()

    def __enter__(self) -> BotHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60] or "bot"

