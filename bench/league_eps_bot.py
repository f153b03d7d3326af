"""A sample bot of a chosen strength for bench/league_real.py: greedy, but each decision is, with probability
``$EPS`` (0 to 1), the random bot's (``arena.policies.EpsilonGreedyPolicy`` with its epsilon set)."""

from __future__ import annotations

import os
import zlib

from arena.policies import EpsilonGreedyPolicy
from arena.rules.options import rules_from_data
from protocol.messages import NewGame
from sample_bots.policy_bot import PolicyBot


class EpsBot(PolicyBot):
    def __init__(self, eps: float) -> None:
        super().__init__("greedy-eps10")
        self.eps = eps
        self.name = f"greedy-eps{eps:g}"

    def on_new_game(self, msg: NewGame) -> None:
        policy = EpsilonGreedyPolicy(rules_from_data(msg.rules), zlib.crc32(f"{msg.game}/{msg.seat}".encode()))
        policy.EPSILON = self.eps
        self.policy = policy


if __name__ == "__main__":
    EpsBot(float(os.environ.get("EPS", "0.1"))).run()
