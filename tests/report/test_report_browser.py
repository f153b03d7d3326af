"""The report and the replay viewer in a real headless browser (Chromium driven by Playwright).

One browser for the module.  The report of a small real tournament (run with
``arena run --report``) lists every bot with the ratings ``arena standings
--format json`` gives and links every game to its replay; the viewer's table
after every step equals the engine's replay of the same record, for one game
per preset and a game with failures; one seat's view shows no other seat's
cards; a running tournament's report reloads itself; no page logs an error.
Screenshots go to the test's tmp dir (and to $ARENA_SCREENSHOTS when set).
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from playwright.sync_api import sync_playwright

from arena.report import charts, write_report, write_viewer
from arena.report.gamedata import BIN_COUNT
from arena.rules.actions import play_from_wire
from arena.rules.cards import text
from arena.rules.game import Game
from arena.rules.log import wire_meld
from arena.rules.presets import PRESETS
from arena.rules.record import REFEREE_ENTRIES, Header, replay
from protocol.messages import Action
from tests.conftest import MISBEHAVE, ROOT, arena_processes
from tests.helpers import CHROMIUM, CHROMIUM_ARGS, unmarked

# the first test also runs the module's tournament and starts the browser: over 120 s on a loaded machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SMALL = f"""\
name = "small"
variant = "basic"
seats = 2
deal_sets = 2
concurrency = 2
seed = 7

[time]
decision_ms = 10000

[[bots]]
name = "greedy"
command = "greedy"

[[bots]]
name = "random"
command = "random"

[[bots]]
name = "oops"
command = "{sys.executable} {MISBEHAVE} illegal_once"
"""
GAMES = 12


# -- fixtures -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results folder of a finished 12-game tournament run with --report (before any browser starts)."""
    base = tmp_path_factory.mktemp("tournament")
    (base / "small.toml").write_text(SMALL)
    out = base / "results"
    got = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(base / "small.toml"), "--out", str(out),
                          "--report", "--report-every", "4", "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert "report: " in got.stderr and (out / "report.html").is_file()
    deadline = time.monotonic() + 10
    while arena_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not arena_processes(), "processes left after the run"
    return out


@pytest.fixture(scope="module")
def browser(tournament: Path) -> Iterator[Any]:
    with unmarked():  # it outlives each test: another module's leak check in this worker must not see it
        p = sync_playwright().start()
    try:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
    finally:
        p.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh 1280x800 tab; the test fails if any page it shows logs an error or throws."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    yield tab
    context.close()
    assert not errors, errors


def shot(tab: Any, tmp_path: Path, name: str, full: bool = False) -> None:
    tab.screenshot(path=str(tmp_path / name), full_page=full)
    extra = os.environ.get("ARENA_SCREENSHOTS")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(Path(extra) / name), full_page=full)


# -- the engine's view of a record ----------------------------------------------------------

def engine_state(g: Game) -> dict[str, Any]:
    return {
        "hands": [sorted(text(c) for c in h) for h in g.hands],
        "melds": [{k: d[k] for k in ("id", "owner", "kind", "cards", "wilds")} for d in (msgspec.to_builtins(wire_meld(m)) for m in g.melds)],
        "top": text(g.discard[-1]) if g.discard else "",
        "stock": len(g.stock),
        "totals": list(g.totals),
    }


def engine_checkpoints(record: Path) -> dict[int, dict[str, Any]]:
    """The engine's table after n record entries, for every n that ends an action's entries."""
    lines = [json.loads(x) for x in record.read_text().splitlines() if x.strip()]
    header, entries = Header.from_data(lines[0]), lines[1:]
    replay(header, entries)  # the record replays as a whole
    g = Game(header.rules, header.players, header.seed, header.suits)
    engine_at = [i + 1 for i, e in enumerate(entries) if e["e"] not in REFEREE_ENTRIES]
    out: dict[int, dict[str, Any]] = {}
    out[engine_at[len(g.log) - 1]] = engine_state(g)
    for e in entries:
        if e["e"] not in ("draw", "play", "forfeit"):
            continue
        if e["e"] == "draw":
            g.draw(e["source"])
        elif e["e"] == "play":
            g.play(play_from_wire(msgspec.convert(e["actions"], list[Action]), e["discard"]))
        else:
            g.forfeit(e["seat"], e.get("reason", ""), e.get("failure", "forfeit"))
        out[engine_at[len(g.log) - 1]] = engine_state(g)
    assert len(g.log) == len(engine_at)
    return out


