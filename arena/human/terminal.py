"""The referee's side of a human seat: starting the seat's process on this terminal, and ending it.

``arena play`` makes the human seat a remote seat listening on loopback (so the referee treats it as
any bot), and when its gate listens, starts ``python -m arena.human`` in a process group of its own
with the seat's endpoint and token in its environment and this terminal's device in ``ARENA_TTY``
(a session of its own: the terminal is not its controlling terminal, so it reads it without job control).
If the person leaves (``quit``, Ctrl-D, Ctrl-C at the prompt: the process exits with ``LEFT_EXIT``),
the peer is marked as left and the seat's gate is ended, so the referee sees the seat gone at once and
records a forfeit with the reason "the player left the game" (not a crash) instead of waiting out the
person's clock; any other early exit is a crash.  The process is killed on every exit path.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from arena.human import LEFT_EXIT
from arena.referee.launch import MARKER, SESSION

LEFT_REASON = "the player left the game"


class HumanProcess:
    def __init__(self, tty: str, log_path: Path, strikes: int | None = None) -> None:
        self.tty = tty
        self.strikes = strikes  # the referee's strikes per game (retries of a failed move), shown to the person
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.log: IO[bytes] | None = None
        self.stopping = False
        self.watcher: threading.Thread | None = None

    def start(self, peer: Any) -> None:
        """Start the seat's process for ``peer`` (a remote seat whose gate has just bound ``peer.endpoint``)."""
        endpoint = str(peer.endpoint).replace("tcp://0.0.0.0:", "tcp://127.0.0.1:")
        env = {**os.environ, MARKER: SESSION, "ARENA_ENDPOINT": endpoint, "ARENA_TOKEN": peer.token,
               "PROMPT_TOOLKIT_NO_CPR": "1",  # its keys and screen are two files: no cursor position reports
               "ARENA_TTY": self.tty, **({"ARENA_STRIKES": str(self.strikes)} if self.strikes is not None else {})}
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "arena.human"], env=env, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log, start_new_session=True)
        self.watcher = threading.Thread(target=self._watch, args=(peer,), daemon=True, name="human-seat")
        self.watcher.start()

    def _watch(self, peer: Any) -> None:
        assert self.proc is not None
        code = self.proc.wait()
        if not self.stopping and peer.process is not None:
            if code == LEFT_EXIT:
                peer.left = LEFT_REASON
            peer.process.kill()  # end the seat now: the referee sees it gone (left: a forfeit; else a crash)

    def stop(self, wait_s: float = 3.0) -> None:
        """After the game (the process has been told shutdown): wait a little for it to end, then kill it."""
        self.stopping = True
        if self.proc is not None:
            try:
                self.proc.wait(wait_s)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        if self.log is not None:
            self.log.close()
