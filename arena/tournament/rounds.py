"""The rounds file of a league (``rounds.jsonl``): each round's tables as the main process chose them.

A league's round is a function of the journal's earlier rounds and the seed
(``schedule.round_tables``; docs/ARCHITECTURE.md section 5).  The main process
computes it once, before it gives out the round's first game, and appends it
here (one line, fsync'd, signed under the folder's key like a journal line);
workers and every ``--resume`` read the recorded tables instead of choosing
again, so a round that has begun is played at the tables it began with, even
under another version of the pairing code.  A line that does not verify, or
was written for another tournament (each line carries ``tag_of`` the resolved
tournament), is ignored: that round is chosen again from the journal; a torn
last line is skipped and cut off before the next append, as in every signed log
(``arena.tournament.signed_log``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from arena.integrity import mac, mac_ok
from arena.tournament import signed_log

ROUNDS_FILE = "rounds.jsonl"
MAC_LABEL = "arena-round-v1"

Tables = tuple[tuple[str, ...], ...]


def tag_of(t: Any) -> str:
    """A digest of the resolved tournament (``to_toml_data``), without what ``--resume`` may change."""
    data = t.to_toml_data() | {"base_dir": "", "output": "", "sandbox": True}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _body(r: int, tables: Tables, tag: str) -> bytes:
    return json.dumps({"round": r, "tables": [list(t) for t in tables], "tag": tag}, separators=(",", ":")).encode()


def recorded(folder: Path, key: bytes, tag: str) -> dict[int, Tables]:
    """The rounds recorded in ``folder`` whose line verifies (the first line of a round wins)."""
    out: dict[int, Tables] = {}
    for _no, line in signed_log.read_lines(folder / ROUNDS_FILE).complete:
        try:
            data = json.loads(line)
            r, tables = int(data["round"]), tuple(tuple(str(b) for b in t) for t in data["tables"])
        except (ValueError, TypeError, KeyError):
            continue  # not a round at all
        if mac_ok(key, MAC_LABEL, _body(r, tables, tag), data.get("mac")) and r not in out:
            out[r] = tables
    return out


def record(folder: Path, key: bytes, r: int, tables: Tables, tag: str) -> None:
    """Append round ``r``'s tables durably (write, fsync)."""
    signed = {"round": r, "tables": [list(t) for t in tables], "tag": tag,
              "mac": mac(key, MAC_LABEL, _body(r, tables, tag))}
    signed_log.append(folder / ROUNDS_FILE, json.dumps(signed, separators=(",", ":")).encode() + b"\n")
