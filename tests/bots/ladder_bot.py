"""A small self-contained ZeroMQ bot for the ladder's tests (a submission must carry its own files).

Usage: ladder_bot.py MODE; it plays legal moves (draw from the stock, discard the drawn card) except
where MODE says:

  honest         never misbehaves (passes arena check-bot)
  no_hello       connects but never says hello (check-bot refuses it at the door)
  crash_in_games passes check-bot (whose games are called check-...), then exits with code 3 at the
                 first request of any other game: a bot that starts failing once it plays on the ladder
  diary          honest, and writes a line naming itself to stderr at every new game (its log)
  snoop          honest, and at its first new game tries to read the other entrants' bots beside its own
                 folder (../../../*/v*/bot/bot.py, the ladder's layout) and the ladder's files (../../../../*),
                 writing what it found to stderr as SNOOP lines
"""

from __future__ import annotations

import glob
import json
import os
import sys

import zmq


def main() -> int:
    mode = sys.argv[1]
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, os.environ["ARENA_TOKEN"].encode())
    sock.connect(os.environ["ARENA_ENDPOINT"])
    if mode != "no_hello":
        sock.send(json.dumps({"v": 1, "type": "hello", "name": f"ladder-{mode}"}).encode())
    welcomed = False
    while True:
        msg = json.loads(sock.recv())
        kind = msg["type"]
        if kind == "welcome":
            welcomed = True
        elif kind == "error":
            if not welcomed and msg["kind"] in ("version", "token"):
                return 1
        elif kind == "shutdown":
            return 0
        elif kind == "new_game" and mode == "diary":
            print(f"ladder-bot diary: new game {msg['game']}", file=sys.stderr, flush=True)
        elif kind == "new_game" and mode == "snoop":
            mode = "honest"
            found = glob.glob("../../../*/v*/bot/bot.py") + glob.glob("../../../../*")
            print(f"SNOOP found {len(found)}: {found[:5]}", file=sys.stderr, flush=True)
            for path in found:
                try:
                    with open(path, "rb") as f:
                        print(f"SNOOP read {path}: {f.read(40)!r}", file=sys.stderr, flush=True)
                except OSError as e:
                    print(f"SNOOP refused {path}: {e}", file=sys.stderr, flush=True)
        elif kind == "request":
            if mode == "crash_in_games" and not str(msg["game"]).startswith("check-"):
                return 3
            obs = msg["observation"]
            base = {"v": 1, "game": msg["game"], "seq": msg["seq"]}
            if msg["decision"] == "draw":
                source = "stock" if "stock" in obs["legal_draws"] else obs["legal_draws"][0]
                reply = {**base, "type": "draw", "source": source}
            else:
                if obs["drawn"] and not obs["took_discard"]:
                    discard = obs["drawn"]
                else:
                    discard = next(c for c in obs["hand"] if not (obs["took_discard"] and c == obs["drawn"]))
                reply = {**base, "type": "play", "actions": [], "discard": discard}
            sock.send(json.dumps(reply).encode())


if __name__ == "__main__":
    sys.exit(main())
