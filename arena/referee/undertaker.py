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
folders for gates' sockets, named after its marker).  Each ``GROUP`` is what
the referee's compartments' cgroup folders of one hierarchy start with
(``arena/referee/cgroups.py``): every process still in one is killed (also one
that dropped the marker), then the groups are removed.  Last, once the referee is dead to
the kernel, the data folders' volumes no live referee holds are copied back
(``datavolume.release_orphans``, in the registry ``ARENA_VOLUME_DIR`` names).

Only the standard library is imported, so it starts in milliseconds.

Usage: ``python undertaker.py KEY VALUE PREFIX [GROUP ...]``, with ``ARENA_UNDERTAKER_OF=PID:START``
(the referee) and ``ARENA_VOLUME_DIR`` in its environment.
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


def grouped(groups: list[str]) -> list[int]:
    """The pids in the compartments' cgroups whose folders start with one of ``groups``."""
    found = []
    for group in groups:
        for procs in glob.glob(glob.escape(group) + "*/cgroup.procs"):
            try:
                with open(procs) as f:
                    found += [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                continue
    return found


def remove_groups(groups: list[str], deadline: float) -> bool:
    """Remove the compartments' groups; True once all are gone."""
    while True:
        left = 0
        for group in groups:
            for child in glob.glob(glob.escape(group) + "*/"):
                try:
                    os.rmdir(child)
                except FileNotFoundError:
                    pass
                except OSError:
                    left += 1
        if not left or time.monotonic() > deadline:
            return not left
        for pid in grouped(groups):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


def main(argv: list[str]) -> int:
    key, value, prefix, *groups = argv
    entry = f"{key}={value}".encode()
    while os.read(0, 4096):  # the referee never writes: this returns b"" at its end
        pass
    deadline = time.monotonic() + GIVE_UP_S
    while (pids := marked(entry) + grouped(groups)) and time.monotonic() < deadline:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)
    for folder in glob.glob(glob.escape(prefix) + "*"):
        shutil.rmtree(folder, ignore_errors=True)
    removed = remove_groups(groups, time.monotonic() + GIVE_UP_S)
    # The data folders' volumes that no live referee holds are copied back (a sibling file: this
    # one runs as a script, so it is imported by its folder).  The referee's pipe closes as it
    # exits, a moment before the kernel has it dead: until then it would still count as a holder.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import datavolume  # type: ignore[import-not-found]

    referee = [int(x) for x in os.environ.get("ARENA_UNDERTAKER_OF", "0:0").split(":")]
    deadline = time.monotonic() + GIVE_UP_S
    while datavolume.alive(referee) and time.monotonic() < deadline:
        time.sleep(0.01)
    datavolume.release_orphans()
    return 1 if pids or not removed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
