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

from arena.env.encoding import EnvPolicy, decide, decode, encode
from arena.policies import GreedyPolicy
from arena.referee.wire import observation_from_wire
from arena.rules.actions import Play, play_to_wire
from arena.rules.options import RuleSet, rules_from_data
from protocol.client import Bot
from protocol.messages import NewGame, Observation


class EnvBot(Bot):
    def __init__(self, policy: EnvPolicy, name: str = "env-policy") -> None:
        self.name = name
        self.policy = policy
        self.rules: RuleSet | None = None
        self.greedy: GreedyPolicy | None = None

    def on_new_game(self, msg: NewGame) -> None:
        self.rules = rules_from_data(msg.rules)
        self.greedy = GreedyPolicy(self.rules)

    def _move(self, observation: Observation) -> str | Play:
        assert self.rules is not None, "a request came before new_game"
        d = decide(self.rules, observation_from_wire(observation), self.greedy)
        x, mask = encode(d)
        return decode(d, int(self.policy({"observation": x, "action_mask": mask}, d)))

    def draw(self, observation: Observation) -> str:
        move = self._move(observation)
        assert isinstance(move, str)
        return move

    def play(self, observation: Observation) -> dict[str, Any]:
        move = self._move(observation)
        assert isinstance(move, Play)
        actions, discard = play_to_wire(move)
        return {"actions": actions, "discard": discard}
