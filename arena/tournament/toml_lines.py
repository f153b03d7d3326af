"""Line numbers of a TOML file's keys (a regex mapper: ``tomllib`` gives none), so every error of a
tournament file names its line; ``_key_str`` writes a key path as ``bots[2].command``."""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[|\[)\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_PART = re.compile(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+)""")
_INLINE_KEY = re.compile(r"""[{,]\s*([A-Za-z0-9_-]+|"[^"]*")\s*=""")

Part = str | int


def _parts(dotted: str) -> list[str]:
    return [a or b or c for a, b, c in _PART.findall(dotted)]


class _KeyLines:
    """Best-effort map from key paths to the line where they appear (tomllib gives none)."""

    def __init__(self, text: str) -> None:
        self.lines: dict[tuple[Part, ...], int] = {}
        arrays: dict[tuple[Part, ...], int] = {}
        table: tuple[Part, ...] = ()
        in_string = False
        for no, line in enumerate(text.splitlines(), start=1):
            quotes = line.count('"""') + line.count("'''")
            if in_string:
                in_string = quotes % 2 == 0
                continue
            h = _HEADER.match(line)
            if h:
                names = _parts(h.group(2))
                prefix: tuple[Part, ...] = ()
                for i, name in enumerate(names):
                    prefix += (name,)
                    last = i == len(names) - 1
                    if last and h.group(1) == "[[":
                        n = arrays.get(prefix, 0)
                        arrays[prefix] = n + 1
                        self.lines.setdefault(prefix, no)
                        prefix += (n,)
                    elif prefix in arrays:
                        prefix += (arrays[prefix] - 1,)
                table = prefix
                self.lines.setdefault(table, no)
                continue
            k = _KEY.match(line)
            if k:
                full = table + tuple(_parts(k.group(1)))
                self.lines.setdefault(full, no)
                rest = line[k.end():]
                for sub in _INLINE_KEY.findall(rest):
                    self.lines.setdefault(full + (sub.strip('"'),), no)
                in_string = quotes % 2 == 1

    def find(self, path: tuple[Part, ...]) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None


def _key_str(path: tuple[Part, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out
