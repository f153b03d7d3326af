"""Write the golden game records: one recorded game per preset, as JSON Lines.

Run once (from the project root): ``python tests/golden/make_golden.py``.
Each ``tests/golden/<preset>.jsonl`` holds the record header on its first
line (``arena.rules.record.header_of``) and then every log entry of the game,
one per line.  ``tests/rules/test_golden.py`` replays them with
``arena.rules.record.replay``; a change to the engine that alters any rule
outcome makes that replay fail.  Regenerate only when a rule change is
intended, and say so in the commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from arena.rules.options import resolve
from arena.rules.presets import PRESETS
from arena.rules.record import header_of
from arena.selfplay import play_game, policies_for

HERE = Path(__file__).resolve().parent

# (players, seed, policies) per preset: three seats; seeds chosen among 1..39 so that the
# games show as many rule features as possible (lay-offs, swaps, rebuilds, turned wilds,
# going rummy, turn-capped and stock-exhausted deals, elimination).
GR, GGG = ("greedy", "random", "greedy"), ("greedy", "greedy", "greedy")
GAMES: dict[str, tuple[int, int, tuple[str, ...]]] = {
    "basic": (3, 5, GR),
    "international": (3, 20, GGG),
    "parlett": (3, 34, GGG),
    "czech": (3, 1, GGG),
    "german": (3, 7, GR),
    "wrotham": (3, 29, GR),
}
assert set(GAMES) == set(PRESETS)


def record_lines(preset: str) -> list[str]:
    _players, seed, names = GAMES[preset]
    rules = resolve(preset)
    game, _ = play_game(rules, policies_for(rules, names, seed), seed)
    header = header_of(game, seats=tuple(f"{n}-{i}" for i, n in enumerate(names)), policies=list(names))
    return [json.dumps(header.to_data(), separators=(",", ":"))] + [msgspec.json.encode(e).decode() for e in game.log]


def main() -> None:
    for preset in PRESETS:
        lines = record_lines(preset)
        path = HERE / f"{preset}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{path.name}: {len(lines) - 1} entries")


if __name__ == "__main__":
    main()
