"""A bot that keeps a diary in its data folder ($ARENA_DATA): one line per game it starts, and a
count of the games it remembers from earlier processes (for the sandbox tests; not a sample bot)."""

from __future__ import annotations

import os
import sys
from typing import Any

from protocol.client import Bot
from protocol.messages import NewGame, Observation


class Diarist(Bot):
    name = "diarist"

    def on_new_game(self, msg: NewGame) -> None:
        path = os.path.join(os.environ["ARENA_DATA"], "diary.txt")
        with open(path, "a") as f:
            f.write(f"{msg.game}\n")
        print(f"DIARY {sum(1 for _ in open(path))}", file=sys.stderr, flush=True)

    def play(self, obs: Observation) -> dict[str, Any]:
        return {"actions": [], "discard": obs.drawn if obs.drawn and not obs.took_discard else obs.hand[0]}


if __name__ == "__main__":
    Diarist().run()
