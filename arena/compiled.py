"""Which engine this process runs: the mypyc build of the rules and policies, or their Python source.

``setup.py`` compiles ``COMPILED`` with mypyc where a C compiler works and writes
``MANIFEST`` beside them: the SHA-256 of each source it compiled.  ``choose()``
(called once, from ``arena/__init__.py``, before any of these modules is
imported) keeps the build only if every module of it is there and every source
still has the hash it was built from; otherwise, or with ``ARENA_PURE=1`` in the
environment, a finder placed first on ``sys.meta_path`` loads each of them from
its ``.py`` file.  A source edited after ``pip install`` therefore runs as
written, never as the stale build (the compiled modules call one another
directly, so it is all of them or none).  stdlib only: it runs at every start.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
COMPILED = (
    "arena.policies", "arena.env.encoding",
    "arena.rules.actions", "arena.rules.candidates", "arena.rules.cards", "arena.rules.chance", "arena.rules.frozen",
    "arena.rules.game",
    "arena.rules.melds", "arena.rules.memo", "arena.rules.observation", "arena.rules.options",
    "arena.rules.position", "arena.rules.presets", "arena.rules.ruleset", "arena.rules.scoring",
    "arena.rules.search", "arena.rules.suits", "arena.rules.turn", "arena.rules.values",
)
# log.py and record.py stay Python: mypyc drops the class keywords (tag=...) of their msgspec Structs.
GROUP = "arena._engine"  # the shared library of the build: arena/_engine__mypyc.<abi>.so
MANIFEST = ROOT / "arena" / "_engine_sources.json"
PURE_ENV = "ARENA_PURE"

ENGINE = "pure"  # "compiled", or "pure" with REASON saying why
REASON = "not chosen yet"


def source_of(module: str, root: Path = ROOT) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".py")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_problem(root: Path = ROOT, modules: Sequence[str] = COMPILED) -> str | None:
    """Why the build under ``root`` cannot be used (None: it can): missing, partial, or older than a source."""
    manifest = root / "arena" / MANIFEST.name
    try:
        built: dict[str, str] = json.loads(manifest.read_text())
    except FileNotFoundError:
        return "no compiled build (no C compiler or mypy at install, or ARENA_PURE=1 then)"
    except (OSError, ValueError) as e:
        return f"{manifest}: unreadable ({e})"
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    for module in (*modules, GROUP + "__mypyc"):
        base = root.joinpath(*module.split("."))
        if not any(base.with_name(base.name + s).exists() for s in suffixes):
            return f"the build lacks {module}"
    for module in modules:
        if built.get(module) != digest(source_of(module, root)):
            return f"{source_of(module, root).relative_to(root)} changed since the build (pip install -e . rebuilds it)"
    return None


class _SourceFirst:
    """A meta path finder that loads the compiled modules from their ``.py`` source."""

    def __init__(self, modules: Sequence[str], root: Path) -> None:
        self.modules, self.root = frozenset(modules), root

    def find_spec(self, name: str, path: object = None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if name not in self.modules:
            return None
        source = str(source_of(name, self.root))
        return importlib.util.spec_from_file_location(name, source,
                                                      loader=importlib.machinery.SourceFileLoader(name, source))


def choose() -> str:
    """Use the build if it is whole and current, else the sources; return ``ENGINE``."""
    global ENGINE, REASON
    if any(m in sys.modules for m in COMPILED) or any(isinstance(f, _SourceFirst) for f in sys.meta_path):
        return ENGINE  # chosen already
    problem = f"{PURE_ENV}=1" if os.environ.get(PURE_ENV) == "1" else build_problem()
    if problem is None:
        ENGINE, REASON = "compiled", "mypyc build, current with its sources"
    else:
        sys.meta_path.insert(0, _SourceFirst(COMPILED, ROOT))
        ENGINE, REASON = "pure", problem
    return ENGINE
