"""Remote bots of a tournament (``remote = true``): their persistent tokens, addresses and the CURVE key (SPEC 12).

Everything is derived from the results folder's key, so a ``--resume`` gives
every remote bot the same token, address and server key, and the worker that
hosts the remote seats (worker 0 of the local pool) computes them itself:

- the token of bot B: ``derive_hex(key, "remote-token", B)`` (32 hex digits);
- the referee's CURVE key pair: the secret is 32 bytes derived from the key
  (Z85-encoded), the public key follows from it (``zmq.curve_public``);
- the address of the i-th remote bot (file order): ``listen``'s host, its port + i.

``announce`` writes what each remote bot's owner needs into ``remote.txt`` in
the results folder (mode 0600: only the organiser reads it) and returns the
lines the runner prints.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

import zmq
from zmq.utils import z85

from arena.integrity import derive_hex
from arena.tournament.config import Tournament

REMOTE_FILE = "remote.txt"


@dataclass(frozen=True)
class RemoteSeat:
    bot: str
    bind: str        # where its gate listens (tcp://HOST:PORT)
    endpoint: str    # what the bot connects to (the host name when ``bind`` is every interface)
    token: str


def curve_keys(key: bytes) -> tuple[str, str]:
    """(public, secret) CURVE keys of the referee, Z85 text, from the folder's key."""
    secret = z85.encode(bytes.fromhex(derive_hex(key, "curve-secret", digits=64)))
    return zmq.curve_public(secret).decode("ascii"), secret.decode("ascii")


def seats(t: Tournament, key: bytes, listen: str) -> dict[str, RemoteSeat]:
    """Every remote bot of ``t`` with its persistent token and address."""
    host, _, port = listen.rpartition(":")
    host = host or "127.0.0.1"  # ":PORT" is loopback, as for ``arena play --listen``; "0.0.0.0:PORT": every interface
    shown = socket.gethostname() if host in ("0.0.0.0", "*") else host
    out = {}
    for i, b in enumerate(b for b in t.bots if b.remote):
        p = int(port) + i
        out[b.name] = RemoteSeat(b.name, f"tcp://{host}:{p}", f"tcp://{shown}:{p}",
                                 derive_hex(key, "remote-token", b.name, digits=32))
    return out


def announce(out: Path, found: dict[str, RemoteSeat], public: str, wait_s: int) -> list[str]:
    """Write ``remote.txt`` (0600) and return its lines: how each remote bot connects."""
    lines = [f"referee's CURVE public key (ARENA_SERVER_KEY): '{public}'"]
    for s in found.values():
        lines.append(f"remote bot {s.bot}: connect to {s.endpoint} with ARENA_TOKEN={s.token} "
                     f"ARENA_SERVER_KEY='{public}' (waited for up to {wait_s} s at each of its games)")
    path = out / REMOTE_FILE
    tmp = path.with_name(f".{REMOTE_FILE}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return lines
