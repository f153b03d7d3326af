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
  fork_burn     at its 2nd request forks 16 children in turn, each burning 50 ms of CPU and reaped, then replies
  kill_at_request  starts a child burning CPU as it decides (0.3 s) and kills it the moment the next request comes
  memfd_hog     at its 2nd request holds 300 MiB in a memfd (memory no process maps)
  sock_hog      at its 2nd request holds 300 MiB in unread socket buffers
  data_fill     at its 2nd request writes 2 GiB into $ARENA_DATA, 64 MiB a file, going on past errors
  data_names    at its 2nd request gives one file in $ARENA_DATA 30,000 more names (hard links) and says
                on stderr how many it made ("names N")
  fork_burst    at its 2nd request forks up to 200 sleeping children as fast as it can and says on
                stderr how many it got ("forked N"), then replies
  junk          at every request first sends 40 messages of 1 MiB that answer nothing asked (stale and
                out-of-turn replies), then its legal reply padded to 1 MiB
  junk_hello    before any hello sends 1 MiB messages that are no hello, as fast as it can, for 20 s
  huge_words    at every request first sends 8 stale replies whose game id is ~1 MiB of text (every
                other one of the wrong shape), and at every 3rd request a reply whose `type` is ~1 MiB
                of text (malformed: the decoder's reason quotes it) before its legal one
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


def burner() -> int:
    """A child that burns CPU until killed."""
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    return pid


def hog_descriptors(kind: str, mib: int) -> list:
    """Hold ``mib`` MiB in memory only descriptors own: a memfd, or socket buffers nobody reads."""
    import socket

    kept: list = []
    if kind == "memfd":
        fd = os.memfd_create("hog")
        for _ in range(mib // 8):
            os.write(fd, b"x" * (8 << 20))
        kept.append(fd)
        return kept
    queued = 0
    while queued < mib << 20:
        a, b = socket.socketpair()
        a.setblocking(False)
        try:
            while True:
                queued += a.send(b"x" * 65536)
        except BlockingIOError:
            pass
        kept.append((a, b))
    return kept


def fill_data(mib: int) -> None:
    """Write ``mib`` MiB into the data folder, 64 MiB a file; a refused write moves on to the next file."""
    folder = os.environ["ARENA_DATA"]
    chunk = b"d" * (1 << 20)
    for i in range(mib // 64):
        try:
            with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                for _ in range(64):
                    f.write(chunk)
        except OSError:
            continue


def many_names(count: int) -> int:
    """Give one file of the data folder ``count`` more names (hard links: no inode each); how many were made."""
    folder = os.environ["ARENA_DATA"]
    with open(os.path.join(folder, "one.txt"), "w") as f:
        f.write("one")
    made = 0
    try:
        for i in range(count):
            os.link(os.path.join(folder, "one.txt"), os.path.join(folder, f"n{i}"))
            made += 1
    except OSError:
        pass
    return made


def junk_burst(sock, msg: dict, reply: bytes) -> bytes:
    """40 stale and out-of-turn replies of 1 MiB each; returns the legal reply padded to 1 MiB."""
    pad = "p" * ((1 << 20) - 400)
    for i in range(40):
        stale = {**json.loads(reply), "x": pad}
        if i % 2:
            stale["seq"] = msg["seq"] - 1
        else:
            stale["game"] = "another-game"
        sock.send(json.dumps(stale).encode())
    return json.dumps({**json.loads(reply), "x": pad}).encode()


def huge_words(sock, msg: dict, reply: bytes, requests: int) -> None:
    """Stale replies (and, every 3rd request, a malformed one) that make the referee quote ~1 MiB of
    text in its reasons, were it to quote what a bot said as it is."""
    big = "G" * ((1 << 20) - 300)
    for i in range(8):
        stale = {**json.loads(reply), "game": big}
        if i % 2:
            stale["source"] = "nowhere"  # the wrong shape: the decoder salvages the game id
        sock.send(json.dumps(stale).encode())
    if requests % 3 == 0:
        sock.send(json.dumps({**json.loads(reply), "type": big}).encode())


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


def try_(action) -> str:
    try:
        return f"done: {action()}"[:200]
    except Exception as e:  # noqa: BLE001 - the report says what stopped it
        return f"refused: {type(e).__name__}: {e}"[:200]


def open_folders() -> list[str]:
    """Where the folders this process holds open lead (a descriptor the launcher let through)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            if os.path.isdir(f"/proc/self/fd/{fd}") and not target.startswith("/proc"):
                found.append(target)
        except OSError:
            continue
    return found


def host_powers() -> None:
    """Try what only the host's root (or the organiser's user) could do, and report each outcome."""
    def core_pattern() -> str:
        with open("/proc/sys/kernel/core_pattern", "r+") as f:
            value = f.read()
            f.seek(0)
            f.write(value)  # unchanged: harmless, but only a writer may do it
        return "opened for writing"

    def proc_sys_rw() -> str:
        if os.statvfs("/proc/sys").f_flag & os.ST_RDONLY:
            raise PermissionError("mounted read-only")
        return "mounted writable"

    def read(path: str) -> str:
        if os.path.isdir(path):
            return ",".join(sorted(os.listdir(path)))
        with open(path, "rb") as f:
            return f.read(64).decode("utf-8", "replace")

    def write_data() -> str:
        with open(os.path.join(os.environ["ARENA_DATA"], "pwned"), "w") as f:
            f.write("written by the bot")
        return "written"

    def pid1_environment_beyond_own() -> list[str]:
        # PID 1 of the sandbox is ours (the gate, or bwrap's init): its environment holds no variable the bot
        # lacks (one the bot's env overrode has there the launcher's value, which a bot that keeps it sees as its own)
        with open("/proc/1/environ", "rb") as f:
            theirs = {v.partition(b"=")[0].decode("utf-8", "replace") for v in f.read().split(b"\0") if v}
        return sorted(theirs - set(os.environ))

    probes = [p for p in os.environ.get("HOSTILE_PATHS", "").split(":") if p]
    probes += [w[len("probe="):] for w in sys.argv[2:] if w.startswith("probe=")]
    report = {"core_pattern": try_(core_pattern), "shadow": try_(lambda: read("/etc/shadow")),
              "proc_sys": try_(proc_sys_rw), "uid": os.getuid(), "cwd": try_(lambda: read(".")),
              "env": sorted(k for k in os.environ if k.startswith("BOT_")),
              "data": try_(write_data) if os.environ.get("ARENA_DATA") else None,
              "dir_fds": open_folders(), "pid1_env": try_(pid1_environment_beyond_own),
              "paths": {p: try_(lambda p=p: read(p)) for p in probes}}
    sys.stderr.write("HOSTILE " + json.dumps(report) + "\n")
    sys.stderr.flush()


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


def fork_burst(tries: int = 200) -> int:
    """Fork sleeping children as fast as this process can until a fork is refused; how many were made."""
    forked = 0
    for _ in range(tries):
        try:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        except OSError:
            break
        forked += 1
    return forked


def main() -> int:
    mode = sys.argv[1]
    if mode.startswith("stdio_"):
        return run_stdio(mode)
    if mode == "host_powers":
        host_powers()
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
    elif mode == "junk_hello":  # the referee reads it before any decision's clock runs
        junk = json.dumps({"v": 1, "type": "draw", "x": "j" * ((1 << 20) - 100)}).encode()
        end = time.monotonic() + 20
        while time.monotonic() < end:
            sock.send(junk)
        return 0
    else:
        sock.send(json.dumps(hello).encode())
    stop = threading.Event()
    if mode == "flood":
        threading.Thread(target=flood, args=(endpoint, stop), daemon=True).start()
    requests = 0
    hog: list = []
    child = 0
    while True:
        msg = json.loads(sock.recv())
        if child:
            os.kill(child, 9)  # the moment the request came
            os.waitpid(child, 0)
            child = 0
        if msg["type"] == "shutdown":
            stop.set()
            return 0
        if msg["type"] == "error":
            print(f"hostile: got an error of kind {msg.get('kind')}", file=sys.stderr, flush=True)  # tests read the log
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
        if mode == "fork_burn" and requests == 2:
            for _ in range(16):  # each lives less than a poll of the process tree would need to see it
                pid = os.fork()
                if pid == 0:
                    until = time.process_time() + 0.05
                    while time.process_time() < until:
                        pass
                    os._exit(0)
                os.waitpid(pid, 0)  # it has ended, and been reaped, before the reply
        if mode in ("memfd_hog", "sock_hog") and requests == 2:
            hog.append(hog_descriptors(mode[:-4], 300))
            time.sleep(1)
        if mode == "data_fill" and requests == 2:
            fill_data(2048)
            time.sleep(1)
        if mode == "data_names" and requests == 2:
            print(f"names {many_names(30_000)}", file=sys.stderr, flush=True)
        if mode == "kill_at_request":
            child = burner()  # burns while this bot decides (charged) and on, until the next request
            time.sleep(0.3)
        if mode == "fork_burst" and requests == 2:
            print(f"forked {fork_burst()}", file=sys.stderr, flush=True)
            time.sleep(0.5)
        if mode == "junk":
            reply = junk_burst(sock, msg, reply)
        if mode == "huge_words":
            huge_words(sock, msg, reply, requests)
        sock.send(reply)
        if mode == "offturn_mem" and requests == 2:
            for _ in range(40):  # 400 MiB, 10 MiB at a time, every page touched
                hog.append(bytearray(b"x" * (10 << 20)))
            time.sleep(5)


if __name__ == "__main__":
    sys.exit(main())
