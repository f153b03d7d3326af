"""A sample bot that also measures its own time (for bench/protocol.py).

It reports two figures at shutdown, as a line ``BENCH decisions policy_seconds
busy_seconds cpu_seconds`` on stderr (its log: a sandboxed bot can write nowhere else): the time in the policy's decision
alone, and the client library's count of all time spent on requests (from
receiving one to having sent the reply: decoding and encoding included).
"""

from __future__ import annotations

import atexit
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

from arena.referee.wire import observation_from_wire
from arena.rules.observation import Observation
from sample_bots.policy_bot import PolicyBot

_T = TypeVar("_T")


class TimedBot(PolicyBot):
    def __init__(self, policy: str) -> None:
        super().__init__(policy)
        self.compute = 0.0
        self.count = 0
        self.cpu0: float | None = None  # the process's CPU at its first decision (start-up apart)

    def _timed(self, decide: Callable[[Observation], _T], observation: Any) -> _T:
        if self.cpu0 is None:
            self.cpu0 = time.process_time()
        obs = observation_from_wire(observation)
        t = time.perf_counter()
        out = decide(obs)
        self.compute += time.perf_counter() - t
        self.count += 1
        return out

    def draw(self, observation: Any) -> str:
        assert self.policy is not None, "a request came before new_game"
        return self._timed(self.policy.draw, observation)

    def play(self, observation: Any) -> dict[str, Any]:
        from arena.rules.actions import play_to_wire

        assert self.policy is not None, "a request came before new_game"
        actions, discard = play_to_wire(self._timed(self.policy.play, observation))
        return {"actions": actions, "discard": discard}


def _report(bot: TimedBot) -> None:
    cpu = time.process_time() - bot.cpu0 if bot.cpu0 is not None else 0.0
    print(f"BENCH {bot.count} {bot.compute} {bot.busy_s} {cpu}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    bot = TimedBot(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "greedy")
    atexit.register(_report, bot)
    bot.run()
