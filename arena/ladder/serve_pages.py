"""The ladder server's pages and JSON: the public view of a snapshot and the HTML that shows it.

``board_view`` and ``entrant_view`` cut a ``snapshot(dir)`` down to what anyone may see (no log path of
anyone; an entrant's failures with the tail of that entrant's own log only); the pages are Jinja2 with
autoescape (as the report's), every entrant string also passed through ``untrusted.shown`` so a
control character is shown, never acted on.  The pages poll the JSON and redraw themselves
(``static/ladder.js``), so they need the same views the server renders first.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from arena.ladder.serve_files import RECORD_RE, log_re, tail_under
from arena.report import charts
from arena.untrusted import shown, shown_lines

HERE = Path(__file__).parent
REPORT_STATIC = HERE.parent / "report" / "static"
ASSETS = {  # the only static files served: name -> (file, content type)
    "ladder.js": (HERE / "static" / "ladder.js", "text/javascript; charset=utf-8"),
    "ladder.css": (HERE / "static" / "ladder.css", "text/css; charset=utf-8"),
    "viewer.css": (REPORT_STATIC / "viewer.css", "text/css; charset=utf-8"),
    "table_state.js": (REPORT_STATIC / "table_state.js", "text/javascript; charset=utf-8"),
    "viewer.js": (REPORT_STATIC / "viewer.js", "text/javascript; charset=utf-8"),
}
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["shown"] = shown
    env.filters["url"] = lambda s: quote(str(s), safe="")
    return env


def csp(html: str) -> str:
    """The Content-Security-Policy of a page: its own scripts and the inline ones it was rendered with, nothing
    from elsewhere, no form, no frame, no plugin."""
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
                      for s in _INLINE_SCRIPT.findall(html))
    return (f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'").replace("  ", " ")


def board_view(snap: dict[str, Any]) -> dict[str, Any]:
    """What the leaderboard shows: the ladder, its rows, the final and the entrants' names; no path at all."""
    return {"ladder": snap["ladder"], "leaderboard": snap["leaderboard"], "final": snap["final"],
            "entrants": sorted(snap["entrants"])}


def _chart(versions: list[dict[str, Any]]) -> str:
    """The entrant's versions' ratings against games played, in the report's chart."""
    points = {f"v{v['version']}": {int(g): r for g, r in v.get("rating_history") or []} for v in versions}
    games = sorted({g for p in points.values() for g in p})
    if not games:
        return '<p class="empty">No rated games yet.</p>'
    return charts.history_chart({"games": games, "bots": {name: [p.get(g) for g in games] for name, p in points.items()}})


def entrant_view(root: Path, snap: dict[str, Any], name: str,
                 released: Callable[[str], bool] = lambda rel: True) -> dict[str, Any] | None:
    """One entrant's page data (None: no such entrant): versions, chart, recent games with their replay links
    (a game whose deal-set is not complete has none yet: ``released``), failures with the tail of this
    entrant's own log (a log path that is not its own is never read)."""
    person = snap["entrants"].get(name)
    if person is None:
        return None
    own = log_re(name)
    tails: dict[str, str | None] = {}
    failures = []
    for f in person["failures"]:
        log = f.get("log")
        if isinstance(log, str) and own.fullmatch(log):
            if log not in tails:
                tail = tail_under(root, log)
                tails[log] = None if tail is None else shown_lines(tail)
            excerpt = tails[log]
        else:
            excerpt = None
        failures.append({"game": f["game"], "kind": f["kind"], "reason": f["reason"], "excerpt": excerpt})
    recent = []
    for g in person["recent_games"]:
        rec = g.get("record")
        replay = f"/game/{rec}" if isinstance(rec, str) and RECORD_RE.fullmatch(rec) and released(rec) else None
        recent.append({"game": g["game"], "placings": g["placings"], "finished": g["finished"], "replay": replay})
    versions = [{k: v.get(k) for k in ("version", "submitted", "fingerprint", "status", "reason", "games")}
                for v in person["versions"]]
    return {"name": name, "ladder": snap["ladder"], "versions": versions, "chart": _chart(person["versions"]),
            "recent_games": recent, "failures": failures}


def board_page(view: dict[str, Any]) -> str:
    return _env().get_template("ladder_board.html").render(v=view)


def entrant_page(view: dict[str, Any]) -> str:
    return _env().get_template("ladder_entrant.html").render(v=view)


def reports_page(keys: list[str]) -> str:
    return _env().get_template("ladder_reports.html").render(keys=keys)


def message_page(status: int, text: str) -> str:
    return _env().get_template("ladder_message.html").render(status=status, text=text)
