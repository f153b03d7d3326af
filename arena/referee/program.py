"""What a bot's command line runs, as the sandbox must know it: the one program file it names (an
executable given as a path, or an interpreter's script), whether anyone may read it, and why a
command line would name more into the view than its program.  Conservative on purpose: an option
that could hide a file name is never guessed at."""

from __future__ import annotations

import os
from pathlib import Path

# Programs whose first word that is not an option names the script they run (not data of theirs).
INTERPRETERS = ("python", "pypy", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "luajit",
                "java", "Rscript", "julia", "sh", "bash", "dash", "zsh", "tclsh", "guile", "racket", "elixir")


def program_file(program: list[str], cwd: Path) -> Path | None:
    """The one file a bot's command runs: its executable when named as a path, else the script of its
    interpreter (the first word after it that is not an option); None when that is no regular file
    of a folder other than the system's (or is a link).  No other word of the line is a program."""
    from arena.referee import sandbox as sb

    if not program:
        return None
    word = program[0]
    if not _is_interpreter(word):
        own = sb.program_folders([word], cwd, files=True) if "/" in word else []
        return own[0] if own else None  # an executable of the bot's
    at = script_index(program)
    if at is None:
        return None  # code on the command line (python -c, perl -e, python -m), or an option we cannot read
    found = sb.program_folders([program[at]], cwd, files=True)
    return found[0] if found else None


# Options that take no argument and may come between an interpreter and its script.  Any other
# option could hide a file name (python3 -W FILE -c CODE binds FILE), so it is not guessed at.
FLAG_OPTIONS = frozenset({"-u", "-B", "-O", "-OO", "-s", "-S", "-E", "-I", "-q", "-b", "-bb", "-P", "-w"})


def _is_interpreter(word: str) -> bool:
    return os.path.basename(word).rstrip("0123456789.") in INTERPRETERS


def _first_option(program: list[str]) -> tuple[int, str] | None:
    """The first word after the interpreter that is not an argument-less flag, with its place."""
    return next(((i, w) for i, w in enumerate(program[1:], start=1) if w not in FLAG_OPTIONS), None)


def script_index(program: list[str]) -> int | None:
    """Where the script is in an interpreter's command line: the first word after the interpreter
    and its argument-less flags (``FLAG_OPTIONS``), or None when code is given inline or another
    option comes first."""
    first = _first_option(program)
    return first[0] if first and not first[1].startswith("-") else None


def script_problem(program: list[str]) -> str | None:
    """Why a sandboxed bot without ``cwd`` cannot be shown its program by its command line alone
    (an option before the script could name any file into its view), or None."""
    if not program or not _is_interpreter(program[0]):
        return None
    first = _first_option(program)
    if first is None or not first[1].startswith("-") or first[1] in ("-c", "-e", "-m"):
        return None  # a script right after the flags, or inline code: no other file is shown
    word = first[1]
    return (f"a bot without cwd may put only argument-less flags ({' '.join(sorted(FLAG_OPTIONS))}) before its "
            f"script; {word!r} is not one: give the bot a cwd (its folder) instead")


def world_readable(path: Path, folder: Path) -> bool:
    """Whether any user of the machine may read ``path`` (mode o+r, and directly in ``folder`` or
    with every folder above it passable by anyone): a command line names no private file into the view."""
    try:
        if path.stat().st_mode & 0o004 == 0:
            return False
        return path.parent == folder or all(p.stat().st_mode & 0o001 for p in path.parents)
    except OSError:
        return False


def check_readable(paths: list[Path]) -> None:
    """A bot running as a user of its own must be able to read its program: say which file it cannot."""
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if mode & 0o004 == 0:
            raise ValueError(f"the bot runs as an unprivileged user of its own, which cannot read {str(path)!r} "
                             f"(mode {mode & 0o777:o}); make it readable: chmod o+r {str(path)!r}")
