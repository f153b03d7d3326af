"""The ``[[bots]]`` tables of a tournament file, and ``[limits]``: what an entrant writes (its
command, ``cwd``, ``env``, ``data`` folder, limits), each string checked before anything runs.

Where a path may point (no link, nothing of the organiser's, inside the bot's own folder) is asked
of ``arena.referee.datafolder`` and ``launch``, which check it again at each start; what one bot's
folders may not share with the others' is ``config_paths``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from arena.referee import datafolder
from arena.referee.sandbox import odd_file
from arena.settings import TRANSPORTS, BotSpec, Limits, command_problem, env_problem
from arena.tournament.config_checker import MISSING, Checker, describe
from arena.tournament.toml_lines import Part

# A bot table's keys: BotSpec's fields, then the two the file adds (ship: config_executor; remote:
# a bot that connects by itself, its command ``remote:NAME``).
BOT_KEYS = tuple(f.name for f in fields(BotSpec)) + ("ship", "remote")
LIMIT_KEYS = tuple(f.name for f in fields(Limits))
# The most a bot's own `limits` may ask when the tournament's [limits] does not say (an entrant
# writes its own entry: without a ceiling it could give itself the machine).  [limits] raises them.
LIMIT_CEILINGS = {"memory_mb": 4096, "processes": 256, "data_mb": 1024}


def limits_table(c: Checker, data: dict[str, Any]) -> Limits:
    """The tournament's ``[limits]``: every bot's default, and the ceiling of what its own asks."""
    lim = c.table(data, "limits", ())
    c.unknown_keys(lim, LIMIT_KEYS, ("limits",))
    return Limits(**{k: c.integer(lim, k, ("limits",), default=None, minimum=1) for k in LIMIT_KEYS})


def bot_limits(c: Checker, lim: Mapping[str, Any], path: tuple[Part, ...], top: Limits) -> Limits:
    """A bot's own ``limits``, each at most the tournament's ceiling (``top``), the tournament's where unset."""
    values: dict[str, int | None] = {}
    for k in LIMIT_KEYS:
        v = c.integer(lim, k, path, default=None, minimum=1)
        ceiling = getattr(top, k) or LIMIT_CEILINGS.get(k)
        if v is not None and ceiling is not None and v > ceiling:
            c.err(path + (k,), f"expected at most {ceiling}, the tournament's ceiling (the organiser may "
                               f"raise it with [limits] {k} = N), got {v}")
        values[k] = v if v is not None else getattr(top, k)
    return Limits(**values)


def bots(c: Checker, data: dict[str, Any], base_dir: Path, bundled: frozenset[str], check_commands: bool,
         top: Limits) -> tuple[BotSpec, ...] | None:
    """Every ``[[bots]]`` entry (None on any problem of theirs); ``top`` is the tournament's ``[limits]``."""
    raw = data.get("bots", MISSING)
    if raw is MISSING:
        c.err(("bots",), "missing; expected at least two [[bots]] tables")
        return None
    if not isinstance(raw, list) or not all(isinstance(b, dict) for b in raw):
        c.err(("bots",), "expected an array of tables ([[bots]] entries)")
        return None
    if len(raw) < 2:
        c.err(("bots",), f"expected at least two [[bots]] tables, got {len(raw)}")
    before = len(c.errors)
    out: list[BotSpec] = []
    seen: dict[str, int] = {}
    sandboxed = data.get("sandbox", True) is not False  # without a sandbox a bot sees the machine anyway
    for i, b in enumerate(raw):
        path: tuple[Part, ...] = ("bots", i)
        c.unknown_keys(b, BOT_KEYS, path)
        name = c.string(b, "name", path)
        if name is not None:
            if name in seen:
                c.err(path + ("name",), f"expected a unique bot name; {name!r} is already bots[{seen[name]}]")
            seen.setdefault(name, i)
        remote = c.boolean(b, "remote", path, default=False)
        if remote and "command" in b:
            c.err(path + ("remote",), "expected either remote = true or a command, not both")
        command = f"remote:{name}" if remote and name is not None else c.string(b, "command", path)
        cwd = _cwd(c, b.get("cwd"), path, base_dir, sandboxed, check_commands)
        env = c.table(b, "env", path)
        for k, v in env.items():
            problem = env_problem(k, v) if isinstance(v, str) else f"expected a string value, got {describe(v)}"
            if problem:
                c.err(path + ("env", k), problem)
        if command is not None and check_commands and not command.startswith("remote:"):
            strings = {k: v for k, v in env.items() if isinstance(v, str)}
            if (problem := _command(command, base_dir, cwd, strings, bundled, sandboxed)) is not None:
                c.err(path + ("command",), problem)
        transport = c.string(b, "transport", path, default=BotSpec.transport, choices=TRANSPORTS)
        bot_data = _data(c, b.get("data"), path, base_dir)
        if cwd is not None and check_commands and (base_dir / cwd).is_dir():
            odd = odd_file(base_dir / cwd, skip=[base_dir / bot_data] if bot_data else [])
            if odd is not None:
                c.err(path + ("cwd",), f"{str(odd[0])!r} is a {odd[1]}, not a file or folder; a bot's folder may "
                                       "hold only files and folders (reading it would hang): remove it")
        lim = c.table(b, "limits", path)
        c.unknown_keys(lim, LIMIT_KEYS, path + ("limits",))
        limits = bot_limits(c, lim, path + ("limits",), top)
        if len(c.errors) == before:
            out.append(BotSpec(name=name, command=command, cwd=cwd, env=dict(env), transport=transport,
                               limits=limits, data=bot_data))
    return tuple(out) if len(c.errors) == before else None


