"""The undertaker: kills what a referee process leaves behind, however that process ends.

``PR_SET_PDEATHSIG`` kills a bot when its referee dies, but only a process
that has already asked for it: bubblewrap's sandbox child waits for its parent
(on an eventfd, before it can ask) while the parent writes the user
namespace's maps, so a referee killed in that moment leaves the child waiting
forever.  The undertaker closes every such gap from outside.

The referee starts it once per process (``launch.install_cleanup``), in a
session of its own with the read end of a pipe as stdin.  Only the referee
holds the write end and never writes to it, so EOF comes when the referee
exits or is killed.  The undertaker then kills every process whose
environment holds ``KEY=VALUE`` (the referee's own marker, which every bot and
bwrap process it starts carries) and scans again until none is left.  Then it
removes the folders whose path starts with ``PREFIX`` (the referee's private
folders for gates' sockets, named after its marker).

Only the standard library is imported, so it starts in milliseconds.

Usage: ``python undertaker.py KEY VALUE PREFIX``
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import sys
import time

GIVE_UP_S = 5.0  # a process that keeps coming back for this long is not ours to chase


def marked(entry: bytes) -> list[int]:
    """The pids whose environment holds ``entry`` (``KEY=VALUE``), this process excepted."""
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except OSError:  # gone, or a zombie
            continue
        if entry in environ.split(b"\0"):
            found.append(int(name))
    return found


def main(argv: list[str]) -> int:
    key, value, prefix = argv
    entry = f"{key}={value}".encode()
    while os.read(0, 4096):  # the referee never writes: this returns b"" at its end
        pass
    deadline = time.monotonic() + GIVE_UP_S
    while (pids := marked(entry)) and time.monotonic() < deadline:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)
    for folder in glob.glob(glob.escape(prefix) + "*"):
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if pids else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
