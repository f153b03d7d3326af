"""The door of a ladder: a submitted bot folder is copied, fingerprinted, checked, then entered or refused.

A submission is a folder holding the bot's files and ``bot.toml`` (``command = "python3 bot.py"``,
optional ``transport = "zmq" | "tcp" | "stdio"``), given to ``arena ladder submit DIR FOLDER --name
NAME`` or dropped in ``DIR/inbox/NAME/`` (taken by ``arena ladder run`` once it has not changed for
``INBOX_QUIET_S``).  In order:

1. the name is checked and the ladder must be open (not frozen, no final);
2. the folder is walked without following links: a link, a named pipe, socket or device, more than
   ``max_files`` files or more than ``max_submission_mb`` MiB refuses it, with one sentence;
3. it is copied to ``entrants/NAME/vN/bot/`` (files only, made read-only: the entrant cannot
   change it afterwards) and fingerprinted (``arena.tournament.fingerprints``);
4. ``arena check-bot`` runs on the copy in its sandbox with the ladder's variant, rules, clock and
   limits (``door_check``), in a child process of its own group (killed with everything it started
   on every path); its report goes to ``entrants/NAME/vN/check.txt``, which the entrant may read;
5. passed: the version is entered ``active`` and the entrant's previous active version ``retired``
   (it keeps its games and its rating history); failed: the version is ``refused`` with the first
   failing check as its reason, and the previous version plays on.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.ladder import settings as ladder_settings
from arena.ladder.layout import (
    CHECK_FILE,
    INBOX,
    LadderError,
    bot_id,
    locked,
    name_problem,
    registry,
    require_ladder,
    save_registry,
    state,
    version_dir,
)
from arena.settings import TRANSPORTS, BotSpec
from arena.tournament.fingerprints import of_bot

MANIFEST = "bot.toml"
CHECK_TIMEOUT_S = 600
INBOX_QUIET_S = 2.0


@dataclass(frozen=True)
class Outcome:
    entrant: str
    version: int
    accepted: bool
    reason: str | None      # why it was refused (the first failing check), None when accepted
    report: str             # the check's report, relative to the ladder (entrants/NAME/vN/check.txt)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _age_s(stamp: str | None) -> float:
    try:
        return (dt.datetime.now(dt.UTC) - dt.datetime.fromisoformat(stamp or "")).total_seconds()
    except ValueError:
        return float("inf")


def _walk(src: Path, max_files: int, max_bytes: int) -> list[tuple[Path, bool]]:
    """(relative path, is a folder) of everything under ``src``; LadderError for anything refused."""
    out: list[tuple[Path, bool]] = []
    total = 0
    for here, dirs, files in os.walk(src, followlinks=False):
        base = Path(here)
        dirs.sort()
        for name in [*sorted(dirs), *sorted(files)]:
            path = base / name
            rel = path.relative_to(src)
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise LadderError(f"{rel} in the submitted folder is a link; submit plain files and folders only")
            if stat.S_ISDIR(mode):
                out.append((rel, True))
                continue
            if not stat.S_ISREG(mode):
                kind = ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file")
                raise LadderError(f"{rel} in the submitted folder is {kind}; submit plain files and folders only")
            total += path.lstat().st_size
            out.append((rel, False))
            if sum(1 for _, d in out if not d) > max_files:
                raise LadderError(f"the submitted folder holds more than {max_files} files (max_files)")
            if total > max_bytes:
                raise LadderError(f"the submitted folder is larger than {max_bytes >> 20} MiB (max_submission_mb)")
    return out


def _open_below(src: Path, rel: Path) -> int:
    """``src/rel`` opened one name at a time, each with ``O_NOFOLLOW`` (folders ``O_DIRECTORY``): a
    folder swapped for a link after the walk is refused, never followed (root would copy its target)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(src, flags | os.O_DIRECTORY)
        for name in rel.parts[:-1]:
            try:
                child = os.open(name, flags | os.O_DIRECTORY, dir_fd=fd)
            finally:
                os.close(fd)
            fd = child
        try:
            return os.open(rel.parts[-1], flags | os.O_NONBLOCK, dir_fd=fd)
        finally:
            os.close(fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LadderError(f"{rel} in the submitted folder changed to a link while it was copied; submit "
                              "plain files and folders only") from None
        raise


def _copy(src: Path, items: list[tuple[Path, bool]], dest: Path) -> None:
    dest.mkdir(parents=True)
    for rel, is_dir in items:
        if is_dir:
            (dest / rel).mkdir()
    for rel, is_dir in items:
        if not is_dir:
            fd = _open_below(src, rel)
            with os.fdopen(fd, "rb") as fin, open(dest / rel, "wb") as fout:
                mode = os.fstat(fin.fileno()).st_mode
                if not stat.S_ISREG(mode):
                    raise LadderError(f"{rel} in the submitted folder changed while it was copied; submit it again")
                shutil.copyfileobj(fin, fout)
            os.chmod(dest / rel, 0o555 if mode & stat.S_IXUSR else 0o444)
    for rel, is_dir in sorted(items, key=lambda x: -len(x[0].parts)):
        if is_dir:
            os.chmod(dest / rel, 0o555)
    os.chmod(dest, 0o555)


def read_manifest(folder: Path) -> tuple[str, str]:
    """(command, transport) from the folder's ``bot.toml``; LadderError naming the problem."""
    path = folder / MANIFEST
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LadderError(f"the submitted folder has no {MANIFEST}; add one with command = \"python3 bot.py\" "
                          "(and transport = \"stdio\" for a stdio bot)") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise LadderError(f"{MANIFEST} of the submitted folder cannot be read: {e}") from None
    command, transport = data.get("command"), data.get("transport", "zmq")
    if not isinstance(command, str) or not command.strip() or "\0" in command or command.startswith("remote:"):
        raise LadderError(f"{MANIFEST}: command: expected the command line that starts the bot, e.g. \"python3 bot.py\"")
    if transport not in TRANSPORTS:
        raise LadderError(f"{MANIFEST}: transport: expected one of {', '.join(TRANSPORTS)}, got {transport!r}")
    unknown = sorted(set(data) - {"command", "transport"})
    if unknown:
        raise LadderError(f"{MANIFEST}: unknown key {unknown[0]!r} (expected command, transport)")
    return command, transport


def fingerprint(root: Path, entrant: str, version: int, command: str) -> str:
    """One digest of the version's command line and its folder's files."""
    rel = version_dir(root, entrant, version).relative_to(root) / "bot"
    fp = of_bot(BotSpec(name=bot_id(entrant, version), command=command, cwd=str(rel)), root)
    return hashlib.sha256(f"{fp.command}:{fp.program}".encode()).hexdigest()[:32]


def run_check(root: Path, folder: Path, command: str, transport: str, report: Path) -> tuple[bool, str | None]:
    """check-bot on the copy under the ladder's settings (``door_check``, in its own process group, killed on
    every exit path); (passed, the failure to show: the ladder limit it went over, else the first FAIL)."""
    args = [sys.executable, "-m", "arena.ladder.door_check", str(root.resolve()), transport, command]
    # the check runs in the copy's folder, so the arena package is found by path, not by the working directory
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        *filter(None, [os.environ.get("PYTHONPATH")])]))
    code: int | None = None
    with open(report, "wb") as out:
        proc = subprocess.Popen(args, cwd=folder, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env)
        try:
            code = proc.wait(timeout=CHECK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            out.write(f"\nFAIL check: did not finish within {CHECK_TIMEOUT_S} s\n".encode())
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the check, or anything it left in its group
            except ProcessLookupError:
                pass
            proc.wait()
    text = _scrubbed(report, folder)
    if code == 0:
        return True, None
    fails = [line for line in text.splitlines() if line.startswith("FAIL ")]
    first = next((line for line in fails if line.startswith("FAIL ladder limits")), fails[0] if fails else None)
    if first is None:
        first = next((line for line in reversed(text.splitlines()) if line.strip()), f"check-bot exit code {code}")
    return False, first[:500]


_CHECK_LOGS = re.compile(r"/[^\s()'\"]*arena-check-[^\s()'\";]*")


def _scrubbed(report: Path, folder: Path) -> str:
    """The report without host paths (the check's log folder, the copy's place): the entrant reads it.
    The bot's own log of a failed check is kept beside it (``check-log.txt``), the folder removed."""
    text = report.read_text(encoding="utf-8", errors="replace")
    logs = {m.group(0).split("/session")[0].split("/version")[0] for m in _CHECK_LOGS.finditer(text)}
    for log_dir in logs:
        own = sorted(Path(log_dir).glob("session/*.log"))
        own = [p for p in own if not p.name.startswith("greedy")]
        if own:
            with open(own[0], "rb") as f:
                (report.parent / "check-log.txt").write_bytes(f.read(1 << 20))
        if Path(log_dir).name.startswith("arena-check-"):
            shutil.rmtree(log_dir, ignore_errors=True)
    text = _CHECK_LOGS.sub("check-log.txt", text).replace(str(folder), ".")
    report.write_text(text, encoding="utf-8")
    return text


def submit(root: Path, src: Path, name: str) -> Outcome:
    """Enter ``src`` as ``name``'s next version (or refuse it); LadderError (one sentence) for a bad request."""
    require_ladder(root)
    if (why := name_problem(name)) is not None:
        raise LadderError(why)
    s = ladder_settings.load(root)
    if state(root) != "open":
        raise LadderError(f"the ladder is {state(root)}: it takes no more submissions")
    if not src.is_dir() or src.is_symlink():
        raise LadderError(f"{src} is not a folder; submit the folder that holds the bot and its {MANIFEST}")
    items = _walk(src, s.max_files, s.max_submission_mb << 20)
    command, transport = read_manifest(src)
    with locked(root):
        entrants = registry(root)
        versions = entrants.setdefault(name, [])
        for v in versions:  # a submission killed during its check (kill -9) is refused, not left checking
            if v["status"] == "checking" and _age_s(v.get("submitted")) > CHECK_TIMEOUT_S + 60:
                v.update(status="refused", reason="the check was interrupted")
        version = len(versions) + 1
        vdir = version_dir(root, name, version)
        if vdir.exists():  # a copy an interrupted submission left: never entered, so replaced
            _remove(vdir)
        try:
            _copy(src, items, vdir / "bot")
        except LadderError:
            _remove(vdir)
            raise
        except OSError as e:
            _remove(vdir)
            raise LadderError(f"cannot copy the submitted folder: {e.filename}: {e.strerror}") from None
        versions.append({"version": version, "submitted": _now(), "fingerprint": "", "status": "checking",
                         "reason": None, "command": command, "transport": transport})
        save_registry(root, entrants)
    fp = fingerprint(root, name, version, command)
    report = vdir / CHECK_FILE
    try:
        if s.check:
            ok, reason = run_check(root, vdir / "bot", command, transport, report)
        else:
            report.write_text("check-bot not run (check = false in ladder.toml)\n", encoding="utf-8")
            ok, reason = True, None
    finally:
        with locked(root):
            entrants = registry(root)
            mine = entrants[name]
            entry = next(v for v in mine if v["version"] == version)
            if entry["status"] == "checking":  # interrupted: refused, so no version is left half-entered
                entry.update(status="refused", reason="the check was interrupted", fingerprint=fp)
            save_registry(root, entrants)
    with locked(root):
        entrants = registry(root)
        mine = entrants[name]
        entry = next(v for v in mine if v["version"] == version)
        same = next((v for v in mine if v["status"] == "active" and v.get("fingerprint") == fp), None)
        if ok and same is not None:
            ok, reason = False, f"the same files and command as version {same['version']}, which plays already"
        if ok:
            for v in mine:
                if v["status"] == "active":
                    v["status"], v["reason"] = "retired", f"replaced by version {version}"
        entry.update(status="active" if ok else "refused", reason=reason, fingerprint=fp)
        save_registry(root, entrants)
    return Outcome(name, version, ok, reason, report.relative_to(root).as_posix())


def _remove(path: Path) -> None:
    for here, dirs, _files in os.walk(path):
        for d in dirs:
            os.chmod(Path(here) / d, 0o755)
    if path.exists():
        os.chmod(path, 0o755)
    shutil.rmtree(path, ignore_errors=True)


def inbox_ready(root: Path, quiet_s: float = INBOX_QUIET_S) -> list[Path]:
    """The inbox folders ready to take: holding a ``bot.toml``, unchanged for ``quiet_s``."""
    inbox = root / INBOX
    if not inbox.is_dir():
        return []
    ready = []
    now = time.time()
    for folder in sorted(inbox.iterdir()):
        if folder.name.startswith(".") or folder.is_symlink() or not folder.is_dir():
            continue
        if not (folder / MANIFEST).is_file():
            continue
        newest = _newest(folder, now)
        if now - newest >= quiet_s:
            ready.append(folder)
    return ready


def _newest(folder: Path, now: float) -> float:
    """The latest change under ``folder``, links not followed (a link to / would walk the machine)."""
    newest = folder.lstat().st_mtime
    for here, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            try:
                newest = max(newest, (Path(here) / name).lstat().st_mtime)
            except OSError:
                return now  # changing as we look: not quiet
    return newest


def take_inbox(root: Path, quiet_s: float = INBOX_QUIET_S, log: Any = None) -> list[Outcome | str]:
    """Submit every ready inbox folder as its folder's name, then remove it; a refusal at the door is
    written to ``inbox/NAME.refused.txt`` (the entrant's to read) and returned as its sentence."""
    done: list[Outcome | str] = []
    for folder in inbox_ready(root, quiet_s):
        name = folder.name
        note = root / INBOX / f"{name}.refused.txt"
        try:
            outcome: Outcome | str = submit(root, folder, name)
            note.unlink(missing_ok=True)
        except LadderError as e:
            outcome = f"inbox/{name}: {e}"
            note.write_text(f"{e}\n", encoding="utf-8")
        _remove(folder)
        done.append(outcome)
        if log is not None:
            log(outcome)
    return done
