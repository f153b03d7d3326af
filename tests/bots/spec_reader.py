"""A stdio bot written from protocol/SPEC.md alone that writes down every message it receives.

Usage: spec_reader.py DIARY_FILE.  It plays legal moves (draw from the stock, discard the drawn card,
or the last card of its hand after taking the discard), and on the way makes the two mistakes whose
`error` replies SPEC 3 and 9 describe: its first play discards a card it does not hold (`illegal`,
retried), and once it answers the same request twice (the second reply is `stale`).  One JSON message
per line on stdout (SPEC 14); the diary gets one received message per line.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    diary = open(sys.argv[1], "a", encoding="utf-8")

    def send(msg: dict) -> None:
        sys.stdout.write(json.dumps({"v": 1, **msg}) + "\n")
        sys.stdout.flush()

    send({"type": "hello", "name": "spec-reader", "versions": [1]})
    made_illegal = made_stale = False
    for raw in sys.stdin:
        diary.write(raw.rstrip("\n") + "\n")
        diary.flush()
        msg = json.loads(raw)
        if msg["type"] == "shutdown":
            return 0
        if msg["type"] != "request":
            continue
        obs = msg["observation"]
        reply = {"game": msg["game"], "seq": msg["seq"]}
        if msg["decision"] == "draw":
            send({"type": "draw", **reply, "source": "stock"})
            continue
        if not made_illegal:
            made_illegal = True
            held = set(obs["hand"])
            absent = next(c for c in ("2C", "3D", "4H", "5S", "6C", "7D") if c not in held)
            send({"type": "play", **reply, "actions": [], "discard": absent})
            continue
        card = obs["drawn"] if obs["drawn"] and not obs["took_discard"] else obs["hand"][-1]
        answer = {"type": "play", **reply, "actions": [], "discard": card}
        send(answer)
        if not made_stale:
            made_stale = True
            send(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
