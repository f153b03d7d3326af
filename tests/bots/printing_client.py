"""A bot on the Python client library that prints to stdout at every decision (print-debugging).

Run with ``--stdio`` on the stdio transport: the library sends its prints to stderr (the bot's
log), so they never reach the protocol; it draws from the stock and discards the drawn card."""

from __future__ import annotations

from typing import Any

from protocol.client import Bot


class Printer(Bot):
    name = "printer"

    def draw(self, observation: Any) -> str:
        print(f"draw at seq {self.answered}: thinking")
        return "stock"

    def play(self, observation: Any) -> dict[str, Any]:
        print(f"play at seq {self.answered}: thinking")
        drawn = observation.drawn
        if drawn is not None and not observation.took_discard:
            return {"actions": [], "discard": drawn}
        return {"actions": [], "discard": next(c for c in observation.hand if c != drawn)}


if __name__ == "__main__":
    Printer().run()
