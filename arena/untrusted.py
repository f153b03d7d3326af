"""The one boundary for text that came from a bot or an entrant, on its way to a person.

Bot names (a hello's, a tournament file's), failure and forfeit reasons (which quote game ids and
decoder errors a bot chose), a bot's output tails and paths are data, never formatting.  Whatever
shows them to a person passes them through here, at the point where the text leaves:

- ``shown``: one line for a terminal, a log or a progress line: every character that is not
  printable (escape codes, other C0/C1 controls, newlines, bidirectional overrides) is written
  visibly as a Python escape (``\\x1b``, ``\\n``, ``\\u202e``), never silently dropped, so it can
  neither drive the terminal nor start a forged line;
- ``shown_lines``: the same for text whose own line breaks are kept (an output tail), each line
  made safe on its own;
- ``rich_text``: a ``rich`` Text of ``shown`` text, never parsed as markup (``[link=...]`` and
  ``[/]`` stay literal), and ``markup`` for text spliced into a markup string;
- ``csv_cell``: ``shown`` text that a spreadsheet cannot take for a formula (a leading ``=``,
  ``+``, ``-``, ``@``, tab or CR gets a ``'`` in front);
- ``md_cell``: ``shown`` text with Markdown's link, emphasis, HTML and table characters escaped;
- ``clipped``: a bot's string cut to ``QUOTE_CHARS`` characters before the referee quotes it in a
  reason (a game id, a decoder's detail), so what it records and repeats has a stated size.

HTML needs nothing here: the report's templates are autoescaped by Jinja2 (``arena.report``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_MD_SPECIAL = "\\`*_[]()<>|#!~"
QUOTE_CHARS = 80  # of a bot's string quoted in a reason (SPEC 9, SECURITY.md "Bots' words")


def _escape_char(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def shown(text: object) -> str:
    """``text`` on one line, with every non-printable character written as a visible escape."""
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else _escape_char(c) for c in s)


def shown_lines(text: object) -> str:
    """``text`` with its own line breaks kept and everything else ``shown``."""
    s = text if isinstance(text, str) else str(text)
    return "\n".join(shown(line) for line in s.splitlines())


def markup(text: object) -> str:
    """``shown`` text escaped for a rich markup string."""
    from rich.markup import escape

    return escape(shown(text))


def rich_text(text: object) -> Text:
    """``shown`` text as a rich Text: rendered as it is, never parsed as markup."""
    from rich.text import Text

    return Text(shown(text))


def csv_cell(text: object) -> str:
    """``shown`` text that no spreadsheet evaluates as a formula."""
    raw = text if isinstance(text, str) else str(text)
    s = shown(raw)
    return "'" + s if raw.startswith(FORMULA_START) or s.startswith(FORMULA_START) else s


def md_cell(text: object) -> str:
    """``shown`` text with Markdown's special characters escaped (no link, emphasis, HTML or cell break)."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in shown(text))


def clipped(text: object, limit: int = QUOTE_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, the cut said (``...(+N chars)``) within them.

    The text is kept as it is (not ``shown``): a reason is data in the record, made safe where shown."""
    s = text if isinstance(text, str) else str(text)
    if len(s) <= limit:
        return s
    keep = limit - len(f"...(+{len(s)} chars)")  # the count cut has at most len(s)'s digits
    return s[:keep] + f"...(+{len(s) - keep} chars)" if keep > 0 else s[:max(0, limit)]