def _cwd(c: Checker, cwd: object, path: tuple[Part, ...], base_dir: Path, sandboxed: bool,
         check_commands: bool) -> str | None:
    """A bot's ``cwd`` (all its sandbox shows of the tournament), or None when absent or refused."""
    if cwd is None:
        return None
    if not isinstance(cwd, str) or not cwd or "\0" in cwd:
        c.err(path + ("cwd",), f"expected a folder path, got {describe(cwd)}")
    elif sandboxed and (problem := datafolder.path_problem(cwd)) is not None:
        c.err(path + ("cwd",), problem.replace("a folder path", "the bot's folder path", 1).replace(
            "a bot's data folder", "a bot's folder"))
    elif sandboxed and (link := datafolder.link_on_way(base_dir, cwd)) is not None:
        c.err(path + ("cwd",), f"expected a folder of the bot's own; {str(link)!r} is a symbolic link "
                               "(the sandbox would show the bot wherever it points)")
    elif check_commands and not (base_dir / cwd).is_dir():
        c.err(path + ("cwd",), f"expected an existing folder; {str(base_dir / cwd)!r} is not one")
    else:
        return cwd
    return None


def _data(c: Checker, bot_data: object, path: tuple[Part, ...], base_dir: Path) -> str | None:
    """A bot's ``data`` folder (the one it may write), or None when absent or refused."""
    if bot_data is None:
        return None
    if not isinstance(bot_data, str) or not bot_data:
        c.err(path + ("data",), f"expected a folder path, got {describe(bot_data)}")
    elif (problem := datafolder.path_problem(bot_data)) is not None:
        c.err(path + ("data",), problem)
    elif (link := datafolder.link_on_way(base_dir, bot_data)) is not None:
        c.err(path + ("data",), f"expected a folder of the bot's own; {str(link)!r} is a symbolic link "
                                "(the bot could write wherever it points)")
    elif (base_dir / bot_data).exists() and not (base_dir / bot_data).is_dir():
        c.err(path + ("data",), f"expected a folder; {str(base_dir / bot_data)!r} is not one")
    else:
        return bot_data
    return None


def _command(command: str, base_dir: Path, cwd: str | None, env: dict[str, str], bundled: frozenset[str],
             sandboxed: bool) -> str | None:
    """Why a bot's command would not start, or not find its program in its sandbox, or None."""
    problem = command_problem(command, base_dir / cwd if cwd else base_dir, env, bundled)
    if problem is None and cwd and sandboxed:
        problem = _outside_folder(command, base_dir / cwd, env)
    if problem is None and not cwd and sandboxed and command.split()[0] not in bundled:
        from arena.referee.launch import command_line
        from arena.referee.program import script_problem

        problem = script_problem(command_line(command))
    return problem


def _outside_folder(command: str, folder: Path, env: Mapping[str, str]) -> str | None:
    """Why the sandbox would not show a bot the program its command runs (a file outside its ``cwd``
    folder, the system folders and the Python we run under), or None."""
    import sys

    from arena.settings import program_file

    program = program_file(command, folder, env)
    if program is None:
        return None
    real = program.resolve()
    shown = [folder.resolve(), Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path("/usr"), Path("/etc"),
             *(Path(p).resolve() for p in os.environ.get("PATH", "").split(os.pathsep) if p.startswith("/"))]
    named = Path(os.path.normpath(os.path.abspath(program)))
    if any(real.is_relative_to(d) for d in shown) or any(named.is_relative_to(d) for d in shown):
        return None
    return (f"runs {str(program)!r}, outside the bot's folder {str(folder)!r}: the sandbox shows a bot only its "
            "own folder (cwd), so the bot would not find it; move it into that folder")
