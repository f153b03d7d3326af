"""A deliberately broken bot for the referee's failure tests (not a sample bot).

Usage: misbehave.py MODE [--endpoint E --token T]; it plays legal moves
(draw from the stock, discard the drawn card) except where MODE says:

  honest        never misbehaves
  spy           honest, and appends every message it receives to $SPY_LOG
  crash         exits with code 3 at its 5th request
  sleep         sleeps past the deadline at its 3rd request, then behaves
  hang          stops answering at its 3rd request (sleeps forever)
  not_json      answers its 3rd request with bytes that are not JSON
  wrong_shape   answers its 3rd request with valid JSON of the wrong shape
  huge          answers its 3rd request with a 2 MiB message
  illegal       answers every play with a meld of cards it does not hold
  illegal_once  answers its 2nd play with an illegal meld, then behaves
  stale         answers its 3rd request with the wrong seq (then the right one)
  other_token   connects with the token in $OTHER_TOKEN instead of its own
  no_hello      connects but never says hello
  flood         sends 200 stale messages at its 3rd request, then answers
  exit_clean    exits with code 0 at its 4th request
  late          answers late (past limit + bank) at its 3rd request, then on time
  chatty        writes 3 MiB to stdout and stderr at start (then a last line, CHATTY END), then behaves
  crash_random  exits with code 4 at a random request (1..40, seeded by its token)
  sigstop       stops itself with SIGSTOP at its 3rd request
  fork_child    forks a child that leaves the process group and sleeps holding the
                socket, then exits with code 5 at its 5th request
  connect_twice after its welcome, connects a second socket with the same token and says hello
  mem_hog       allocates 400 MiB at its 2nd request and keeps it
  halftime      answers every request after half its per-decision limit
  halfcpu       computes (burns CPU) for half its per-decision limit before every answer
  spawner       starts 12 sleeping child processes at its 2nd request (answering 0.6 s late)
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import zmq


def args() -> tuple[str, str, str]:
    mode = sys.argv[1]
    a = sys.argv[2:]
    endpoint = a[a.index("--endpoint") + 1] if "--endpoint" in a else os.environ["ARENA_ENDPOINT"]
    token = a[a.index("--token") + 1] if "--token" in a else os.environ["ARENA_TOKEN"]
    return mode, endpoint, token


def legal_reply(msg: dict) -> dict:
    obs = msg["observation"]
    base = {"v": 1, "game": msg["game"], "seq": msg["seq"]}
    if msg["decision"] == "draw":
        return {**base, "type": "draw", "source": "stock"}
    discard = obs["drawn"] if obs["drawn"] and not obs["took_discard"] else obs["hand"][0]
    return {**base, "type": "play", "actions": [], "discard": discard}


def main() -> int:
    mode, endpoint, token = args()
    if mode == "other_token":
        token = os.environ["OTHER_TOKEN"]
    if mode == "chatty":
        chunk = "x" * 1023 + "\n"
        for _ in range(3 * 1024):
            sys.stdout.write(chunk)
            sys.stderr.write(chunk)
        sys.stderr.write("CHATTY END: the latest line of its output\n")
        sys.stdout.flush()
        sys.stderr.flush()
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, token.encode())
    sock.connect(endpoint)
    if mode != "no_hello":
        sock.send(json.dumps({"v": 1, "type": "hello", "name": f"misbehave-{mode}"}).encode())
    spy = sys.stderr if mode == "spy" else None  # its log: a sandboxed bot can write nowhere else
    requests = plays = 0
    crash_at = random.Random(token).randint(1, 40)
    hog: list[bytearray] = []
    second = None
    while True:
        data = sock.recv()
        if spy:
            spy.write("SPY " + data.decode() + "\n")
            spy.flush()
        msg = json.loads(data)
        if msg["type"] == "shutdown":
            return 0
        if msg["type"] == "welcome" and mode == "connect_twice" and second is None:
            second = ctx.socket(zmq.DEALER)
            second.setsockopt(zmq.LINGER, 0)
            second.setsockopt(zmq.ROUTING_ID, token.encode())
            second.connect(endpoint)
            second.send(json.dumps({"v": 1, "type": "hello", "name": "second"}).encode())
        if msg["type"] != "request":
            continue
        requests += 1
        plays += msg["decision"] == "play"
        reply = legal_reply(msg)
        if mode == "halftime":
            time.sleep(msg["clock"]["decision_ms"] / 2000)
        if mode == "halfcpu":
            until = time.process_time() + msg["clock"]["decision_ms"] / 2000
            while time.process_time() < until:
                pass
        if mode == "crash" and requests == 5:
            print("misbehave: exiting with code 3 on purpose", file=sys.stderr, flush=True)
            return 3
        if mode == "crash_random" and requests == crash_at:
            return 4
        if mode == "sigstop" and requests == 3:
            os.kill(os.getpid(), signal.SIGSTOP)
        if mode == "fork_child" and requests == 3 and os.fork() == 0:
            os.setsid()
            time.sleep(3600)
            os._exit(0)
        if mode == "fork_child" and requests == 5:
            return 5
        if mode == "mem_hog" and requests == 2:
            hog.append(bytearray(400 << 20))
            hog[0][:: 4096] = b"x" * len(hog[0][:: 4096])  # touch every page
            time.sleep(0.6)
        if mode == "spawner" and requests == 2:
            for _ in range(12):
                subprocess.Popen(["sleep", "3600"])
            time.sleep(0.6)  # long enough for the referee's limits check to see them
        if mode == "exit_clean" and requests == 4:
            return 0
        if mode == "hang" and requests == 3:
            time.sleep(3600)
        if mode == "sleep" and requests == 3:
            time.sleep(msg["clock"]["decision_ms"] / 1000 * 3 + 0.3)
        if mode == "late" and requests == 3:
            time.sleep((msg["clock"]["decision_ms"] + msg["clock"]["bank_ms_left"]) / 1000 + 0.4)
        if mode == "not_json" and requests == 3:
            sock.send(b"\xff\xfe this is not json")
            continue
        if mode == "wrong_shape" and requests == 3:
            sock.send(json.dumps({"v": 1, "type": "draw", "game": msg["game"], "seq": msg["seq"], "source": 7}).encode())
            continue
        if mode == "huge" and requests == 3:
            sock.send(json.dumps({**reply, "padding": "x" * (2 << 20)}).encode())
            continue
        if mode == "illegal" and msg["decision"] == "play":
            reply["actions"] = [{"type": "meld", "cards": ["AS", "AS", "AS"]}]
        if mode == "illegal_once" and msg["decision"] == "play" and plays == 2:
            reply["actions"] = [{"type": "meld", "cards": ["AS", "AS", "AS"]}]
        if mode == "stale" and requests == 3:
            sock.send(json.dumps({**reply, "seq": msg["seq"] - 1}).encode())
        if mode == "flood" and requests == 3:
            for i in range(200):
                sock.send(json.dumps({**reply, "seq": 10_000 + i}).encode())
        sock.send(json.dumps(reply).encode())


if __name__ == "__main__":
    sys.exit(main())
