"""The shell examples of a Markdown document, as a user would type them (for tests/cli/test_doc_examples.py).

An example is a command of a fenced ``sh`` block (every line is a command; a line ending in ``\\``
continues; a here-document runs to its end marker), or a ``$ `` line of any fenced block, whose
following lines (up to the next ``$ `` line or the block's end) are the output the document shows;
a line ``...`` in an output stands for lines left out, and ``...`` within a line for words left out.  A Python block preceded by a sentence that says
"Save this as `FILE`" is a file the reader writes before the next command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
SAVE_AS = re.compile(r"[Ss]ave (?:this|it) as `([^`]+)`")


@dataclass(frozen=True)
class Example:
    doc: str
    line: int                      # 1-based line of the command in the document
    command: str
    output: tuple[str, ...] | None  # the output the document shows, if it shows one
    file: str | None = None        # a file to write (command holds its text) instead of a command

    @property
    def id(self) -> str:
        first = self.command.splitlines()[0] if self.file is None else f"write {self.file}"
        return f"{self.doc}:{self.line}:{first[:60]}"


def examples(path: Path, name: str) -> list[Example]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Example] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(2), i + 1
        j = start
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        body = lines[start:j]
        if lang in ("sh", "shell", "bash", "console") or any(x.startswith("$ ") for x in body):
            out += _commands(body, start + 1, name, prompts_only=lang not in ("sh", "shell", "bash"))
        elif lang == "python":
            before = " ".join(lines[max(0, i - 3):i])
            saved = SAVE_AS.findall(before)
            if saved:
                out.append(Example(name, start, "\n".join(body) + "\n", None, file=saved[-1]))
        i = j + 1
    return out


def _commands(body: list[str], first_line: int, doc: str, prompts_only: bool) -> list[Example]:
    out: list[Example] = []
    prompted = any(x.startswith("$ ") for x in body)
    k = 0
    while k < len(body):
        text, n = body[k], first_line + k
        if prompted:
            if not text.startswith("$ "):
                k += 1
                continue
            text = text[2:]
        elif prompts_only or not text.strip() or text.lstrip().startswith("#"):
            k += 1
            continue
        cmd = [text]
        k += 1
        while cmd[-1].rstrip().endswith("\\") and k < len(body):
            cmd.append(body[k].removeprefix("> "))
            k += 1
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", cmd[0])
        if heredoc:
            end = heredoc.group(1)
            while k < len(body) and body[k].strip() != end:
                cmd.append(body[k])
                k += 1
            cmd.append(end)
            k += 1
        output = None
        if prompted:
            shown: list[str] = []
            while k < len(body) and not body[k].startswith("$ "):
                shown.append(body[k])
                k += 1
            output = tuple(shown)
        out.append(Example(doc, n, "\n".join(cmd), output))
    return out


def _matches(want: str, got: str) -> bool:
    """A shown line matches the printed one exactly, or with each ``...`` in it standing for any text."""
    if "..." not in want:
        return want == got
    return re.fullmatch(".*".join(re.escape(part) for part in want.split("...")), got) is not None


def shows(expected: tuple[str, ...], got: str) -> str | None:
    """None if ``got`` shows every line of ``expected`` in order (a line of ``...`` alone skips any lines;
    runs of spaces count as one), else the first expected line that is missing."""
    norm = [" ".join(x.split()) for x in got.splitlines()]
    pos = 0
    skipping = False
    for want in expected:
        w = " ".join(want.split())
        if w in ("...", "\u2026"):
            skipping = True
            continue
        if not w:
            continue
        while pos < len(norm) and not _matches(w, norm[pos]):
            if not skipping and norm[pos]:
                return want
            pos += 1
        if pos == len(norm):
            return want
        pos += 1
        skipping = False
    return None
