"""The failure kinds: one row each, and everything decided by the kind alone (docs/ARCHITECTURE.md section 4).

For every kind a bot's failure can have, ``TABLE`` says whether the bot is
gone for the rest of the game (the referee plays safe moves for it and tells
it nothing more), whether it is restarted before its next game, which
``error`` kind it is told (one of the protocol's ``ERROR_KINDS``, SPEC 9),
the default policy, the standings column, what happened (README's table) and
the fix hint ``arena check-bot`` prints.  The referee, the tournament runner,
the standings, the tournament file, ``--on KIND=POLICY`` and the compliance
check all read it; a new kind is a row here and a field in
``arena.settings.FailurePolicy`` (a test checks that they agree).

It imports only the protocol, so the tournament side can read it without the referee.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from protocol.messages import ERROR_KINDS

Policy = Literal["retry", "default", "forfeit"]
POLICIES: tuple[Policy, ...] = get_args(Policy)
Kind = Literal["timeout", "crash", "disconnect", "illegal", "malformed", "oversized", "stale", "token", "resource"]


@dataclass(frozen=True)
class FailureKind:
    """One row of the table."""

    kind: Kind
    gone: bool            # the bot is gone for the rest of the game: safe moves are played for it, it is told nothing
    restart: bool         # a worker restarts the bot before its next game (with a fresh token)
    told: str | None      # the ``error`` kind the bot is told (ERROR_KINDS), None when it cannot be told
    default: Policy       # the policy when the tournament file or ``--on`` says none
    what: str             # what happened, as README's table says it
    fix: str              # what ``arena check-bot`` tells the bot's author to do

    @property
    def column(self) -> str:
        """The standings column header."""
        return self.kind.capitalize()


TABLE: tuple[FailureKind, ...] = (
    FailureKind("timeout", gone=False, restart=True, told="timeout", default="default",
                what="no reply within the limit (+ bank + grace)",
                fix="answer every request, draw and play, within clock.decision_ms, echoing its game and seq "
                    "(SPEC 8)"),
    FailureKind("crash", gone=True, restart=True, told=None, default="forfeit",
                what="the bot process exited, or could not start",
                fix="the bot process ended; run it by hand or read its log to see why"),
    FailureKind("disconnect", gone=True, restart=True, told=None, default="forfeit",
                what="the bot is not connected, or stopped reading its messages",
                fix="keep reading your socket and keep one connection for the whole session (SPEC 1)"),
    FailureKind("illegal", gone=False, restart=False, told="illegal", default="retry",
                what="the engine rejected the move (the bot is told the reason)",
                fix="check the move against RULES.md (the reason names the clause) and the observation "
                    "(legal_draws, opening_requirement, took_discard, melds_per_turn, go_out)"),
    FailureKind("malformed", gone=False, restart=False, told="malformed", default="retry",
                what="not JSON, wrong shape, or the wrong reply type",
                fix="compare the reply with SPEC.md section 3.1 and protocol/schemas/; draw requests take a "
                    "draw reply, play requests a play reply"),
    FailureKind("oversized", gone=False, restart=False, told="oversized", default="default",
                what="a message over 1 MiB",
                fix="send one small JSON object per reply (at most max_message_bytes, SPEC 10)"),
    FailureKind("stale", gone=False, restart=False, told="stale", default="retry",
                what="a reply to an old request, or out of turn: dropped, never applied",
                fix="echo the game and seq of the request you answer, and answer each request exactly once "
                    "(SPEC 3)"),
    FailureKind("token", gone=False, restart=False, told="token", default="retry",
                what="connected with a token that is not its own",
                fix="set the socket's routing id to your own token before connecting (SPEC 1)"),
    FailureKind("resource", gone=True, restart=True, told=None, default="forfeit",
                what="over a resource limit of the tournament file",
                fix="use less memory or CPU"),
)

KINDS: dict[str, FailureKind] = {row.kind: row for row in TABLE}
FAILURE_KINDS: tuple[Kind, ...] = tuple(row.kind for row in TABLE)
"""Every kind, in the order of the standings columns."""
RESTART_AFTER: tuple[Kind, ...] = tuple(row.kind for row in TABLE if row.restart)
GONE: tuple[Kind, ...] = tuple(row.kind for row in TABLE if row.gone)

assert set(FAILURE_KINDS) == set(get_args(Kind)) and len(FAILURE_KINDS) == len(TABLE)
assert all(row.told is None or row.told in ERROR_KINDS for row in TABLE)


def row(kind: Kind) -> FailureKind:
    """The row of ``kind`` (KeyError for a kind that is not in the table)."""
    return KINDS[kind]


def column(kind: str) -> str:
    """The standings header of ``kind`` (a kind an older journal holds but the table does not: capitalised).

    >>> column("timeout"), column("late")
    ('Timeout', 'Late')
    """
    known = KINDS.get(kind)
    return known.column if known is not None else kind.capitalize()


def parse_override(item: str) -> tuple[Kind, Policy]:
    """``KIND=POLICY`` (``--on``) as a pair; ValueError with one sentence naming what is expected.

    >>> parse_override("timeout=forfeit")
    ('timeout', 'forfeit')
    >>> parse_override("late=forfeit")
    Traceback (most recent call last):
    ValueError: expected KIND=POLICY with KIND one of timeout, crash, disconnect, illegal, malformed, oversized, stale, token, resource and POLICY one of retry, default, forfeit
    """
    kind, _, policy = item.partition("=")
    known = KINDS.get(kind)
    chosen = next((p for p in POLICIES if p == policy), None)
    if known is not None and chosen is not None:
        return known.kind, chosen
    raise ValueError(f"expected KIND=POLICY with KIND one of {', '.join(FAILURE_KINDS)} and POLICY one of "
                     f"{', '.join(POLICIES)}")
