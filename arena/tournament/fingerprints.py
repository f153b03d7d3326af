"""Bot fingerprints: what each bot's program was when a results folder was run (docs/ARCHITECTURE.md section 5).

A bot's fingerprint is the SHA-256 of its command line and of its program:
the whole ``cwd`` folder when the bot has one (its program tree), else the
file its command runs (the script given to python or node, or the
executable), or a bundled sample bot's module file.  Folders are hashed in a
bounded way (``MAX_FILES`` files, ``MAX_BYTES`` bytes, beyond which the
fingerprint says it covers only the first ones), skipping caches, ``.git``,
every bot's data folder and the results folder, which change between games,
and what the arena itself writes or reads there: the tournament file (raising
its ``deal_sets`` is how a tournament grows), the ``--events`` file, any other
results folder (one holding ``secret.key``) and any HTML report (a folder
holding the report's viewer assets, and the page beside it).

They live in ``bots.jsonl`` in the results folder, one signed line per bot
(a MAC under the folder's key, as journal lines): written by the first run,
compared by every ``--resume``, and appended to when a changed bot is
accepted (``--accept-changed``), so the file is also the history of what
played.  A torn last line (a run killed mid-append) is skipped as every signed
log's is (``arena.tournament.signed_log``): that bot is found changed again.  A file of its own rather than a field of every journal line: the
fingerprint is known, and refused, before any game is played, and the
journal's lines stay what standings read.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Collection
from pathlib import Path

import msgspec

from arena.errors import ArenaError
from arena.integrity import KEY_FILE
from arena.settings import BUNDLED_BOT_MODULES, BotSpec, first_word, program_file
from arena.tournament import signed_log
from arena.tournament.config import Tournament

BOTS_FILE = "bots.jsonl"
MAC_LABEL = "bots"
MAX_FILES = 5000
MAX_BYTES = 64 << 20
SKIPPED = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
RESULTS_MARK = KEY_FILE  # a folder holding it is a results folder
REPORT_ASSETS = ("viewer.css", "table_state.js", "viewer.js")  # arena.report.render.ASSETS (a test checks)


class Fingerprint(msgspec.Struct, kw_only=True):
    """One bot as it was: hashes of its command line and of its program, and what the program is."""

    bot: str
    command: str              # sha256 of the command line
    program: str              # sha256 of the program ("" when there is no file to hash)
    what: str                 # "program file PATH", "folder PATH", "folder PATH (first N files)", "command line only"
    mac: str = ""

    def same_as(self, other: Fingerprint) -> bool:
        """The same command and program (``what`` only describes them: a moved folder is the same bot)."""
        return (self.command, self.program) == (other.command, other.program)


class FingerprintError(ArenaError, ValueError):
    """``bots.jsonl`` holds a line that does not verify: one sentence."""


_decoder = msgspec.json.Decoder(Fingerprint)


def of_tournament(t: Tournament, out: Path) -> list[Fingerprint]:
    """The fingerprint of every bot of ``t`` now (``out``, its results folder, is never hashed)."""
    base = Path(t.base_dir)
    data = [b.datadir(base) for b in t.bots]
    files = [Path(f) for f in (t.source, *t.arena_files) if f]
    skip = {p.resolve() for p in [out, *data, *files] if p is not None}
    return [of_bot(b, base, skip) for b in t.bots]


def of_bot(bot: BotSpec, base_dir: Path, skip: Collection[Path] = ()) -> Fingerprint:
    """The fingerprint of one bot now; ``skip``: resolved folders and files not to hash."""
    command = hashlib.sha256(bot.command.encode()).hexdigest()
    if bot.remote:
        return Fingerprint(bot=bot.name, command=command, program="", what="command line only")
    if bot.is_bundled():
        spec = importlib.util.find_spec(BUNDLED_BOT_MODULES[first_word(bot.command)])
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        return _file_print(bot, command, origin)
    workdir = bot.workdir(base_dir)
    if bot.cwd:
        digest, files, complete = _folder_hash(workdir, skip)
        what = f"folder {_shown(workdir, base_dir)}" + ("" if complete else f" (first {files} files)")
        return Fingerprint(bot=bot.name, command=command, program=digest, what=what)
    return _file_print(bot, command, program_file(bot.command, workdir, bot.env or None), base_dir)


def _shown(path: Path, base_dir: Path) -> str:
    """``path`` relative to the tournament's folder when it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path(base_dir).resolve())) or "."
    except ValueError:
        return str(path)


