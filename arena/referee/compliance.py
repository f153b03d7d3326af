"""The checks of ``arena check-bot`` (the command is in ``arena.cli``): a protocol compliance check for one bot,
in the style of a conformance suite.

The checker is a referee (``BotHost`` + ``Referee``) that plays real games with
the bot and a few special sessions, and reports one line per check::

    PASS handshake: hello in 0.21 s: name 'greedy', versions [1]
    FAIL game basic 2p: illegal: discard: 9D was taken ... -- fix: ...
    ...
    14 passed, 1 failed

The checks are ``arena.referee.checks`` (one job each, listed there in the order
they run); what they share is a ``checks_session.Session``; this module runs them.

Every session launches the bot through ``BotHost.start``, as a tournament does
(the version-refusal session with ``welcome=False``, to answer the hello
itself).  Every bot process is killed on every exit path (``BotHost.close``).  The logs
of a check that failed are kept, and their folder is printed.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.referee import checks
from arena.referee.checks_session import Check, CheckError, Report, Session
from arena.referee.host import BotHost
from arena.rules.options import RulesError, RuleSet, resolve
from arena.rules.presets import PRESETS
from arena.settings import BUNDLED_BOTS, TRANSPORTS, Limits, TimeControl

__all__ = ["Check", "CheckError", "Report", "check_bot"]


def run(s: Session) -> Report:
    """Every check, in order: the handshake, the checks that share its bot process (if it passed),
    those that start the bot again (if it said hello at all); a check that cannot run is a SKIP line."""
    host = BotHost(s.time, s.log_dir / "session", sandbox=s.sandbox)
    said_hello = False
    try:
        bot = host.add(s.spec)
        said_hello = checks.handshake(s, host, bot)
        ready = bot.ready
        for check in checks.IN_SESSION:
            if ready:
                check.run(s, host, bot)
            else:
                for name in check.names(s):
                    s.emit(name, None, "not run: the handshake failed")
    finally:
        host.close("the compliance check is done")
    for check in checks.OWN_SESSION:
        if said_hello:
            check.run(s)
        else:
            for name in check.names(s):
                s.emit(name, None, "not run: the bot never said hello")
    return s.report


def check_bot(command: str, variants: list[str] | None = None, transport: str = "zmq", seed: int = 1,
              decision_ms: int = 2000, out: Callable[[str], None] = print, *, start_ms: int = 10000,
              log_dir: Path | None = None, sandbox: bool = True, limits: Limits | None = None,
              clock: TimeControl | None = None, rules: dict[str, RuleSet] | None = None) -> Report:
    """Run the compliance checks against one bot and print one line per check, then a summary.

    ``command`` is a bundled sample bot's name or a command line.  ``variants``
    are preset names (default: all six).  The logs go to ``log_dir`` (default: a
    temporary folder, removed when every check passed and kept otherwise).
    ``limits``, ``clock`` and ``rules`` (by preset name) are a competition's, for its door (``arena.ladder``):
    the bot's resource limits, its whole clock instead of ``decision_ms``/``start_ms``, the rule sets played.
    Raises ``CheckError`` for bad arguments.
    """
    chosen = list(dict.fromkeys(variants or PRESETS))
    for v in chosen:
        if v not in PRESETS:
            raise CheckError(f"unknown preset {v!r}; expected one of {', '.join(PRESETS)}")
        try:
            resolve(v)
        except RulesError as e:  # pragma: no cover - presets always resolve
            raise CheckError(str(e)) from None
    if transport not in TRANSPORTS:
        raise CheckError(f"unknown transport {transport!r}; expected one of {', '.join(TRANSPORTS)}")
    if not command.strip():
        raise CheckError("no bot command given")
    if command.startswith("remote:"):
        raise CheckError("check-bot launches the bot itself; give its command line, not remote:NAME")
    if decision_ms < 1 or start_ms < 1:
        raise CheckError("the clocks must be at least 1 ms")
    keep = log_dir is not None
    folder = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="arena-check-"))
    checker = Session(command, chosen, transport, seed, decision_ms, start_ms, out, folder, sandbox,
                      limits=limits, clock=clock, rules=rules)
    shown = command if command not in BUNDLED_BOTS else f"{command} (sample bot)"
    cpu = " of CPU time" if checker.time.clock == "cpu" else ""
    out(f"checking {shown} over the {checker.transport} transport: presets {', '.join(chosen)}; seed {seed}; "
        f"{checker.time.decision_ms} ms{cpu} per decision")
    t0 = time.monotonic()
    report = checker.report
    try:
        run(checker)
    finally:
        report.elapsed_s = time.monotonic() - t0
        if report.failed or keep:
            report.log_dir = str(folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    name = f" ({report.bot_name!r})" if report.bot_name else ""
    out(f"{report.summary()}{name} in {report.elapsed_s:.1f}s" + (f"; logs in {report.log_dir}" if report.failed else ""))
    return report
