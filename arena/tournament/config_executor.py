"""``[executor]``: where a tournament's games are played (a Dask scheduler's address, or local
worker processes), where remote bots connect, and each bot's ``ship`` (how its folder reaches a
cluster's workers).  Not part of the resolved copy: the same games anywhere."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from arena.tournament.config_checker import Checker
from arena.tournament.model import SHIPS, Executor

# The file's keys: Executor's fields but upload, which the bots' ship = "upload" fill.
EXECUTOR_KEYS = tuple(f.name for f in fields(Executor) if f.name != "upload")


def executor(c: Checker, data: dict[str, Any]) -> Executor:
    ex = c.table(data, "executor", ())
    c.unknown_keys(ex, EXECUTOR_KEYS, ("executor",))
    cluster = c.string(ex, "cluster", ("executor",), default=Executor.cluster)
    if cluster is not None and "://" not in cluster:
        c.err(("executor", "cluster"), f"expected a scheduler address such as \"tcp://host:8786\", got {cluster!r}")
    upload = []
    for i, b in enumerate(data.get("bots") or []):
        if not isinstance(b, dict):
            continue
        ship = c.string(b, "ship", ("bots", i), default=SHIPS[0], choices=SHIPS)
        if ship == "upload":
            if not b.get("cwd"):
                c.err(("bots", i, "ship"), "expected a bot with a cwd folder to upload (ship = \"upload\" "
                                           "sends that folder to every worker)")
            elif isinstance(b.get("name"), str):
                upload.append(b["name"])
    listen = c.string(ex, "listen", ("executor",), default=Executor.listen)
    _host, _, port = (listen or ":").rpartition(":")
    if listen is not None and not (port.isdigit() and 0 < int(port) < 65536):
        c.err(("executor", "listen"), f"expected HOST:PORT with a port from 1 to 65535, got {listen!r}")
    wait = c.integer(ex, "remote_wait_s", ("executor",), default=Executor.remote_wait_s, minimum=1)
    return Executor(cluster=cluster, upload=tuple(upload), listen=listen or Executor.listen,
                    remote_wait_s=wait or Executor.remote_wait_s)
