"""The referee's end of a bot's pipes: any bytes in any chunks become bounded items, never an error."""

from __future__ import annotations

import os
import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee.channel import LINE_CAP_BYTES, OUTBOX_CAP_BYTES, Channel, Closed, Line, Notice, Oversized


def feed(chunks: list[bytes]) -> list[object]:
    """Write ``chunks`` into a channel's pipe from another thread; every item read, up to Closed."""
    r, w = os.pipe()
    back_r, back_w = os.pipe()
    ch = Channel(r, back_w)

    def writer() -> None:
        with os.fdopen(w, "wb") as f:
            for c in chunks:
                f.write(c)
                f.flush()

    t = threading.Thread(target=writer)
    t.start()
    items: list[object] = []
    deadline = time.monotonic() + 10
    while True:
        assert time.monotonic() < deadline, "a writer that closed its end must end in Closed"
        item = ch.next_item(1)  # None: a read that finished no line yet
        if item is None:
            continue
        items.append(item)
        if isinstance(item, Closed):
            break
        assert len(items) < 100_000
    t.join()
    ch.close()
    os.close(back_r)
    return items


pieces = st.one_of(
    st.binary(max_size=300),
    st.sampled_from([b"\n", b"\r\n", b"\0", b"\0exit 3\n", b'{"v":1}\n', b"[" * 2000]),
    st.integers(min_value=LINE_CAP_BYTES - 10, max_value=LINE_CAP_BYTES + 70_000).map(lambda n: b"x" * n),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(pieces, max_size=12))
def test_any_bytes_become_bounded_items(chunks):
    items = feed(chunks)
    assert isinstance(items[-1], Closed)
    data = b"".join(chunks)
    for item in items[:-1]:
        assert isinstance(item, (Line, Notice, Oversized)), item
        if isinstance(item, Line):
            assert 0 < len(item.data) <= LINE_CAP_BYTES and b"\n" not in item.data
            assert item.data in data
    # Every line that fits comes out whole, in order (bytes after an oversized line's start are skipped).
    if not any(isinstance(i, Oversized) for i in items):
        expected = [x.rstrip(b"\r") for x in data.split(b"\n")]
        expected = [x for x in expected if x.strip() and not x.startswith(b"\0")]
        assert [i.data for i in items if isinstance(i, Line)] == expected


def test_a_line_without_end_is_oversized_once_and_the_next_line_is_read():
    items = feed([b"y" * (3 * LINE_CAP_BYTES), b"\n", b'{"ok": 1}\n'])
    assert [type(i) for i in items] == [Oversized, Line, Closed]
    assert items[1].data == b'{"ok": 1}'


def test_notices_are_parsed():
    items = feed([b"\0bound ipc:///tmp/x.sock\n\0exit -9\n"])
    assert items[:2] == [Notice("bound", "ipc:///tmp/x.sock"), Notice("exit", "-9")]


def test_a_reader_that_stops_reading_fills_the_outbox_and_then_is_refused():
    r, w = os.pipe()
    back_r, back_w = os.pipe()
    ch = Channel(back_r, w)
    big = b"z" * (1 << 20)
    sent = 0
    while ch.send(big):
        sent += 1
        assert sent < 100
    assert ch.backlog <= OUTBOX_CAP_BYTES  # bounded: the rest is refused, never queued
    ch.close()
    for fd in (r, back_w):
        os.close(fd)
