"""A bot's data folder as a file system of its quota's size, so the kernel enforces the quota.

As root, where loop devices and ``mkfs.ext4`` are present, a data folder in use is a mount: an
ext4 image of ``limits.data_mb`` (its inodes capped at ``DATA_ENTRIES``) mounted over the folder
while any referee process on the machine plays the bot.  A write past the quota fails (``ENOSPC``)
at the quota, whatever the files' depth, names or number, open or deleted: the kernel counts, no
watcher polls.  The folder's files are copied into the image when the first referee takes it and
back (replacing what the folder held) when the last one lets it go, so between runs the folder
holds plain files as before.

The machine's registry (``VOLUMES``, root's alone; its state files carry ``FORMAT``) holds, per
folder, the image, a lock and the referees that hold it (pid and start time, so a dead or reused
pid is told apart); a folder's lock file goes with its state once the folder is plain again.  A referee lets
its volumes go at exit (``release_mine``); after a ``kill -9`` its undertaker does
(``release_orphans``); a run that finds an image left by a machine that went down mounts it again,
so nothing the bot wrote is lost.  A copy (``fdtree``) walks the folder holding descriptors of the
folder it is in only (the way back up is ``..``, checked by inode) and stops past ``NAMES`` names, hard links'
names included: a volume that holds more is not copied back but stays, for the bot's next run to
mount again and the organiser to see.  Elsewhere (not root, no loop device, ``ARENA_DATA_VOLUMES=0``)
the limits watcher measures the folder instead (``limits_watch``).

Only the standard library (and ``fdtree``) is imported: the undertaker (run with ``-I -S``) imports this file.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

try:
    from arena.referee import fdtree
except ImportError:  # imported by the undertaker as a sibling script, without the package
    import fdtree  # type: ignore[import-not-found, no-redef]

VOLUMES = Path(os.environ.get("ARENA_VOLUME_DIR", "/var/lib/arena/volumes"))
MARK = "trusted.arena.volume"  # on a volume's root: which folder it is for (no bot can set trusted.*)
ENTRIES = 10_000  # files and folders a data folder may hold (as limits_watch.DATA_ENTRIES)
NAMES = 2 * ENTRIES  # names a copy walks at most: the files (mkfs rounds the inode cap up) and as many hard links
FORMAT = 1  # of a state file: a registry written in another format is left alone, not misread
INODE_BYTES = 256
BUSY_S = 3.0  # how long an unmount waits for the kernel to let go of the mount (then it is detached)


def enabled() -> bool:
    """Whether data folders are volumes here: root, a loop device, mkfs.ext4, not turned off, and a
    small volume made and mounted once in this process (a container may refuse the mount)."""
    return (os.geteuid() == 0 and os.environ.get("ARENA_DATA_VOLUMES", "1") != "0"
            and os.path.exists("/dev/loop-control") and shutil.which("mkfs.ext4") is not None
            and shutil.which("mount") is not None and probe() is None)


@functools.cache
def probe() -> str | None:
    """Why this machine cannot mount a volume (a 2 MiB one, made and removed), or None."""
    VOLUMES.mkdir(parents=True, exist_ok=True, mode=0o700)
    image, mnt = VOLUMES / f"probe-{os.getpid()}.img", VOLUMES / f"probe-{os.getpid()}.mnt"
    try:
        _make_image(image, 2 << 20, 0, 0, entries=64)
        mnt.mkdir(mode=0o700, exist_ok=True)
        _mount(image, str(mnt))
        _unmount(str(mnt))
        return None
    except OSError as e:
        return str(e)
    finally:
        image.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            mnt.rmdir()


def key_of(folder: str) -> str:
    return hashlib.sha256(os.path.abspath(folder).encode()).hexdigest()[:32]


def _paths(key: str) -> tuple[Path, Path, Path, Path]:
    """(image, state, lock, staging mount point) of one folder's volume."""
    return (VOLUMES / f"{key}.img", VOLUMES / f"{key}.json", VOLUMES / f"{key}.lock", VOLUMES / f"{key}.mnt")


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot); None if it is gone, or dead and not yet
    reaped (a zombie holds no volume: the undertaker, which runs as its referee dies, must see it so)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return None if fields[0] in (b"Z", b"X") else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def me() -> list[int]:
    """This process as a holder: its pid and start time."""
    return [os.getpid(), _start_time(os.getpid()) or 0]


