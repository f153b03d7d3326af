"""Which engine this process runs: the mypyc build of the rules and policies, or their Python source.

``setup.py`` compiles ``COMPILED`` with mypyc where a C compiler works and writes
``MANIFEST`` beside them: the Python it was built for (its extension suffix) and
the SHA-256 of each source it compiled and of each module of ours they import
(mypyc compiled against their types), all taken before the compile.
``choose()`` (called once, from ``arena/__init__.py``, before any of these
modules is imported) keeps the build only if it is of this module list and this
Python, every module of it is there, and every source still has its hash;
otherwise, or with ``ARENA_PURE=1`` in the environment, a finder placed first on
``sys.meta_path`` loads each of them from its ``.py`` file.  A source edited
after ``pip install`` therefore runs as written, never as the stale build (the
compiled modules call one another directly, so it is all of them or none).
stdlib only: it runs at every start.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

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
FORMAT = 1
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]  # this Python's: the build is made and used with it
PURE_ENV = "ARENA_PURE"

ENGINE = "pure"  # "compiled", or "pure" with REASON saying why
REASON = "not chosen yet"


def c_compiler() -> str:
    """The C compiler an extension build would run: ``$CC``, else the one Python was built with."""
    return (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]


def source_of(module: str, root: Path = ROOT) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".py")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(root: Path = ROOT) -> dict[str, Any] | None:
    """The build's manifest under ``root``; None if there is none or it cannot be read."""
    try:
        data = json.loads((root / MANIFEST.relative_to(ROOT)).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def build_problem(root: Path = ROOT, modules: Sequence[str] = COMPILED) -> str | None:
    """Why the build under ``root`` cannot be used (None: it can): missing, partial, or older than a source."""
    manifest = read_manifest(root)
    if manifest is None:
        return "no compiled build (no C compiler or mypy at install, or ARENA_PURE=1 then)"
    if manifest.get("format") != FORMAT or not isinstance(manifest.get("compiled"), dict) \
            or not isinstance(manifest.get("read"), dict):
        return "the build's manifest is of another format"
    if manifest.get("suffix") != SUFFIX:
        return f"the build is for another Python ({manifest.get('suffix')}, this one loads {SUFFIX})"
    if sorted(manifest["compiled"]) != sorted(modules):
        return "the build compiled another list of modules"
    for module in (*modules, GROUP + "__mypyc"):
        if not root.joinpath(*module.split(".")).with_name(module.split(".")[-1] + SUFFIX).exists():
            return f"the build lacks {module}"
    for module, built in (*manifest["compiled"].items(), *manifest["read"].items()):
        source = source_of(module, root)
        if not source.is_file() or built != digest(source):
            return f"{source.relative_to(root)} changed since the build (pip install -e . rebuilds it)"
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
    else:  # the modules of a build made from another list too: theirs may still lie beside the sources
        built = (read_manifest() or {}).get("compiled")
        sys.meta_path.insert(0, _SourceFirst([*COMPILED, *(built if isinstance(built, dict) else ())], ROOT))
        ENGINE, REASON = "pure", problem
    return ENGINE
