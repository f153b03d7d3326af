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
The manifest also holds each source's size and modification time at the build:
a source whose both are unchanged is not read again (an edit changes its time);
any other is hashed.

It runs at every start, bundled bots' included (started without ``site``): stdlib
only, and on ``os.path``, so that a start imports neither pathlib nor hashlib for it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
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
MANIFEST_NAME = os.path.join("arena", "_engine_sources.json")
FORMAT = 1
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]  # this Python's: the build is made and used with it
PURE_ENV = "ARENA_PURE"

ENGINE = "pure"  # "compiled", or "pure" with REASON saying why
REASON = "not chosen yet"


def c_compiler() -> str:
    """The C compiler an extension build would run: ``$CC``, else the one Python was built with."""
    import sysconfig

    return (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]


def _source(module: str, root: str) -> str:
    return os.path.join(root, *module.split(".")) + ".py"


def source_of(module: str, root: Path | str = ROOT_DIR) -> Path:
    from pathlib import Path

    return Path(_source(module, str(root)))


def digest(path: Path | str) -> str:
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def stamp(path: Path | str) -> list[int] | None:
    """A source's size and modification time (ns), as the manifest records them; None if it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def read_manifest(root: Path | str = ROOT_DIR) -> dict[str, Any] | None:
    """The build's manifest under ``root``; None if there is none or it cannot be read."""
    try:
        with open(os.path.join(root, MANIFEST_NAME), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def build_problem(root: Path | str = ROOT_DIR, modules: Sequence[str] = COMPILED) -> str | None:
    """Why the build under ``root`` cannot be used (None: it can): missing, partial, or older than a source."""
    root = str(root)
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
        parts = module.split(".")
        if not os.path.exists(os.path.join(root, *parts[:-1], parts[-1] + SUFFIX)):
            return f"the build lacks {module}"
    stamps = manifest.get("stamps")
    if not isinstance(stamps, dict):
        stamps = {}
    for module, built in (*manifest["compiled"].items(), *manifest["read"].items()):
        source = _source(module, root)
        now = stamp(source)
        if now is not None and now == stamps.get(module):
            continue  # the size and time it had at the build
        if now is None or built != digest(source):
            return f"{os.path.relpath(source, root)} changed since the build (pip install -e . rebuilds it)"
    return None


class _SourceFirst:
    """A meta path finder that loads the compiled modules from their ``.py`` source."""

    def __init__(self, modules: Sequence[str], root: str) -> None:
        self.modules, self.root = frozenset(modules), root

    def find_spec(self, name: str, path: object = None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if name not in self.modules:
            return None
        source = _source(name, self.root)
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
        sys.meta_path.insert(0, _SourceFirst([*COMPILED, *(built if isinstance(built, dict) else ())], ROOT_DIR))
        ENGINE, REASON = "pure", problem
    return ENGINE
