"""`arena replay` shows the table after each turn (melds with their numbers, owners and wilds, hand sizes,
stock, discard top), one deal with --deal, one seat's view with --seat; checked against the engine."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from arena.cli import app
from arena.rules.actions import play_from_wire
from arena.rules.cards import texts
from arena.rules.game import Game
from arena.rules.log import DrawEntry, ForfeitEntry, PlayEntry, entry_from_data
from arena.rules.record import Header

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _replay(*args: str) -> list[str]:
    done = CliRunner().invoke(app, ["replay", *args])
    assert done.exit_code == 0, done.output
    return done.output.splitlines()


def _engine_states(record: Path) -> list[tuple[list[int], int, str, list[str]]]:
    """(hand sizes, stock, discard top, melds as shown) after every play or forfeit, from the engine."""
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    header = Header.from_data(lines[0])
    g = Game(header.rules, header.players, header.seed, header.suits)
    out = []
    for raw in lines[1:]:
        e = entry_from_data(raw)
        if isinstance(e, DrawEntry):
            g.draw(e.source)
        elif isinstance(e, PlayEntry | ForfeitEntry):
            if isinstance(e, PlayEntry):
                g.play(play_from_wire(list(e.actions), e.discard))
            else:
                g.forfeit(e.seat, e.reason, e.failure)
            if not (g.over and not g.melds):
                out.append(([len(h) for s, h in enumerate(g.hands) if g.in_game[s]], len(g.stock),
                            texts(g.discard[-1:])[0] if g.discard else "none", [f"[{m.id}]" for m in g.melds]))
    return out


def test_the_table_after_every_turn_is_the_engines():
    record = GOLDEN / "german.jsonl"
    shown = _replay(str(record))
    tables = [line for line in shown if line.startswith("    table: ")]
    sizes = [line for line in shown if line.startswith("    hands: ")]
    states = _engine_states(record)
    assert len(tables) == len(sizes) == len(states) > 20
    assert any("=" in t for t in tables)  # a wild shows what it stands for
    for table, size, (hand_sizes, stock, top, ids) in zip(tables, sizes, states):
        assert [int(n) for n in re.findall(r" (\d+)(?:,|$)", size.split("·")[0].strip())] == hand_sizes
        assert f"stock {stock} " in size and size.endswith(f"discard top {top}")
        assert re.findall(r"\[\d+\]", table) == ids


def test_one_deal_and_one_seats_view():
    record = GOLDEN / "german.jsonl"
    header = json.loads(record.read_text().splitlines()[0])
    deal2 = _replay(str(record), "--deal", "2")
    assert any(line.startswith("deal 2:") for line in deal2)
    assert not any(line.startswith(("deal 1:", "deal 3:")) for line in deal2)
    seat1 = _replay(str(record), "--seat", "1")
    holds = [line for line in seat1 if " holds: " in line]
    assert holds and all(line.strip().startswith(header["seats"][1]) for line in holds)
    assert not any(line.strip().startswith("hands 0:") for line in seat1)  # no deal's hands of every seat
    bad = CliRunner().invoke(app, ["replay", str(record), "--seat", "5"])
    assert bad.exit_code == 2 and "no such seat" in bad.output
