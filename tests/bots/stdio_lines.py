"""A stdio-transport bot in Python for the bridge and checker tests (one JSON message per line).

Usage: stdio_lines.py MODE; it plays legal moves (draw from the stock, discard
the drawn card) and exits 0 on shutdown, and:

  honest    nothing else
  chatter   also prints a debug line (not JSON) to stdout at every new_game
  crlf      ends its lines with CRLF
  split     writes each reply in two pieces, 20 ms apart
  huge      answers its 3rd request with a 5 MiB line, then with the real reply
  crash     exits with code 3 at its 4th request
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    mode = sys.argv[1]
    end = "\r\n" if mode == "crlf" else "\n"

    def send(msg: dict, split: bool = False) -> None:
        line = json.dumps({"v": 1, **msg}) + end
        if split:
            sys.stdout.write(line[:7])
            sys.stdout.flush()
            time.sleep(0.02)
            line = line[7:]
        sys.stdout.write(line)
        sys.stdout.flush()

    send({"type": "hello", "name": f"stdio-{mode}", "versions": [1]})
    requests = 0
    welcomed = False
    for raw in sys.stdin:
        msg = json.loads(raw)
        if msg["type"] == "welcome":
            welcomed = True
        elif msg["type"] == "error":
            print(f"error {msg['kind']}: {msg['reason']}", file=sys.stderr, flush=True)
            if not welcomed:
                return 1
        elif msg["type"] == "shutdown":
            return 0
        elif msg["type"] == "new_game" and mode == "chatter":
            print(f"debug: new game {msg['game']}, seat {msg['seat']}", flush=True)
        elif msg["type"] == "request":
            requests += 1
            if mode == "crash" and requests == 4:
                return 3
            obs = msg["observation"]
            base = {"game": msg["game"], "seq": msg["seq"]}
            if msg["decision"] == "draw":
                reply = {**base, "type": "draw", "source": "stock" if "stock" in obs["legal_draws"] else obs["legal_draws"][0]}
            else:
                discard = obs["drawn"] if obs["drawn"] and not obs["took_discard"] else next(
                    c for c in obs["hand"] if not (obs["took_discard"] and c == obs["drawn"]))
                reply = {**base, "type": "play", "actions": [], "discard": discard}
            if mode == "huge" and requests == 3:
                sys.stdout.write("{" + '"pad": "' + "x" * (5 << 20) + '"}\n')
                sys.stdout.flush()
            send(reply, split=mode == "split")
    return 0


if __name__ == "__main__":
    sys.exit(main())
