"""The bots a command names (``play``, ``match``, ``check-bot``): a bot argument as a ``BotSpec``,
unique names, stdio seats, the checks of a command and its folder, the listen address of a remote
seat, the record path, and whether the sandbox can run."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from arena.referee.host import BotHost
    from arena.settings import BotSpec

from arena.cli.app import fail


def _bot_spec(arg: str, index: int, stdio: bool) -> BotSpec:
    from arena.settings import BUNDLED_BOTS, BotSpec, split_transport

    arg, transport = split_transport(arg, stdio)
    name = arg
    if arg.startswith("remote:"):
        name = arg.split(":", 1)[1] or f"remote{index}"
    elif arg not in BUNDLED_BOTS:
        from arena.settings import first_word

        name = Path(first_word(arg)).name if first_word(arg) else f"bot{index}"
        if name in ("python", "python3", "node", "bash", "sh") and len(arg.split()) > 1:
            name = Path(arg.split()[1]).stem
    return BotSpec(name=name, command=arg, transport=transport)


def _unique_names(specs: list[BotSpec]) -> list[BotSpec]:
    from dataclasses import replace

    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        seen[spec.name] = seen.get(spec.name, 0) + 1
        out.append(spec if seen[spec.name] == 1 else replace(spec, name=f"{spec.name}#{seen[spec.name]}"))
    return out


def _stdio_seats(stdio: list[int] | None, seats: int) -> set[int]:
    """The seats named by ``--stdio``, each a seat of this game."""
    for seat in stdio or []:
        if not 0 <= seat < seats:
            fail(f"--stdio {seat}: no such seat; seats are numbered 0 to {seats - 1}")
    return set(stdio or [])


def _check_bot(seat: int, arg: str, spec: BotSpec) -> None:
    """Fail unless the bot of ``seat`` can be started (its program and script exist)."""
    from arena.settings import command_problem

    if spec.remote:
        return
    if not spec.command.strip():
        what = "`stdio:` needs a command after it" if arg.strip().startswith("stdio:") else "the bot command is empty"
        fail(f"seat {seat}: {what}; expected a sample bot ({', '.join(_bundled())}), a command line or remote:NAME")
    problem = command_problem(spec.command, Path.cwd()) or _odd_in_bot_folder(spec.command)
    if problem:
        fail(f"seat {seat}: bot {spec.command!r} cannot be started: {problem}")


def _odd_in_bot_folder(command: str) -> str | None:
    """Why the folder of a typed bot's program cannot be its folder (it holds a named pipe, socket
    or device: SECURITY.md), or None."""
    import shlex

    from arena.referee.sandbox import REPLACED, odd_file, program_folders

    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for folder in dict.fromkeys(program_folders(words, Path.cwd())):
        if folder.resolve() in REPLACED:  # never a bot's folder (the sandbox says so): not walked
            continue
        odd = odd_file(folder)
        if odd is not None:
            return (f"{str(odd[0])!r} in its folder is a {odd[1]}, not a file or folder; a bot's folder may hold "
                    "only files and folders: remove it")
    return None


def _bundled() -> list[str]:
    from arena.settings import BUNDLED_BOTS

    return sorted(BUNDLED_BOTS)


def _check_listen(listen: str | None) -> str | None:
    """``--listen`` as HOST:PORT with PORT from 0 (any free one) to 65535."""
    if listen is None:
        return None
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535 or any(c in host for c in " /\0"):
        fail(f"--listen {listen!r}: expected HOST:PORT (or :PORT) with a port from 0 to 65535, e.g. 0.0.0.0:5555")
    problem = _bind_problem(host.strip("[]") or "127.0.0.1", int(port))  # ":PORT" is loopback (BotHost)
    if problem:
        fail(f"--listen {listen!r}: cannot listen there: {problem}")
    return f"{host}:{int(port)}"


def _bind_problem(host: str, port: int) -> str | None:
    """Why a TCP socket cannot listen on (host, port), or None (the probe socket is closed again)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        return f"unknown host {host!r} ({e})"
    family, kind, proto, _, address = infos[0]
    try:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as e:
        return e.strerror or str(e)
    return None


def _open_host(make: Callable[[], BotHost], listen: str | None) -> BotHost:
    """Build the bot host; an address that cannot be listened on is bad input."""
    import zmq

    try:
        return make()
    except zmq.ZMQError as e:
        fail(f"--listen {listen!r}: cannot listen there: {e.strerror}")
    except OSError as e:
        fail(f"cannot create {e.filename or 'the log folder'}: {e.strerror or e}")


def _check_record_name(path: Path, force: bool = False) -> None:
    """Fail unless a given ``--record`` path names a file in an existing folder and, without
    ``force``, not one that exists (nothing is written: this comes before the sandbox's check)."""
    if "\0" in str(path):
        fail("--record: expected a file path without NUL characters")
    if path.is_dir():
        fail(f"--record {path}: is a folder; expected a file path")
    if not os.path.lexists(path.parent):
        fail(f"--record {path}: the folder {path.parent} does not exist; create it first "
             f"(mkdir -p {shlex.quote(str(path.parent))}) or give a file in an existing folder")
    if not path.parent.is_dir():
        fail(f"--record {path}: {path.parent} is not a folder; give a file in an existing folder")
    if not force and os.path.lexists(path):
        fail(f"--record {path}: the file exists; give --force to overwrite it, or another file name")


def _check_record_path(path: Path, given: bool = False, force: bool = False) -> None:
    """Fail unless the record (and the logs folder beside it) can be written, before any bot starts;
    a ``given`` path must be in an existing folder and, without ``force``, not overwrite a file."""
    if given:
        _check_record_name(path, force)
    elif "\0" in str(path) or path.is_dir():
        fail(f"--record {path}: expected a file path")
    from arena.integrity import open_private, private_folder

    try:
        private_folder(path.parent / "logs")  # the bots' logs and the record are the organiser's alone
        with open_private(path, append=True):
            pass
    except OSError as e:
        fail(f"--record {path}: cannot write it: {e.strerror or e}")


def _play_hidden(record_path: Path, default: bool = False) -> tuple[Path, ...]:
    """What the bots of ``arena play`` must not see: the record and the logs folder beside it (not
    the whole folder: the record is often written in the bot's own folder, SPEC 13.1); with the
    ``default`` folder (./arena-play/...), all of ./arena-play (earlier games' records and logs)."""
    own = (record_path.resolve(), (record_path.parent / "logs").resolve())
    return (*own, record_path.parent.parent.resolve()) if default else own


def _check_sandbox(sandbox: bool) -> None:
    """Stop (exit 2) if bots cannot be sandboxed here; warn when the sandbox is off."""
    from arena.referee.sandbox import problem

    if not sandbox:
        typer.echo("warning: the bots run without a sandbox: they can read and write whatever this user can, "
                   "see other processes and use the network; do this only with bots you trust", err=True)
    elif (why := problem()) is not None:
        fail(why)
