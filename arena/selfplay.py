"""In-process self-play: built-in policies playing whole games through the engine.

No processes, no sockets: this is what ``arena simulate`` and the engine
benchmark run.  Each seat's policy gets its own seed derived from the game
seed, so the same arguments give the same games.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.policies import Policy, make_policy
from arena.rules.game import Game, Phase
from arena.rules.options import RuleSet


def step(game: Game, policies: Sequence[Policy]) -> None:
    """One decision: the seat to act asks its policy and the engine applies the answer."""
    seat = game.current
    obs = game.observation(seat)
    if game.phase is Phase.DRAW:
        game.draw(policies[seat].draw(obs))
    else:
        game.play(policies[seat].play(obs))


def play_game(rules: RuleSet, policies: Sequence[Policy], seed: int) -> tuple[Game, int]:
    """Play one game to its end; returns the game and the number of decisions taken."""
    game = Game(rules, len(policies), seed)
    decisions = 0
    while not game.over:
        step(game, policies)
        decisions += 1
    return game, decisions


def policies_for(rules: RuleSet, names: Sequence[str], seed: int) -> list[Policy]:
    return [make_policy(name, rules, seed * 1009 + seat) for seat, name in enumerate(names)]
