"""A hostile bot for the hardening tests, written from SPEC.md alone (not a sample bot).

Usage: hostile.py MODE [--endpoint E]  (token in ARENA_TOKEN).  It plays legal
moves (draw from the stock, discard the drawn card) and, besides, attacks:

  deep          its 3rd reply carries a list nested 1,000 deep in an unknown field
  deep_hello    its hello carries a list nested 100,000 deep
  flood         50 more DEALER sockets with random routing ids send hellos and
                garbage as fast as they can, all game long
  multipart     at its 2nd request sends one message of 384 frames x 1 MiB, and
                9 more sockets send 4 MiB messages for 2 s
  offturn_mem   right after its 2nd reply (the other seat is on turn) grows to 400 MiB
  escape        at its 2nd request forks, setsids, forks and execs `sleep $ESCAPE_TAG`
                with an empty environment, $ESCAPES times (default 1), then plays on
  stdio_deep    speaks stdio; its 3rd reply line is nested 1,000 deep
  shm_hog       at its 2nd request writes 100 MiB into /dev/shm and 100 MiB into /tmp (memory
                no process owns)
  threads       at its 2nd request starts 40 sleeping threads
  cpu_orphans   at its 2nd request starts 10 orphans that each burn 0.5 s of CPU and exit (the
                gate, not the bot, reaps them), and replies once they all have
  idle_procs    at its 2nd request starts 1,000 processes that sleep, then thinks for 4 s
"""

from __future__ import annotations

import json
import os
import select
import sys
import threading
import time

# A sibling script (this one runs with tests/bots on sys.path); mypy knows it only as tests.bots.misbehave.
from misbehave import legal_reply  # type: ignore[import-not-found]  # the same legal moves (draw from stock, discard it)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def escape(tag: str) -> None:
    """Leave the process tree and the session, and drop the environment (and with it any marker)."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve("/bin/sleep", ["sleep", tag], {})
        os._exit(0)
    os.wait()


def burn_as_orphan(seconds: float) -> None:
    """A grandchild that computes for ``seconds`` of CPU after its parent is gone (its reaper is the gate);
    it holds every fd the bot had open, until it ends."""
    if os.fork() == 0:
        if os.fork() == 0:
            until = time.process_time() + seconds
            while time.process_time() < until:
                pass
            os._exit(0)
        os._exit(0)
    os.wait()


def wait_for_orphans(seconds: float, count: int, wall_s: float) -> None:
    """Start ``count`` orphans that burn ``seconds`` of CPU each; return once all have ended (however
    loaded the machine), or after ``wall_s``."""
    read_end, write_end = os.pipe()
    for _ in range(count):
        burn_as_orphan(seconds)
    os.close(write_end)
    deadline = time.monotonic() + wall_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([read_end], [], [], 0.1)
        if ready and not os.read(read_end, 1):
            break  # every orphan closed it: they have all ended
    os.close(read_end)


def flood(endpoint: str, stop: threading.Event) -> None:
    import zmq

    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    socks = []
    for _ in range(50):
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.SNDHWM, 100)
        s.setsockopt(zmq.ROUTING_ID, os.urandom(8).hex().encode())
        s.connect(endpoint)
        socks.append(s)
    hello = json.dumps({"v": 1, "type": "hello", "name": "x"}).encode()
    while not stop.is_set():
        for s in socks:
            for data in (hello, b"garbage \xff"):
                try:
                    s.send(data, zmq.NOBLOCK)
                except zmq.Again:
                    pass


def multipart_bomb(sock, endpoint: str) -> None:
    """One message of 384 frames x 1 MiB on its own socket, then 4 MiB messages from 9 more."""
    import zmq

    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    frame = b"x" * (1 << 20)
    sock.send_multipart([frame] * 384)
    others = []
    for _ in range(9):
        o = ctx.socket(zmq.DEALER)
        o.setsockopt(zmq.LINGER, 0)
        o.setsockopt(zmq.ROUTING_ID, os.urandom(8).hex().encode())
        o.connect(endpoint)
        others.append(o)
    big = b"y" * (4 << 20)
    until = time.monotonic() + 2
    while time.monotonic() < until:
        for o in others:
            try:
                o.send(big, zmq.NOBLOCK)
            except zmq.Again:
                pass


def run_stdio(mode: str) -> int:
    out = sys.stdout
    out.write(json.dumps({"v": 1, "type": "hello", "name": f"hostile-{mode}", "events": False}) + "\n")
    out.flush()
    requests = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "shutdown":
            return 0
        if msg["type"] != "request":
            continue
        requests += 1
        reply = json.dumps(legal_reply(msg))
        if requests == 3:
            reply = reply[:-1] + ', "x": ' + nested(1000) + "}"
        out.write(reply + "\n")
        out.flush()
    return 0


def main() -> int:
    mode = sys.argv[1]
    if mode.startswith("stdio_"):
        return run_stdio(mode)
    import zmq

    a = sys.argv[2:]
    endpoint = a[a.index("--endpoint") + 1] if "--endpoint" in a else os.environ["ARENA_ENDPOINT"]
    token = os.environ["ARENA_TOKEN"].encode()
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, token)
    sock.connect(endpoint)
    hello = {"v": 1, "type": "hello", "name": f"hostile-{mode}", "events": False}
    if mode == "deep_hello":
        sock.send(json.dumps(hello)[:-1].encode() + b', "x": ' + nested(100_000).encode() + b"}")
        sock.send(json.dumps(hello).encode())
    else:
        sock.send(json.dumps(hello).encode())
    stop = threading.Event()
    if mode == "flood":
        threading.Thread(target=flood, args=(endpoint, stop), daemon=True).start()
    requests = 0
    hog: list[bytearray] = []
    while True:
        msg = json.loads(sock.recv())
        if msg["type"] == "shutdown":
            stop.set()
            return 0
        if msg["type"] != "request":
            continue
        requests += 1
        reply = json.dumps(legal_reply(msg)).encode()
        if mode == "deep" and requests == 3:
            reply = reply[:-1] + b', "x": ' + nested(1000).encode() + b"}"
        if mode == "multipart" and requests == 2:
            multipart_bomb(sock, endpoint)
        if mode == "escape" and requests == 2:
            for _ in range(int(os.environ.get("ESCAPES", "1"))):
                escape(os.environ["ESCAPE_TAG"])
            time.sleep(0.5)  # the game must not end before the referee's watcher has looked
        if mode == "shm_hog" and requests == 2:
            for path in ("/dev/shm/hog", "/tmp/hog"):
                with open(path, "wb") as f:
                    for _ in range(10):
                        f.write(b"x" * (10 << 20))
            time.sleep(1)
        if mode == "threads" and requests == 2:
            for _ in range(40):
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
            time.sleep(1)
        if mode == "cpu_orphans" and requests == 2:
            wait_for_orphans(0.5, 10, wall_s=12)  # within its decision: 5 s of CPU, none of it the bot's own
        if mode == "idle_procs" and requests == 2:
            for _ in range(1000):
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
            time.sleep(4)
        sock.send(reply)
        if mode == "offturn_mem" and requests == 2:
            for _ in range(40):  # 400 MiB, 10 MiB at a time, every page touched
                hog.append(bytearray(b"x" * (10 << 20)))
            time.sleep(5)


if __name__ == "__main__":
    sys.exit(main())
