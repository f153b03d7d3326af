"""The house bot behind the protocol: ``arena.house.HousePolicy`` at one level.

As ``policy_bot.PolicyBot`` (seeded from the game id and seat), and it keeps each decision
under half the game's decision limit (CPU time, and wall time on the wall clock) as well as
within its level's CPU budget.
"""

from __future__ import annotations

from arena.house import HousePolicy
from protocol.messages import NewGame
from sample_bots.policy_bot import PolicyBot


class HouseBot(PolicyBot):
    def on_new_game(self, msg: NewGame) -> None:
        super().on_new_game(msg)
        assert isinstance(self.policy, HousePolicy)
        half = msg.clock.decision_ms / 2000  # half the limit, in seconds
        self.policy.cap_s = half
        if msg.clock.clock == "wall":
            self.policy.wall_s = half
