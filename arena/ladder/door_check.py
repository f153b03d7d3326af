"""The check a submission goes through at the door: ``arena check-bot`` under the ladder's own settings.

Run as a child process by ``submit.run_check`` (``python -m arena.ladder.door_check LADDER TRANSPORT
COMMAND``, in the copy's folder), it reads ``LADDER/ladder.toml`` and checks the bot with what its
games will have: the ladder's variant and rule set (``[rules]`` overrides included), its whole clock
(``[time]``: the CPU clock, start, bank and grace as in the batches), its sandbox, and every entrant's
``[ladder] limits`` (memory, processes, CPU seconds; a data quota applies to a data folder, which a
ladder's bots have none of).  So a bot that works only with more than the ladder gives is refused at
the door, not suspended in games.  The report is check-bot's, then a line that names the ladder's
setting a failure came up against (``limits.memory_mb = 128``), for the entrant to read; exit 1 on any
failure, 2 when the check cannot run.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arena.errors import ArenaError
from arena.ladder.layout import LadderError
from arena.ladder.settings import LadderSettings, load
from arena.settings import Limits

# words in a failure's text -> the ladder setting it came up against
_LIMIT_WORDS = {"memory_mb": "limits.memory_mb", "processes": "limits.processes", "cpu_seconds": "limits.cpu_seconds",
                "data_mb": "limits.data_mb"}


def settings_named(text: str, limits: Limits) -> list[str]:
    """The ladder's limits a check's report says the bot went over, as ``limits.KEY = VALUE``."""
    out = []
    for key, shown in _LIMIT_WORDS.items():
        value = getattr(limits, key)
        if value is not None and shown in text:
            out.append(f"{shown} = {value}")
    return out


def check(s: LadderSettings, command: str, transport: str) -> int:
    from arena.referee.compliance import check_bot

    t = s.base
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    clock = t.time.clock
    say(f"the ladder's settings: variant {t.variant}, {clock} clock ({t.time.decision_ms} ms a decision, "
        f"{t.time.start_ms} ms to start), limits "
        + ", ".join(f"{k} = {v}" for k, v in s.limits.to_data().items()))
    report = check_bot(command, [t.variant], transport, decision_ms=t.time.decision_ms, out=say,
                       start_ms=t.time.start_ms, sandbox=t.sandbox, limits=s.limits, clock=t.time,
                       rules={t.variant: t.rules})
    if not report.ok:
        over = settings_named("\n".join(lines), s.limits)
        if over:
            print(f"FAIL ladder limits: the bot went over the ladder's {', '.join(over)} (ladder.toml, [ladder] "
                  "limits): make it fit; every game on the ladder has the same limits", flush=True)
    return 0 if report.ok else 1


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m arena.ladder.door_check LADDER TRANSPORT COMMAND", file=sys.stderr)
        return 2
    root, transport, command = Path(argv[0]), argv[1], argv[2]
    try:
        s = load(root)
        return check(s, command, transport)
    except (LadderError, ArenaError) as e:  # a bad ladder file, a check that cannot run (CheckError)
        print(f"FAIL check: {e}", flush=True)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
