"""A hostile stdio bot in one file (it runs where it sees its program file alone), for the view, data
quota and stderr tests.  Usage: solo.py MODE [WORDS...]; it plays legal moves (draw from the stock,
discard the drawn card) and, besides:

  peek          first reports, on stderr as ``HOSTILE {json}``, its working folder's listing and the
                outcome of reading each path in $HOSTILE_PATHS (":"-separated) and each ``probe=PATH`` word
  stderr_flood  writes 64 KiB lines to stderr as fast as it can, all game long, from a thread
  long_path     at its 1st request writes $SOLO_MIB MiB (default 64) in 1 MiB files at the end of a chain of
                folders deeper than PATH_MAX, in $ARENA_DATA
  deleted_open  at its 1st request writes $SOLO_MIB MiB into files of $ARENA_DATA it then deletes while
                it holds them open, all game long
  many_files    at its 1st request makes $SOLO_FILES (default 30,000) empty files in $ARENA_DATA, then writes $SOLO_MIB MiB
                in 64 MiB files as fast as it can, going on past errors
In the data modes it says on stderr how many MiB it has written (``wrote N``) every 16 MiB and at
every request.
"""

from __future__ import annotations

import json
import os
import sys
import threading

MIB = 1 << 20


def legal_reply(msg: dict) -> dict:
    obs = msg["observation"]
    base = {"v": 1, "game": msg["game"], "seq": msg["seq"]}
    if msg["decision"] == "draw":
        return {**base, "type": "draw", "source": "stock"}
    discard = obs["drawn"] if obs["drawn"] and not obs["took_discard"] else obs["hand"][0]
    return {**base, "type": "play", "actions": [], "discard": discard}


def attempt(action) -> str:
    try:
        return f"done: {action()}"[:200]
    except Exception as e:  # noqa: BLE001 - the report says what stopped it
        return f"refused: {type(e).__name__}: {e}"[:200]


def read(path: str) -> str:
    if os.path.isdir(path):
        return ",".join(sorted(os.listdir(path)))
    with open(path, "rb") as f:
        return f.read(64).decode("utf-8", "replace")


def peek() -> None:
    probes = [p for p in os.environ.get("HOSTILE_PATHS", "").split(":") if p]
    probes += [w[len("probe="):] for w in sys.argv[2:] if w.startswith("probe=")]
    report = {"cwd": attempt(lambda: read(".")), "paths": {p: attempt(lambda p=p: read(p)) for p in probes}}
    sys.stderr.write("HOSTILE " + json.dumps(report) + "\n")
    sys.stderr.flush()


def flood() -> None:
    line = b"x" * (64 * 1024 - 1) + b"\n"
    while True:
        try:
            os.write(2, line)
        except OSError:
            return


WROTE = [0]  # MiB written so far, said on stderr every 16 MiB (the last line before a kill says how far it got)


def write_mib(fd: int, mib: int) -> int:
    chunk, done = b"d" * MIB, 0
    for _ in range(mib):
        try:
            os.write(fd, chunk)
        except OSError:
            break
        done += 1
        WROTE[0] += 1
        if WROTE[0] % 16 == 0:
            os.write(2, f"wrote {WROTE[0]}\n".encode())
    return done


def long_path(mib: int) -> int:
    """1 MiB files at the end of a chain of folders whose full path is longer than PATH_MAX."""
    fd = os.open(os.environ["ARENA_DATA"], os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(40):  # 40 x 200 characters: 8,000 > PATH_MAX (4,096)
            name = "d" * 200
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        done = 0
        for i in range(mib):
            try:
                f = os.open(f"f{i}", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
            except OSError:
                break
            got = write_mib(f, 1)
            os.close(f)
            done += got
            if not got:
                break
        return done
    finally:
        os.close(fd)


def deleted_open(mib: int, held: list[int]) -> int:
    done = 0
    for i in range(0, mib, 8):
        path = os.path.join(os.environ["ARENA_DATA"], f"gone{i}")
        try:
            f = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError:
            break
        os.unlink(path)
        held.append(f)
        got = write_mib(f, min(8, mib - i))
        done += got
        if not got:
            break
    return done


def many_files(mib: int) -> int:
    folder = os.environ["ARENA_DATA"]
    for i in range(int(os.environ.get("SOLO_FILES", "30000"))):
        try:
            os.close(os.open(os.path.join(folder, f"e{i}"), os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError:
            break
    done = 0
    for i in range(0, mib, 64):
        try:
            f = os.open(os.path.join(folder, f"burst{i}"), os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError:
            continue
        done += write_mib(f, 64)
        os.close(f)
    return done


def main() -> int:
    mode = sys.argv[1]
    if mode == "peek":
        peek()
    if mode == "stderr_flood":
        threading.Thread(target=flood, daemon=True).start()
    out = sys.stdout
    out.write(json.dumps({"v": 1, "type": "hello", "name": f"solo-{mode}", "events": False}) + "\n")
    out.flush()
    requests, wrote = 0, 0
    held: list[int] = []  # descriptors of deleted files, kept open all game
    mib = int(os.environ.get("SOLO_MIB", "64"))
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "shutdown":
            return 0
        if msg["type"] != "request":
            continue
        requests += 1
        if requests == 1 and mode in ("long_path", "deleted_open", "many_files"):
            wrote = (long_path(mib) if mode == "long_path" else deleted_open(mib, held) if mode == "deleted_open"
                     else many_files(mib))
        if mode in ("long_path", "deleted_open", "many_files"):
            print(f"wrote {wrote}", file=sys.stderr, flush=True)
        out.write(json.dumps(legal_reply(msg)) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
