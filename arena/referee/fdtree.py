"""Folder trees by descriptors: a folder opened by its path without following a link
(``open_path``), a tree copied (``copy_tree``) or emptied (``empty``) holding descriptors only for
the folder it is in, never following a link, so no depth is too deep and no number of folders
runs the process out of descriptors.  What a data folder's volume is copied in and back with
(``datavolume``).

Only the standard library is imported: the undertaker (run with ``-I -S``) imports this file.
"""

from __future__ import annotations

import errno
import os
import stat

CHUNK = 1 << 20  # bytes copied at a time
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_path(real: str) -> int:
    """A descriptor of the folder at the absolute path ``real``, each name opened without following
    a link (mounts on the way are crossed: a volume over the folder is what it opens)."""
    fd = os.open("/", DIR_FLAGS)
    try:
        for name in [n for n in real.split("/") if n]:
            child = os.open(name, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def copy_tree(src: int, dst: int | None, names: int) -> tuple[int, int]:
    """Copy what the folder open as ``src`` holds into the empty folder open as ``dst`` (None: only
    count), by descriptors (so no depth is too deep), never following a link: folders, regular files
    (their holes kept, so a sparse file costs the host no more than the volume), links as links, named
    pipes; owners, modes and times kept; a file's second name made a hard link again, never a second
    copy.  Sockets and devices are left out (a bot can make no device; a socket is dead).  It holds
    descriptors only for the folder it is in (and a multiply-linked file until its last name): the
    way back up is ``..``, checked by inode.  Returns the names met and the most multiply-linked
    files held open at once (counting alone says how many descriptors a copy will need); OSError
    past ``names``."""
    here = _Place(src, dst)
    above: list[tuple[list[str], tuple[tuple[int, int], ...]]] = []  # per folder above: its folders left, its inodes
    linked = _Linked()
    met = 0
    try:
        pending: list[str] | None = None
        while True:
            if pending is None:
                pending, met = _copy_entries(here, linked, met, names)
            if pending:
                name = pending.pop()
                above.append((pending, here.inodes()))
                here.step(name)
                pending = None
            elif above:
                pending, inodes = above.pop()
                here.step("..")
                if here.inodes() != inodes:
                    raise OSError(errno.ESTALE, "a folder changed while it was copied")
            else:
                return met, linked.most
    finally:
        here.close()
        linked.close()


class _Linked:
    """The multiply-linked files met whose every name is not met yet: each one's first copy (open;
    -1 when only counting) and how many names are left; and the most there were at once."""

    def __init__(self) -> None:
        self.files: dict[tuple[int, int], list[int]] = {}
        self.most = 0

    def add(self, st: os.stat_result, out: int) -> None:
        self.files[(st.st_dev, st.st_ino)] = [out, st.st_nlink - 1]
        self.most = max(self.most, len(self.files))

    def first_copy(self, st: os.stat_result) -> int | None:
        """The first copy (-1 when counting) of a file met before under another name, or None."""
        first = self.files.get((st.st_dev, st.st_ino))
        return None if first is None else first[0]

    def count_off(self, st: os.stat_result) -> None:
        """One more name of the file met: its first copy is closed once its last name is."""
        first = self.files[(st.st_dev, st.st_ino)]
        first[1] -= 1
        if first[1] <= 0:
            del self.files[(st.st_dev, st.st_ino)]
            if first[0] >= 0:
                os.close(first[0])

    def close(self) -> None:
        for out, _left in self.files.values():
            if out >= 0:
                os.close(out)
        self.files.clear()


class _Place:
    """The folder a copy is in: open in the source, and in the destination unless only counting."""

    def __init__(self, src: int, dst: int | None) -> None:
        self.fds = [os.dup(src)] + ([] if dst is None else [os.dup(dst)])

    @property
    def src(self) -> int:
        return self.fds[0]

    @property
    def dst(self) -> int | None:
        return self.fds[1] if len(self.fds) > 1 else None

    def inodes(self) -> tuple[tuple[int, int], ...]:
        return tuple((st.st_dev, st.st_ino) for st in map(os.fstat, self.fds))

    def step(self, name: str) -> None:
        """Go into the folder ``name`` (or up, with ``..``) on both sides."""
        new: list[int] = []
        try:
            for fd in self.fds:
                new.append(os.open(name, DIR_FLAGS, dir_fd=fd))
        except BaseException:
            for fd in new:
                os.close(fd)
            raise
        self.close()
        self.fds = new

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def _copy_entries(here: _Place, linked: _Linked, met: int, names: int) -> tuple[list[str], int]:
    """Copy the entries of the folder ``here`` but its folders, which are made empty and returned
    (to be copied in turn); with the names met so far."""
    folders: list[str] = []
    s_dir, d_dir = here.src, here.dst
    with os.scandir(s_dir) as entries:
        for entry in entries:
            met += 1
            if met > names:
                raise OSError(errno.EMLINK, f"it holds more than {names} names (files, folders, links and "
                              "each name of a hard-linked file)")
            name, st = entry.name, entry.stat(follow_symlinks=False)
            kind = stat.S_IFMT(st.st_mode)
            if kind == stat.S_IFDIR:
                folders.append(name)
                if d_dir is not None:
                    os.mkdir(name, 0o700, dir_fd=d_dir)
                    _keep(d_dir, name, st)
            elif kind == stat.S_IFREG and (first := linked.first_copy(st)) is not None:
                if d_dir is not None:  # linked before it is counted off, which may close the first copy
                    os.link(f"/proc/self/fd/{first}", name, dst_dir_fd=d_dir, follow_symlinks=True)
                linked.count_off(st)
            elif d_dir is None:
                if kind == stat.S_IFREG and st.st_nlink > 1:
                    linked.add(st, -1)
            elif kind == stat.S_IFREG:
                out = _copy_file(s_dir, d_dir, name, st)
                _keep(out, None, st)
                if st.st_nlink > 1:
                    linked.add(st, out)
                else:
                    os.close(out)
            elif kind == stat.S_IFLNK:
                os.symlink(os.readlink(name, dir_fd=s_dir), name, dir_fd=d_dir)
                _keep(d_dir, name, st)
            elif kind == stat.S_IFIFO:
                os.mkfifo(name, 0o600, dir_fd=d_dir)
                _keep(d_dir, name, st)
    return folders, met


def _copy_file(s_dir: int, d_dir: int, name: str, st: os.stat_result) -> int:
    """Copy the regular file ``name`` between the two folders, its data extents only; the new file, open.
    It has its owner from the start: a copy cut short leaves no file of root's for the bot."""
    inp = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=s_dir)
    try:
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=d_dir)
        os.fchown(out, st.st_uid, st.st_gid)
        size, at = os.fstat(inp).st_size, 0
        while at < size:
            try:
                at = os.lseek(inp, at, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:  # only a hole is left
                    break
                raise
            end = os.lseek(inp, at, os.SEEK_HOLE)
            while at < end:
                chunk = os.pread(inp, min(CHUNK, end - at), at)
                if not chunk:
                    break
                at += os.pwrite(out, chunk, at)
        os.ftruncate(out, size)
        return out
    finally:
        os.close(inp)


def _keep(fd: int, name: str | None, st: os.stat_result) -> None:
    """Give the copy (open as ``fd``, or ``name`` in the folder ``fd``, a link's not followed) the
    original's owner, mode (without set-user and set-group bits: the volume is ``nosuid``, the host
    folder is not) and times."""
    times = (st.st_atime_ns, st.st_mtime_ns)
    mode = stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)
    if name is None:
        os.fchown(fd, st.st_uid, st.st_gid)
        os.fchmod(fd, mode)
        os.utime(fd, ns=times)
        return
    os.chown(name, st.st_uid, st.st_gid, dir_fd=fd, follow_symlinks=False)
    if not stat.S_ISLNK(st.st_mode):  # a link has no mode of its own (and fchmodat cannot skip one)
        os.chmod(name, mode, dir_fd=fd)
    os.utime(name, ns=times, dir_fd=fd, follow_symlinks=False)


def empty(fd: int) -> None:
    """Remove everything in the folder open as ``fd`` (a partial copy of an earlier interrupted
    copy-back), links removed, never followed, holding only the folder it is in (as ``copy_tree``)."""
    here = _Place(fd, None)
    down: list[tuple[str, tuple[tuple[int, int], ...]]] = []  # the folders entered: name, the inode above
    try:
        while True:
            below = None
            with os.scandir(here.src) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        below = entry.name
                        break
                    os.unlink(entry.name, dir_fd=here.src)
            if below is not None:
                down.append((below, here.inodes()))
                here.step(below)
            elif down:
                name, inodes = down.pop()
                here.step("..")
                if here.inodes() != inodes:
                    raise OSError(errno.ESTALE, "a folder changed while it was emptied")
                os.rmdir(name, dir_fd=here.src)
            else:
                return
    finally:
        here.close()
