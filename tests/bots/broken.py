"""Deliberately broken ZeroMQ bots for the compliance checker's tests (``arena check-bot``).

Usage: broken.py MODE [--endpoint E --token T]; it plays legal moves (draw from
the stock, discard the drawn card) except where MODE says:

  honest           never misbehaves
  no_hello         connects but never says hello
  wrong_version    says hello with versions [99] only
  no_play          answers draw requests but never a play request
  illegal_discard  takes the discard whenever offered, then discards that same card
  ignore_shutdown  keeps running after shutdown
  one_game         plays its first game, then exits with code 0 when the next new_game arrives
  ignore_version   keeps running (waiting) after the referee refuses its version
  resend_old_seq   after an error with retry: true, answers with the old seq only
"""

from __future__ import annotations

import json
import os
import sys
import time

import zmq


def main() -> int:
    mode = sys.argv[1]
    a = sys.argv[2:]
    endpoint = a[a.index("--endpoint") + 1] if "--endpoint" in a else os.environ["ARENA_ENDPOINT"]
    token = a[a.index("--token") + 1] if "--token" in a else os.environ["ARENA_TOKEN"]
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, token.encode())
    sock.connect(endpoint)
    hello = {"v": 1, "type": "hello", "name": f"broken-{mode}"}
    if mode == "wrong_version":
        hello["versions"] = [99]
    if mode != "no_hello":
        sock.send(json.dumps(hello).encode())
    welcomed = False
    new_games = 0
    last_reply: dict | None = None
    while True:
        msg = json.loads(sock.recv())
        kind = msg["type"]
        if kind == "welcome":
            welcomed = True
        elif kind == "error":
            print(f"error {msg['kind']}: {msg['reason']}", file=sys.stderr, flush=True)
            if not welcomed and msg["kind"] in ("version", "token"):
                if mode == "ignore_version":
                    time.sleep(3600)
                return 1
            if mode == "resend_old_seq" and msg.get("retry") and last_reply is not None:
                sock.send(json.dumps(last_reply).encode())
                last_reply = None
                mode = "mute"  # and then never answer again
        elif kind == "shutdown":
            if mode == "ignore_shutdown":
                time.sleep(3600)
            return 0
        elif kind == "new_game":
            new_games += 1
            if mode == "one_game" and new_games == 2:
                return 0
        elif kind == "request":
            if mode == "mute":
                continue
            obs = msg["observation"]
            base = {"v": 1, "game": msg["game"], "seq": msg["seq"]}
            if msg["decision"] == "draw":
                source = "stock" if "stock" in obs["legal_draws"] else obs["legal_draws"][0]
                if mode == "illegal_discard" and "discard" in obs["legal_draws"]:
                    source = "discard"
                reply = {**base, "type": "draw", "source": source}
            else:
                if mode == "no_play":
                    continue
                if obs["drawn"] and (not obs["took_discard"] or mode == "illegal_discard"):
                    discard = obs["drawn"]
                else:
                    discard = next(c for c in obs["hand"] if not (obs["took_discard"] and c == obs["drawn"]))
                reply = {**base, "type": "play", "actions": [], "discard": discard}
            last_reply = reply
            sock.send(json.dumps(reply).encode())


if __name__ == "__main__":
    sys.exit(main())
