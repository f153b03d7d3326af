"""Build step: the rules engine and the built-in policies compiled with mypyc, if this machine can.

Everything else about the package is in pyproject.toml.  Where mypy is missing,
no C compiler works, the build fails, or ``ARENA_PURE=1`` is set, the package
installs as pure Python and runs the same code from source (``arena/compiled.py``
decides at import, from the manifest written here).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, str(Path(__file__).resolve().parent))
from arena.compiled import (
    COMPILED,
    FORMAT,
    GROUP,
    MANIFEST_NAME,
    PURE_ENV,
    SUFFIX,
    c_compiler,
    digest,
    source_of,
    stamp,
)


def _why_not() -> str | None:
    if os.environ.get(PURE_ENV) == "1":
        return f"{PURE_ENV}=1"
    compiler = c_compiler()
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc (mypy) is not installed in the build environment"
    return None


def _read_by(modules: tuple[str, ...]) -> list[str]:
    """The project's modules outside ``modules`` that they import: mypyc compiles against their types too."""
    found: set[str] = set()
    for m in modules:
        for node in ast.walk(ast.parse(source_of(m).read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found.update(n for n in names if n.split(".")[0] in ("arena", "protocol") and source_of(n).is_file())
    return sorted(found - set(modules))


# taken before mypyc reads the sources, so an edit made during the build is not recorded as built;
# the stamps (size, mtime) before the hashes, so a source edited between the two is hashed at every start
_READ = _read_by(COMPILED)
_STAMPS = {m: stamp(source_of(m)) for m in (*COMPILED, *_READ)}
SOURCES = {"compiled": {m: digest(source_of(m)) for m in COMPILED}, "read": {m: digest(source_of(m)) for m in _READ},
           "stamps": _STAMPS}


class BuildEngine(build_ext):
    """Builds the extensions as optional ones; writes the manifest only if this build made every one."""

    def build_extension(self, ext: Extension) -> None:
        super().build_extension(ext)  # raises on a failed compile (reported as a warning: optional)
        self.made.add(ext.name)

    def run(self) -> None:
        self.made: set[str] = set()
        for ext in self.extensions:
            ext.optional = True  # a failed compile leaves the pure-Python package, not a failed install
        super().run()
        out = Path(".") if self.inplace else Path(self.build_lib)
        manifest = out / MANIFEST_NAME
        if self.inplace:  # an extension left from an earlier build of a module no longer compiled
            ours = {str(Path(self.get_ext_filename(ext.name))) for ext in self.extensions}
            for stray in Path("arena").rglob("*" + SUFFIX):
                if str(stray) not in ours:
                    stray.unlink()
        if self.extensions and self.made == {ext.name for ext in self.extensions}:
            manifest.write_text(json.dumps({"format": FORMAT, "suffix": SUFFIX, **SOURCES}, indent=1) + "\n")
        else:
            manifest.unlink(missing_ok=True)
            print("arena: the engine was not compiled; it runs as pure Python", file=sys.stderr)


def extensions() -> list[Extension]:
    why = _why_not()
    if why is None:
        from mypyc.build import mypycify

        paths = ["/".join(m.split(".")) + ".py" for m in COMPILED]
        try:
            return mypycify(["--no-warn-unused-configs", *paths], opt_level="3", group_name=GROUP)
        except (Exception, SystemExit) as e:  # noqa: BLE001 (mypyc exits on a type error; never fail the install)
            why = f"mypyc could not compile it: {e!r}"
    (Path(__file__).resolve().parent / MANIFEST_NAME).unlink(missing_ok=True)  # this tree's earlier build, if any, is not this install's
    print(f"arena: not compiling the engine ({why}); it runs as pure Python", file=sys.stderr)
    return []


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildEngine})