PAGE_STATES = """() => arenaViewer.steps.map(s => ({
  hands: s.hands.map(h => h.slice().sort()),
  melds: s.melds.map(m => ({id: m.id, owner: m.owner, kind: m.kind, cards: m.cards, wilds: m.wilds})),
  top: s.discard.length ? s.discard[s.discard.length - 1] : "", stock: s.stock, totals: s.totals}))"""

DOM_STATE = """() => ({
  sizes: [...document.querySelectorAll('#seats .seat')].map(s => Number(s.dataset.count)),
  top: document.getElementById('discard-top').dataset.card,
  stock: Number(document.getElementById('stock').dataset.count),
  melds: [...document.querySelectorAll('#melds .meld')].map(m => ({id: Number(m.dataset.id), owner: Number(m.dataset.owner),
    cards: [...m.querySelectorAll('.card')].map(c => c.dataset.card),
    wilds: [...m.querySelectorAll('.card')].map(c => { const w = c.querySelector('.as'); return w ? w.dataset.standsFor : null; })})),
  step: Number(document.getElementById('step').dataset.step)})"""


def viewer_of(record: Path, tmp_path: Path) -> Path:
    return write_viewer(record, tmp_path / f"{record.stem}.html")


def check_steps(tab: Any, record: Path) -> dict[int, dict[str, Any]]:
    """Every checkpoint of the page's state list equals the engine's; returns the checkpoints."""
    expected = engine_checkpoints(record)
    states = tab.evaluate(PAGE_STATES)
    assert len(states) == sum(1 for x in record.read_text().splitlines() if x.strip())  # header + entries = 1 + n
    for n, want in expected.items():
        assert states[n] == want, f"{record.name}: step {n}"
    return expected


STEP_ALL = """() => {
  const read = () => ({
    step: Number(document.getElementById('step').dataset.step),
    hands: [...document.querySelectorAll('#seats .seat')].map(s => [...s.querySelectorAll('.hand .card[data-card]')].map(c => c.dataset.card).sort()),
    sizes: [...document.querySelectorAll('#seats .seat .size')].map(x => x.textContent),
    top: document.getElementById('discard-top').dataset.card,
    stock: Number(document.getElementById('stock').dataset.count),
    melds: [...document.querySelectorAll('#melds .meld')].map(m => ({id: Number(m.dataset.id), owner: Number(m.dataset.owner),
      cards: [...m.querySelectorAll('.card')].map(c => c.dataset.card),
      wilds: [...m.querySelectorAll('.card')].map(c => { const w = c.querySelector('.as'); return w ? w.dataset.standsFor : null; })})),
    totals: [...document.querySelectorAll('#seats .seat .total')].map(t => Number(t.textContent.replace('total ', ''))),
    event: document.getElementById('event').textContent});
  const out = [read()];
  const total = Number(document.getElementById('step-total').textContent);
  for (let i = 0; i < total; i++) {
    document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
    out.push(read());
  }
  return out;
}"""


def step_through_page(tab: Any, record: Path) -> None:
    """Press the right arrow through the whole page: at every step the drawn table (every hand's cards, the
    melds with their wilds, the discard pile's top, the stock, the totals) equals the engine's."""
    expected = engine_checkpoints(record)
    tab.focus("body")
    seen = tab.evaluate(STEP_ALL)
    entries = sum(1 for x in record.read_text().splitlines() if x.strip()) - 1
    assert [d["step"] for d in seen] == list(range(entries + 1))
    for n, want in expected.items():
        d = seen[n]
        got = {"hands": d["hands"], "top": d["top"], "stock": d["stock"], "totals": d["totals"],
               "melds": d["melds"]}
        assert got == {k: want[k] for k in ("hands", "top", "stock", "totals")} | {
            "melds": [{k: m[k] for k in ("id", "owner", "cards", "wilds")} for m in want["melds"]]}, \
            f"{record.name}: step {n}"
        assert all(s == f"{len(h)} card{'' if len(h) == 1 else 's'}" for s, h in zip(d["sizes"], want["hands"]))
    assert all(d["event"] for d in seen[1:]), "a step with an empty event box"


