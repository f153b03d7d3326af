"""A hostile bot whose weapon is text: what it says must reach people as data, and never as the
referee's own words.  Written from SPEC.md alone; it plays legal moves (misbehave.legal_reply).

Usage: words.py MODE [--endpoint E]  (token in ARENA_TOKEN; ``stdio_*`` modes speak stdio).

  (every mode) its hello name ends with ``[/]``, a closing tag that rich refuses to parse
  name          its hello name carries terminal escapes, a newline, a forged progress line and
                rich markup (a hyperlink and a closing tag); it plays honestly
  badgame       its 2nd reply names a game id full of escapes, newlines and markup (the
                referee's reason for refusing it quotes that id)
  forge         (ZeroMQ) at its 2nd request sends the gate's notices itself: ``\\0overflow 1``
                and ``\\0exit 0 ...``; then it replies and plays on
  stdio_forge   the same notices as stdio lines on its stdout
  bound         (a remote seat) before its hello sends ``\0bound tcp://evil.example:1``, the
                notice on which the referee announces where to connect and with which token
"""

from __future__ import annotations

import json
import os
import sys

from misbehave import legal_reply  # type: ignore[import-not-found]  # the sibling script's legal moves

EVIL = "\x1b]8;;http://evil.example/\x07\x1b[2J\x1b[31m[link=http://evil.example/]click[/link][/]"
NAME = f"words{EVIL}\n[1/1] game 0 table 0 set 0 seating 0: forged 1st"
FORGED = [b"\0overflow 1", b"\0exit 0 forged by the bot " + EVIL.encode()]


def hello(mode: str) -> dict:
    # A closing tag with nothing open: rich's markup parser raises on it.
    return {"v": 1, "type": "hello", "name": NAME if mode.endswith("name") else f"words-{mode}[/]", "events": False}


def reply(mode: str, msg: dict, requests: int) -> dict:
    out = legal_reply(msg)
    if mode == "badgame" and requests == 2:
        out["game"] = f"g{EVIL}\nFORGED LINE"
    return out


def run_stdio(mode: str) -> int:
    out = sys.stdout.buffer
    out.write(json.dumps(hello(mode)).encode() + b"\n")
    out.flush()
    requests = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "shutdown":
            return 0
        if msg["type"] != "request":
            continue
        requests += 1
        if mode == "stdio_forge" and requests == 2:
            out.write(b"\n".join(FORGED) + b"\n")
        out.write(json.dumps(reply(mode, msg, requests)).encode() + b"\n")
        out.flush()
    return 0


def main() -> int:
    mode = sys.argv[1]
    if mode.startswith("stdio_"):
        return run_stdio(mode)
    import zmq

    a = sys.argv[2:]
    endpoint = a[a.index("--endpoint") + 1] if "--endpoint" in a else os.environ["ARENA_ENDPOINT"]
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, os.environ["ARENA_TOKEN"].encode())
    sock.connect(endpoint)
    if mode == "bound":
        sock.send(b"\0bound tcp://evil.example:1")
    sock.send(json.dumps(hello(mode)).encode())
    requests = 0
    while True:
        msg = json.loads(sock.recv())
        if msg["type"] == "shutdown":
            return 0
        if msg["type"] != "request":
            continue
        requests += 1
        if mode == "forge" and requests == 2:
            for frame in FORGED:
                sock.send(frame)
        sock.send(json.dumps(reply(mode, msg, requests)).encode())


if __name__ == "__main__":
    sys.exit(main())
