"""From the env to the arena: a policy written against arena.env runs as a bot (sample_bots.env_bot),
and the example linear policy (sample_bots.linear_env) trains in the env and plays in `arena play`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.env import single_agent
from sample_bots.linear_env import LinearPolicy, train

ROOT = Path(__file__).resolve().parents[2]


def _agreement_with_greedy(policy: LinearPolicy, games: int = 4) -> float:
    from arena.policies import GreedyPolicy

    env = single_agent("basic", players=2, opponents="random")
    teacher = GreedyPolicy(env.aec.rules)
    agree = total = 0
    for g in range(games):
        obs, info = env.reset(seed=500 + g)
        done = False
        while not done:
            d = info["decision"]
            mine = policy(obs, d)
            want = (0 if teacher.draw(d.observation) == "stock" else 1) if d.observation.phase == "draw" else 2
            if obs["action_mask"].sum() > 1:
                agree += mine == want
                total += 1
            obs, _r, done, _t, info = env.step(want)
    return agree / total


def test_linear_policy_learns_greedy_from_the_cards_in_seconds():
    untrained = _agreement_with_greedy(LinearPolicy())
    policy, _ = train(games=12, seed=1)
    trained = _agreement_with_greedy(policy)
    assert trained >= 0.75 and trained > untrained + 0.3, (trained, untrained)


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
def test_trained_policy_plays_in_arena_play_and_its_record_verifies(tmp_path):
    weights = tmp_path / "w.json"
    t = subprocess.run([sys.executable, "-m", "sample_bots.linear_env", "--train", str(weights), "--games", "8"],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert t.returncode == 0, t.stderr
    assert "agrees with greedy" in t.stdout and weights.exists()
    record = tmp_path / "g.jsonl"
    bot = f"{sys.executable} -m sample_bots.linear_env {weights}"
    p = subprocess.run([sys.executable, "-m", "arena", "play", "basic", bot, "greedy", "--name", "linear",
                        "--name", "greedy", "--no-sandbox", "--seed", "3", "--record", str(record)],
                       capture_output=True, text=True, cwd=ROOT, timeout=90, start_new_session=True)
    assert p.returncode == 0, p.stderr
    assert "linear" in p.stdout and "crash" not in p.stdout and "illegal" not in p.stdout
    v = subprocess.run([sys.executable, "-m", "arena", "replay", "--verify", str(record)],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert v.returncode == 0 and "verified" in v.stdout, v.stdout
    # the bot made the env policy's moves: its seat drew and played through the whole game
    entries = [json.loads(line) for line in record.read_text().splitlines()]
    assert sum(1 for e in entries if e.get("e") == "play" and e["seat"] == 0) > 10


def test_env_bot_makes_the_moves_the_policy_chooses():
    """The adapter feeds the policy what the env gives it and sends back the move the action stands for."""
    import msgspec

    from arena.referee.wire import observation as wire_observation
    from arena.rules.game import Game
    from arena.rules.options import resolve
    from protocol import messages as m
    from sample_bots.env_bot import EnvBot

    rules = resolve("basic")
    seen: list[np.ndarray] = []

    def last_allowed(observation, decision):
        seen.append(observation["observation"])
        return int(np.flatnonzero(observation["action_mask"])[-1])

    bot = EnvBot(last_allowed)
    bot.on_new_game(m.NewGame(game="g", seat=0, players=["a", "b"], rules=rules.to_data(),
                              clock=m.Clock(decision_ms=1000, bank_ms=0, increment_ms=0, grace_ms=50)))
    g = Game(rules, 2, 4)
    for _ in range(40):
        obs = g.observation(g.current)
        w = msgspec.convert(msgspec.to_builtins(wire_observation(obs)), m.Observation)
        if g.phase.value == "draw":
            src = bot.draw(w)
            assert src == obs.legal_draws[-1]
            g.draw(src)
        else:
            out = bot.play(w)
            from arena.env.encoding import candidates
            from arena.rules.actions import play_from_wire

            want = candidates(rules, obs)[-1]
            got = play_from_wire(out["actions"], out["discard"])
            assert got == want
            g.play(got)
        if g.over:
            break
    assert len(seen) >= 20


def test_an_env_policy_is_a_fixed_opponent_for_self_play():
    """single_agent takes a policy written against the env as an opponent: here a copy that always
    picks the last allowed action; every one of its moves is legal (the engine would raise)."""
    calls = []

    def last_allowed(observation, decision):
        calls.append(1)
        return int(np.flatnonzero(observation["action_mask"])[-1])

    env = single_agent("basic", players=3, opponents=["greedy", last_allowed, "greedy"])  # one per seat
    obs, _info = env.reset(seed=2)
    done, steps = False, 0
    while not done and steps < 2000:
        obs, _r, done, _t, _info = env.step(2 if obs["action_mask"][2] else 0)
        steps += 1
    assert done and len(calls) > 20
