"""A protocol bot that decides with one of the engine's built-in policies.

The policy is rebuilt at every ``new_game`` from the rules the referee sends,
seeded from the game id and seat, so the same game gives the same moves.
Observations and plays cross between the protocol and the engine through
``arena.referee.wire`` and ``arena.rules.actions``.
"""

from __future__ import annotations

import zlib
from typing import Any

from arena.policies import Policy, make_policy
from arena.referee.wire import observation_from_wire
from arena.rules.actions import play_to_wire
from arena.rules.options import rules_from_data
from protocol.client import Bot
from protocol.messages import NewGame, Observation


class PolicyBot(Bot):
    def __init__(self, policy: str) -> None:
        self.name = policy
        self.policy_name = policy
        self.policy: Policy | None = None

    def on_new_game(self, msg: NewGame) -> None:
        rules = rules_from_data(msg.rules)
        self.policy = make_policy(self.policy_name, rules, zlib.crc32(f"{msg.game}/{msg.seat}".encode()))

    def draw(self, observation: Observation) -> str:
        assert self.policy is not None, "a request came before new_game"
        return self.policy.draw(observation_from_wire(observation))

    def play(self, observation: Observation) -> dict[str, Any]:
        assert self.policy is not None, "a request came before new_game"
        actions, discard = play_to_wire(self.policy.play(observation_from_wire(observation)))
        return {"actions": actions, "discard": discard}
