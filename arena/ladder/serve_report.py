"""The reports ``arena ladder serve`` shows under ``/report/``: ``arena.report`` on the final and each batch.

Each batch (and the final) is a tournament results folder, so its report is ``write_report``'s page,
written on demand into a private folder of the server's own (never into DIR), again only when its
journal changed and at most every ``REPORT_TTL`` seconds.  Before a page is served, the settings
section (the resolved tournament file: the entrants' commands, folders and the output path) is cut,
and the ladder's own path replaced, so a report shows no host path and no entrant's command line.
Only ``report.html`` and the files ``write_report`` puts in its ``report/`` folder are served, read
through ``serve_files.read_under``.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

from arena.ladder.layout import FINAL, batch_dirs
from arena.ladder.serve_files import read_under
from arena.report.render import write_report
from arena.tournament.journal import journal_path

REPORT_TTL = 10.0
KEY_RE = re.compile(r"(batches/\d{6}|final)")
FILE_RE = re.compile(r"(batches/\d{6}|final)/(report\.html|report/(viewer\.css|table_state\.js|viewer\.js|games/g\d{1,9}\.html))")
_SETTINGS = re.compile(r'<section id="settings">.*?</section>', re.S)
_TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


class Reports:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache = Path(tempfile.mkdtemp(prefix="arena-ladder-serve-"))
        self.lock = threading.Lock()
        self.made: dict[str, tuple[tuple[int, int], float]] = {}

    def close(self) -> None:
        shutil.rmtree(self.cache, ignore_errors=True)

    def keys(self) -> list[str]:
        """The results folders with games, newest batch first, the final at the top."""
        out = [f"batches/{b.name}" for b in reversed(batch_dirs(self.root)) if journal_path(b).is_file()]
        return ([FINAL] if journal_path(self.root / FINAL).is_file() else []) + out

    def _write(self, key: str) -> bool:
        folder = self.root / key
        if folder.is_symlink() or folder.parent.is_symlink():
            return False
        try:
            st = journal_path(folder).stat()
        except OSError:
            return False
        stamp = (st.st_size, st.st_mtime_ns)
        with self.lock:
            made = self.made.get(key)
            if made and (made[0] == stamp or time.monotonic() - made[1] < REPORT_TTL):
                return True
            out = self.cache / key / "report.html"
            write_report(folder, out, refresh_s=None)
            for page in [out, *(out.parent / "report" / "games").glob("*.html")]:
                text = page.read_text(encoding="utf-8")
                clean = _SETTINGS.sub('<section id="settings"><h2>Settings</h2><p class="meta">The ladder\'s '
                                      "settings are its ladder.toml; the entrants' commands are not shown.</p></section>",
                                      text).replace(str(self.root), ".")
                if clean != text:
                    page.write_text(clean, encoding="utf-8")
            self.made[key] = (stamp, time.monotonic())
            return True

    def get(self, rel: str) -> tuple[str, bytes] | None:
        """(content type, bytes) of ``/report/REL`` (``""``: the list of reports), or None (404)."""
        if rel in ("", "index.html"):
            from arena.ladder.serve_pages import reports_page

            return _TYPES[".html"], reports_page(self.keys()).encode()
        m = FILE_RE.fullmatch(rel)
        if m is None or m.group(1) not in self.keys():
            return None
        if m.group(2) == "report.html" and not self._write(m.group(1)):
            return None
        data = read_under(self.cache, rel, 256 << 20)
        return None if data is None else (_TYPES[Path(rel).suffix], data)
