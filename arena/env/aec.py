"""The PettingZoo AEC environment over the engine (protocol/ENV.md).

``RummyEnv`` is one whole game of any preset and option set (``arena.rules.options.resolve``);
one step is one decision of the protocol, encoded by ``arena.env.encoding``.  The game
is the arena's own ``Game``: reset with seed s plays the game ``arena play --seed s``
would deal, and each reset without a seed takes the next seed, as ``simulate`` does.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from arena.env import encoding as enc
from arena.policies import GreedyPolicy
from arena.rules.actions import Play
from arena.rules.game import Game
from arena.rules.options import RulesError, RuleSet, resolve

REWARDS = ("placing", "score")


def placing_reward(placing: int, players: int) -> float:
    """+1 for first place down to -1 for last, linear in the placing (ties share a placing)."""
    return 1.0 - 2.0 * (placing - 1) / (players - 1)


class RummyEnv(AECEnv):
    metadata: ClassVar[dict[str, Any]] = {"name": "rummy_arena_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, variant: str = "basic", players: int = 2, reward: str = "placing",
                 render_mode: str | None = None, **rules: Any) -> None:
        """``rules`` are RULES 9 options by name, over the preset ``variant``.

        ``reward``: ``placing`` (at the game's end, +1 first .. -1 last) or ``score`` (after each
        deal, the seat's deal score / 100, signed so that more is better under either scoring).
        """
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward: expected one of {', '.join(REWARDS)}, not {reward!r}")
        self.rules: RuleSet = resolve(variant, rules or None)
        lo, hi = self.rules.players
        if not lo <= players <= hi:
            raise RulesError(f"players: {self.rules.name} is played by {lo} to {hi} players, not {players} (RULES 10)")
        self.n = players
        self.reward_kind = reward
        self.render_mode = render_mode
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self.agents = list(self.possible_agents)
        obs_space = spaces.Dict({
            "observation": spaces.Box(low=-enc.BOUND, high=enc.BOUND, shape=(enc.SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(enc.ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(enc.ACTIONS) for a in self.possible_agents}
        self._greedy = GreedyPolicy(self.rules)
        self._next_seed = 0
        self.game: Game | None = None
        self._decision: enc.Decision | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # -- the game -----------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._next_seed = seed
        self.seed_used = self._next_seed
        self._next_seed += 1
        self.game = Game(self.rules, self.n, self.seed_used)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[0]
        self._select()

    def _select(self) -> None:
        """Point at the seat to move and work out its decision (once per step: observe reuses it)."""
        assert self.game is not None
        seat = self.game.current
        self.infos[self.agent_selection] = {}  # in a game only the seat to move has an info: the one that moved
        self.agent_selection = self.possible_agents[seat]
        self._decision = enc.decide(self.rules, self.game.observation(seat), self._greedy)
        self.infos[self.agent_selection] = {"decision": self._decision}

    def decision(self, agent: str) -> enc.Decision:
        """The decision ``agent`` faces now (its observation; the candidates if it is to play)."""
        if self._decision is not None and agent == self.agent_selection:
            return self._decision
        assert self.game is not None, "reset() first"
        return enc.Decision(self.game.observation(self.possible_agents.index(agent)), self.rules)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        x, mask = enc.encode(self.decision(agent))
        return {"observation": x, "action_mask": mask}

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        decision = self._decision
        assert decision is not None
        self.apply(enc.decode(decision, int(action)))

    def apply(self, move: str | Play) -> None:
        """Step with a move in engine form (a draw source or any legal play, candidate or not):
        how fixed opponents that are engine policies move (``gym.py``)."""
        agent, game = self.agent_selection, self.game
        assert game is not None
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        before = len(game.deal_scores)
        if isinstance(move, str):
            game.draw(move)
        else:
            game.play(move)
        rewarded = False  # no step but a deal's or the game's end rewards anyone: then nothing to add up
        if self.reward_kind == "score" and len(game.deal_scores) > before:
            sign = -1.0 if self.rules.scoring == "penalty" else 1.0
            for scores in game.deal_scores[before:]:
                for s, a in enumerate(self.possible_agents):
                    self.rewards[a] += sign * scores[s] / 100
            rewarded = True
        if game.over:
            if self.reward_kind == "placing":
                for a, p in zip(self.possible_agents, game.placings()):
                    self.rewards[a] = placing_reward(p, self.n)
                rewarded = True
            self.terminations = dict.fromkeys(self.agents, True)
            self._decision = None
            for a in self.agents:
                self.infos[a] = {"placings": game.placings(), "totals": list(game.totals)}
        else:
            self._select()
        if rewarded:
            self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.game is None:
            return None
        g = self.game
        obs = g.observation(g.current)
        from arena.rules.cards import texts

        return (f"deal {g.deal_no} turn {g.turn + 1} seat {g.current} {g.phase.value}: hand {' '.join(texts(obs.hand))}; "
                f"discard {' '.join(texts(obs.discard[-1:]))}; melds {len(obs.melds)}; totals {g.totals}")

    def close(self) -> None:
        pass
