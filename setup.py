"""Build step: the rules engine and the built-in policies compiled with mypyc, if this machine can.

Everything else about the package is in pyproject.toml.  Where mypy is missing,
no C compiler works, the build fails, or ``ARENA_PURE=1`` is set, the package
installs as pure Python and runs the same code from source (``arena/compiled.py``
decides at import, from the manifest written here).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, str(Path(__file__).resolve().parent))
from arena.compiled import COMPILED, GROUP, MANIFEST, PURE_ENV, digest, source_of


def _why_not() -> str | None:
    if os.environ.get(PURE_ENV) == "1":
        return f"{PURE_ENV}=1"
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc (mypy) is not installed in the build environment"
    return None


class BuildEngine(build_ext):
    """Builds the extensions as optional ones, then writes the manifest only if every one was built."""

    def run(self) -> None:
        for ext in self.extensions:
            ext.optional = True  # a failed compile leaves the pure-Python package, not a failed install
        super().run()
        out = Path(".") if self.inplace else Path(self.build_lib)
        built = [ext for ext in self.extensions if (out / self.get_ext_filename(ext.name)).exists()]
        manifest = out / MANIFEST.relative_to(MANIFEST.parent.parent)
        if len(built) == len(self.extensions):
            manifest.write_text(json.dumps({m: digest(source_of(m)) for m in COMPILED}, indent=1) + "\n")
        else:
            manifest.unlink(missing_ok=True)
            print("arena: the engine was not compiled; it runs as pure Python", file=sys.stderr)


def extensions() -> list[Extension]:
    why = _why_not()
    if why is not None:
        print(f"arena: not compiling the engine ({why}); it runs as pure Python", file=sys.stderr)
        return []
    from mypyc.build import mypycify

    paths = ["/".join(m.split(".")) + ".py" for m in COMPILED]
    try:
        return mypycify(["--no-warn-unused-configs", *paths], opt_level="3", group_name=GROUP)
    except (Exception, SystemExit) as e:  # noqa: BLE001 (mypyc exits on a type error; never fail the install)
        print(f"arena: mypyc could not compile the engine ({e!r}); it runs as pure Python", file=sys.stderr)
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildEngine})
