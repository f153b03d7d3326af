"""A hostile bot that speaks ZMTP by hand (no libzmq): what a ZeroMQ library never sends, the referee's
endpoint must still bound (tests/security/test_hostile.py; run without the sandbox, it parses the
referee's frames with the arena's own codec).

Usage: zmtp_raw.py MODE --endpoint ipc://PATH  (token in ARENA_TOKEN).  It plays legal moves and:

  commands   before every reply sends 5,000 commands a ROUTER ignores (a 4-byte unknown command each)
  more       from 7 more connections under other routing ids streams empty frames with MORE set
             (a message that never ends), all game long
  lastwords  at its 2nd request sends 200,000 tiny messages and exits
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading

from misbehave import legal_reply  # type: ignore[import-not-found]  # a sibling script

from arena.referee.zmtp import GREETING, Zmtp, command, frame, properties


def connect(path: str, identity: bytes) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(GREETING + command(b"READY", properties({b"Socket-Type": b"DEALER", b"Identity": identity})))
    return s


def stream_more(path: str) -> None:
    try:
        s = connect(path, os.urandom(8).hex().encode())
        while True:
            s.sendall(b"\x01\x00" * 4096)
    except OSError:
        return


def main() -> int:
    mode = sys.argv[1]
    a = sys.argv[2:]
    path = a[a.index("--endpoint") + 1].removeprefix("ipc://")
    sock = connect(path, os.environ["ARENA_TOKEN"].encode())
    sock.sendall(frame(json.dumps({"v": 1, "type": "hello", "name": f"zmtp-{mode}", "events": False}).encode()))
    if mode == "more":
        for _ in range(7):
            threading.Thread(target=stream_more, args=(path,), daemon=True).start()
    reader = Zmtp()  # the referee's greeting and READY (ROUTER), then its messages
    requests = 0
    while True:
        data = sock.recv(1 << 16)
        if not data:
            return 0
        for kind, arg in reader.feed(data):
            if kind != "message":
                continue
            assert isinstance(arg, bytes)
            msg = json.loads(arg)
            if msg["type"] == "shutdown":
                return 0
            if msg["type"] != "request":
                continue
            requests += 1
            if mode == "commands":
                sock.sendall(b"\x04\x02\x01X" * 5000)
            if mode == "lastwords" and requests == 2:
                sock.setblocking(False)
                try:
                    sock.send(frame(b"x") * 200_000)  # what the socket takes, then gone
                except BlockingIOError:
                    pass
                return 0
            sock.sendall(frame(json.dumps(legal_reply(msg)).encode()))


if __name__ == "__main__":
    sys.exit(main())
