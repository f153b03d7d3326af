"""`arena new-bot NAME --lang LANG`: a folder with a working bot to start from (docs/ARCHITECTURE.md).

Each language's bot (``templates/newbot/LANG/``) speaks only the protocol (protocol/SPEC.md), never
the engine: it draws from the stock and discards, the Python one also puts down the sets it holds.
Beside it go a README (how to build, check and play it against the sample bots) and a tournament
file that enters it against them.  Placeholders ``{{key}}`` in the templates are filled here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError

TEMPLATES = Path(__file__).parent / "templates" / "newbot"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")


@dataclass(frozen=True)
class Language:
    language: str
    file: str          # the source file, in templates/newbot/<key>/
    command: str       # how the referee starts it, from the bot's folder
    transport: str     # "zmq" or "stdio"
    build: str         # a shell command to run first, or ""
    plays: str
    logs: str


LANGUAGES: dict[str, Language] = {
    "python": Language(
        "Python", "bot.py", "python3 bot.py", "zmq", "",
        "it draws from the stock, puts down the sets it holds (when the rules let it meld freely) and "
        "discards its highest card.",
        "print to stderr (`print(..., file=sys.stderr)`); the referee keeps them in a capped log file."),
    "js": Language(
        "JavaScript (Node.js, no packages)", "bot.js", "node bot.js", "stdio", "",
        "it draws from the stock, never melds and discards its highest card.",
        "`console.error(...)`; stdout is the protocol, one JSON message per line."),
    "c": Language(
        "C (C99, the standard library only)", "bot.c", "./bot", "stdio", "cc -O2 -o bot bot.c",
        "it draws from the stock, never melds and discards the card it drew.",
        "`fprintf(stderr, ...)`; stdout is the protocol, one JSON message per line, flushed after each."),
}


class NewBotError(ArenaError, ValueError):
    """A name, language or folder `new-bot` cannot use: one sentence."""


def _fill(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], text)


def bot_command(lang: str) -> str:
    """The bot as `arena play`/`check-bot` name it from its folder (``stdio:`` when it talks on stdio)."""
    spec = LANGUAGES[lang]
    return ("stdio:" if spec.transport == "stdio" else "") + spec.command


def new_bot(name: str, lang: str, parent: Path = Path(".")) -> Path:
    """Write ``parent/name/`` with the bot, README.md and tournament.toml; returns the folder."""
    if not NAME.fullmatch(name):
        raise NewBotError(f"bot name {name!r}: use 1 to 40 letters, digits, '-' or '_', starting with a "
                          "letter or digit (it names the folder and the bot)")
    if lang not in LANGUAGES:
        raise NewBotError(f"--lang {lang!r}: expected one of {', '.join(LANGUAGES)}")
    folder = parent / name
    if folder.exists():
        raise NewBotError(f"{folder} already exists; choose another name or remove it")
    spec = LANGUAGES[lang]
    values = {
        "name": name, "language": spec.language, "file": spec.file, "command": spec.command,
        "bot": bot_command(lang), "plays": spec.plays, "logs": spec.logs,
        "build": spec.build + "\n" if spec.build else "",
        "transport_words": "ZeroMQ, through the Python client library `protocol.client`" if spec.transport == "zmq"
        else "one JSON message per line on stdin and stdout",
        "transport_line": f'transport = "{spec.transport}"\n' if spec.transport != "zmq" else "",
    }
    files = {
        spec.file: (TEMPLATES / lang / spec.file).read_text(encoding="utf-8"),
        "README.md": (TEMPLATES / "README.md").read_text(encoding="utf-8"),
        "tournament.toml": (TEMPLATES / "tournament.toml").read_text(encoding="utf-8"),
    }
    folder.mkdir(parents=True)
    for fname, text in files.items():
        (folder / fname).write_text(_fill(text, values), encoding="utf-8")
    return folder
