"""A bot's data folder: where it may be, and opening it so that what is checked is what is bound.

A tournament file's ``data`` (``path_problem``) is a path relative to the tournament's folder
(its base), with no ``..`` part, not absolute, without control characters, and not the base
itself.  ``collision`` says what it must not be, hold or lie in: the results folder, the
tournament file, another bot's folders or data, the arena's own install, a system folder
(``config`` checks all of them at ``validate``/``run``; ``launch`` again at every start with
what it knows, since a tournament could reach it another way).

``open_folder`` walks from an anchor (the base, the organiser's) one name at a time with
``O_NOFOLLOW``, making what is missing, never leaving the anchor's file system; the sandbox binds
the descriptor it returns (``bwrap --bind-fd``), so a folder swapped for a link after the check
cannot redirect the bind.

What the folder *is* matters as much as where it lies: ``claim`` accepts it only when the arena
made it (it marks every data folder it makes or takes: an xattr, ``trusted.`` as root so no bot
can forge it, ``user.`` otherwise, a ``.arena-data`` file where xattrs are missing) or when it is
empty, and never when it holds a results folder's ``secret.key``/``journal.jsonl``: an organiser's
existing folder (``.git/hooks``, an old results folder) is never given to a bot, root or not.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

# Never a data folder, nor inside one of these: the machine's own.
SYSTEM = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys",
          "/usr")
# Never a data folder itself (a folder inside them is fine: a tournament lives somewhere).
TOPS = ("/", "/home", "/root", "/tmp", "/var", "/opt", "/srv", "/mnt", "/media")


def path_problem(relative: str) -> str | None:
    """Why ``relative`` (a tournament file's ``data``) is not a folder path inside the tournament's
    folder, in one sentence, or None."""
    if any(ord(c) < 32 or ord(c) == 127 for c in relative):
        return f"expected a folder path without control characters, got {relative!r}"
    if relative.startswith("/"):
        return (f"expected a folder path relative to the tournament's folder, got the absolute path {relative!r} "
                "(a bot's data folder lies inside the tournament's folder)")
    if ".." in relative.split("/"):
        return f"expected a folder path inside the tournament's folder, without '..', got {relative!r}"
    if not names(relative):
        return f"expected a folder inside the tournament's folder, not that folder itself, got {relative!r}"
    dotted = next((n for n in names(relative) if n.startswith(".")), None)
    if dotted is not None:
        return (f"expected folder names that do not start with '.', got {dotted!r} in {relative!r} "
                "(.git, .ssh, .local and the like hold tools' settings, never a bot's)")
    return None


def link_on_way(base_dir: Path, relative: str) -> Path | None:
    """The first symbolic link on the way from ``base_dir`` to ``relative`` (the path a tournament file
    gives a bot's folder or data), or None: a link there is an entrant's to point anywhere."""
    here = base_dir
    for part in Path(relative).parts:
        here = here / part
        if part not in ("/", "..", ".") and here.is_symlink():
            return here
    return None


def names(relative: str) -> list[str]:
    """The folder names of ``relative`` in order (empty and ``.`` parts dropped)."""
    return [p for p in relative.split("/") if p not in ("", ".")]


def _forms(path: Path, memo: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """``path`` by name and where its links lead (remembered in ``memo`` for one check)."""
    key = str(path)
    if key not in memo:
        memo[key] = tuple(dict.fromkeys((os.path.abspath(key), os.path.realpath(key))))
    return memo[key]


def _under(a: str, b: str) -> bool:
    return a.startswith(b if b.endswith("/") else b + "/")


def relation(folder: Path, other: Path, memo: dict[str, tuple[str, ...]] | None = None) -> str | None:
    """How ``folder`` overlaps ``other`` ("is", "is inside", "holds"), by name and by where links
    lead, or None when neither holds the other."""
    memo = {} if memo is None else memo
    mine, theirs = _forms(folder, memo), _forms(other, memo)
    if any(a == b for a in mine for b in theirs):
        return "is"
    for a in mine:
        for b in theirs:
            if _under(a, b):
                return "is inside"
            if _under(b, a):
                return "holds"
    return None


@functools.cache
def installed() -> tuple[tuple[str, Path], ...]:
    """The arena's own code and the Python it runs on: no bot may write there."""
    root = Path(__file__).resolve().parents[2]
    found = [("the arena's code", root / "arena"), ("the client library", root / "protocol"),
             ("the sample bots", root / "sample_bots")]
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix, sys.exec_prefix)):
        found.append(("the Python install", Path(prefix)))
    return tuple(found)


