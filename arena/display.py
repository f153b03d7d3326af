"""Human-readable lines for record lines (``arena.referee.entries.Line``), shared by ``arena play`` and ``arena replay``."""

from __future__ import annotations

from arena.referee.entries import Failure, Line, Timed
from arena.rules.log import DealEnd, DealStart, DrawEntry, ForfeitEntry, GameEnd, GameStart, PlayEntry, Rebuild
from arena.untrusted import shown
from protocol.messages import Action, Layoff, Meld

printable = shown  # the older name, kept for callers: a bot's text as it may be shown on a terminal


def _who(seat: int, names: list[str]) -> str:
    return f"seat {seat} ({shown(names[seat])})" if seat < len(names) else f"seat {seat}"


def _action(a: Action) -> str:
    if isinstance(a, Meld):
        return f"melds {' '.join(a.cards)}"
    if isinstance(a, Layoff):
        return f"lays off {' '.join(a.cards)} on meld {a.meld}" + (f" ({a.end} end)" if a.end else "")
    return f"swaps {a.card} for a wild in meld {a.meld}"


def describe(line: Line, names: list[str], full: bool = True) -> str | None:
    """One line of text for a record line; ``full`` includes private detail (hands, stock cards)."""
    ms = ""
    entry = line
    if isinstance(line, Timed):
        entry, ms = line.entry, f"  [{line.ms:.1f} ms]"
    if isinstance(entry, GameStart):
        return f"first dealer: {_who(entry.dealer, names)}"
    if isinstance(entry, DealStart):
        text = f"deal {entry.deal}: {_who(entry.dealer, names)} deals, upcard {entry.upcard}"
        if full:
            hands = "; ".join(f"{i}: {' '.join(h)}" for i, h in enumerate(entry.hands) if h)
            text += f"\n  hands {hands}"
        return text
    if isinstance(entry, DrawEntry):
        card = entry.card if (full or entry.source == "discard") else None
        return f"  {_who(entry.seat, names)} draws {card + ' ' if card else ''}from the {entry.source}" + ms
    if isinstance(entry, PlayEntry):
        parts = [_action(a) for a in entry.actions]
        parts.append(f"discards {entry.discard}" if entry.discard else "goes out")
        return f"  {_who(entry.seat, names)} " + ", ".join(parts) + ms
    if isinstance(entry, Rebuild):
        return f"  the stock is rebuilt from the discard pile ({entry.stock_size} cards)" + (
            f", upcard {entry.upcard}" if entry.upcard else "")
    if isinstance(entry, DealEnd):
        who = (f"{_who(entry.out, names)} went out" + (" (rummy)" if entry.rummy else "") if entry.out is not None
               else f"no one out ({shown(entry.reason).replace('_', ' ')})")
        text = f"deal {entry.deal} ends: {who}; scores {entry.scores}; totals {entry.totals}"
        if entry.eliminated:
            text += "; eliminated " + ", ".join(_who(s, names) for s in entry.eliminated)
        return text
    if isinstance(entry, ForfeitEntry):
        return f"  {_who(entry.seat, names)} forfeits ({shown(entry.failure)}): {shown(entry.reason)}"
    if isinstance(entry, Failure):
        text = f"  ! {_who(entry.seat, names)} {shown(entry.kind)}: {shown(entry.reason)} -> {shown(entry.action)}"
        if full and entry.output:
            text += "\n    its last output:" + "".join(f"\n    | {shown(line)}" for line in entry.output.splitlines())
        if full and entry.log:
            text += f"\n    its log: {shown(entry.log)}"
        return text
    if isinstance(entry, GameEnd):
        return f"game over ({shown(entry.reason)}): totals {entry.totals}; placings {entry.placings}"
    return None