def alive(holder: list[int]) -> bool:
    return _start_time(holder[0]) == holder[1]


def _lock(lock_path: Path, wait: bool) -> int:
    """A descriptor holding the lock file at ``lock_path`` (BlockingIOError if busy and not ``wait``).
    The file is removed by the holder that ends a folder's state, so a lock taken on a file that
    is no longer at the path is let go and taken again on the one that is."""
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            with contextlib.suppress(FileNotFoundError):
                if os.stat(lock_path).st_ino == os.fstat(fd).st_ino:
                    return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _save(state_path: Path, state: dict) -> None:
    tmp = state_path.with_suffix(".tmp")
    tmp.write_text(json.dumps({**state, "format": FORMAT}))
    os.replace(tmp, state_path)


@contextlib.contextmanager
def _locked(key: str, wait: bool = True) -> Iterator[dict]:
    """The folder's state under its lock (written back when the block ends; the state and the lock
    file removed once the folder is plain again).  OSError for a state in another ``FORMAT``."""
    VOLUMES.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(VOLUMES, 0o700)
    _image, state_path, lock_path, _mnt = _paths(key)
    fd = _lock(lock_path, wait)
    try:
        try:
            state = json.loads(state_path.read_text())
        except (OSError, ValueError):
            state = {}
        if state.get("format", FORMAT) != FORMAT:
            raise OSError(f"{state_path} is in the volume registry's format {state['format']!r}; this arena "
                          f"reads format {FORMAT} only (finish the runs of the arena that wrote it)")
        state["holders"] = [h for h in state.get("holders", []) if alive(h)]
        yield state
        if state.get("gone"):
            state_path.unlink(missing_ok=True)
            lock_path.unlink(missing_ok=True)
        else:
            _save(state_path, state)
    finally:
        os.close(fd)


def _run(argv: list[str], fds: tuple[int, ...] = ()) -> None:
    done = subprocess.run(argv, pass_fds=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, close_fds=True)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OSError(f"{argv[0]} failed: {said[-1] if said else done.returncode}")


def _volume_key(fd: int) -> str | None:
    try:
        return os.getxattr(fd, MARK).decode()
    except OSError:
        return None


def is_volume(fd: int, folder: str) -> bool:
    """Whether the folder open as ``fd`` is the root of ``folder``'s own volume."""
    return _volume_key(fd) == key_of(folder)


def _make_image(image: Path, quota: int, uid: int, gid: int, entries: int = ENTRIES) -> None:
    # The image is the quota plus its inode tables: what the bot can store is the quota, a little less.
    size = _image_bytes(quota, entries)
    with open(image, "wb") as f:
        os.fchmod(f.fileno(), 0o600)
        f.truncate(size)
    _run(["mkfs.ext4", "-q", "-F", "-O", "^has_journal,^resize_inode", "-m", "0", "-N", str(entries),
          "-I", str(INODE_BYTES), "-E", f"root_owner={uid}:{gid},nodiscard", str(image)])


def _partial(key: str) -> Path:
    """The image of a volume while the folder's files are copied in (renamed to the image when done)."""
    return VOLUMES / f"{key}.img.part"


def _drop_partial(key: str) -> None:
    """Throw away a copy-in that a killed referee left half done (under the key's lock): its staging
    mount and partial image.  The folder beneath still holds every file, so nothing is lost."""
    part, staging = _partial(key), _paths(key)[3]
    if not part.exists():
        return
    if os.path.ismount(staging):
        _syscall("umount2", str(staging).encode(), MNT_DETACH)
    part.unlink(missing_ok=True)


def _mount_staging(image: Path, staging: Path) -> None:
    """Mount ``image`` at the key's staging point (under the key's lock), detaching first what a
    referee killed while it copied left mounted there (no one else uses it)."""
    staging.mkdir(mode=0o700, exist_ok=True)
    if os.path.ismount(staging):
        _syscall("umount2", str(staging).encode(), MNT_DETACH)
    _mount(image, str(staging))


