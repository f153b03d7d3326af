"""Host identities for sandboxed bots: an unused, unprivileged uid/gid per compartment.

When the arena runs as root, every sandboxed compartment (bubblewrap, gate and bot)
runs as a host user of its own, taken from ``RANGE`` (``ARENA_UID_RANGE=FIRST-LAST``
overrides it): never root, so what the kernel grants a user (reading root-only files,
writing ``/proc/sys``, per-user limits) is not the organiser's and not another bot's.

An identity is *unused* when no account or group has it (``/etc/passwd``,
``/etc/group``, and the subordinate ranges of ``/etc/subuid`` / ``/etc/subgid``), no
live process has it, and no other referee holds a lease on it.  A lease is a file in
``LEASES`` locked (``flock``) for as long as this process lives: the kernel drops the
lock when the process ends, however it ends, so a killed referee leaves no identity
taken.  A ``key`` (a bot's data folder) gives every compartment with that key the same
identity, here and in other referees (the tournament's workers share a bot's data
folder); without a key every call gives a new one.

Leases of keys outlive their referees (a data folder keeps its identity until the
machine restarts), so ``LEASES`` grows with every data folder ever used: an
allocation reads only the index file of its own key (``key-<sha256>``) and the
markers of keyless leases (``once-<uid>``), never every lease.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from arena.referee.datafolder import MARK_FILE

RANGE = (1_900_000_000, 1_999_999_999)  # documented in SECURITY.md; above every distribution's and subuid default
LEASES = Path("/run/arena-identities")
_held: dict[str, Identity] = {}
_fds: list[int] = []  # lease files locked for the life of this process
_lock = threading.Lock()


@dataclass(frozen=True)
class Identity:
    """A host uid and gid (the same number) that no one else uses."""

    uid: int
    gid: int


def needed() -> bool:
    """Whether sandboxed bots get an identity of their own: only root can give one (others run the bot
    as themselves, in a user namespace)."""
    return os.geteuid() == 0


def id_range() -> tuple[int, int]:
    """``ARENA_UID_RANGE`` (FIRST-LAST) if set and sane, else ``RANGE``."""
    text = os.environ.get("ARENA_UID_RANGE", "")
    first, _, last = text.partition("-")
    if first.isdigit() and last.isdigit() and 1000 <= int(first) <= int(last) < 2**32 - 1:
        return int(first), int(last)
    return RANGE


def allocate(key: str | None = None) -> Identity:
    """An identity for one compartment (the same one for every call with ``key``), leased for the
    life of this process."""
    with _lock:
        if key is not None and key in _held:
            return _held[key]
        LEASES.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(LEASES, 0o700)
        registry = os.open(LEASES / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(registry, fcntl.LOCK_EX)  # one allocation at a time, across referees
            found = _allocate_locked(key)
        finally:
            os.close(registry)
        if key is not None:
            _held[key] = found
        return found


def _allocate_locked(key: str | None) -> Identity:
    system, running = _system_ids(), _process_uids()
    taken = system | running
    first, last = id_range()
    _forget_stale_once()
    own = _indexed(key) if key is not None else None  # this key's identity (live in another referee, or left)
    if own is not None and own not in system and first <= own <= last \
            and _lease(own, key, shared_ok=True, free=own not in running):
        return Identity(own, own)
    rng = random.Random(secrets.randbits(64))
    for _ in range(10_000):
        uid = rng.randint(first, last)
        if uid in taken or uid == own:
            continue
        if _lease(uid, key, shared_ok=False, free=True):
            return Identity(uid, uid)
    raise OSError(f"no unused uid found in {first}-{last} (set ARENA_UID_RANGE=FIRST-LAST to another range)")


def _lease_path(uid: int) -> Path:
    return LEASES / f"{uid}.lease"


def _index_path(key: str) -> Path:
    return LEASES / f"key-{hashlib.sha256(key.encode()).hexdigest()}"


def _indexed(key: str) -> int | None:
    """The uid whose lease names ``key``, from the key's index file (None if there is none, or the
    lease was since taken by another key)."""
    try:
        text = _index_path(key).read_text()
        uid = int(text) if text.isdigit() else None
        return uid if uid is not None and _lease_path(uid).read_text() == key else None
    except OSError:
        return None


def _forget_stale_once() -> None:
    """Remove the leases of keyless compartments that ended (no one holds their lock)."""
    for marker in LEASES.glob("once-*"):
        uid = marker.name.removeprefix("once-")
        path = _lease_path(int(uid)) if uid.isdigit() else None
        try:
            if path is None or not path.read_text().startswith("once:"):
                marker.unlink(missing_ok=True)  # not a marker of ours, or the uid was leased to a key since
                continue
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            marker.unlink(missing_ok=True)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue
        finally:
            os.close(fd)
        path.unlink(missing_ok=True)
        marker.unlink(missing_ok=True)


def _lease(uid: int, key: str | None, shared_ok: bool, free: bool) -> bool:
    """Hold uid's lease (shared by the compartments of one key): join a live one when ``shared_ok``,
    take a stale one only when ``free`` (no process has the uid); False otherwise."""
    path = _lease_path(uid)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # held by a live referee
        if not shared_ok:
            os.close(fd)
            return False
        fcntl.flock(fd, fcntl.LOCK_SH)
        _fds.append(fd)
        return True
    if not free:
        os.close(fd)
        return False
    os.ftruncate(fd, 0)
    os.write(fd, (key if key is not None else f"once:{secrets.token_hex(8)}").encode())
    fcntl.flock(fd, fcntl.LOCK_SH)  # downgrade: other referees with the same key may share it
    if key is None:
        (LEASES / f"once-{uid}").touch(mode=0o600)
    else:
        _index_path(key).write_text(str(uid))
    _fds.append(fd)
    return True


def _system_ids() -> set[int]:
    """Every uid and gid an account, group or subordinate range of this machine has."""
    ids: set[int] = set()
    for name in ("/etc/passwd", "/etc/group"):
        try:
            for line in Path(name).read_text(errors="replace").splitlines():
                fields = line.split(":")
                if len(fields) > 2 and fields[2].isdigit():
                    ids.add(int(fields[2]))
                if name == "/etc/passwd" and len(fields) > 3 and fields[3].isdigit():
                    ids.add(int(fields[3]))
        except OSError:
            continue
    first, last = id_range()
    for name in ("/etc/subuid", "/etc/subgid"):
        try:
            for line in Path(name).read_text(errors="replace").splitlines():
                fields = line.split(":")
                if len(fields) == 3 and fields[1].isdigit() and fields[2].isdigit():
                    start, count = int(fields[1]), int(fields[2])
                    ids.update(range(max(start, first), min(start + count, last + 1)))
        except OSError:
            continue
    return ids


def _process_uids() -> set[int]:
    """The real, effective, saved and file-system uids and gids of every live process."""
    found: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as f:
                for line in f:
                    if line.startswith((b"Uid:", b"Gid:")):
                        found.update(int(x) for x in line.split()[1:])
        except OSError:
            continue
    return found


MAX_DEPTH = 200  # folders in folders a data folder may hold (hand_over walks them recursively)


def hand_over(folder: int, who: Identity, shown: str = "the data folder") -> None:
    """Make the folder open as ``folder`` (a descriptor: a bot's data folder, see
    ``datafolder.open_folder``) and everything in it ``who``'s alone (the folder 0700).

    Links are not followed (a link itself becomes ``who``'s, never its target); a folder on another
    file system (a mount) or a file with a second name elsewhere (a hard link not ``who``'s) stops
    it with ValueError (chown there would give the bot that file), and so does anything owned by
    neither an arena seat identity (``id_range``) nor, for the folder itself, the arena (which made
    it): the organiser's files are never given away, whatever folder they are in."""
    device = os.fstat(folder).st_dev
    first, last = id_range()

    def seats(uid: int) -> bool:
        return uid == who.uid or first <= uid <= last

    top = os.fstat(folder)
    if not (seats(top.st_uid) or top.st_uid == os.geteuid()):
        raise ValueError(f"the bot's data folder cannot be handed over to its user: {shown!r} belongs to uid "
                         f"{top.st_uid}, not to the arena nor to a bot; name a new folder (the arena makes it)")
    os.fchown(folder, who.uid, who.gid)
    os.fchmod(folder, 0o700)
    for here, dirs, files, dir_fd in os.fwalk(".", dir_fd=folder, follow_symlinks=False):
        if dirs and here.count("/") >= MAX_DEPTH:  # os.fwalk recurses: a deeper chain would crash the referee
            raise ValueError(f"the bot's data folder cannot be handed over to its user: {shown!r} nests folders "
                             f"more than {MAX_DEPTH} deep; remove the deep folders")
        for name in list(dirs) + files:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:  # removed meanwhile by another game of the same bot
                continue
            where = os.path.normpath(os.path.join(shown, here, name))
            if st.st_dev != device:
                raise ValueError(f"the bot's data folder cannot be handed over to its user: {where!r} is on "
                                 "another file system (a mount); a data folder holds only files and folders")
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and st.st_uid != who.uid:
                raise ValueError(f"the bot's data folder cannot be handed over to its user: {where!r} is a hard "
                                 "link (the same file has another name elsewhere); remove it")
            if here == "." and name == MARK_FILE and not seats(st.st_uid):
                continue  # the arena's mark (where there are no xattrs): stays the arena's
            if not seats(st.st_uid):
                raise ValueError(f"the bot's data folder cannot be handed over to its user: {where!r} belongs to "
                                 f"uid {st.st_uid}, not to a bot (the organiser's files are never given to a bot); "
                                 "remove it or name a new folder")
            if st.st_uid != who.uid or st.st_gid != who.gid:
                try:
                    os.chown(name, who.uid, who.gid, dir_fd=dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
