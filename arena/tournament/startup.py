"""The start-up check: every bot of a tournament started once, before any game (docs/ARCHITECTURE.md section 5).

``check`` starts each launched bot (remote seats are skipped) in the
compartment a tournament gives it (its sandbox, transport, ``cwd``, ``env``,
limits and data folder, through ``BotHost`` like a worker does), waits up
to the start clock (``start_ms``) for its ``hello``, then shuts it down.  A
bot that fails is one sentence: its name, what happened, and the last lines
of its output (at most ``TAIL_LINES`` lines and ``TAIL_BYTES`` bytes).  Bots
are started ``PARALLEL`` at a time, each on its own ``BotHost``, so many bots
cost about one start clock; every process is stopped before ``check`` returns.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from arena.referee.host import CAUSE_BYTES, CAUSE_LINES, LAST_OUTPUT, BotHost, start_cause
from arena.referee.launch import install_cleanup, kill_all
from arena.settings import BotSpec
from arena.tournament.config import Tournament

PARALLEL = 8      # bots started at once
TAIL_LINES = 5    # of a failed bot's output, in its sentence
TAIL_BYTES = 1024


def check(t: Tournament, log_dir: Path, hide: tuple[Path, ...] = ()) -> list[str]:
    """One sentence per bot of ``t`` that did not say hello when started (empty: all did).

    Their output goes to ``log_dir`` (one log per bot, by name); ``hide`` are folders the
    bots must not see (the results folder), as in a tournament's workers.
    """
    bots = [b for b in t.bots if not b.remote]
    if not bots:
        return []
    install_cleanup()  # from this thread: the pool's threads cannot install the signal handlers
    pool = ThreadPoolExecutor(max_workers=min(PARALLEL, len(bots)), thread_name_prefix="startup")
    try:
        futures = [pool.submit(_start_one, t, b, log_dir, hide) for b in bots]
        found = [f.result() for f in futures]
    except BaseException:  # Ctrl-C: the bots being started are killed, so their threads end now
        pool.shutdown(wait=False, cancel_futures=True)
        kill_all()
        raise
    finally:
        pool.shutdown(wait=True)
    return [why for why in found if why is not None]


def _start_one(t: Tournament, bot: BotSpec, log_dir: Path, hide: tuple[Path, ...]) -> str | None:
    host = BotHost(t.time, log_dir, sandbox=t.sandbox, hide=hide)
    try:
        peer = host.add(bot, cwd=bot.workdir(t.base_dir), data=bot.datadir(t.base_dir))
        if host.start(peer):
            return None
        _kind, reason = peer.problem or ("timeout", f"did not say hello within {t.time.start_ms} ms")
    finally:
        host.close("the start-up check is done")
    reason = reason.split(LAST_OUTPUT, 1)[0]  # the host's one-line hint: the tail below says more
    tail = host.output_of_start(peer, TAIL_LINES, TAIL_BYTES)
    output = f"; its last output: {' | '.join(line.strip() for line in tail.splitlines())}" if tail else "; it wrote no output"
    long_tail = host.output_of_start(peer, CAUSE_LINES, CAUSE_BYTES)
    cause, fix = start_cause(long_tail, bot.command) if long_tail else ("", "")
    if cause and cause not in tail:  # the error that ended it scrolled above the last lines (a stack trace)
        output = f"; {cause}{output}"
    return f"bot {bot.name!r} ({bot.command}) did not start: {reason}{output}" + (f"; {fix}" if fix else "")
