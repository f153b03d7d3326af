"""The places a tournament file names and how they may meet: the results folder (``output``: it
can be written and holds nothing of the organiser's), the deal suite (``deals``), and each bot's
``cwd`` and ``data`` against everything that is not that bot's (the relations are
``arena.referee.datafolder``'s, which ``launch`` asks again at each start)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import arena.settings as _settings
from arena.referee import datafolder
from arena.settings import BotSpec
from arena.tournament.config_checker import MISSING, Checker, describe
from arena.tournament.deals import DealSuiteError, fingerprint, read_suite
from arena.tournament.model import RESOLVED_FILE


def output_problem(folder: str | Path) -> str | None:
    """Why a results folder could not be created or written at ``folder``, or None (nothing is created)."""
    text = str(folder)
    if "\0" in text:
        return "expected a folder path without NUL characters"
    path = Path(os.path.abspath(text))
    if path.exists() and not path.is_dir():
        return f"the results folder {text!r} exists and is not a folder"
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"the results folder {text!r} cannot be created: {str(existing)!r} is not a folder"
    try:
        fs = os.statvfs(existing)
    except OSError as e:
        return f"the results folder {text!r} cannot be created: {e.strerror}"
    if fs.f_flag & os.ST_RDONLY:
        return f"the results folder {text!r} cannot be written: {str(existing)!r} is on a read-only filesystem"
    if fs.f_blocks == 0:
        return f"the results folder {text!r} cannot be written: {str(existing)!r} is on a filesystem that stores no files"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"the results folder {text!r} cannot be written: no permission to write in {str(existing)!r}"
    return None


def output_overlap(c: Checker, output: Path, base_dir: Path) -> str | None:
    """Why ``output`` may not be the results folder (it is or holds the tournament's folder or
    file: the run makes it private and writes over what is there), or None."""
    for what, path in (("the tournament's folder", base_dir),
                       *([("the tournament file", Path(os.path.abspath(c.file)))] if c.file else [])):
        how = datafolder.relation(output, path)
        if what == "the tournament file" and path.name == RESOLVED_FILE and how == "holds" \
                and os.path.abspath(path.parent) == os.path.abspath(output):
            continue  # the results folder's own resolved copy (read_resolved)
        if how in ("is", "holds"):
            return (f"expected a results folder of its own; {str(output)!r} {how} {what} {str(path)!r} "
                    "(the run would make it private and write over its files)")
    return None


def cwd_collisions(c: Checker, bots: tuple[BotSpec, ...], base_dir: Path, output: Path, deals: str | None) -> None:
    """Each bot's ``cwd`` (all its sandbox shows of the tournament) against what is not the bot's:
    it may not be, hold or lie in the results folder, nor be or hold the tournament file, the deal
    suite, another bot's data or program, or be inside or hold another bot's ``cwd`` (bots sharing
    one ``cwd`` see each other's files: that is the organiser's choice)."""
    memo: dict[str, tuple[str, ...]] = {}
    for i, b in enumerate(bots):
        if b.cwd is None:
            continue
        folder = b.workdir(base_dir)
        named: list[tuple[str, Path, tuple[str, ...]]] = [
            ("the results folder (output)", output, ("is", "holds", "is inside"))]
        if c.file:
            named.append(("the tournament file", Path(os.path.abspath(c.file)), ("is", "holds")))
        if deals:
            named.append(("the deal suite (deals)", Path(deals), ("is", "holds")))
        for j, other in enumerate(bots):
            if j == i:
                continue
            if (theirs := other.datadir(base_dir)) is not None:
                named.append((f"bots[{j}].data, the data folder of {other.name}", theirs, ("is", "holds")))
            if other.cwd is not None:
                named.append((f"bots[{j}].cwd, the folder of {other.name}", other.workdir(base_dir),
                              ("is inside", "holds")))
            elif not other.remote and not other.is_bundled() and (program := _settings.program_file(
                    other.command, other.workdir(base_dir), other.env)) is not None:
                named.append((f"the program of bots[{j}] ({other.name})", program, ("is", "holds")))
        for what, path, refused in named:
            how = datafolder.relation(folder, path, memo)
            if how in refused:
                c.err(("bots", i, "cwd"), f"expected a folder of the bot's own; {b.cwd!r} {how} {what} "
                                          f"{str(path)!r} (the bot would see it)")
                break


def data_collisions(c: Checker, bots: tuple[BotSpec, ...], base_dir: Path, output: Path, deals: str | None) -> None:
    """Each bot's ``data`` against what else the tournament names: no results folder, tournament
    file, deal suite, other bot's folder or data, nor any bot's program in or around it."""
    named: list[tuple[str, Path]] = [("the results folder (output)", output)]
    if c.file:
        named.append(("the tournament file", Path(os.path.abspath(c.file))))
    if deals:
        named.append(("the deal suite (deals)", Path(deals)))
    programs: list[tuple[str, Path]] = []
    for j, other in enumerate(bots):
        program = None if other.remote or other.is_bundled() else \
            _settings.program_file(other.command, other.workdir(base_dir), other.env)
        if program is not None:
            programs.append((f"the program of bots[{j}] ({other.name})", program))
    memo: dict[str, tuple[str, ...]] = {}
    for i, b in enumerate(bots):
        folder = b.datadir(base_dir)
        if folder is None:
            continue
        forbidden = list(named)
        for j, other in enumerate(bots):
            if j != i and other.cwd is not None:
                forbidden.append((f"bots[{j}].cwd, the folder of {other.name}", other.workdir(base_dir)))
            if j != i and (theirs := other.datadir(base_dir)) is not None:
                forbidden.append((f"bots[{j}].data, the data folder of {other.name}", theirs))
        why = datafolder.collision(folder, forbidden + programs, own=[b.workdir(base_dir)], memo=memo) \
            or datafolder.existing_problem(folder)  # what it is: an organiser's folder is never a bot's
        if why is not None:
            c.err(("bots", i, "data"), f"expected a folder of the bot's own; {b.data!r} {why}")


def deals(c: Checker, data: dict[str, Any], base_dir: Path) -> tuple[str | None, bytes | None]:
    """``deals``: a deal suite's path (made by the first run if missing) and its bytes if it exists;
    ``deals_id`` (the resolved copy's) must name that suite."""
    raw, claimed = data.get("deals", MISSING), data.get("deals_id", MISSING)
    if raw is MISSING:
        if claimed is not MISSING:
            c.err(("deals_id",), "is written by arena run beside deals = PATH only: leave it out")
        return None, None
    if not isinstance(raw, str) or not raw or "\0" in raw:
        c.err(("deals",), f"expected the path of a deal suite file, got {describe(raw)}")
        return None, None
    path = Path(os.path.abspath(base_dir / raw))
    if path.exists() and not path.is_file():
        c.err(("deals",), f"expected a deal suite file; {str(path)!r} is not a file")
        return None, None
    suite = None
    if path.exists():
        try:
            suite = read_suite(path)
        except DealSuiteError as e:
            c.err(("deals",), str(e))
            return None, None
    if claimed is not MISSING and (suite is None or fingerprint(suite) != claimed):
        c.err(("deals",), f"{path} is not the deal suite this results folder was dealt with (deals_id "
                          f"{claimed}): put that file back, or start a new folder")
    return str(path), suite