def collision(folder: Path, forbidden: Iterable[tuple[str, Path]], own: Iterable[Path] = (),
              memo: dict[str, tuple[str, ...]] | None = None) -> str | None:
    """Why ``folder`` may not be a bot's data folder, as the end of a sentence, or None: it is, holds
    or lies in one of ``forbidden`` (what, path), a system folder or the arena's install; it may
    lie inside (not be, nor hold) one of ``own`` (the bot's own ``cwd``).  ``memo`` keeps resolved
    paths across the checks of one tournament."""
    memo = {} if memo is None else memo
    for top in TOPS:
        if relation(folder, Path(top), memo) == "is":
            return f"is the machine's {top!r}"
    rank = {"is": 0, "is inside": 1, "holds": 2}  # /usr is /usr before it holds /bin (a link into it)
    systems = sorted(((how, d) for d in SYSTEM if (how := relation(folder, Path(d), memo)) is not None),
                     key=lambda found: rank[found[0]])
    if systems:
        return f"{systems[0][0]} the system folder {systems[0][1]!r}"
    for path in own:
        how = relation(folder, path, memo)
        if how in ("is", "holds"):
            return f"{how} the bot's own folder {str(path)!r} (a data folder may lie inside it, not be or hold it)"
    for what, path in [*forbidden, *installed()]:
        how = relation(folder, path, memo)
        if how is not None:
            return f"{how} {what} {str(path)!r}"
    return None


MARK_FILE = ".arena-data"  # only where the file system has no extended attributes
RESULTS_FILES = ("secret.key", "journal.jsonl")  # a results folder's: never a bot's data


def _mark_name() -> str:
    return "trusted.arena.data" if os.geteuid() == 0 else "user.arena.data"


def marked(fd: int) -> bool:
    """Whether the folder open as ``fd`` is one the arena made or took as a data folder."""
    try:
        return os.getxattr(fd, _mark_name()) == b"1"
    except OSError as e:
        if e.errno not in (errno.ENODATA, errno.ENOTSUP, errno.EPERM):
            raise
    try:
        return stat.S_ISREG(os.stat(MARK_FILE, dir_fd=fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def _mark(fd: int) -> None:
    try:
        os.setxattr(fd, _mark_name(), b"1")
    except OSError as e:
        if e.errno not in (errno.ENOTSUP, errno.EPERM):
            raise
        os.close(os.open(MARK_FILE, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o444, dir_fd=fd))


def claim_problem(fd: int) -> str | None:
    """Why the folder open as ``fd`` may not be a bot's data folder, as the end of a sentence, or
    None: not made by the arena and not empty, or holding a results folder's files."""
    entries = os.listdir(fd)
    held = next((n for n in RESULTS_FILES if n in entries), None)
    if held is not None:
        return f"holds {held!r} (a results folder's); a bot's data folder is a folder of its own"
    if entries and not marked(fd):
        shown = ", ".join(repr(n) for n in sorted(entries)[:3])
        return (f"already holds files ({shown}) and was not made by the arena as a data folder; name a new "
                "or empty folder (the arena makes it and gives it to the bot)")
    return None


def claim(fd: int, where: Path) -> None:
    """Accept the folder open as ``fd`` (at ``where``) as a data folder and mark it, or
    DataFolderError saying why not (``claim_problem``)."""
    why = claim_problem(fd)
    if why is not None:
        raise DataFolderError(f"the bot's data folder {str(where)!r} {why}")
    if not marked(fd):
        _mark(fd)


def existing_problem(folder: Path) -> str | None:
    """``claim_problem`` for ``folder`` if it exists (None when it is missing or not a folder:
    other checks say so), read without following a link at its end."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return claim_problem(fd)
    finally:
        os.close(fd)


def _own_volume(fd: int, here: Path) -> bool:
    """Whether the mount open as ``fd`` is the data folder ``here``'s own volume (``datavolume``)."""
    from arena.referee import datavolume

    return datavolume.is_volume(fd, str(here))


class DataFolderError(ValueError):
    """A data folder that cannot be opened safely (a link, not a folder, another file system)."""


def open_folder(anchor: Path, parts: Sequence[str], take: bool = True) -> int:
    """A descriptor of ``anchor/parts...``: each name opened with ``O_NOFOLLOW`` below the previous
    one and made when missing (0755 on the way, so the seat's user may pass; the folder itself 0700),
    on ``anchor``'s file system only; DataFolderError naming the path when a part is a link, not a
    folder, or a mount, or (``take``) when the folder is not one ``claim`` accepts."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    fd = os.open(anchor, flags)
    device = os.fstat(fd).st_dev
    here = Path(anchor)
    try:
        for i, name in enumerate(parts):
            here = here / name
            try:
                os.mkdir(name, 0o700 if i == len(parts) - 1 else 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                child = os.open(name, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    kind = "a symbolic link" if os.path.islink(here) else "not a folder"
                    raise DataFolderError(f"the bot's data folder {str(here)!r} is {kind}; expected a folder of "
                                          "its own (a link there would give the bot its target)") from None
                raise
            os.close(fd)
            fd = child
            if os.fstat(fd).st_dev != device and not (i == len(parts) - 1 and _own_volume(fd, here)):
                raise DataFolderError(f"the bot's data folder {str(here)!r} is on another file system (a mount) "
                                      f"than {str(anchor)!r}; expected a plain folder")
        if take:
            claim(fd, here)
    except BaseException:
        os.close(fd)
        raise
    return fd
