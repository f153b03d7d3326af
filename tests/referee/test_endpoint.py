"""The referee's own ZMTP endpoint (arena/referee/endpoint.py) against real libzmq peers and raw sockets,
in this process: what reaches the referee, what a stranger gets, and what a bomb costs (nothing held).

The same endpoint in whole games, sandboxed, against hostile bots: tests/referee/test_adversarial.py,
tests/security/test_hostile.py and tests/referee/test_gate.py's multipart bomb."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from arena.referee.channel import Closed, Item, Line, Notice
from arena.referee.endpoint import MAX_CONNECTIONS, OUTBOX_CAP_BYTES, Endpoint
from arena.referee.zmtp import GREETING, MAX_MESSAGE_BYTES, command, frame, properties
from arena.referee.zmtp_router import STRANGER_BYTES
from tests.helpers import zmq_peer

TOKEN = "ab" * 16


@pytest.fixture
def ep(tmp_path: Path) -> Iterator[Endpoint]:
    e = Endpoint(tmp_path / "e.sock", TOKEN)
    yield e
    e.close()


def dealer(ctx: zmq.Context[zmq.Socket[bytes]], ep: Endpoint, ident: str = TOKEN,
           kind: int = zmq.DEALER) -> zmq.Socket[bytes]:
    return zmq_peer(ctx, f"ipc://{ep.path}", ident, kind, timeout_ms=5000)


def next_item(ep: Endpoint, timeout: float = 5.0) -> Item:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        item = ep.next_item(0.05)
        if item is not None:
            return item
    raise AssertionError("nothing came from the endpoint")


def skip_notices(ep: Endpoint, *words: str) -> Item:
    while isinstance(item := next_item(ep), Notice) and item.word in words:
        pass
    return item


def test_a_dealer_talks_both_ways_and_nothing_it_sends_is_a_notice(ep, ctx):
    s = dealer(ctx, ep)
    s.send(b'{"type":"hello"}')
    assert next_item(ep) == Notice("connected", "")
    assert next_item(ep) == Line(b'{"type":"hello"}')
    s.send(b"\0oversized 1")  # a message, whatever its bytes: notices are made by the endpoint only
    assert next_item(ep) == Line(b"\0oversized 1")
    for i in range(50):
        assert ep.send_many([b'{"event":%d}' % i, b'{"seq":%d}' % i])
        assert s.recv() == b'{"event":%d}' % i and s.recv() == b'{"seq":%d}' % i
        s.send(b"reply %d" % i)
        assert next_item(ep) == Line(b"reply %d" % i)
    big = b"b" * (300 << 10)  # longer than a socket takes at once: the rest goes out while the referee reads
    assert ep.send(big)
    while not s.poll(10):
        assert ep.next_item(0.01) is None
    assert s.recv() == big


def test_oversized_multipart_and_strangers_are_reported_and_the_bot_goes_on(ep, ctx):
    s = dealer(ctx, ep)
    s.send(b"hi")
    assert skip_notices(ep, "connected") == Line(b"hi")
    s.send(b"x" * (MAX_MESSAGE_BYTES + 1))
    assert next_item(ep) == Notice("oversized", str(MAX_MESSAGE_BYTES + 1))
    s.send_multipart([b"a", b"b", b"c"])
    assert next_item(ep) == Notice("multipart", "3")
    other = dealer(ctx, ep, ident="stranger")
    other.send(b"let me in")
    assert next_item(ep) == Notice("stranger", "")
    assert b'"kind":"token"' in other.recv()
    s.send(b"still here")
    assert next_item(ep) == Line(b"still here")


def test_a_second_peer_under_the_token_is_refused_as_by_a_router(ep, ctx):
    s = dealer(ctx, ep)
    s.send(b"first")
    assert skip_notices(ep, "connected") == Line(b"first")
    twin = dealer(ctx, ep)
    twin.send(b"twin")
    s.send(b"first again")
    assert next_item(ep) == Line(b"first again")
    assert ep.send(b"to the first")
    assert s.recv() == b"to the first"


def _raw_peer(path: str, ident: str = TOKEN) -> socket.socket:
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.connect(path)
    raw.sendall(GREETING + command(b"READY", properties({b"Socket-Type": b"DEALER", b"Identity": ident.encode()})))
    return raw


def _max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_never_ending_multipart_is_oversized_and_nothing_of_it_is_held(ep):
    raw = _raw_peer(ep.path)
    assert next_item(ep) == Notice("connected", "")
    peak = _max_rss_mib()
    piece = (b"\x01\xff" + b"m" * 255) * 256  # frames of 255 bytes, all with MORE: it never ends
    raw.setblocking(False)
    seen: list[Item] = []
    for _ in range(256):  # 16 MiB, read by the referee as the peer writes
        push(raw, ep, piece, seen)
    push(raw, ep, b"\x00\x00" + frame(b"ok"), seen)  # the bomb's last frame, then a message
    while Line(b"ok") not in seen:
        seen.append(item := next_item(ep))
        if isinstance(item, Notice) and item.word == "flood":  # frames by the thousand: a request's allowance
            ep.send(b"the next request")
    bomb = [i for i in seen if not (isinstance(i, Notice) and i.word == "flood")]
    assert bomb == [Notice("oversized", str(MAX_MESSAGE_BYTES - MAX_MESSAGE_BYTES % 255 + 255)), Line(b"ok")], bomb[:3]
    assert _max_rss_mib() - peak < 4, "the endpoint held the bomb"
    raw.close()


def push(raw: socket.socket, ep: Endpoint, data: bytes, seen: list[Item]) -> None:
    """Write all of ``data`` on a non-blocking socket while the referee reads what it can (a request
    after each "flood", which stops the reading until the next one)."""
    left = memoryview(data)
    while left:
        try:
            left = left[raw.send(left):]
        except BlockingIOError:
            if (item := ep.next_item(0.01)) is not None:
                seen.append(item)
                if item == Notice("flood", item.arg if isinstance(item, Notice) else ""):
                    ep.send(b"the next request")


def test_a_stranger_holds_at_most_a_small_message_and_extra_connections_are_closed(ep):
    stranger = _raw_peer(ep.path, ident="nobody")
    stranger.sendall(b"\x02" + (STRANGER_BYTES + 1).to_bytes(8, "big") + b"y" * 100)  # begun, never finished
    assert next_item(ep) == Notice("connected", "")
    assert next_item(ep) == Notice("stranger", "")  # over its small limit at once: skipped, not held
    extra = []
    for i in range(MAX_CONNECTIONS + 4):  # one at a time, accepted in between (a full backlog blocks connect)
        extra.append(_raw_peer(ep.path, ident=f"x{i}"))
        ep.next_item(0.02)
    for _ in range(5):
        ep.next_item(0.02)
    closed = 0
    for raw in extra:
        raw.settimeout(0.1)
        try:
            while raw.recv(1 << 16):  # our greeting and READY, then end of file for those over the cap
                pass
            closed += 1
        except ConnectionResetError:  # closed with the peer's READY unread
            closed += 1
        except TimeoutError:
            pass
    assert closed >= 5, closed  # the endpoint keeps at most MAX_CONNECTIONS open (the stranger's among them)
    for raw in [stranger, *extra]:
        raw.close()


def test_a_peer_that_breaks_the_protocol_is_closed_and_the_bot_goes_on(ep, ctx):
    junk = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    junk.connect(ep.path)
    junk.sendall(b"GET / HTTP/1.1\r\n\r\n")
    junk.settimeout(5)
    ep.next_item(0.2)
    assert junk.recv(1 << 16)[:1] == b"\xff"  # our greeting, then end of file
    while ep.next_item(0.05) is not None or junk.recv(1 << 16):
        pass
    s = dealer(ctx, ep)
    s.send(b"fine")
    assert skip_notices(ep, "connected") == Line(b"fine")


def test_a_bot_that_stops_reading_is_not_buffered_for_without_bound(ep):
    raw = _raw_peer(ep.path)  # connects, never reads
    assert next_item(ep) == Notice("connected", "")
    chunk = b"z" * (MAX_MESSAGE_BYTES - 100)
    sent = 0
    while ep.send(chunk):
        sent += len(chunk)
        assert sent <= OUTBOX_CAP_BYTES + (4 << 20), "the outbox grew past its cap"
    assert sent >= OUTBOX_CAP_BYTES // 2  # refused once full: the referee charges a disconnect
    raw.close()


def test_messages_before_the_bot_connected_are_lost_as_over_a_router(ep, ctx):
    assert ep.send(b"nobody here")  # not an error: a ROUTER drops what has no peer
    s = dealer(ctx, ep)
    s.send(b"hello")
    assert skip_notices(ep, "connected") == Line(b"hello")
    assert ep.send(b"welcome")
    assert s.recv() == b"welcome"


@pytest.mark.slow
def test_the_end_of_the_compartment_closes_the_endpoint_after_its_last_words(tmp_path, ctx):
    ep = Endpoint(tmp_path / "e.sock", TOKEN)
    proc = subprocess.Popen(["sleep", "0.3"])  # stands for the bot's compartment
    pidfd = os.pidfd_open(proc.pid)
    try:
        ep.watch_end(pidfd, proc)
        s = dealer(ctx, ep)
        s.send(b"last words")
        assert skip_notices(ep, "connected") == Line(b"last words")
        s.send(b"really the last")
        proc.wait()
        items = [next_item(ep), next_item(ep)]
        assert items == [Line(b"really the last"), Closed()], items
        assert next_item(ep) == Closed()
    finally:
        ep.close()
        os.close(pidfd)
        proc.wait()
    assert not Path(ep.path).exists()  # the socket file goes with it


def test_pings_and_stranger_messages_that_are_never_read_queue_nothing(ep):
    # a peer that PINGs (or sends as a stranger) without reading the replies: no reply waits behind another
    peers = [_raw_peer(ep.path), *(_raw_peer(ep.path, ident=f"s{i}") for i in range(3))]
    ping = command(b"PING", b"\x00\x00" + b"c" * 16)
    for raw in peers:
        raw.setblocking(False)
    for _ in range(400):
        for i, raw in enumerate(peers):
            try:
                raw.send(ping * 200 if i == 0 else frame(b"x") * 200)
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):  # full, or closed for flooding
                pass
        ep.next_item(0)
    assert all(len(c.out) <= 64 for c in ep.conns.values()), [len(c.out) for c in ep.conns.values()]  # or closed
    for raw in peers:
        raw.close()


def test_a_request_reads_a_bounded_number_of_frames_and_commands_then_says_flood(ep):
    # commands a ROUTER ignores and frames of a message that never ends make no message to count as junk:
    # the endpoint counts what it parses, and past the allowance it reads nothing more until the next request
    from arena.referee.endpoint import UNITS_PER_REQUEST

    bot = _raw_peer(ep.path)
    assert next_item(ep) == Notice("connected", "")
    bot.setblocking(False)
    push(bot, ep, b"\x04\x02\x01X" * (40 * UNITS_PER_REQUEST), [])  # 160 KiB: more than one read
    bot.setblocking(True)
    bot.sendall(frame(b"reply"))
    seen = [next_item(ep)]
    assert seen[0].word == "flood" and int(seen[0].arg) > UNITS_PER_REQUEST, seen
    assert ep.next_item(0.05) is None  # nothing more is read for this request
    for _ in range(100):  # the allowance starts again at each request: the rest of the flood, a request at a time
        assert ep.send(b"a new request")
        items = [i for _ in range(4) if (i := ep.next_item(0.05)) is not None]  # a read, then its notice
        assert all(i == Notice("flood", i.arg) for i in items if isinstance(i, Notice)), items
        if not items:
            break
    assert Line(b"reply") not in items  # it came past the allowance: read as part of the flood
    bot.sendall(frame(b"reply"))  # a reply that follows a request at once is read
    assert next_item(ep) == Line(b"reply")
    bot.close()


def test_a_reply_after_the_allowance_is_a_flood_even_when_one_read_holds_both(ep):
    # a loaded referee reads the commands and the reply together: where the reply stands decides, not the read
    from arena.referee.endpoint import UNITS_PER_REQUEST

    bot = _raw_peer(ep.path)
    assert next_item(ep) == Notice("connected", "")
    burst = b"\x04\x02\x01X" * (2 * UNITS_PER_REQUEST) + frame(b"reply")
    assert len(burst) < 1 << 16  # one read of the endpoint's
    bot.sendall(burst)
    time.sleep(0.05)
    seen = [next_item(ep)]
    while (item := ep.next_item(0.05)) is not None:
        seen.append(item)
    assert seen == [Notice("flood", seen[0].arg)] and int(seen[0].arg) > 2 * UNITS_PER_REQUEST, seen  # the reply's place
    bot.sendall(frame(b"next"))  # the next request's reply is read as usual
    assert ep.send(b"a new request") and next_item(ep) == Line(b"next")
    bot.close()


def test_a_stranger_is_closed_once_it_sent_its_allowance_of_frames(ep):
    from arena.referee.zmtp_router import STRANGER_UNITS

    stranger = _raw_peer(ep.path, ident="nobody")
    stranger.sendall(b"\x01\x00" * (STRANGER_UNITS + 50))  # empty frames of a message that never ends
    for _ in range(20):
        ep.next_item(0.01)
    stranger.settimeout(2)
    got = b""
    try:
        while chunk := stranger.recv(1 << 16):
            got += chunk
    except ConnectionResetError:
        pass
    assert got.startswith(GREETING[:1]) and not ep.conns  # greeted, then closed
    stranger.close()


def test_pings_read_in_a_burst_are_answered_not_punished(ep):
    # a heartbeat's PINGs wait unread while the bot is not asked, then come in one read: still fine
    bot = _raw_peer(ep.path)
    assert next_item(ep) == Notice("connected", "")
    bot.sendall(command(b"PING", b"\x00\x00") * 50 + frame(b"reply"))
    assert next_item(ep) == Line(b"reply") and ep.conns
    bot.close()


@pytest.mark.slow
def test_last_words_are_one_message_s_bytes_of_the_bots_connection_only(tmp_path):
    from arena.referee.endpoint import LAST_WORDS_ITEMS

    ep = Endpoint(tmp_path / "e.sock", TOKEN)
    proc = subprocess.Popen(["sleep", "0.2"])
    pidfd = os.pidfd_open(proc.pid)
    try:
        ep.watch_end(pidfd, proc)
        bot, other = _raw_peer(ep.path), _raw_peer(ep.path, ident="other")
        assert next_item(ep) == Notice("connected", "")
        bot.setblocking(False)
        try:
            bot.send(frame(b"x") * 100_000)
        except BlockingIOError:
            pass
        other.sendall(b"\x01\x00" * 1000)
        proc.wait()
        items = []
        while (item := next_item(ep)) != Closed():
            items.append(item)
        lines = [i for i in items if i == Line(b"x")]
        assert 0 < len(lines) <= LAST_WORDS_ITEMS + 64 * 1024 // 3, len(lines)  # one read's messages at most
        assert len(items) - len(lines) <= 1 and all(i == Line(b"x") or i.word == "flood" for i in items)
    finally:
        ep.close()
        os.close(pidfd)
        proc.wait()


def test_a_bot_that_locked_itself_out_is_disconnected_not_waited_for(ep):
    from arena.referee.endpoint import MAX_ACCEPTS

    for _ in range(MAX_ACCEPTS):
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.connect(ep.path)
        ep.next_item(0.01)
        raw.close()
        ep.next_item(0.01)
    assert not ep.listening and ep.bot is None
    assert not ep.send(b"a request")  # nowhere to go, and no connection can come: disconnected


def test_a_reconnect_storm_ends_with_the_endpoint_refusing_connections(ep):
    from arena.referee.endpoint import MAX_ACCEPTS

    for i in range(MAX_ACCEPTS + 5):
        try:
            raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            raw.connect(ep.path)
        except OSError:  # refused: the storm is over
            assert i >= MAX_ACCEPTS
            raw.close()
            return
        ep.next_item(0.01)
        raw.close()
        ep.next_item(0.01)
    raise AssertionError("the endpoint kept accepting")
