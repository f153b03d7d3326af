"""A sample bot that also measures its own time (for bench/protocol.py).

It reports two figures at shutdown, appended to the file in $BENCH_OUT as
``decisions policy_seconds busy_seconds``: the time in the policy's decision
alone, and the client library's count of all time spent on requests (from
receiving one to having sent the reply: decoding and encoding included).
"""

from __future__ import annotations

import atexit
import os
import sys
import time

from sample_bots.policy_bot import PolicyBot


class TimedBot(PolicyBot):
    def __init__(self, policy: str) -> None:
        super().__init__(policy)
        self.compute = 0.0
        self.count = 0

    def draw(self, observation):  # type: ignore[no-untyped-def]
        obs = self._obs(observation)
        t = time.perf_counter()
        out = self.policy.draw(obs)  # type: ignore[union-attr]
        self.compute += time.perf_counter() - t
        self.count += 1
        return out

    def play(self, observation):  # type: ignore[no-untyped-def]
        from arena.rules.actions import play_to_data

        obs = self._obs(observation)
        t = time.perf_counter()
        out = self.policy.play(obs)  # type: ignore[union-attr]
        self.compute += time.perf_counter() - t
        self.count += 1
        return play_to_data(out)


def _report(bot: TimedBot) -> None:
    path = os.environ.get("BENCH_OUT")
    if path:
        with open(path, "a") as f:
            f.write(f"{bot.count} {bot.compute} {bot.busy_s}\n")


if __name__ == "__main__":
    bot = TimedBot(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "greedy")
    atexit.register(_report, bot)
    bot.run()