def _ready_to_copy(src: int) -> None:
    """Count what the folder open as ``src`` holds (OSError past ``NAMES`` names) and let this process
    hold the descriptors its copy will (each multiply-linked file stays open until its last name):
    the soft limit is raised up to the hard one; OSError where even that is too few.  Before the copy
    touches anything."""
    files = fdtree.copy_tree(src, None, NAMES)[1]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = files + 256
    if need <= soft:
        return
    if hard != resource.RLIM_INFINITY and need > hard:
        raise OSError(errno.EMFILE, f"a copy would hold {files} files open at once, over this process's limit "
                                    f"of {hard} descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def _image_bytes(quota: int, entries: int = ENTRIES) -> int:
    return quota + entries * INODE_BYTES


def _check_left(key: str, state: dict, fd: int, folder: str, quota: int) -> None:
    """An image left from an earlier run (under the key's lock, the folder not a volume): refused if
    it was made over another folder than the one open as ``fd`` (the path's folder was replaced: its
    bot must not get that one's files, nor its size); copied back first if its quota has changed, so
    the folder gets a volume of its own quota."""
    image = _paths(key)[0]
    here = os.fstat(fd)
    if "dev" in state and (here.st_dev, here.st_ino) != (state["dev"], state["ino"]):
        raise OSError(f"{image} is the volume of an earlier folder at {folder}, which was replaced since; it is "
                      "kept for the organiser (remove it, and its .json beside it, to give the bot a new volume)")
    if image.stat().st_size != _image_bytes(quota) and "real" in state:
        _copy_back(key, state)
        for field in ("gone", "folder", "real", "dev", "ino"):
            state.pop(field, None)


def _mount(image: Path, target: str, fds: tuple[int, ...] = ()) -> None:
    _run(["mount", "-t", "ext4", "-o", "loop,nodev,nosuid", str(image), target], fds)


def _unmount(target: str) -> None:
    """Unmount ``target``; one the kernel still finds busy after ``BUSY_S`` is detached (freed as its
    last user lets go), so no failed step leaves a mount behind."""
    deadline = time.monotonic() + BUSY_S
    while True:
        try:
            _run(["umount", target])
            return
        except OSError:
            if time.monotonic() > deadline:
                _syscall("umount2", target.encode(), MNT_DETACH)
                return
            time.sleep(0.05)


def acquire(fd: int, folder: str, quota: int, uid: int, gid: int) -> None:
    """Make the data folder open as ``fd`` (at ``folder``, checked by ``datafolder.open_folder``)
    its volume of ``quota`` bytes, held by this process until ``release_mine`` (OSError when the
    machine refuses a step: the caller falls back to the watcher)."""
    key = key_of(folder)
    image, state_path, _lockfile, staging = _paths(key)
    with _locked(key) as state:
        if not is_volume(fd, folder):
            _drop_partial(key)
            if image.exists():
                _check_left(key, state, fd, folder, quota)
            fresh = not image.exists()
            made = _partial(key) if fresh else image  # complete (copied in and marked) only once renamed
            if fresh:
                _make_image(made, quota, uid, gid)
            _mount_staging(made, staging)
            try:
                top = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                try:
                    if fresh:
                        with contextlib.suppress(OSError):
                            os.rmdir("lost+found", dir_fd=top)
                        _ready_to_copy(fd)
                        fdtree.copy_tree(fd, top, NAMES)  # the folder's files, as they are
                        os.setxattr(top, MARK, key.encode())
                        os.setxattr(top, "trusted.arena.data", b"1")
                        os.rename(made, image)
                    os.fchown(top, uid, gid)
                    os.fchmod(top, 0o700)
                finally:
                    os.close(top)
                # Saved before the move: a referee killed right after it leaves a volume its undertaker knows.
                under = os.fstat(fd)
                state.update(folder=os.path.abspath(folder), real=os.readlink(f"/proc/self/fd/{fd}"),
                             dev=under.st_dev, ino=under.st_ino)
                _save(state_path, state)
                _syscall("mount", str(staging).encode(), f"/proc/self/fd/{fd}".encode(), None, MS_MOVE, None)
            except BaseException:
                with contextlib.suppress(OSError):
                    _unmount(str(staging))
                if fresh:
                    made.unlink(missing_ok=True)
                    image.unlink(missing_ok=True)
                raise
        if me() not in state["holders"]:
            state["holders"].append(me())
    _held.add(key)


_held: set[str] = set()  # the volumes this process holds
_users: dict[str, int] = {}  # how many of this process's hosts have a seat on each folder


def use(folder: str) -> None:
    """A host of this process seats a bot with ``folder`` (its volume is made at the bot's launch)."""
    key = key_of(folder)
    _users[key] = _users.get(key, 0) + 1


def done_with(folder: str) -> None:
    """A host of this process is done with ``folder`` (its bots are stopped): the last one lets the
    volume go, so a long-lived process does not keep it mounted."""
    key = key_of(folder)
    _users[key] = _users.get(key, 1) - 1
    if _users[key] <= 0:
        _users.pop(key, None)
        if key in _held:
            try:
                release(key)
            except OSError as e:
                _held.discard(key)  # said once: the next run, or the undertaker, tries again
                _not_copied(e)


def _not_copied(e: OSError) -> None:
    print(f"arena: a data folder's volume could not be copied back ({e}); it stays, and the bot's next run "
          "mounts it again", file=sys.stderr)


def _copy_back(key: str, state: dict) -> None:
    """Unmount the folder's volume, replace what the folder holds beneath by the volume's files,
    and remove the image: the folder is plain again.  The folder is found by descriptors, each name
    of its real path opened without following a link, and must be the very folder the volume was
    made over (device and inode): a path swapped for a link meanwhile gets nothing, and the image
    stays for the organiser (OSError says so), as does a volume holding more than ``NAMES`` names."""
    image, _state, _lockfile, staging = _paths(key)
    if state.get("real"):
        fd = fdtree.open_path(state["real"])
        try:
            if is_volume(fd, state["folder"]):  # detached now, freed as this descriptor closes
                _syscall("umount2", f"/proc/self/fd/{fd}".encode(), MNT_DETACH)
                os.close(fd)
                fd = -1
                fd = fdtree.open_path(state["real"])
            here = os.fstat(fd)
            if (here.st_dev, here.st_ino) != (state["dev"], state["ino"]):
                raise OSError(f"{state['real']} is no longer the folder its volume {image} was made over")
            if image.exists():
                _mount_staging(image, staging)
                try:
                    top = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                    try:
                        try:  # counted first: the folder is not touched for a volume it could not take whole
                            _ready_to_copy(top)
                        except OSError as e:
                            raise OSError(f"{state['folder']}: {e.strerror or e}; its volume stays at {image}") from e
                        fdtree.empty(fd)
                        fdtree.copy_tree(top, fd, NAMES)
                    finally:
                        os.close(top)
                finally:
                    _unmount(str(staging))
        finally:
            if fd >= 0:
                os.close(fd)
    image.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        staging.rmdir()
    state["gone"] = True


MS_MOVE, MNT_DETACH = 8192, 2
_libc = ctypes.CDLL(None, use_errno=True)


def _syscall(name: str, *args: object) -> None:
    """mount(2)/umount2(2) on descriptor paths as given (mount(8) would resolve a path again)."""
    if getattr(_libc, name)(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")


def release(key: str, wait: bool = True) -> None:
    """This process lets the volume go; the last holder copies it back.  Without ``wait``, a lock
    another holds (or this process, interrupted by a signal mid-copy) leaves it to the undertaker."""
    with _locked(key, wait) as state:
        state["holders"] = [h for h in state["holders"] if h != me()]
        if not state["holders"] and not state.get("gone"):
            _copy_back(key, state)
    _held.discard(key)


def release_mine(wait: bool = True) -> None:
    """Let go of every volume this process holds (at its exit, after its bots are killed; from a
    signal handler without ``wait``)."""
    for key in list(_held):
        try:
            release(key, wait)
        except OSError as e:
            _not_copied(e)


def release_orphans() -> None:
    """Copy back every volume no live process holds (the undertaker, after a ``kill -9``).  A folder
    whose lock is taken is skipped: its holder (a referee taking or letting go of it, or another
    undertaker) sees to it, and no undertaker queues behind another's long copy."""
    if not VOLUMES.is_dir():
        return
    for part in VOLUMES.glob("*.img.part"):  # a copy-in its referee did not live to finish
        key = part.name.split(".", 1)[0]
        with contextlib.suppress(OSError), _locked(key, wait=False) as state:
            _drop_partial(key)
            if "real" not in state:
                state["gone"] = True  # no volume was ever made over the folder: no state to keep
    for state_path in VOLUMES.glob("*.json"):
        key = state_path.stem
        with contextlib.suppress(OSError), _locked(key, wait=False) as state:
            if not state["holders"] and not state.get("gone"):
                _copy_back(key, state)

