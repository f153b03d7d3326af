"""A protocol bot that decides with one of the engine's built-in policies.

The policy is rebuilt at every ``new_game`` from the rules the referee sends,
seeded from the game id and seat, so the same game gives the same moves.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

from arena.policies import Policy, make_policy
from arena.rules.actions import play_to_data
from arena.rules.observation import Observation
from arena.rules.options import rules_from_data
from protocol.client import Bot
from protocol.messages import NewGame


class PolicyBot(Bot):
    raw_observations = True  # converted straight into the engine's Observation

    def __init__(self, policy: str) -> None:
        self.name = policy
        self.policy_name = policy
        self.policy: Policy | None = None

    def on_new_game(self, msg: NewGame) -> None:
        rules = rules_from_data(msg.rules)
        self.policy = make_policy(self.policy_name, rules, zlib.crc32(f"{msg.game}/{msg.seat}".encode()))

    def _obs(self, observation: Any) -> Observation:
        if isinstance(observation, dict):
            return Observation.from_data(observation)
        return Observation.from_data(msgspec.to_builtins(observation))

    def draw(self, observation: Any) -> str:
        assert self.policy is not None, "a request came before new_game"
        return self.policy.draw(self._obs(observation))

    def play(self, observation: Any) -> dict[str, Any]:
        assert self.policy is not None, "a request came before new_game"
        return play_to_data(self.policy.play(self._obs(observation)))
