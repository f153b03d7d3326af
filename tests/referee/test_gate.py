"""The gate process against real libzmq peers: the ZMTP gate (a tcp transport, ARENA_GATE=zmtp) and the libzmq
one (CURVE seats, ARENA_GATE=libzmq); the referee's own endpoint, the default, is tests/referee/test_endpoint.py.

Each test starts a gate with no bot (as for a remote seat), connects pyzmq sockets or a raw
socket to it, and reads what reaches the referee's pipe.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import zmq

from arena.referee import launch
from arena.referee.zmtp import GREETING, MAX_MESSAGE_BYTES, command, properties
from tests.helpers import zmq_peer

pytestmark = pytest.mark.slow

TOKEN = "cd" * 16
GATES = {"zmtp": launch.GATE, "libzmq": launch.GATE_LIBZMQ}


class Gate:
    def __init__(self, program: str, endpoint: str) -> None:
        self.proc = subprocess.Popen([sys.executable, program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**os.environ, "ARENA_TOKEN": TOKEN, "ARENA_GATE_BIND": endpoint},
                                     start_new_session=True)
        self.buf = b""
        self.connected = False  # "connected" was read (its place among the messages differs between gates)
        bound = self.line()
        assert bound.startswith(b"\0bound "), bound
        self.endpoint = bound[7:].decode()

    def line(self, timeout: float = 10.0) -> bytes:
        line = self._line(timeout)
        if line == b"\0connected":
            self.connected = True
            line = self._line(timeout)
        return line

    def _line(self, timeout: float) -> bytes:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            assert left > 0, f"no line from the gate; so far {self.buf[:200]!r}"
            if select.select([self.proc.stdout], [], [], left)[0]:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                assert chunk, f"the gate ended; so far {self.buf[:200]!r}"
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def lines_until(self, want: bytes) -> list[bytes]:
        got: list[bytes] = []
        while not got or got[-1] != want:
            got.append(self.line())
        return got

    def tell(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def stop(self) -> int:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(5)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture(params=sorted(GATES))
def gate(request, tmp_path: Path, no_leaks) -> Iterator[Gate]:
    g = Gate(GATES[request.param], f"ipc://{tmp_path}/g.sock")
    try:
        yield g
    finally:
        g.stop()


def dealer(ctx: zmq.Context[zmq.Socket[bytes]], endpoint: str, ident: str = TOKEN,
           kind: int = zmq.DEALER) -> zmq.Socket[bytes]:
    return zmq_peer(ctx, endpoint, ident, kind)


def test_a_dealer_talks_both_ways_and_notices_are_the_gates_alone(gate, ctx):
    s = dealer(ctx, gate.endpoint)
    s.send(b'{"type":"hello"}')
    assert gate.line() == b'{"type":"hello"}'
    assert gate.connected or gate._line(10) == b"\0connected"
    s.send(b'\0fake notice\nwith a newline')
    assert gate.line() == b" \0fake notice with a newline"
    for i in range(50):
        gate.tell(b'{"seq":%d}' % i)
        assert s.recv() == b'{"seq":%d}' % i
        s.send(b"reply %d" % i)
        assert gate.line() == b"reply %d" % i
    big = b"b" * (300 << 10)  # a long frame, in many reads
    gate.tell(big)
    assert s.recv() == big


def test_oversized_multipart_and_strangers_are_reported(gate, ctx):
    s = dealer(ctx, gate.endpoint)
    s.send(b"hi")
    gate.lines_until(b"hi")
    s.send(b"x" * (MAX_MESSAGE_BYTES + 1))
    assert gate.line() == b"\0oversized %d" % (MAX_MESSAGE_BYTES + 1)
    s.send_multipart([b"a", b"b", b"c"])
    assert gate.line() == b"\0multipart 3"
    other = dealer(ctx, gate.endpoint, ident="stranger")
    other.send(b"let me in")
    assert gate.line() == b"\0stranger"
    assert b'"kind":"token"' in other.recv()
    s.send(b"still here")
    assert gate.line() == b"still here"


def test_a_req_socket_connects_and_its_envelope_makes_a_multipart(gate, ctx):
    r = dealer(ctx, gate.endpoint, kind=zmq.REQ)
    r.send(b"hello")  # REQ puts an empty delimiter frame first
    assert gate.lines_until(b"\0multipart 2")[-1] == b"\0multipart 2"


def test_the_referee_closing_stdin_ends_the_gate_after_passing_its_last_words(gate, ctx):
    s = dealer(ctx, gate.endpoint)
    s.send(b"hi")
    gate.lines_until(b"hi")
    gate.tell(b"bye")
    assert gate.stop() == 0
    assert s.recv() == b"bye"


def _raw_peer(path: str) -> socket.socket:
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.connect(path)
    raw.sendall(GREETING + command(b"READY", properties({b"Socket-Type": b"DEALER", b"Identity": TOKEN.encode()})))
    return raw


def test_zmtp_gate_a_never_ending_multipart_is_oversized_and_costs_no_memory(tmp_path, no_leaks):
    g = Gate(launch.GATE, f"ipc://{tmp_path}/g.sock")
    try:
        raw = _raw_peer(g.endpoint[6:])
        assert g._line(10) == b"\0connected"
        rss0 = psutil.Process(g.proc.pid).memory_info().rss
        piece = (b"\x01\xff" + b"m" * 255) * 256  # frames of 255 bytes, all with MORE: it never ends
        for _ in range(1200):  # 78 MiB
            raw.sendall(piece)
        assert g.line().startswith(b"\0oversized ")
        grown = (psutil.Process(g.proc.pid).memory_info().rss - rss0) >> 20
        assert grown < 8, f"the gate grew by {grown} MiB"
        raw.sendall(b"\x00\x00" + b"\x00\x02ok")  # the bomb's last frame, then a message
        assert g.line() == b"ok"
        raw.close()
    finally:
        g.stop()


def test_zmtp_gate_a_peer_that_breaks_the_protocol_is_closed_and_others_go_on(tmp_path, ctx, no_leaks):
    g = Gate(launch.GATE, f"ipc://{tmp_path}/g.sock")
    try:
        junk = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        junk.connect(g.endpoint[6:])
        junk.sendall(b"GET / HTTP/1.1\r\n\r\n")
        junk.settimeout(10)
        assert junk.recv(1 << 16)[:1] == b"\xff"  # our greeting, then end of file
        while junk.recv(1 << 16):
            pass
        s = dealer(ctx, g.endpoint)
        s.send(b"fine")
        assert g.lines_until(b"fine")[-1] == b"fine"
    finally:
        g.stop()


def test_zmtp_gate_listens_on_tcp_and_fills_in_the_port(ctx, no_leaks):
    g = Gate(launch.GATE, "tcp://127.0.0.1:0")
    try:
        assert g.endpoint.startswith("tcp://127.0.0.1:") and not g.endpoint.endswith(":0")
        s = dealer(ctx, g.endpoint)
        s.send(b"over tcp")
        assert g.lines_until(b"over tcp")[-1] == b"over tcp"
        g.tell(b"back")
        assert s.recv() == b"back"
    finally:
        g.stop()


def test_the_libzmq_gate_is_kept_for_curve_and_on_request(monkeypatch):
    monkeypatch.delenv("ARENA_GATE", raising=False)
    assert launch.gate_program() == launch.GATE
    assert launch.gate_program(curve=True) == launch.GATE_LIBZMQ
    monkeypatch.setenv("ARENA_GATE", "libzmq")
    assert launch.gate_program() == launch.GATE_LIBZMQ


@pytest.mark.parametrize("which", ["endpoint", "zmtp", "libzmq"])
def test_a_multipart_bomb_in_a_game_is_charged_oversized_not_a_crash(tmp_path, monkeypatch, which, no_leaks):
    from arena.settings import TimeControl
    from bench.flood import PeakRss
    from tests.conftest import hostile, run_game

    if which == "endpoint":  # the default: the referee's own endpoint, no gate
        monkeypatch.delenv("ARENA_GATE", raising=False)
    else:
        monkeypatch.setenv("ARENA_GATE", which)
    with PeakRss() as rss:
        result, _ = run_game("basic", [hostile("multipart"), "greedy"], tmp_path, seed=36,
                             time_control=TimeControl(start_ms=10000, decision_ms=5000))
    assert rss.growth_mib < 64, f"the referee grew by {rss.growth_mib:.0f} MiB"
    kinds = {f.kind for f in result.failure_log if f.seat == 0}
    assert not [f for f in result.failure_log if f.seat == 1], result.failure_log
    if which != "libzmq":  # read frame by frame: the bomb is over the limit at its second frame, nothing ends
        reasons = [f.reason for f in result.failure_log if f.seat == 0]
        assert "oversized" in kinds and "crash" not in kinds, result.failure_log
        assert any(r.startswith("a message of 2097152 bytes") for r in reasons), reasons
        assert not any("too big for its gate" in r for r in reasons), reasons  # libzmq's gate ran out of memory
    else:  # libzmq assembles the message whole first: the gate may run out of memory (charged), or
        # ZMQ_MAXMSGSIZE drops the connection unseen and the bot, reconnecting, goes on uncharged
        assert kinds <= {"oversized", "crash", "malformed", "stale", "timeout"}, result.failure_log
        assert result.failure_log or result.placings, result.failure_log


def test_zmtp_gate_holds_at_most_64_connections(tmp_path, ctx, no_leaks):
    from arena.referee.gate import MAX_CONNECTIONS

    g = Gate(launch.GATE, f"ipc://{tmp_path}/g.sock")
    socks = []
    try:
        for _ in range(MAX_CONNECTIONS + 6):
            raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            raw.connect(g.endpoint[6:])  # blocking: waits while the gate's backlog is full
            raw.settimeout(10)
            socks.append(raw)
        greeted = 0
        for raw in socks:
            greeted += raw.recv(64)[:1] == b"\xff"  # the others are closed at once: end of file
        assert greeted == MAX_CONNECTIONS
        for raw in socks[:10]:
            raw.close()
        s = dealer(ctx, g.endpoint)  # room again once some have gone
        s.send(b"in")
        assert g.lines_until(b"in")[-1] == b"in"
    finally:
        for raw in socks:
            raw.close()
        g.stop()
