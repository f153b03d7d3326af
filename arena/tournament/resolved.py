"""The resolved ``tournament.toml`` a results folder keeps: written atomically, private to the
organiser (it names every entrant's command and env); ``config.read_resolved`` reads it back."""

from __future__ import annotations

import os
from pathlib import Path

import tomli_w

from arena.integrity import open_private
from arena.tournament.model import RESOLVED_FILE, Tournament


def write_resolved(t: Tournament, folder: str | Path) -> Path:
    """Write the resolved ``tournament.toml`` into ``folder`` (atomically); returns its path."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESOLVED_FILE
    tmp = path.with_suffix(".toml.tmp")
    header = f"# Resolved tournament {t.name!r}: every default filled in, rules fully resolved.\n\n"
    with open_private(tmp) as f:  # the organiser's: it names every entrant's command and env
        f.write((header + tomli_w.dumps(t.to_toml_data())).encode("utf-8"))
    os.replace(tmp, path)
    return path
