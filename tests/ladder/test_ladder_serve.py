"""``arena ladder serve``: the live leaderboard over HTTP, read-only (docs/ARCHITECTURE.md, "The ladder").

A ladder folder written by hand (a registry, signed journals, real game records from tests/golden)
served by the real server in a thread: its pages and JSON, path traversal and planted links refused,
secrets, host paths and another entrant's log never in any response, every other method 405,
a hostile entrant name shown escaped; two Chromium pages that follow a game finishing and a new
version without a reload; 50 concurrent page loads while a fake ladder writes; the command itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin

import pytest

from arena.integrity import make_key, read_key
from arena.ladder import layout, serve
from arena.ladder.run import _batch_tournament
from arena.ladder.serve import make_server
from arena.ladder.settings import load, starter_text
from arena.ladder.snapshot import snapshot
from arena.tournament.config import write_resolved
from arena.tournament.journal import Journal, JournalEntry
from tests.conftest import ROOT
from tests.ladder.helpers import raw

GOLDEN = ROOT / "tests" / "golden" / "basic.jsonl"
ALICE_LOG = "ALICE-PRIVATE-PLAN-7f3a"
BOB_LOG = "bob's own output: Traceback ZeroDivisionError"
HOST_SECRET = "/secret/host/path/bot.py"
HOSTILE = "<script>alert(1)</script>[bold red]x[/]\x1b[31m\u202eevil"


def entry(i: int, seats: list[str], placings: list[int], failures: list[dict[str, int]] | None = None) -> JournalEntry:
    return JournalEntry(index=i, game_id=f"g{i:04d}", table=i // 2, set=0, seating=i % 2, seats=seats,
                        placings=placings, totals=[0] * len(seats), failures=failures or [{} for _ in seats],
                        record=f"records/g{i:06d}.jsonl")


def version(n: int, status: str = "active", reason: str | None = None) -> dict[str, Any]:
    return {"version": n, "submitted": f"2026-12-0{n}T00:00:00+00:00", "fingerprint": f"fp{n}", "status": status,
            "reason": reason, "command": f"python3 {HOST_SECRET}", "transport": "zmq"}


def add_game(root: Path, batch: int, i: int, seats: list[str], placings: list[int],
             failures: list[dict[str, int]] | None = None) -> None:
    """One finished game: its record written, then its journal line (as the runner does)."""
    folder = root / "batches" / f"{batch:06d}"
    (folder / "records").mkdir(parents=True, exist_ok=True)
    if not (folder / "tournament.toml").exists():  # the batch's resolved tournament, as the ladder writes it
        t = _batch_tournament(root, load(root), batch, [("alice.v1", "bob.v2")], layout.registry(root))
        write_resolved(replace(t, games=200), folder)
    key = read_key(folder / "secret.key") if (folder / "secret.key").exists() else make_key(folder)
    shutil.copyfile(GOLDEN, folder / "records" / f"g{i:06d}.jsonl")
    with Journal(folder, key) as j:
        j.append(entry(i, seats, placings, failures))


def fake_ladder(tmp_path: Path, games: int = 6) -> Path:
    """alice.v1 against bob.v2 (bob.v1 retired after a crash), their logs, and planted secrets."""
    root = tmp_path / "lad"
    root.mkdir()
    (root / layout.LADDER_FILE).write_text(starter_text("cup", "basic", 2), encoding="utf-8")
    layout.save_registry(root, {"alice": [version(1)],
                                "bob": [version(1, "retired", "replaced by version 2"), version(2)]})
    add_game(root, 1, 0, ["alice.v1", "bob.v2"], [1, 2], [{}, {"crash": 1}])
    for i in range(1, games):
        add_game(root, 1, i, ["alice.v1", "bob.v2"], [1, 2] if i % 3 else [2, 1])
    for who, text in (("alice/v1", ALICE_LOG), ("bob/v2", BOB_LOG)):
        logs = root / "entrants" / who / "logs"
        logs.mkdir(parents=True)
        (logs / "000001.log").write_text(text + "\n")
    (root / "history.jsonl").write_text('{"batch":"000001","ratings":{"alice.v1":[3,1550.0],"bob.v2":[2,1450.0]}}\n'
                                        '{"batch":"000002","ratings":{"alice.v1":[6,1580.0],"bob.v2":[5,1420.0]}}\n')
    (root / "organiser.key").write_text("ORGANISER-KEY-0d9e\n")
    return root


@contextmanager
def serving(root: Path, read: Callable[[Path], dict[str, Any]] | None = None) -> Iterator[str]:
    server = make_server(root, "127.0.0.1", 0, read)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def links(page: str, html: bytes) -> list[str]:
    """The page's links on this server (relative ones resolved), with the replays its games' data names."""
    text = html.decode()
    found = re.findall(r'(?:href|src)="([^"#:]+)"', text) + re.findall(r'"href":"([^"]+)"', text)
    return sorted({urljoin(page, f) for f in found})


def crawl(base: str) -> dict[str, bytes]:
    """Every page and file the server links to from its leaderboard, with the JSON the pages poll."""
    seen: dict[str, bytes] = {}
    todo = ["/", "/api/snapshot"]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        status, _h, body = raw(base, path)
        assert status == 200, (path, status)
        seen[path] = body
        if path.startswith("/entrant/"):
            todo.append("/api" + path)
        if path.endswith(".html") or not path.startswith(("/api/", "/assets/")):
            todo.extend(links(path, body))
    return seen


# -- pages and JSON ---------------------------------------------------------------------------------

def test_the_pages_show_the_snapshot(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path)
    with serving(root) as base:
        status, headers, body = raw(base, "/")
        board = json.loads(raw(base, "/api/snapshot")[2])
        bob = json.loads(raw(base, "/api/entrant/bob")[2])
        bob_page = raw(base, "/entrant/bob")[2].decode()
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in headers["content-security-policy"] and headers["x-content-type-options"] == "nosniff"
    snap = snapshot(root)
    assert board == {"ladder": snap["ladder"], "leaderboard": snap["leaderboard"], "final": None,
                     "entrants": ["alice", "bob"]}
    page = body.decode()
    for row in snap["leaderboard"]:
        assert f'href="/entrant/{row["entrant"]}"' in page and f"{row['rating']:.0f}" in page
    assert [v["version"] for v in bob["versions"]] == [1, 2] and "<svg" in bob["chart"]
    assert bob["recent_games"][0]["replay"] == "/game/batches/000001/records/g000005.jsonl"
    # bob's crash shows the tail of his own log, on his page only
    assert bob["failures"] == [{"game": "g0000", "kind": "crash", "reason": bob["failures"][0]["reason"],
                                "excerpt": BOB_LOG}]
    assert BOB_LOG.replace("'", "&#39;") in bob_page and "<polyline" in bob_page


def test_a_replay_is_the_viewer_of_the_record(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path)
    with serving(root) as base:
        status, headers, body = raw(base, "/game/batches/000001/records/g000003.jsonl")
        js = raw(base, "/assets/viewer.js")
    assert status == 200 and "window.ARENA_RECORD" in body.decode()
    assert '<script src="/assets/viewer.js">' in body.decode() and js[0] == 200
    # the page's one inline script is allowed by its hash, nothing else inline
    assert re.search(r"script-src 'self' 'sha256-[A-Za-z0-9+/=]+';", headers["content-security-policy"])
    record = json.loads(body.decode().split("window.ARENA_RECORD = ", 1)[1].split(";</script>", 1)[0])
    assert record["header"] == json.loads(GOLDEN.read_text().splitlines()[0])


@pytest.mark.slow  # 0.7-1.1 s of CPU or own time alone: too near the fast tier's bounds on a loaded machine
def test_a_replay_waits_for_its_deal_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fake_ladder(tmp_path, games=5)  # game 4 is seating 0 of table 2; its twin (game 5) is not played
    monkeypatch.setattr(serve, "seatings_per_set", lambda folder: 2)
    with serving(root) as base:
        assert raw(base, "/game/batches/000001/records/g000003.jsonl")[0] == 200
        assert raw(base, "/game/batches/000001/records/g000004.jsonl")[0] == 404
        add_game(root, 1, 5, ["bob.v2", "alice.v1"], [1, 2])
        # released within the snapshot's period (the journal is read again at most once a period)
        deadline = time.monotonic() + serve.SNAPSHOT_TTL + 5.0
        while (status := raw(base, "/game/batches/000001/records/g000004.jsonl")[0]) != 200:
            assert status == 404 and time.monotonic() < deadline, status
            time.sleep(0.05)


# -- read-only, and nothing but the allow-list -------------------------------------------------------

def test_path_traversal_and_links_out_are_refused(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path)
    outside = tmp_path / "outside"
    (outside / "records").mkdir(parents=True)
    lines = GOLDEN.read_text().splitlines(keepends=True)
    header = json.loads(lines[0]) | {"planted": "OUTSIDE-THE-LADDER"}
    (outside / "records" / "g000006.jsonl").write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    # journaled records whose deal-sets are complete, but: a record that is a link out of the ladder,
    # a batch whose records folder is a link out, and a final folder that is a link out
    records = root / "batches" / "000001" / "records"
    add_game(root, 1, 6, ["alice.v1", "bob.v2"], [1, 2])
    add_game(root, 1, 7, ["bob.v2", "alice.v1"], [1, 2])
    (records / "g000006.jsonl").unlink()
    (records / "g000006.jsonl").symlink_to(outside / "records" / "g000006.jsonl")
    add_game(root, 3, 6, ["alice.v1", "bob.v2"], [1, 2])
    add_game(root, 3, 7, ["bob.v2", "alice.v1"], [1, 2])
    shutil.rmtree(root / "batches" / "000003" / "records")
    (root / "batches" / "000003" / "records").symlink_to(outside / "records")
    (root / "final").symlink_to(outside)
    with serving(root) as base:
        assert raw(base, "/game/batches/000001/records/g000001.jsonl")[0] == 200
        for path in ("/game/batches/000001/records/g000006.jsonl",
                     "/game/batches/000003/records/g000006.jsonl",
                     "/game/final/records/g000006.jsonl",
                     "/game/batches/000001/records/../secret.key",
                     "/game/batches/000001/records/%2e%2e/secret.key",
                     "/game/batches/000001/secret.key",
                     "/game/entrants/alice/v1/logs/000001.log",
                     "/game//etc/passwd",
                     "/game/batches/000001/records/g000001.jsonl%00",
                     "/assets/../serve.py", "/assets/%2e%2e%2fserve.py", "/assets/report.js",
                     "/entrant/../organiser.key", "/api/entrant/alice%2f..%2fbob", "/entrant/nobody",
                     "/organiser.key", "/ladder.toml", "/batches/000001/secret.key", "/%ff%fe",
                     "/entrants/alice/v1/logs/000001.log"):
            status, _h, body = raw(base, path)
            assert status == 404, path
            assert ALICE_LOG.encode() not in body and b"ORGANISER" not in body and b"OUTSIDE" not in body


def test_nothing_secret_is_in_any_response(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fake_ladder(tmp_path)
    key = (root / "batches" / "000001" / "secret.key").read_bytes()

    def forged(folder: Path) -> dict[str, Any]:
        # a snapshot that names alice's log on bob's page: the server reads only an entrant's own logs
        snap = snapshot(folder)
        snap["entrants"]["bob"]["failures"].append({"game": "g0009", "kind": "crash", "reason": "forged",
                                                    "log": "entrants/alice/v1/logs/000001.log"})
        return snap

    with serving(root, forged) as base:
        pages = crawl(base)
    assert {"/", "/api/snapshot", "/entrant/alice", "/entrant/bob", "/api/entrant/bob", "/assets/ladder.js",
            "/game/batches/000001/records/g000001.jsonl", "/assets/viewer.js", "/report/",
            "/report/batches/000001/report.html", "/report/batches/000001/report/games/g000001.html",
            "/report/batches/000001/report/viewer.js"} <= set(pages)
    secrets = [ALICE_LOG, "ORGANISER-KEY", HOST_SECRET, str(tmp_path), str(root.resolve()), key.hex(),
               "entrants/alice/v1/logs", "entrants/bob/v2/logs", "secret.key", '"command"', "python3 "]
    for path, body in pages.items():
        text = body.decode("utf-8", "replace")
        for s in secrets:
            assert s not in text, (path, s)
        assert key not in body
    assert BOB_LOG in json.loads(pages["/api/entrant/bob"])["failures"][0]["excerpt"]


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "BREW"])
def test_every_method_but_get_and_head_is_405(tmp_path: Path, method: str) -> None:
    root = fake_ladder(tmp_path, games=2)
    before = sorted(str(p) for p in root.rglob("*"))
    with serving(root) as base:
        status, headers, body = raw(base, "/", method, body=b"state=final")
        head = raw(base, "/", "HEAD")
        get = raw(base, "/")
    assert status == 405 and headers["allow"] == "GET, HEAD" and b"<" not in body
    assert head[0] == 200 and head[2] == b"" and int(head[1]["content-length"]) == len(get[2])
    assert sorted(str(p) for p in root.rglob("*")) == before  # nothing written to the ladder


def test_a_huge_request_line_is_refused(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path, games=2)
    with serving(root) as base:
        assert raw(base, "/entrant/" + "a" * 20000)[0] == 414
        assert raw(base, "/")[0] == 200  # and the server goes on


def test_an_idle_connection_is_closed_and_others_are_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    root = fake_ladder(tmp_path, games=2)
    monkeypatch.setattr(serve.Handler, "timeout", 0.3)
    with serving(root) as base:
        host, port = base.removeprefix("http://").split(":")
        idle = socket.create_connection((host, int(port)), timeout=10)
        try:
            idle.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # a request never finished
            assert raw(base, "/")[0] == 200  # meanwhile another is answered
            start = time.monotonic()
            assert idle.recv(1024) == b""  # the server closed it
            assert time.monotonic() - start < 5
        finally:
            idle.close()


def test_a_hostile_entrant_name_is_shown_escaped(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path, games=2)
    entrants = layout.registry(root)
    entrants[HOSTILE] = [version(1, reason="<img src=x onerror=alert(2)> [link=http://x]y[/link]")]
    layout.save_registry(root, entrants)
    with serving(root) as base:
        board = raw(base, "/")[2].decode()
        status, _h, page = raw(base, "/entrant/" + quote(HOSTILE, safe=""))
        api = json.loads(raw(base, "/api/entrant/" + quote(HOSTILE, safe=""))[2])
    page_text = page.decode()
    assert status == 200 and api["name"] == HOSTILE
    for html in (board, page_text):
        assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "\x1b" not in html and "\u202e" not in html and "\\x1b[31m\\u202eevil" in html
    assert "<img" not in page_text and "&lt;img src=x onerror=alert(2)&gt;" in page_text
    assert "[bold red]x[/]" in board  # rich markup stays literal text


# -- the server under load, in a browser, as a command -----------------------------------------------

@contextmanager
def writing(root: Path, every_s: float = 0.05) -> Iterator[list[int]]:
    """A fake ladder that finishes a game every ``every_s`` seconds until the block ends."""
    done: list[int] = []
    stop = threading.Event()

    def run() -> None:
        i = 100
        while not stop.wait(every_s):
            add_game(root, 2, i, ["bob.v2", "alice.v1"], [1, 2] if i % 2 else [2, 1])
            done.append(i)
            i += 1

    t = threading.Thread(target=run, daemon=True)
    t.start()
    try:
        yield done
    finally:
        stop.set()
        t.join(10)


@pytest.mark.slow
def test_fifty_concurrent_page_loads_while_games_land(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path)
    server = make_server(root, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    errors: list[str] = []
    latencies: list[float] = []
    lock = threading.Lock()

    def load(n: int) -> None:
        pages = ("/", "/api/snapshot", "/entrant/bob", "/api/entrant/alice", "/game/batches/000001/records/g000002.jsonl")
        for path in (pages[n % 5:] + pages[:n % 5]) * 4:
            start = time.monotonic()
            try:
                with urllib.request.urlopen(base + path, timeout=30) as r:
                    r.read()
                    ok = r.status == 200
            except Exception as e:  # noqa: BLE001 - every failure is the test's finding
                ok = False
                with lock:
                    errors.append(f"{path}: {e}")
            with lock:
                latencies.append(time.monotonic() - start)
                if not ok:
                    errors.append(path)

    try:
        with writing(root) as done:
            start = time.monotonic()
            threads = [threading.Thread(target=load, args=(n,)) for n in range(50)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            elapsed = time.monotonic() - start
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    latencies.sort()
    p95 = latencies[int(0.95 * len(latencies)) - 1]
    print(f"\n50 clients, {len(latencies)} loads in {elapsed:.2f} s while {len(done)} games landed: "
          f"median {statistics.median(latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
          f"max {latencies[-1] * 1000:.0f} ms; snapshots computed {server.snapshots.computed}")
    assert not errors, errors[:5]
    assert len(latencies) == 50 * 20 and done
    assert latencies[-1] < 20.0  # generous: 2 shared cores; measured figures are in the README
    # the snapshot is shared: at most one per second (and the first), whatever 50 readers ask
    assert server.snapshots.computed <= elapsed / serve.SNAPSHOT_TTL + 2


@pytest.mark.slow
def test_two_browser_pages_follow_the_ladder_without_a_reload(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    from tests.helpers import CHROMIUM, CHROMIUM_ARGS

    root = fake_ladder(tmp_path)
    errors: list[str] = []
    with serving(root) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            tabs = [context.new_page(), context.new_page()]
            for tab in tabs:
                tab.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
                tab.on("pageerror", lambda e: errors.append(str(e)))
            board, bob = tabs
            board.goto(base + "/")
            bob.goto(base + "/entrant/bob")
            for tab in tabs:
                tab.evaluate("window.__loaded_once = 42")
            assert board.locator("#ladder-meta").inner_text().count("6 games") == 1
            assert bob.locator("#versions tbody tr").count() == 2
            # a game finishes, then bob submits version 3
            add_game(root, 2, 0, ["alice.v1", "bob.v2"], [2, 1])
            board.wait_for_function("() => document.querySelector('#ladder-meta').textContent.includes('7 games')",
                                    timeout=20000)
            bob.wait_for_function("() => document.querySelector('#recent tbody tr td').textContent === 'g0000' && "
                                  "document.querySelectorAll('#recent tbody tr').length === 7", timeout=20000)
            entrants = layout.registry(root)
            entrants["bob"][1]["status"] = "retired"
            entrants["bob"].append(version(3))
            layout.save_registry(root, entrants)
            board.wait_for_function("() => [...document.querySelectorAll('#board tbody tr td')].some(td => td.textContent === 'v3')",
                                    timeout=20000)
            bob.wait_for_function("() => document.querySelectorAll('#versions tbody tr').length === 3", timeout=20000)
            for tab in tabs:
                assert tab.evaluate("window.__loaded_once") == 42  # the same page: never reloaded
            assert "provisional" in board.locator("#board").inner_text()
            # a replay opens in the viewer without a CSP violation or a script error
            # the new game's twin is not played yet: no replay link for it; the one before has one
            assert bob.locator("#recent tbody tr:first-child td").nth(3).inner_text() == "-"
            bob.click("#recent tbody tr:nth-child(2) a")
            bob.wait_for_selector("#seats .seat", timeout=20000)
            bob.screenshot(path=str(tmp_path / "replay.png"))
            board.screenshot(path=str(tmp_path / "board.png"), full_page=True)
            # the reports: the batch's report runs its script under the page's CSP (its games table is drawn)
            board.click("nav a")
            board.click("#reports a >> text=batch 000001")
            board.wait_for_selector("#games-table tbody tr", timeout=20000)
        finally:
            browser.close()
    assert not errors, errors


@pytest.mark.slow
def test_the_command_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path, games=2)
    bad = subprocess.run([sys.executable, "-m", "arena.cli", "ladder", "serve", str(root), "--listen", "nowhere"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "HOST:PORT" in bad.stderr
    notladder = subprocess.run([sys.executable, "-m", "arena.cli", "ladder", "serve", str(tmp_path)],
                               capture_output=True, text=True, timeout=60)
    assert notladder.returncode == 2 and "is not a ladder" in notladder.stderr and "Traceback" not in notladder.stderr
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "ladder", "serve", str(root), "--listen", "0.0.0.0:0"],
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr is not None
        warning = proc.stderr.readline()
        line = proc.stderr.readline()
        assert "warning: listening on every interface" in warning
        port = int(re.search(r"http://[^:]+:(\d+)/", line).group(1))  # type: ignore[union-attr]
        status, _h, body = raw(f"http://127.0.0.1:{port}", "/")
        assert status == 200 and b"cup" in body
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
