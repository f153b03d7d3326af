"""The house bot behind the protocol: ``arena.house.HousePolicy`` at one level.

As ``policy_bot.PolicyBot`` (seeded from the game id and seat), and it keeps each decision
under half the game's decision limit on the wall clock as well as its level's CPU budget.
"""

from __future__ import annotations

from arena.house import HousePolicy
from protocol.messages import NewGame
from sample_bots.policy_bot import PolicyBot


class HouseBot(PolicyBot):
    def on_new_game(self, msg: NewGame) -> None:
        super().on_new_game(msg)
        assert isinstance(self.policy, HousePolicy)
        if msg.clock.clock == "wall":
            self.policy.wall_s = msg.clock.decision_ms / 2000
