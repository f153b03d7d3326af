"""The human seat's process: ``python -m arena.human`` (started by ``arena play VARIANT human ...``).

A ``Bot`` of the client library whose decisions are typed by the person at the terminal: every
request redraws the table (``screen``) and reads moves (``commands``) at a prompt with tab completion
of cards, until a draw, or a discard (or ``out``) ends the turn.  The referee's error for an illegal
move is shown and the fresh request asks again.  ``hint`` asks the built-in greedy policy, fed the same
observation.  The endpoint and token come from ``ARENA_ENDPOINT`` / ``ARENA_TOKEN`` (never argv), and the terminal
to play on from ``ARENA_TTY`` (the device of the terminal ``arena play`` runs in): the process reads and
draws there directly, so its stdout and stderr can go to a log like any bot's.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import msgspec
from rich.console import Console

from arena.human import LEFT_EXIT, commands
from arena.human.screen import View, describe_event, render
from arena.untrusted import markup
from protocol.client import Bot
from protocol.messages import Error, GameOver, KnownEvent, NewGame, Observation

RECENT_KEPT = 40  # public events kept for the screen, which shows as many of the latest as fit


class LeftGame(BaseException):  # not an Exception: the client library would log it as the bot's error
    """The person typed quit (or closed the input): the process ends, and the seat forfeits."""


class HumanSeat(Bot):
    name = "human"

    def __init__(self, tty: str | None = None) -> None:
        # The terminal, opened twice (a tty cannot be one read-write text file): keys in, the screen out.
        fd = os.open(tty, os.O_RDWR | os.O_NOCTTY) if tty else None
        self.keys = os.fdopen(fd, "r", encoding="utf-8") if fd is not None else None
        self.screen = os.fdopen(os.dup(fd), "w", buffering=1, encoding="utf-8") if fd is not None else None
        self.console = Console(file=self.screen, highlight=False, soft_wrap=False, width=80,
                               force_terminal=self.screen is not None)
        self.view = View()
        self.me = 0
        strikes = os.environ.get("ARENA_STRIKES", "")
        self.strikes = int(strikes) if strikes.isdigit() else None  # the referee's retries per game, if told
        self.struck = 0  # errors with retry this game: each cost one of those strikes
        self.hinter: Any = None
        self._session: Any = None

    # -- what the seat is told ------------------------------------------------------------------
    def on_new_game(self, msg: NewGame) -> None:
        from sample_bots.policy_bot import PolicyBot

        self.me = msg.seat
        self.view = View(variant=str(msg.rules.get("name", "")), players=list(msg.players),
                         clock=f"{msg.clock.decision_ms / 1000:g} s a move" + (
                             f" + bank {msg.clock.bank_ms / 1000:g} s" if msg.clock.bank_ms else ""),
                         sort_by=self.view.sort_by)
        self.struck = 0
        self._show_strikes()
        self.hinter = PolicyBot("greedy")
        self.hinter.on_new_game(msg)

    def on_event(self, event: KnownEvent) -> None:
        line = describe_event(msgspec.to_builtins(event), self.me, self.view.players)
        if line:
            self.view.recent = (self.view.recent + [line])[-RECENT_KEPT:]

    def on_error(self, msg: Error) -> None:
        self.view.notice, self.view.notice_is_error = f"{msg.kind}: {msg.reason}", True
        if msg.retry and msg.game is not None:
            self.struck += 1
            self._show_strikes()

    def _show_strikes(self) -> None:
        if self.strikes is not None:
            left = max(0, self.strikes - self.struck)
            self.view.strikes = (f"strikes left {left} of {self.strikes}" if left else
                                 "no strikes left: a wrong move now is replaced by a safe one")

    def on_game_over(self, msg: GameOver) -> None:
        # Names and the reason are data: escaped for the markup, so "[/]" or "[link=...]" in a hello
        # name neither crashes this line nor styles it.
        places = ", ".join(f"{'you' if s == self.me else markup(self.view.players[s])} {p}. ({t})"
                           for s, (p, t) in sorted(enumerate(zip(msg.placings, msg.totals)), key=lambda x: x[1][0]))
        self.console.print(f"[bold]Game over[/] ({markup(msg.reason)}): {places}")

    # -- decisions -------------------------------------------------------------------------------
    def draw(self, observation: Observation) -> str:
        while True:
            cmd = self._ask(observation, "draw")
            if isinstance(cmd, commands.Draw):
                self.view.notice = ""
                return cmd.source
            self._say("first draw: d (stock) or p (the top discard)", error=True)

    def play(self, observation: Observation) -> dict[str, Any]:
        pending: list[dict[str, Any]] = []
        while True:
            self.view.pending = [commands.as_text(a) for a in pending]
            self.view.queued = list(pending)
            cmd = self._ask(observation, "play")
            typo = commands.check(cmd, list(observation.hand), [m.id for m in observation.melds], pending)
            if typo is not None:
                self._say(typo, error=True)  # caught here: the referee is not asked, no strike is used
            elif isinstance(cmd, commands.Table):
                pending.append(cmd.action)
                self.view.notice = ""
            elif isinstance(cmd, commands.Finish):
                self.view.notice, self.view.pending, self.view.queued = "", [], []
                return {"actions": pending, "discard": cmd.discard}
            elif isinstance(cmd, commands.Simple) and cmd.word in ("undo", "clear"):
                del pending[-1 if cmd.word == "undo" and pending else 0:]
                self.view.notice = ""
            elif isinstance(cmd, commands.Draw):
                self._say("you have drawn already: table cards (m, l, w) and discard (x CARD)", error=True)

    def _ask(self, obs: Observation, decision: str) -> commands.Command:
        """Redraw, read lines until one is a move; help, sort and hint are handled here."""
        while True:
            self.console.clear()
            for line in render(obs, decision, self.view):
                self.console.print(line, overflow="fold")
            try:
                text = self._prompt(obs)
            except (EOFError, KeyboardInterrupt):
                raise LeftGame from None
            try:
                cmd = commands.parse(text)
            except commands.CommandError as e:
                self._say(str(e), error=True)
                continue
            if isinstance(cmd, commands.Simple) and cmd.word == "quit":
                raise LeftGame
            if isinstance(cmd, commands.Simple) and cmd.word == "help":
                self._say(commands.HELP)
            elif isinstance(cmd, commands.Simple) and cmd.word == "sort":
                self.view.sort_by = "rank" if self.view.sort_by == "suit" else "suit"
            elif isinstance(cmd, commands.Simple) and cmd.word == "hint":
                self._say("hint: " + self._hint(obs, decision))
            else:
                return cmd

    def _say(self, text: str, error: bool = False) -> None:
        self.view.notice, self.view.notice_is_error = text, error

    def _hint(self, obs: Observation, decision: str) -> str:
        if self.hinter is None:
            return "no hint before the game starts"
        if decision == "draw":
            return "d" if self.hinter.draw(obs) == "stock" else "p"
        play = self.hinter.play(obs)
        moves = [commands.as_text(msgspec.to_builtins(a)) for a in play["actions"]]
        moves.append(f"x {play['discard']}" if play["discard"] else "out")
        return "; ".join(moves)

    def _prompt(self, obs: Observation) -> str:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import WordCompleter

        if self._session is None:
            from prompt_toolkit.input import create_input
            from prompt_toolkit.output import create_output

            self._session = (PromptSession(input=create_input(self.keys), output=create_output(stdout=self.screen))
                             if self.keys is not None else PromptSession())
        words = sorted(set(obs.hand)) + ["hint", "help", "sort", "undo", "clear", "out", "quit"]
        return str(self._session.prompt("> ", completer=WordCompleter(words, ignore_case=True)))


def main() -> int:
    if not os.environ.get("ARENA_ENDPOINT") or not os.environ.get("ARENA_TOKEN"):
        print("arena.human is started by `arena play VARIANT human BOT ...`, which gives it its seat", file=sys.stderr)
        return 2
    seat = HumanSeat(os.environ.get("ARENA_TTY"))
    try:
        from protocol.client import run

        return run(seat)
    except LeftGame:
        seat.console.print("You left the game: your seat forfeits and the bots play on.")
        return LEFT_EXIT
