"""A spy, thief and forger for the sandbox tests (not a sample bot): it plays legal moves and,
before its hello, tries everything a bot must not be able to do, then writes what it found as
one line ``SPYREPORT {json}`` on stderr (its log).  Hints of where to look come from its
environment, as an entrant who read the README would guess them: RESULTS (the results folder),
OTHER (another bot's folder), PORT (a TCP port open on the host's loopback)."""

from __future__ import annotations

import json
import os
import socket
import sys


def attempt(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - every failure is a finding
        return f"refused: {type(e).__name__}"


def processes() -> list[str]:
    mine = {os.getpid(), os.getppid()}
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) not in mine:
            try:
                found.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:80])
            except OSError:
                pass
    return found


def tokens_in_environments() -> list[str]:
    mine = os.environ.get("ARENA_TOKEN")
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            except OSError:
                continue
            found += [e.decode() for e in env if e.startswith(b"ARENA_TOKEN=") and e.decode() != f"ARENA_TOKEN={mine}"]
    return found


def remount() -> str:
    import subprocess

    done = subprocess.run(["mount", "-o", "remount,bind,rw", "/usr"], capture_output=True)
    if done.returncode != 0:
        raise PermissionError(done.stderr.decode()[:80])
    return "remounted"


def pid1_descriptors() -> list[str]:
    """What the sandbox's PID 1 (the gate, or bwrap's init) holds open that the spy does not: a pipe of
    the referee's would let it write as someone else."""
    def targets(pid: str) -> set[str]:
        return {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}

    return sorted(t for t in targets("1") - targets("self") if not t.startswith(("/dev/null", "anon_inode:")))


def connect(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return "connected"


def main() -> int:
    results, other, port = os.environ.get("RESULTS", ""), os.environ.get("OTHER", ""), os.environ.get("PORT", "0")
    report = {
        "processes": processes(),
        "other_tokens": tokens_in_environments(),
        "results_listing": attempt(lambda: os.listdir(results)),
        "journal": attempt(lambda: open(os.path.join(results, "journal.jsonl")).read()[:100]),
        "key": attempt(lambda: open(os.path.join(results, "secret.key"), "rb").read().hex()),
        "other_listing": attempt(lambda: os.listdir(other)),
        "write_own_folder": attempt(lambda: open("spy-was-here.txt", "w").write("x")),
        "write_results": attempt(lambda: open(os.path.join(results, "journal.jsonl"), "a").write("{}\n")),
        "write_home": attempt(lambda: open(os.path.expanduser("~/spy-was-here.txt"), "w").write("x")),
        "tcp_out": attempt(lambda: connect(int(port))),
        "remount_system_rw": attempt(remount),
        "pid1_descriptors": attempt(pid1_descriptors),
        # os.unshare is Python 3.12+ (mypy checks for 3.11); on 3.11 attempt() reports the AttributeError
        "new_user_namespace": attempt(lambda: os.unshare(os.CLONE_NEWUSER) or "unshared"),  # type: ignore[attr-defined]
        "engine_import": attempt(lambda: __import__("arena.rules.game") and "imported"),
        "environment": sorted(os.environ),
        "run_marker": os.environ.get("ARENA_RUN"),
    }
    print("SPYREPORT " + json.dumps(report), file=sys.stderr, flush=True)
    import zmq

    a = sys.argv[1:]
    endpoint = a[a.index("--endpoint") + 1] if "--endpoint" in a else os.environ["ARENA_ENDPOINT"]
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, os.environ["ARENA_TOKEN"].encode())
    sock.connect(endpoint)
    sock.send(json.dumps({"v": 1, "type": "hello", "name": "spy", "events": False}).encode())
    while True:
        msg = json.loads(sock.recv())
        if msg["type"] == "shutdown":
            return 0
        if msg["type"] != "request":
            continue
        obs = msg["observation"]
        base = {"v": 1, "game": msg["game"], "seq": msg["seq"]}
        if msg["decision"] == "draw":
            sock.send(json.dumps({**base, "type": "draw", "source": "stock"}).encode())
        else:
            card = obs["drawn"] if obs["drawn"] and not obs["took_discard"] else obs["hand"][0]
            sock.send(json.dumps({**base, "type": "play", "actions": [], "discard": card}).encode())


if __name__ == "__main__":
    sys.exit(main())
