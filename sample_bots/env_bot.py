"""A protocol bot that runs a policy written against ``arena.env``, unchanged.

The policy is any ``arena.env.encoding.EnvPolicy``: a callable taking the observation
dict (``observation`` tensor, ``action_mask``) and the ``Decision`` (the engine
observation and the candidate plays), returning an action; the env gives it exactly
these at every step.  This adapter builds them from the protocol's request with the
same encoder (``arena.env.encoding``: numpy and the engine, no PettingZoo), so a
trained agent enters ``arena play``, ``arena match`` and tournaments like any bot.
``protocol/`` stays free of ``arena`` (SECURITY.md): the adapter lives here, beside
the sample bots that also decide with the engine.
"""

from __future__ import annotations

from typing import Any

from arena.env.encoding import AsPolicy, EnvPolicy
from arena.referee.wire import observation_from_wire
from arena.rules.actions import play_to_wire
from arena.rules.options import rules_from_data
from protocol.client import Bot
from protocol.messages import NewGame, Observation


class EnvBot(Bot):
    def __init__(self, policy: EnvPolicy, name: str = "env-policy") -> None:
        self.name = name
        self.env_policy = policy
        self.policy: AsPolicy | None = None

    def on_new_game(self, msg: NewGame) -> None:
        self.policy = AsPolicy(rules_from_data(msg.rules), self.env_policy)

    def draw(self, observation: Observation) -> str:
        assert self.policy is not None, "a request came before new_game"
        return self.policy.draw(observation_from_wire(observation))

    def play(self, observation: Observation) -> dict[str, Any]:
        assert self.policy is not None, "a request came before new_game"
        actions, discard = play_to_wire(self.policy.play(observation_from_wire(observation)))
        return {"actions": actions, "discard": discard}
