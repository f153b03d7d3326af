"""What the league tests share: fake tournaments for the pure functions (``L``, ``T`` with a top cut),
journals faked from known strengths, a base league file, and the small real league the end-to-end
tests run (``league_file``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena.tournament import schedule
from arena.tournament.config import validate_text
from arena.tournament.journal import JournalEntry

KEY = bytes(range(32))


@dataclass(frozen=True)
class L:
    bot_names: tuple[str, ...]
    seats: int = 4
    deal_sets: int = 1
    seating: str = "rotate"
    max_tables: int | None = None
    seed: int = 1
    twin_suits: str = "same"
    format: str = "swiss"
    games: int | None = 40


@dataclass(frozen=True)
class T(L):
    """``L`` with a top cut, adaptive by default."""

    format: str = "adaptive"
    top: int | None = 3
    top_order: bool = False
    uneven: bool = False


def names(n: int) -> tuple[str, ...]:
    return tuple(f"b{i:02d}" for i in range(n))


def fake_entries(t: L, upto_round: int, truth: np.ndarray) -> list[JournalEntry]:
    """Games of rounds < upto_round as the runner would journal them, placings by ``truth``."""
    out: list[JournalEntry] = []
    for r in range(upto_round):
        tables = schedule.round_tables(t, r, out)
        for i in range(r * schedule.games_per_round(t), (r + 1) * schedule.games_per_round(t)):
            g = schedule.game_at(t, i, KEY, tables)
            order = sorted(g.seats, key=lambda b: -truth[t.bot_names.index(b)])
            out.append(JournalEntry(index=i, game_id=g.game_id, deal_seed=g.deal_seed, table=g.table, set=g.set,
                                    seating=g.seating, seats=list(g.seats),
                                    placings=[order.index(b) + 1 for b in g.seats], totals=[0] * t.seats))
    return out


BASE = """\
name = "lg"
variant = "basic"
seats = 4
""" + "".join(f'[[bots]]\nname = "b{i}"\ncommand = "random"\n' for i in range(9))


def errors_of(text: str) -> list[str]:
    t, errors = validate_text(text, check_commands=False)
    assert (t is None) == bool(errors)
    return [f"{e.key}: {e.message}" for e in errors]


ROUND = 8    # 9 bots at 4 seats: 2 tables a round (one bot sits out) x 4 seatings (rotate) x 1 deal-set
ROUNDS = 3


def league_file(tmp_path: Path, fmt: str, sandbox: bool = False) -> Path:
    bots = "".join(f'\n[[bots]]\nname = "{kind}{i}"\ncommand = "{kind}"\n'
                   for i, kind in enumerate(["greedy", "random"] * 4 + ["greedy"]))
    text = f"""\
name = "{fmt}"
variant = "basic"
seats = 4
format = "{fmt}"
games = {ROUND * ROUNDS}
deal_sets = 1
seating = "rotate"
concurrency = 2
records = false
sandbox = {str(sandbox).lower()}
seed = 3

[rules]
target = 50

[time]
decision_ms = 10000
{bots}"""
    path = tmp_path / f"{fmt}.toml"
    path.write_text(text)
    return path


def read_index(raw: bytes) -> int:
    return int(json.loads(raw)["index"])
