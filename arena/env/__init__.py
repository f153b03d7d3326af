"""A PettingZoo environment of the arena's Rummy, and what a trained policy needs to run as a bot.

``env(variant, players=N, **rules)`` is the wrapped AEC env (PettingZoo's order and
bounds checks, an illegal action ends the game with -1 for the one who made it);
``raw_env(...)`` the bare one (``aec.RummyEnv``); ``single_agent(...)`` a Gymnasium env
of one seat against fixed policies (``gym.py``).  Encodings: ``encoding.py`` and
protocol/ENV.md.  PettingZoo and Gymnasium come with the ``env`` extra and are imported
only here, on first use: ``arena.env.encoding`` needs neither (a bot imports it).
"""

from __future__ import annotations

from typing import Any


def raw_env(variant: str = "basic", players: int = 2, **kwargs: Any) -> Any:
    from arena.env.aec import RummyEnv

    return RummyEnv(variant, players, **kwargs)


def env(variant: str = "basic", players: int = 2, **kwargs: Any) -> Any:
    from pettingzoo.utils import wrappers

    e = raw_env(variant, players, **kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def single_agent(variant: str = "basic", players: int = 2, **kwargs: Any) -> Any:
    from arena.env.gym import SingleAgentEnv

    return SingleAgentEnv(variant, players, **kwargs)