def _file_print(bot: BotSpec, command: str, path: Path | None, base_dir: Path | None = None) -> Fingerprint:
    if path is None:
        return Fingerprint(bot=bot.name, command=command, program="", what="command line only")
    shown = _shown(path, base_dir) if base_dir is not None else str(path)
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
                if f.tell() >= MAX_BYTES:
                    break
    except OSError as e:
        return Fingerprint(bot=bot.name, command=command, program="", what=f"program file {shown} ({e.strerror})")
    return Fingerprint(bot=bot.name, command=command, program=h.hexdigest(), what=f"program file {shown}")


def _folder_hash(root: Path, skip: Collection[Path]) -> tuple[str, int, bool]:
    """(sha256 of the folder's names and contents in sorted order, files hashed, whether that was all of them)."""
    h = hashlib.sha256()
    files = 0
    budget = MAX_BYTES
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        reports = {d for d in dirs if all((here / d / a).is_file() for a in REPORT_ASSETS)}
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and d not in reports
                         and not (here / d / RESULTS_MARK).is_file() and (here / d).resolve() not in skip)
        for name in sorted(names):
            path = here / name
            if (name.endswith(".html") and name[:-5] in reports) or path.resolve() in skip:
                continue
            if files >= MAX_FILES or budget <= 0:
                return h.hexdigest(), files, False
            rel = path.relative_to(root).as_posix().encode()
            h.update(b"%d:%s\0" % (len(rel), rel))
            files += 1
            try:
                if path.is_symlink():
                    h.update(b"L" + os.readlink(path).encode())
                    continue
                with open(path, "rb") as f:
                    data = f.read(budget)
            except OSError:
                h.update(b"?")
                continue
            budget -= len(data)
            h.update(b"%d:" % len(data) + hashlib.sha256(data).digest())
    return h.hexdigest(), files, True


def recorded(out: Path, key: bytes) -> dict[str, Fingerprint]:
    """The last fingerprint ``bots.jsonl`` holds for each bot; FingerprintError for a line that does not verify."""
    path = out / BOTS_FILE
    found: dict[str, Fingerprint] = {}
    for no, raw in signed_log.read_lines(path).complete:
        try:
            fp = _decoder.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            fp = None
        if fp is None or not signed_log.verifies(fp, key, MAC_LABEL):
            raise FingerprintError(f"{path}:{no}: a bot fingerprint that does not verify: the runner did not write "
                                   f"this line, or it was changed since")
        found[fp.bot] = fp
    return found


def record(out: Path, key: bytes, prints: list[Fingerprint], fresh: bool) -> None:
    """Write ``prints`` to ``bots.jsonl``, signed: a new file when ``fresh``, else appended (fsync'd)."""
    data = b"".join(signed_log.encode_line(fp, key, MAC_LABEL) for fp in prints)
    path = out / BOTS_FILE
    if fresh:
        signed_log.replace(path, data)
    else:
        signed_log.append(path, data)


def changes(then: dict[str, Fingerprint], now: list[Fingerprint]) -> list[tuple[Fingerprint, str]]:
    """The bots of ``now`` that differ from ``then``, each with one sentence saying what changed."""
    found = []
    for fp in now:
        old = then.get(fp.bot)
        if old is None or old.same_as(fp):
            continue
        if old.command != fp.command:
            what = "its command line"
        elif old.what != fp.what:
            what = f"what it runs ({old.what} then, {fp.what} now)"
        else:
            what = f"its {fp.what} (sha256 {old.program[:12] or 'none'} then, {fp.program[:12] or 'none'} now)"
        found.append((fp, f"bot {fp.bot!r} changed since this results folder was first run: {what}"))
    return found
