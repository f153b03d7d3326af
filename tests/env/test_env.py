"""arena.env: the PettingZoo AEC env and the Gymnasium single-agent wrapper (protocol/ENV.md)."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import arena.env as E
from arena.env import encoding as enc
from arena.policies import GreedyPolicy
from arena.referee.wire import observation as wire_observation
from arena.rules.game import Game
from arena.rules.options import resolve
from arena.rules.presets import PRESETS


def _random_game(e, seed: int, limit: int = 100_000):
    """Play one game with uniform masked actions; checks each chosen play is legal in the engine."""
    rng = np.random.default_rng(seed)
    e.reset(seed=seed)
    steps = 0
    for _agent in e.agent_iter(limit):
        obs, _r, term, trunc, _info = e.last()
        if term or trunc:
            e.step(None)
            continue
        allowed = np.flatnonzero(obs["action_mask"])
        assert allowed.size, "a live seat with nothing allowed"
        e.step(int(rng.choice(allowed)))
        steps += 1
    return steps


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(PRESETS))
def test_pettingzoo_api_test_every_preset(variant):
    lo, hi = PRESETS[variant].players
    for players in sorted({lo, min(hi, 6)}):
        api_test(E.env(variant, players=players), num_cycles=200, verbose_progress=False)


@pytest.mark.slow
def test_gymnasium_env_checker_single_agent():
    for variant, players in (("basic", 2), ("german", 4)):
        check_env(E.single_agent(variant, players=players), skip_render_check=True)


@pytest.mark.slow
@pytest.mark.parametrize("variant,players,rules", [
    ("basic", 2, {}), ("basic", 6, {}), ("german", 4, {}), ("czech", 5, {}), ("wrotham", 3, {}),
    ("international", 6, {}), ("parlett", 4, {"joker_swap": "none", "melds_per_turn": 2}),
])
def test_random_play_finishes_whole_games_with_legal_moves(variant, players, rules):
    e = E.raw_env(variant, players=players, **rules)
    for seed in range(2):
        steps = _random_game(e, seed)
        assert e.game.over and steps > 0
        assert sorted(e.game.placings())[0] == 1


def test_every_allowed_play_is_legal_and_candidate_0_is_greedy():
    rules = resolve("german")
    greedy = GreedyPolicy(rules)
    g = Game(rules, 3, 7)
    checked = 0
    while not g.over and checked < 150:
        obs = g.observation(g.current)
        if g.phase.value == "draw":
            g.draw(greedy.draw(obs))
            continue
        d = enc.decide(rules, obs)
        _x, mask = enc.encode(d)
        assert mask[:2].sum() == 0 and mask[2:].sum() == len(d.plays) > 0
        for k in np.flatnonzero(mask):
            assert g.can_play(enc.decode(d, int(k))), f"candidate {k} is illegal"
        assert enc.decode(d, 2) == greedy.play(obs)
        g.play(greedy.play(obs))
        checked += 1
    assert checked > 20


def test_decode_refuses_what_the_mask_refuses():
    rules = resolve("basic")
    g = Game(rules, 2, 3)
    d = enc.decide(rules, g.observation(g.current))
    _x, mask = enc.encode(d)
    for a in range(enc.ACTIONS):
        if mask[a]:
            enc.decode(d, a)
        else:
            with pytest.raises(ValueError, match="not allowed"):
                enc.decode(d, a)


def test_observation_holds_only_what_the_seat_sees():
    """Changing what seat 0 cannot see (seat 1's hand, the stock's order) leaves its tensor unchanged."""
    rules = resolve("basic")
    g = Game(rules, 2, 11)
    seat = 0 if g.current == 1 else 1  # the seat not to move
    other = 1 - seat
    x0, _ = enc.encode(enc.decide(rules, g.observation(seat)))
    y0, _ = enc.encode(enc.decide(rules, g.observation(other)))
    g.hands[other][0], g.stock[0] = g.stock[0], g.hands[other][0]
    g.stock.reverse()
    x1, _ = enc.encode(enc.decide(rules, g.observation(seat)))
    y1, _ = enc.encode(enc.decide(rules, g.observation(other)))
    assert np.array_equal(x0, x1)
    assert not np.array_equal(y0, y1)  # the hidden part is in the owner's tensor


def test_dict_observation_is_the_protocols():
    rules = resolve("czech")
    g = Game(rules, 3, 5)
    for seat in range(3):
        d = enc.decide(rules, g.observation(seat))
        assert d.protocol() == msgspec.to_builtins(wire_observation(g.observation(seat)))
        assert d.protocol()["hand"] and "stock" not in d.protocol()


def test_same_seed_same_game_and_next_seed_on_reset():
    def trace(e, seed):
        e.reset(seed=seed)
        out = []
        for _ in range(60):
            obs = e.observe(e.agent_selection)
            out.append(obs["observation"].tobytes())
            e.step(int(np.flatnonzero(obs["action_mask"])[-1]))
            if e.game.over:
                break
        return out

    a, b = E.raw_env("german", players=2), E.raw_env("german", players=2)
    assert trace(a, 4) == trace(b, 4)
    assert trace(a, 4) != trace(a, 5)
    a.reset(seed=9)
    a.reset()
    assert a.seed_used == 10
    g = Game(a.rules, 2, 10)  # the game arena play --seed 10 deals
    assert a.game.hands == g.hands and a.game.discard == g.discard


def _greedy_action(obs) -> int:
    """Candidate 0 (greedy's play) in a play decision, the stock in a draw."""
    return 2 if obs["action_mask"][2] else 0


def test_placing_rewards_at_the_end_and_score_rewards_per_deal():
    e = E.raw_env("basic", players=3)
    e.reset(seed=2)
    total = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, r, term, trunc, _ = e.last()
        total[agent] += r
        e.step(None if term or trunc else _greedy_action(obs))
    placings = e.game.placings()
    assert [total[a] for a in e.possible_agents] == [1 - (p - 1) for p in placings]

    s = E.raw_env("basic", players=2, reward="score")
    s.reset(seed=2)
    got = dict.fromkeys(s.possible_agents, 0.0)
    for agent in s.agent_iter():
        _obs, r, term, trunc, _ = s.last()
        got[agent] += r
        s.step(None if term or trunc else _greedy_action(_obs))
    assert [round(got[a] * 100) for a in s.possible_agents] == s.game.totals


def test_bad_arguments_are_one_clear_error():
    from arena.rules.options import RulesError

    with pytest.raises(RulesError, match="2 to 6 players"):
        E.raw_env("basic", players=7)
    with pytest.raises(RulesError, match="unknown rule option"):
        E.raw_env("basic", players=2, no_such_option=1)
    with pytest.raises(ValueError, match="reward"):
        E.raw_env("basic", players=2, reward="elo")


def test_single_agent_illegal_action_ends_the_episode():
    e = E.single_agent("basic", players=2)
    obs, _ = e.reset(seed=1)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _obs, r, done, _t, info = e.step(bad)
    assert done and r == -1.0 and info["illegal"]


def test_wrapped_env_ends_the_game_on_an_illegal_action():
    e = E.env("basic", players=2)
    e.reset(seed=3)
    obs, *_ = e.last()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    culprit = e.agent_selection
    e.step(bad)
    assert all(e.terminations.values())
    assert e.rewards[culprit] == -1


@pytest.mark.slow
def test_bench_env_times_the_env_and_openspiel():
    from bench.env import env_rate, openspiel_rate

    r = env_rate("basic", 2, 200)
    assert r["steps"] >= 200 and r["steps_per_cpu_s"] > 0
    spiel = openspiel_rate(200, tensor=True)
    if spiel is not None:  # the bench extra; without it the bench says so instead of a figure
        assert spiel["steps"] >= 200


@pytest.mark.slow
def test_random_option_sets_play_legally_to_the_end():
    """Drawn option sets (every choice option of RULES 9, a few numbers): the mask holds only legal moves."""
    import random

    from arena.rules.options import RulesError
    from arena.rules.ruleset import CHOICES

    rng = random.Random(28)
    played = 0
    while played < 8:
        variant = rng.choice(sorted(PRESETS))
        opts = {k: rng.choice(v) for k, v in CHOICES.items() if rng.random() < 0.5}
        opts.update(deals=2, end="deals", max_turns=60)
        if rng.random() < 0.5:
            opts["initial_meld"] = rng.choice([0, 15, 30])
        try:
            e = E.raw_env(variant, players=rng.randint(2, min(PRESETS[variant].players[1], 6)), **opts)
        except RulesError:
            continue  # a combination RULES 9 does not allow
        _random_game(e, played)  # an illegal candidate would raise in the engine
        assert e.game.over and not e.agents
        played += 1
