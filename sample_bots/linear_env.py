"""The whole loop in one file: a linear softmax policy trained in ``arena.env``, then run as a bot.

Train (behaviour cloning of the built-in greedy, 30 games, well under a second of CPU)::

    python3 -m sample_bots.linear_env --train weights.json --variant basic --games 30

Play it like any bot (the weights file is its only argument)::

    arena play basic "python3 -m sample_bots.linear_env weights.json" greedy --no-sandbox

A play decision scores each candidate by ``w . f_k``: ``f_k`` its features in the tensor
(protocol/ENV.md: the cards it puts on the table, its discard, goes out; the "greedy's
choice" flag is hidden from it) and how many partners its discard leaves in the hand.  A draw
scores taking the discard by ``v . g``, ``g`` how many partners the top card has in the hand.
The bot takes the best score (a tie to the last candidate), so the same game gives the same moves.  Swap ``train`` for any
learner: the bot only needs a callable (observation dict, decision) -> action.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from arena.env import encoding as enc

F = enc.PLAY_FEATURES
BLIND = 2 * enc.CARDS + 2  # the candidate feature "greedy's choice"


DRAW_FEATURES = 4  # 1, cards of the top's rank in hand, cards of its suit one or two ranks away, top is a joker
_NEAR = np.zeros((enc.CARDS, enc.CARDS))
for _c in range(4, enc.CARDS):
    for _o in range(4, enc.CARDS):
        if _o != _c and (_o >> 2 == _c >> 2 or (_o & 3 == _c & 3 and 0 < abs((_o >> 2) - (_c >> 2)) <= 2)):
            _NEAR[_c, _o] = 1.0


class LinearPolicy:
    def __init__(self, w: np.ndarray | None = None, v: np.ndarray | None = None,
                 sample: np.random.Generator | None = None) -> None:
        self.w = np.zeros(F + 1) if w is None else np.asarray(w, dtype=np.float64)
        self.v = np.zeros(DRAW_FEATURES) if v is None else np.asarray(v, dtype=np.float64)
        self.sample = sample  # None: take the best score
        self.last: tuple[str, np.ndarray, int, np.ndarray] = ("", np.zeros(0), 0, np.zeros(0))  # for training

    def __call__(self, observation: dict[str, np.ndarray], decision: enc.Decision) -> int:
        x, mask = observation["observation"], observation["action_mask"]
        allowed = np.flatnonzero(mask)
        hand = x[enc.HAND:enc.HAND + enc.CARDS].astype(np.float64)
        if allowed[0] < 2:  # a draw: stock scores 0, the discard v . features
            if len(allowed) == 1:
                self.last = ("", np.zeros(0), 0, np.zeros(0))
                return int(allowed[0])
            top = int(np.argmax(x[enc.TOP:enc.TOP + enc.CARDS]))
            same = hand[(top >> 2) * 4:(top >> 2) * 4 + 4].sum()
            near = _NEAR[top] @ hand - same
            feats = np.array([np.zeros(DRAW_FEATURES), [1.0, same, near, top == 0]])
            scores = feats @ self.v
        else:  # a play: its features in the tensor, and how many partners its discard leaves behind
            n = len(allowed)
            raw = x[enc.PLAYS:enc.PLAYS + n * F].reshape(n, F).astype(np.float64)
            raw[:, BLIND] = 0.0  # learn from the cards, not from greedy's flag
            partners = raw[:, enc.CARDS:2 * enc.CARDS] @ (_NEAR @ hand)
            feats = np.hstack([raw, partners[:, None]])
            scores = feats @ self.w
        p = np.exp(scores - scores.max())
        p /= p.sum()
        if self.sample is not None:
            i = int(self.sample.choice(len(p), p=p))
        else:  # the best; a tie goes to the last, so the list's order (greedy's play first) cannot help it
            i = int(np.flatnonzero(scores == scores.max())[-1])
        self.last = ("draw" if allowed[0] < 2 else "play", feats, i, p) if len(allowed) > 1 else ("", feats, i, p)
        return int(allowed[i])

    def to_json(self) -> str:
        return json.dumps({"w": self.w.tolist(), "v": self.v.tolist()})

    @classmethod
    def load(cls, path: str | Path) -> LinearPolicy:
        d = json.loads(Path(path).read_text())
        return cls(np.array(d["w"]), np.array(d["v"]))


def train(variant: str = "basic", players: int = 2, games: int = 30, opponents: str = "random",
          lr: float = 0.1, seed: int = 0) -> tuple[LinearPolicy, float]:
    """Behaviour cloning of the built-in greedy in the single-agent env: the agent plays greedy's moves
    and its weights follow the softmax cross-entropy gradient toward them.  The policy never sees
    the tensor's "greedy's choice" flag (``blind``), so it must learn from the cards.  Returns the
    policy and its agreement with greedy over the last quarter of the games."""
    from arena.env import single_agent
    from arena.policies import GreedyPolicy

    env = single_agent(variant, players=players, opponents=opponents)
    teacher = GreedyPolicy(env.aec.rules)
    policy = LinearPolicy()
    agree = total = 0
    for g in range(games):
        obs, info = env.reset(seed=seed * 100_000 + g)
        done = False
        while not done:
            d: enc.Decision = info["decision"]
            mine = policy(obs, d)
            if d.observation.phase == "draw":
                target = enc.DRAW_STOCK if teacher.draw(d.observation) == "stock" else enc.DRAW_DISCARD
            else:
                target = 2  # candidate 0 is greedy's play
            kind, feats, _i, p = policy.last
            if kind:
                want = int(np.flatnonzero(obs["action_mask"]).tolist().index(target))
                grad = feats[want] - p @ feats
                if kind == "play":
                    policy.w += lr * grad
                else:
                    policy.v += lr * grad
            if g >= games * 3 // 4:
                agree += mine == target
                total += 1
            obs, _r, done, _trunc, info = env.step(target)
    return policy, agree / max(total, 1)


_CLIENT_FLAGS = ("--endpoint", "--token", "--server-key")  # the client library's own (protocol/client.py)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--train"] and len(argv) >= 2:
        opts = dict(zip(argv[2::2], argv[3::2]))
        policy, agreement = train(opts.get("--variant", "basic"), int(opts.get("--players", 2)),
                                  int(opts.get("--games", 30)), opts.get("--opponents", "random"))
        Path(argv[1]).write_text(policy.to_json())
        print(f"trained; agrees with greedy on {agreement:.0%} of the last quarter's decisions")
        return 0
    words = [a for i, a in enumerate(argv) if not a.startswith("--") and not (i and argv[i - 1] in _CLIENT_FLAGS)]
    if len(words) != 1:
        print("usage: linear_env WEIGHTS.json  (a bot)  |  linear_env --train WEIGHTS.json [--variant V] "
              "[--players N] [--games G] [--opponents P]", file=sys.stderr)
        return 2
    from sample_bots.env_bot import EnvBot

    EnvBot(LinearPolicy.load(words[0]), name="linear-env").run()  # run() reads --endpoint/--token itself
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
