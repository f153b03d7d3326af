"""Deal suites: the cards a tournament deals, shareable without the key that signs its results.

A results folder's ``secret.key`` both deals the cards and signs the journal and records
(``arena.integrity``).  A deal suite (``deals = "PATH"`` in the tournament file, ``arena match
--deals PATH``) is a second key, 32 random bytes in a file of its own, that takes over the dealing:
the deal seed and suit maps of every deal-set come from the suite, the game ids, MACs and remote
seats' tokens still from the folder's own key, which never leaves the folder.  Two organisers, or
two folders, that hold the same suite deal the same cards (like fastchess's opening books), while
each signs its own results.  Without a suite the folder's key deals, as it always did.

The first run that names a missing suite file makes it (mode 0600).  The resolved tournament in
the results folder keeps the suite's path and its fingerprint (``deals_id``: an HMAC of a label
under the suite, which says nothing of the deals), so a folder is never resumed with other cards.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.integrity import derive_hex

SUITE_BYTES = 32


class DealSuiteError(ArenaError, ValueError):
    """A deal suite file that cannot be read or made, or is not one: one sentence."""


def read_suite(path: str | Path) -> bytes:
    """The suite in ``path``; DealSuiteError if it cannot be read or is not 32 bytes."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise DealSuiteError(f"cannot read the deal suite {path}: {e.strerror or e}") from None
    if len(data) != SUITE_BYTES:
        raise DealSuiteError(f"{path} is not a deal suite of this arena (it must hold exactly {SUITE_BYTES} "
                             f"random bytes, it holds {len(data)})")
    return data


def make_suite(path: str | Path) -> bytes:
    """A new suite written to ``path`` (mode 0600; never over an existing file)."""
    suite = secrets.token_bytes(SUITE_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, suite)
            os.fsync(fd)
        finally:
            os.close(fd)
    except FileExistsError:
        return read_suite(path)
    except OSError as e:
        raise DealSuiteError(f"cannot write the deal suite {path}: {e.strerror or e}") from None
    return suite


def fingerprint(suite: bytes) -> str:
    """Which suite it is, without saying anything of its deals."""
    return derive_hex(suite, "deal-suite", digits=16)


def with_suite(t: Any) -> Any:
    """``t`` (a Tournament) with its suite loaded, made first if its file is missing; ``t`` itself without one."""
    if getattr(t, "deals", None) is None or t.deal_key is not None:
        return t
    path = Path(t.deals)
    suite = read_suite(path) if path.exists() else make_suite(path)
    return dataclasses.replace(t, deal_key=suite)


def dealing_key(t: Any, key: bytes) -> bytes:
    """The key the cards of ``t`` come from: its suite's, or the folder's own ``key``."""
    suite = getattr(t, "deal_key", None)
    return suite if suite is not None else key


def game_at(t: Any, index: int, key: bytes, round_tables: Any = None) -> Any:
    """``schedule.game_at`` with the cards from the suite (if any) and the game id from the folder's ``key``."""
    from arena.tournament import schedule

    deals = dealing_key(t, key)
    spec = schedule.game_at(t, index, deals, round_tables)
    if deals is key:
        return spec
    return dataclasses.replace(spec, game_id=schedule.game_id(key, index))


def deal_seed_of(t: Any, key: bytes, index: int, table: int, deal_set: int) -> int:
    """The deal seed of a journaled game (journal lines carry none: SECURITY.md, Secrets)."""
    from arena.tournament import schedule

    deals = dealing_key(t, key)
    if schedule.is_league(t):  # its tables come from the results; its seeds only from (table, set)
        return schedule.deal_seed(deals, table, deal_set)
    return int(schedule.game_at(t, index, deals).deal_seed)