def arena_view(record: Path, out: Path) -> Path:
    got = subprocess.run([sys.executable, "-m", "arena.cli", "view", str(record), "-o", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert got.returncode == 0 and got.stdout.strip() == f"viewer: {out}", got.stderr
    return out


def mid_deal_step(expected: dict[int, dict[str, Any]]) -> int:
    """A step with melds on the table and cards in every hand, about 40 steps in."""
    good = [n for n, s in sorted(expected.items()) if s["melds"] and all(s["hands"]) and n >= 20]
    return good[0] if good else max(expected)


# -- tests ------------------------------------------------------------------------------------

def test_the_report_lists_every_bot_with_the_standings_ratings(tournament: Path, page: Any, tmp_path: Path):
    got = subprocess.run([sys.executable, "-m", "arena.cli", "standings", str(tournament), "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    st = json.loads(got.stdout)
    page.goto((tournament / "report.html").as_uri())
    shown = page.eval_on_selector_all("#standings-table tbody tr", "rs => rs.map(r => [r.dataset.bot, "
                                      "r.querySelector('.rating').textContent, r.cells[0].textContent])")
    # a bound (never lost / never won) is shown "> 1284", a provisional rating with a "?"
    assert [(b, r) for b, r, _ in shown] == [
        (row["bot"], (f"{row['bound']} " if row.get("bound") else "") + f"{row['rating']:.0f}"
         + ("?" if row.get("provisional") else "")) for row in st["rows"]]
    assert page.text_content("#progress").strip().startswith(f"Finished: {GAMES} of {GAMES} games.")
    assert page.locator("svg[aria-label='ratings with 95% intervals'] g.interval").count() == 3
    page.click("#standings-table th:nth-child(3)")  # rating, highest first
    page.click("#standings-table th:nth-child(3)")  # then lowest first
    order = page.eval_on_selector_all("#standings-table tbody tr", "rs => rs.map(r => r.dataset.bot)")
    assert order == [row["bot"] for row in sorted(st["rows"], key=lambda r: r["rating"])]  # not rank order:
    # provisional bots are ranked after established ones whatever their rating
    title = page.get_attribute(f"#crosstable td[data-row='{st['rows'][0]['bot']}'][data-col='{st['rows'][1]['bot']}']", "title")
    assert title and "LOS" in title and "W-L-D" in title
    shot(page, tmp_path, "report.png", full=True)


def test_clicking_a_game_opens_its_replay_and_the_failure_filter_works(tournament: Path, page: Any):
    journal = [json.loads(x) for x in (tournament / "journal.jsonl").read_text().splitlines()]
    failed = [e for e in journal if any(e["failures"][s] for s in range(2))]
    assert failed, "the misbehaving bot should have failed at least once"
    page.goto((tournament / "report.html").as_uri())
    assert page.locator("#games-table tbody tr").count() == GAMES
    page.check("#f-failed")
    assert page.locator("#games-table tbody tr").count() == len(failed)
    page.select_option("#f-kind", "illegal")
    assert page.locator("#games-table tbody tr").count() == len(failed)
    page.uncheck("#f-failed")
    page.select_option("#f-kind", "")
    page.select_option("#f-bot", "oops")
    assert page.locator("#games-table tbody tr").count() == sum(1 for e in journal if "oops" in e["seats"])
    game = failed[0]
    page.click(f"#games-table tr[data-index='{game['index']}'] a.replay")
    page.wait_for_selector("#seats .seat")
    assert game["game_id"] in page.text_content("#title")
    record = tournament / game["record"]
    check_steps(page, record)
    page.click("#next-failure")
    failure = page.locator("#failure")
    assert failure.is_visible() and failure.get_attribute("data-kind") == "illegal"
    assert "RULES" in failure.text_content()


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_arrow_keys_step_through_the_table_the_engine_replays(preset: str, page: Any, tmp_path: Path):
    record = ROOT / "tests" / "golden" / f"{preset}.jsonl"
    page.goto(viewer_of(record, tmp_path).as_uri())
    expected = check_steps(page, record)
    n = mid_deal_step(expected)
    page.focus("body")
    for _ in range(n):
        page.keyboard.press("ArrowRight")
    dom = page.evaluate(DOM_STATE)
    want = expected[n]
    assert dom["step"] == n
    assert dom["sizes"] == [len(h) for h in want["hands"]]
    assert dom["top"] == want["top"] and dom["stock"] == want["stock"]
    assert dom["melds"] == [{k: m[k] for k in ("id", "owner", "cards", "wilds")} for m in want["melds"]]
    if preset == "wrotham":  # the README's picture: mid-deal, with a wild on the table
        wild = next(k for k, st in sorted(expected.items()) if k > n and any(any(m["wilds"]) for m in st["melds"]))
        page.evaluate(f"() => arenaViewer.show({wild})")
        assert page.locator("#melds .card.wild").count() >= 1
        shot(page, tmp_path, "replay.png")


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_arena_view_of_an_arena_play_record_moves_the_cards_as_the_engine_does(preset: str, page: Any, tmp_path: Path):
    """The page `arena view` writes for a record of `arena play` with the sample bots (timed entries, as a
    user's records are), stepped through from the first step to the last."""
    record = tmp_path / f"{preset}.jsonl"
    got = subprocess.run([sys.executable, "-m", "arena.cli", "play", preset, "greedy", "random", "greedy",
                          "--seed", "11", "--record", str(record)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert got.returncode == 0, got.stderr
    assert '"ms":' in record.read_text()
    page.goto(arena_view(record, tmp_path / f"{preset}.html").as_uri())
    step_through_page(page, record)


def test_arena_view_of_a_tournament_record_moves_the_cards_as_the_engine_does(tournament: Path, page: Any,
                                                                            tmp_path: Path):
    journal = [json.loads(x) for x in (tournament / "journal.jsonl").read_text().splitlines()]
    record = tournament / journal[-1]["record"]
    page.goto(arena_view(record, tmp_path / "t.html").as_uri())
    step_through_page(page, record)


def test_one_seat_view_shows_no_other_seats_cards(page: Any, tmp_path: Path):
    record = ROOT / "tests" / "golden" / "basic.jsonl"
    entries = [json.loads(x) for x in record.read_text().splitlines()[1:]]
    page.goto(viewer_of(record, tmp_path).as_uri())
    page.select_option("#view", "1")
    page.focus("body")
    for n in range(1, 80):
        page.keyboard.press("ArrowRight")
        seen = page.evaluate("() => [...document.querySelectorAll('#seats .seat')].map(s => "
                             "[s.querySelectorAll('.hand .card[data-card]').length, s.querySelectorAll('.hand .back').length])")
        assert seen[0][0] == 0 and seen[2][0] == 0, f"step {n}: another seat's cards are shown"
        assert seen[1][1] == 0
        e = entries[n - 1]
        if e["e"] == "draw" and e["seat"] != 1 and e["source"] == "stock":
            assert e["card"] not in page.text_content("#event")
    assert page.locator("#seats .seat[data-seat='1'] .hand .card[data-card]").count() > 0


LEGEND = """() => {
  const svg = document.querySelector("svg[aria-label='rating over games played']");
  const top = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('g.legend')].map(g => {
    const bot = g.dataset.bot, text = g.querySelector('text'), link = g.querySelector('line');
    const line = [...svg.querySelectorAll('polyline')].find(p => p.dataset.bot === bot);
    const pts = line.points, last = pts.getItem(pts.numberOfItems - 1);
    const ctm = svg.getScreenCTM(), end = new DOMPoint(last.x, last.y).matrixTransform(ctm);
    const box = text.getBoundingClientRect();
    return {bot, fill: getComputedStyle(text).fill, stroke: getComputedStyle(line).stroke,
            linkFrom: Number(link.getAttribute('y1')), lastY: last.y,
            box: {x: box.x - top.x, y: box.y - top.y, w: box.width, h: box.height}, endY: end.y - top.y};
  });
}"""

PIXELS = """async ([png, boxes]) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + png;
  await img.decode();
  const c = document.createElement('canvas');
  c.width = img.width; c.height = img.height;
  const ctx = c.getContext('2d');
  ctx.drawImage(img, 0, 0);
  return boxes.map(b => {
    const d = ctx.getImageData(Math.floor(b.x), Math.floor(b.y), Math.ceil(b.w), Math.ceil(b.h)).data;
    const inked = [];
    for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < 600) inked.push([d[i], d[i + 1], d[i + 2]]);
    return inked;
  });
}"""


def rgb(css: str) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])
    return r, g, b


def test_the_rating_history_legend_is_in_its_lines_colours_beside_their_ends(tournament: Path, page: Any,
                                                                            tmp_path: Path):
    """Each bot's name is drawn in its line's colour (computed style, and the pixels of a screenshot), one
    name per line, each beside its line's last point and none overlapping another."""
    page.goto((tournament / "report.html").as_uri())
    chart = page.locator("svg[aria-label='rating over games played']")
    chart.scroll_into_view_if_needed()
    legend = page.evaluate(LEGEND)
    lines = page.eval_on_selector_all("svg[aria-label='rating over games played'] polyline", "ps => ps.map(p => p.dataset.bot)")
    assert sorted(x["bot"] for x in legend) == sorted(lines) and len(lines) >= 3
    colours = [rgb(x["stroke"]) for x in legend]
    assert len(set(colours)) == len(lines)
    for x in legend:
        assert rgb(x["fill"]) == rgb(x["stroke"]), x["bot"]
        assert x["linkFrom"] == pytest.approx(x["lastY"], abs=0.1)  # the name is joined to its line's end
        assert abs(x["box"]["y"] + x["box"]["h"] / 2 - x["endY"]) <= 14 * len(legend), x["bot"]
    boxes = sorted((x["box"] for x in legend), key=lambda b: b["y"])
    assert all(a["y"] + a["h"] <= b["y"] + 1 for a, b in itertools.pairwise(boxes)), "legend names overlap"
    png = base64.b64encode(chart.screenshot(path=str(tmp_path / "history.png"))).decode()
    inked = page.evaluate(PIXELS, [png, [x["box"] for x in legend]])
    for x, want, px in zip(legend, colours, inked):
        assert len(px) > 10, f"{x['bot']}: no ink where its name is"
        near = sum(1 for p in px if sum((a - b) ** 2 for a, b in zip(p, want)) < 60 ** 2)
        dark = sum(1 for p in px if max(p) < 60)
        assert near > len(px) / 3, f"{x['bot']}: its name is not drawn in {want}"
        assert dark < near, f"{x['bot']}: its name is near-black"
    shot(page, tmp_path, "report-history.png")


def test_latency_axis_labels_stay_inside_their_chart(browser: Any):
    """The decade labels and marks of latency histograms at both ends of the scale (0.01 ms, 100 s) are
    drawn whole inside the chart."""
    low = [0] * BIN_COUNT
    low[0], low[3] = 5, 9
    high = [0] * BIN_COUNT
    high[BIN_COUNT - 1] = 4
    svgs = [charts.latency_chart("low", {"hist": low, "median": 0.011, "p99": 0.013, "max": 0.014}, None, 0),
            charts.latency_chart("high", {"hist": high, "median": 9e4, "p99": 9.5e4, "max": 9.9e4}, 100000, 1)]
    context = browser.new_context(viewport={"width": 1000, "height": 600})
    tab = context.new_page()
    css = (ROOT / "arena" / "report" / "static" / "report.css").read_text()
    tab.set_content(f"<style>{css}</style>" + "".join(svgs))
    got = tab.evaluate("""() => [...document.querySelectorAll('svg')].map(svg => {
      const r = svg.getBoundingClientRect();
      return [...svg.querySelectorAll('text')].map(t => { const b = t.getBoundingClientRect();
        return {text: t.textContent, left: b.left - r.left, right: r.right - b.right}; });
    })""")
    context.close()
    assert "0.01 ms" in [t["text"] for t in got[0]]
    for chart in got:
        for t in chart:
            assert t["left"] >= 0 and t["right"] >= 0, t


def test_the_report_of_a_running_tournament_reloads_with_new_games(tournament: Path, page: Any, tmp_path: Path):
    running = tmp_path / "running"
    shutil.copytree(tournament, running, ignore=shutil.ignore_patterns("report*", "run.lock"))
    full = (running / "journal.jsonl").read_text().splitlines(keepends=True)
    (running / "journal.jsonl").write_text("".join(full[:5]))
    write_report(running, refresh_s=1)
    page.goto((running / "report.html").as_uri())
    assert page.get_attribute("#progress", "data-played") == "5"
    page.wait_for_function("() => document.querySelectorAll('#games-table tbody tr').length === 5",
                           timeout=15000)  # the table is filled by the page's script, later under load
    (running / "journal.jsonl").write_text("".join(full))
    write_report(running, refresh_s=1)
    page.wait_for_function("() => document.getElementById('progress') && "
                           f"document.getElementById('progress').dataset.played === '{GAMES}'", timeout=15000)
    assert page.locator("#games-table tbody tr").count() == GAMES


def test_the_viewer_fits_a_phone_and_a_laptop_screen(browser: Any, tmp_path: Path):
    page_file = viewer_of(ROOT / "tests" / "golden" / "czech.jsonl", tmp_path)
    for width, height in ((390, 844), (1280, 800)):
        context = browser.new_context(viewport={"width": width, "height": height})
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda e: errors.append(str(e)))  # noqa: B023 - read before the next context
        tab.goto(page_file.as_uri() + "#step=200")
        overflow = tab.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{width}x{height}: {overflow}px wider than the window"
        assert tab.locator("#next").is_visible() and tab.locator("#seats .seat").count() == 3
        if width == 1280:  # the whole table at once, no scrolling
            box = tab.locator("#table").bounding_box()
            assert box and box["y"] + box["height"] <= height
        context.close()
        assert not errors, errors
