"""A Gymnasium single-agent env: one seat of ``RummyEnv`` against fixed opponents.

The opponents are built-in policies by name (``arena.policies``: ``greedy``, ``random``, the
house levels) or policies written against the env (an ``EnvPolicy``, e.g. an earlier copy
of the agent, for self-play), and move in-process between the agent's steps; the agent's rewards are the
AEC env's for its seat, summed over what happened since its last step.  An action the mask
does not allow ends the episode with reward -1 and ``info["illegal"]`` (what PettingZoo's
``TerminateIllegalWrapper`` does), so a random agent cannot crash it.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from arena.env.aec import RummyEnv
from arena.env.encoding import AsPolicy, EnvPolicy
from arena.policies import Policy, make_policy
from arena.rules.game import Phase


class SingleAgentEnv(gymnasium.Env):

    def __init__(self, variant: str = "basic", players: int = 2, seat: int = 0,
                 opponents: str | EnvPolicy | list[str | EnvPolicy] = "greedy", reward: str = "placing",
                 render_mode: str | None = None, **rules: Any) -> None:
        """``opponents``: one for every seat, or a list with one per seat (the agent's own entry
        is ignored; the last fills the rest)."""
        self.aec = RummyEnv(variant, players, reward=reward, render_mode=render_mode, **rules)
        if not 0 <= seat < players:
            raise ValueError(f"seat: expected 0..{players - 1}, not {seat}")
        self.seat = seat
        self.agent = self.aec.possible_agents[seat]
        names = list(opponents) if isinstance(opponents, list) else [opponents] * players
        self.opponent_names = (names + [names[-1]] * players)[:players]
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = self.aec.action_space(self.agent)
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["ansi"]}
        self._opponents: list[Policy | None] = []

    def _advance(self) -> float:
        """Let the opponents move until it is the agent's turn or the game is over; their rewards to the agent."""
        aec, game = self.aec, self.aec.game
        assert game is not None
        reward = 0.0
        while not game.over and game.current != self.seat:
            policy = self._opponents[game.current]
            assert policy is not None
            obs = game.observation(game.current)
            aec.apply(policy.draw(obs) if game.phase is Phase.DRAW else policy.play(obs))
            reward += aec.rewards[self.agent]
        return reward

    def _result(self, reward: float, info: dict[str, Any]) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        over = self.aec.game is not None and self.aec.game.over
        return self.aec.observe(self.agent), reward, over, False, info

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self.aec.reset(seed=seed)
        game_seed = self.aec.seed_used
        self._opponents = [None if s == self.seat else
                           make_policy(o, self.aec.rules, game_seed * 1009 + s) if isinstance(o, str) else
                           AsPolicy(self.aec.rules, o) for s, o in enumerate(self.opponent_names)]
        self._advance()
        return self.aec.observe(self.agent), dict(self.aec.infos[self.agent])

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        aec = self.aec
        assert aec.game is not None, "reset() first"
        if aec.game.over:
            raise RuntimeError("the episode is over: reset() first")
        mask = aec.observe(self.agent)["action_mask"]
        a = int(action)
        if not (0 <= a < len(mask) and mask[a]):
            aec.game.forfeit(self.seat, "illegal action", "illegal")
            return aec.observe(self.agent), -1.0, True, False, {"illegal": True}
        aec.step(a)
        reward = aec.rewards[self.agent]
        reward += self._advance()
        return self._result(reward, dict(aec.infos[self.agent]))

    def render(self) -> str | None:
        return self.aec.render()
