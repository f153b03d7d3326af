"""``arena ladder serve DIR``: the live leaderboard over HTTP, read-only (docs/ARCHITECTURE.md, "The ladder").

A stdlib ``ThreadingHTTPServer`` answers GET and HEAD only (any other method: 405) on a fixed set of
routes, never a file path taken from the request:

- ``/`` the leaderboard, ``/entrant/NAME`` an entrant's page, both redrawn by their script from
- ``/api/snapshot`` and ``/api/entrant/NAME`` (``serve_pages``: what anyone may see of a snapshot);
- ``/game/REL`` the replay viewer of a game record (the same page as ``arena view``), REL a record of a
  batch or of the final that its journal lists, once every seating of its deal-set is journaled (a
  replay shows every hand, and the set's twins are dealt the same cards);
- ``/report/`` the reports (``arena.report``) of the final and of each batch, written on demand to a
  private folder of the server's own (``serve_report``);
- ``/assets/NAME`` the pages' fixed scripts and styles.

Files under DIR are read only through ``serve_files`` (no ``..``, no link followed).  The snapshot is
recomputed at most every ``SNAPSHOT_TTL`` seconds whatever the number of readers, who meanwhile get the
one before; a connection may
hold a thread ``TIMEOUT_S`` seconds at most between bytes, at most ``MAX_CONNECTIONS`` are served at
once, and a request line or header over ``MAX_LINE`` bytes is refused.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import tomllib
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import msgspec

from arena.ladder import serve_pages
from arena.ladder.serve_files import MAX_RECORD, RECORD_RE, read_under
from arena.ladder.serve_report import Reports
from arena.record_check import RecordError
from arena.report.folderdata import complete_sets, seatings_per_set
from arena.report.gamedata import page_data
from arena.report.render import viewer_page

SNAPSHOT_TTL = 1.0
TIMEOUT_S = 10.0
MAX_CONNECTIONS = 256
MAX_LINE = 8192
READ_METHODS = ("GET", "HEAD")

Snapshotter = Callable[[Path], dict[str, Any]]


class ServeError(ValueError):
    """A bad --listen or folder: one sentence."""


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT`` for IPv6) as a host and a port."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ServeError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8000")
    return host.strip("[]"), int(port)


class Snapshots:
    """The ladder's snapshot, recomputed at most every ``ttl`` seconds by one reader at a time; the others get the
    one before meanwhile (a reader waits only for the very first), so a slow fit never queues the pages."""

    def __init__(self, root: Path, read: Snapshotter, ttl: float = SNAPSHOT_TTL) -> None:
        self.root, self.read, self.ttl = root, read, ttl
        self.lock = threading.Lock()
        self.at = -1e9
        self.current: tuple[dict[str, Any], bytes] | None = None
        self.computed = 0

    def get(self) -> tuple[dict[str, Any], bytes]:
        current = self.current
        if current is not None and time.monotonic() - self.at < self.ttl:
            return current
        if not self.lock.acquire(blocking=current is None):
            assert current is not None
            return current  # another reader is computing the next one
        try:
            if self.current is None or time.monotonic() - self.at >= self.ttl:
                data = self.read(self.root)
                self.current = (data, json.dumps(serve_pages.board_view(data)).encode())
                self.at = time.monotonic()
                self.computed += 1
            return self.current
        finally:
            self.lock.release()


class Released:
    """Which records of a batch (or of the final) may be replayed: journaled, and their deal-set complete.

    A record released stays released (a journal only grows), so a known one costs no read; otherwise a folder's
    journal is read again when its size or time changed, at most every ``ttl`` seconds and by one reader at a
    time, as the snapshot is: a ladder landing games faster than a journal can be read (a busy one, or a loaded
    machine) would otherwise read it once per link of every page."""

    def __init__(self, root: Path, ttl: float = SNAPSHOT_TTL) -> None:
        self.root, self.ttl = root, ttl
        self.lock = threading.Lock()
        self.seen: dict[str, tuple[tuple[int, int], float, frozenset[str]]] = {}

    def allows(self, rel: str) -> bool:
        folder_rel, _, record = rel.partition("/")
        if folder_rel == "batches":
            number, _, record = record.partition("/")
            folder_rel = f"batches/{number}"
        folder = self.root / folder_rel
        if folder.is_symlink() or folder.parent.is_symlink():
            return False
        cached = self.seen.get(folder_rel)
        if cached is not None and (record in cached[2] or time.monotonic() - cached[1] < self.ttl):
            return record in cached[2]
        with self.lock:
            return record in self._read(folder_rel, folder)

    def _read(self, folder_rel: str, folder: Path) -> frozenset[str]:
        from arena.tournament.journal import journal_path, read

        try:
            st = journal_path(folder).stat()
        except OSError:
            return frozenset()
        stamp = (st.st_size, st.st_mtime_ns)
        cached = self.seen.get(folder_rel)
        if cached is not None and (cached[0] == stamp or time.monotonic() - cached[1] < self.ttl):
            return cached[2]  # unchanged, or read by another reader while this one waited
        try:
            entries = read(folder).entries
        except Exception:  # noqa: BLE001 - an unreadable journal releases nothing
            entries = []
        released = complete_sets(entries, seatings_per_set(folder))
        names = frozenset(e.record for e in entries if e.record and (e.table, e.set) in released)
        self.seen[folder_rel] = (stamp, time.monotonic(), names)
        return names


_decoder = msgspec.json.Decoder(dict[str, Any])


def _record_page(root: Path, rel: str) -> str | None:
    """The viewer page of the record ``rel`` (None: missing, a link, or not a record)."""
    raw = read_under(root, rel, MAX_RECORD)
    if raw is None:
        return None
    try:
        objects = [_decoder.decode(x) for x in raw.split(b"\n") if x.strip()]
        if not objects:
            raise RecordError("empty")
    except (msgspec.DecodeError, RecordError):
        return None
    clock = None
    toml = read_under(root, rel.rsplit("/records/", 1)[0] + "/tournament.toml", 1 << 20)
    if toml is not None:
        try:
            t = tomllib.loads(toml.decode("utf-8")).get("time")
            clock = t if isinstance(t, dict) else None
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            clock = None
    return viewer_page(page_data(objects[0], objects[1:], clock), inline=False, asset_prefix="/assets/")


class LadderServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], root: Path, read: Snapshotter | None = None) -> None:
        from arena.ladder.snapshot import snapshot

        self.root = root
        self.snapshots = Snapshots(root, read or snapshot)
        self.released = Released(root)
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.reports = Reports(root)
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)

    def server_close(self) -> None:
        super().server_close()
        self.reports.close()

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)  # too many at once: this one is closed, the rest go on
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class Handler(BaseHTTPRequestHandler):
    server: LadderServer
    timeout = TIMEOUT_S
    server_version = "arena-ladder"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a public page's every hit is no news; errors are answered, not logged

    def parse_request(self) -> bool:
        if len(self.raw_requestline) > MAX_LINE:
            self.command, self.requestline, self.request_version = "", "", "HTTP/1.0"
            self.close_connection = True
            self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG)
            return False
        if not super().parse_request():
            return False
        if sum(len(k) + len(v) for k, v in self.headers.items()) > 4 * MAX_LINE:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
            return False
        return True

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # every method but GET and HEAD: 405, never 501 or a handler
            return self._not_allowed
        raise AttributeError(name)

    def _not_allowed(self) -> None:
        self.close_connection = True  # its body, if any, is never read: the connection ends here
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
                   b"read-only: only GET and HEAD\n", extra={"Allow": ", ".join(READ_METHODS)})

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        try:
            status, ctype, data = self._route(urlsplit(self.path).path)
        except Exception:  # noqa: BLE001 - one bad page is a 500, never the server's end
            status, ctype, data = (HTTPStatus.INTERNAL_SERVER_ERROR, "text/html; charset=utf-8",
                                   serve_pages.message_page(500, "The page could not be made.").encode())
        self._send(status, ctype, data, body)

    def _send(self, status: int, ctype: str, data: bytes, body: bool = True, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        if ctype.startswith("text/html"):
            self.send_header("Content-Security-Policy", serve_pages.csp(data.decode("utf-8")))
        else:
            self.send_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _route(self, raw: str) -> tuple[int, str, bytes]:
        html, js = "text/html; charset=utf-8", "application/json"
        try:
            path = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            path = ""
        if path == "/":
            snap, _ = self.server.snapshots.get()
            return 200, html, serve_pages.board_page(serve_pages.board_view(snap)).encode()
        if path == "/api/snapshot":
            return 200, js, self.server.snapshots.get()[1]
        for prefix, api in (("/entrant/", False), ("/api/entrant/", True)):
            if path.startswith(prefix):
                snap, _ = self.server.snapshots.get()
                view = serve_pages.entrant_view(self.server.root, snap, path[len(prefix):], self.server.released.allows)
                if view is None:
                    break
                return (200, js, json.dumps(view).encode()) if api else (200, html, serve_pages.entrant_page(view).encode())
        if path.startswith("/game/"):
            rel = path[len("/game/"):]
            if RECORD_RE.fullmatch(rel) and self.server.released.allows(rel):
                page = _record_page(self.server.root, rel)
                if page is not None:
                    return 200, html, page.encode()
        if path == "/favicon.ico":
            return 204, "image/x-icon", b""  # none: a browser asks, and a 404 would be its console's error
        if path == "/report" or path.startswith("/report/"):
            got = self.server.reports.get(path[len("/report"):].lstrip("/"))
            if got is not None:
                return 200, got[0], got[1]
        if path.startswith("/assets/"):
            asset = serve_pages.ASSETS.get(path[len("/assets/"):])
            if asset is not None:
                return 200, asset[1], asset[0].read_bytes()
        return 404, html, serve_pages.message_page(404, "There is no such page.").encode()


def make_server(root: Path, host: str, port: int, read: Snapshotter | None = None) -> LadderServer:
    """A server for the ladder in ``root`` bound to ``host:port`` (port 0: any free port); not yet serving."""
    from arena.ladder.layout import LADDER_FILE

    if not (root / LADDER_FILE).is_file():
        raise ServeError(f"{root} is not a ladder (it has no {LADDER_FILE}); make one with: arena ladder init {root}")
    try:
        return LadderServer((host, port), root.resolve(), read)
    except OSError as e:
        raise ServeError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
