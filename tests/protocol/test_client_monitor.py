"""The client library reads its socket monitor's frames itself (``protocol.client.monitor_event``)
instead of importing ``zmq.utils.monitor`` (and with it asyncio): checked against the frames libzmq
really sends, connecting to a closed endpoint, to a real server and to one that refuses the handshake."""

from __future__ import annotations

import subprocess
import sys

import pytest
import zmq
from zmq.utils.monitor import parse_monitor_message

from protocol.client import monitor_event
from tests.helpers import free_port


def _events(monitor: zmq.Socket[bytes], until: set[int], limit: int = 40) -> list[tuple[int, int]]:
    """(ours, pyzmq's) event for each monitor message, up to the first of the ``until`` events."""
    seen = []
    for _ in range(limit):
        if not monitor.poll(10_000):
            break
        frames = monitor.recv_multipart()
        seen.append((monitor_event(frames), parse_monitor_message(frames)["event"]))
        if seen[-1][1] in until:
            break
    return seen


@pytest.mark.parametrize("server", ["closed", "plain", "curve"])
def test_monitor_events_read_as_pyzmq_reads_them(server):
    ctx = zmq.Context()
    listener = None
    try:
        dealer = ctx.socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        monitor = dealer.get_monitor_socket(zmq.EVENT_ALL)
        endpoint = f"tcp://127.0.0.1:{free_port()}"
        until = {"closed": {zmq.EVENT_CONNECT_RETRIED}, "plain": {zmq.EVENT_HANDSHAKE_SUCCEEDED},
                 "curve": {zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL, zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL}}[server]
        if server != "closed":
            listener = ctx.socket(zmq.ROUTER)
            listener.setsockopt(zmq.LINGER, 0)
            if server == "curve":  # a CURVE server refuses a plain client's handshake
                listener.curve_server = True
                listener.curve_secretkey = zmq.curve_keypair()[1]
            listener.bind(endpoint)
        dealer.connect(endpoint)
        seen = _events(monitor, until)
        assert seen and all(ours == theirs for ours, theirs in seen), seen
        assert {e for e, _ in seen} & until, seen
        if server == "plain":
            assert zmq.EVENT_CONNECTED in {e for e, _ in seen}
        dealer.disable_monitor()
        monitor.close(0)
        dealer.close(0)
    finally:
        if listener is not None:
            listener.close(0)
        ctx.destroy(0)


def test_a_message_that_is_not_a_monitor_event_reads_as_no_event():
    assert monitor_event([b"\x01\x00\x00\x00\x00\x00"]) == 0  # one frame
    assert monitor_event([b"\x01\x00", b"tcp://x"]) == 0  # a short first frame
    assert monitor_event([(zmq.EVENT_CONNECTED).to_bytes(2, sys.byteorder) + b"\x07\x00\x00\x00",
                          b"tcp://x"]) == zmq.EVENT_CONNECTED


@pytest.mark.slow
def test_the_client_library_imports_no_asyncio():
    code = "import sys, protocol.client; print(sorted(m for m in ('asyncio', 'zmq.asyncio', 'traceback') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path[:0] = {sys.path!r}; {code}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
