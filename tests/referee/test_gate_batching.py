"""Events and the request after them reach a bot in one write on each hop (referee -> pipe -> gate -> socket).

A bot still receives one ZeroMQ message per event, in order; what changed is the number of writes
(and so of wake-ups of the gate and of the bot) per decision.
"""

from __future__ import annotations

import os

import pytest

from arena.referee import channel as channel_module
from arena.referee.channel import Channel, Line
from arena.referee.gate import Gate
from arena.referee.zmtp import Zmtp, frame


def test_send_many_is_one_write_and_reads_back_as_its_lines(monkeypatch):
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    sender, reader = Channel(r2, w1), Channel(r1, w2)
    writes: list[int] = []
    real_write = os.write

    def counting(fd: int, data: bytes) -> int:
        if fd == w1:
            writes.append(len(data))
        return real_write(fd, data)

    monkeypatch.setattr(channel_module.os, "write", counting)
    batch = [b'{"type":"event","n":%d}' % i for i in range(5)] + [b'{"type":"request"}']
    try:
        assert sender.send_many(batch)
        assert len(writes) == 1
        got = [reader.next_item(1.0) for _ in batch]
        assert all(isinstance(g, Line) for g in got)
        assert [g.data for g in got if isinstance(g, Line)] == batch
    finally:
        sender.close()
        reader.close()


def test_send_many_queues_nothing_when_the_bot_is_not_reading():
    r, w = os.pipe()
    c = Channel(r, w)
    try:
        huge = [b"x" * (channel_module.OUTBOX_CAP_BYTES // 2)] * 3
        assert not c.send_many(huge)
        assert c.backlog == 0
    finally:
        c.close()


@pytest.fixture
def gate_with_bot(tmp_path, monkeypatch):
    """A Gate object (no process) with stdin a pipe we write, and a fake connected bot connection."""
    r, w = os.pipe()
    out_r, out_w = os.pipe()
    saved = os.dup(0), os.dup(1)
    os.dup2(r, 0)
    os.dup2(out_w, 1)
    g = Gate(f"ipc://{tmp_path}/g.sock", b"t" * 32)
    sent: list[bytes] = []

    class Bot:  # records what the gate writes to the bot's connection
        out = bytearray()
        zmtp = Zmtp()

    monkeypatch.setattr(g, "queue", lambda c, data: sent.append(data) or True)
    g.bot = Bot()  # type: ignore[assignment,unused-ignore]  # a stand-in for a Conn
    try:
        yield g, w, sent
    finally:
        g.close()
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, r, w, out_r, out_w):
            os.close(fd)


def test_the_gate_sends_a_chunk_of_lines_in_one_write_as_one_frame_each(gate_with_bot):
    g, w, sent = gate_with_bot
    lines = [b'{"e":%d}' % i for i in range(4)] + [b'{"request":1}']
    os.write(w, b"".join(x + b"\n" for x in lines))
    assert g.from_referee()
    assert len(sent) == 1
    z = Zmtp()
    z.greeted = z.ready = True
    assert z.feed(sent[0]) == [("message", x) for x in lines]
    assert sent[0] == b"".join(frame(x) for x in lines)
