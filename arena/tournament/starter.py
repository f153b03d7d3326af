"""The starter tournament file ``arena init`` writes (it validates as is)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import tomli_w

from arena.settings import (
    FailurePolicy,
)
from arena.tournament.config_bots import LIMIT_CEILINGS
from arena.tournament.model import TOURNAMENT_TIME, Tournament

_SHOWN_DEFAULTS = ("format", "deal_sets", "seating", "concurrency", "seed", "ladder_points")  # Tournament's


def starter_toml() -> str:
    """The text of a starter tournament file (``arena init``); it validates as is."""
    data: dict[str, Any] = {
        "name": "my-tournament",
        "variant": "basic",
        "seats": 2,
        **{key: getattr(Tournament, key) for key in _SHOWN_DEFAULTS},
        "rules": {"target": 100},
        "time": asdict(TOURNAMENT_TIME),
        "failures": asdict(FailurePolicy()),
    }
    bots = [{"name": "random", "command": "random"}, {"name": "greedy", "command": "greedy"}]
    ceilings = ", ".join(f"{k} {v}" for k, v in LIMIT_CEILINGS.items())
    header = """\
# Rummy bot arena: a tournament file.  Check it with `arena validate FILE`, run it with `arena run FILE`.
#
# variant      basic | international | parlett | czech | german | wrotham  (`arena variants` lists them)
# [rules]      overrides of the variant's options, by option name
# seats        players per table; every combination of `seats` bots plays
# format       round_robin (every combination) | gauntlet: with challengers = ["mine", ...], every table holds
#              exactly one challenger and seats-1 of the other bots, so each challenger meets the same field
#              | swiss | adaptive: leagues for large fields, with games = N (the budget); rounds in which every
#              bot plays once, at tables of bots of similar standing (swiss) or where the ranking is least
#              settled (adaptive); README, Leagues, says when to choose which
#              adaptive with top = K: aims at the top K, contested bots play more (top_order = true: their order);
#              uneven = true: the bots whose places are least sure play more (README, Leagues)
# deal_sets    deal-sets per table; each set is replayed under every seating (duplicate play)
# seating      all (every permutation) | williams (balanced Latin square) | rotate
# twin_suits   same (default) | permute: each seating of a deal-set gets the same deal with its suits
#              relabelled, so a bot cannot recognise a twin game by its cards (README, Tournaments)
# max_tables   optional cap on the number of tables (a seeded, balanced subset)
# [time]       clocks in milliseconds: start (handshake), per decision, bank, increment, grace;
#              clock = "cpu" (a decision is charged the CPU time of the bot's processes; default) | "wall";
#              wall_ms: with the CPU clock, a decision also ends after this much wall time (0: 4x its limit, at least 1 s)
# sandbox      true (default): every bot runs in its own sandbox (bubblewrap); false only for trusted bots
# [failures]   per failure kind: retry | default (referee plays a safe move) | forfeit; strikes = retries per game
# output       results folder (default results/<name>), relative to this file
# [[bots]]     name, command (a bundled bot: random, greedy; or a command line such as
#              "python my_bot.py"), optional cwd, env = {...}, transport = "zmq" | "tcp" | "stdio",
#              limits = { memory_mb = 512, cpu_seconds = 60, processes = 16, data_mb = 256 },
#              data = "folder" (the one folder it may write, kept between its games: $ARENA_DATA;
#              at most data_mb MiB, default 256)
# [limits]     every bot's limits where its entry sets none, and the ceiling of what an entry may ask
#              (built-in ceilings: CEILINGS; [limits] raises them)

""".replace("CEILINGS", ceilings)
    body = tomli_w.dumps(data)
    for bot in bots:
        body += "\n[[bots]]\n" + tomli_w.dumps(bot)
    example = """
# [[bots]]
# name = "mine"
# command = "python my_bot.py"
# cwd = "bots/mine"
# env = { LEVEL = "3" }
# limits = { memory_mb = 512, cpu_seconds = 60 }
"""
    return header + body + example
