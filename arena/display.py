"""Human-readable lines for record entries, shared by ``arena play`` and ``arena replay``."""

from __future__ import annotations

from typing import Any


def _who(seat: int, names: list[str]) -> str:
    return f"seat {seat} ({names[seat]})" if seat < len(names) else f"seat {seat}"


def _action(a: dict[str, Any]) -> str:
    cards = " ".join(a.get("cards", []))
    if a["type"] == "meld":
        return f"melds {cards}"
    if a["type"] == "layoff":
        return f"lays off {cards} on meld {a['meld']}" + (f" ({a['end']} end)" if a.get("end") else "")
    return f"swaps {a['card']} for a wild in meld {a['meld']}"


def describe(entry: dict[str, Any], names: list[str], full: bool = True) -> str | None:
    """One line for an entry; ``full`` includes private detail (hands, stock cards)."""
    e = entry.get("e")
    if e == "game_start":
        return f"first dealer: {_who(entry['dealer'], names)}"
    if e == "deal_start":
        line = f"deal {entry['deal']}: {_who(entry['dealer'], names)} deals, upcard {entry['upcard']}"
        if full:
            hands = "; ".join(f"{i}: {' '.join(h)}" for i, h in enumerate(entry["hands"]) if h)
            line += f"\n  hands {hands}"
        return line
    if e == "draw":
        card = entry.get("card")
        shown = card if (full or entry["source"] == "discard") else None
        return f"  {_who(entry['seat'], names)} draws {shown + ' ' if shown else ''}from the {entry['source']}" + _ms(entry)
    if e == "play":
        parts = [_action(a) for a in entry["actions"]]
        parts.append(f"discards {entry['discard']}" if entry["discard"] else "goes out")
        return f"  {_who(entry['seat'], names)} " + ", ".join(parts) + _ms(entry)
    if e == "rebuild":
        return f"  the stock is rebuilt from the discard pile ({entry['stock_size']} cards)" + (
            f", upcard {entry['upcard']}" if entry.get("upcard") else "")
    if e == "deal_end":
        who = f"{_who(entry['out'], names)} went out" + (" (rummy)" if entry.get("rummy") else "") if entry["out"] is not None \
            else f"no one out ({entry['reason'].replace('_', ' ')})"
        line = f"deal {entry['deal']} ends: {who}; scores {entry['scores']}; totals {entry['totals']}"
        if entry.get("eliminated"):
            line += "; eliminated " + ", ".join(_who(s, names) for s in entry["eliminated"])
        return line
    if e == "forfeit":
        return f"  {_who(entry['seat'], names)} forfeits ({entry.get('failure', '')}): {entry.get('reason', '')}"
    if e == "failure":
        return f"  ! {_who(entry['seat'], names)} {entry['kind']}: {entry['reason']} -> {entry['action']}"
    if e == "game_end":
        return f"game over ({entry['reason']}): totals {entry['totals']}; placings {entry['placings']}"
    return None


def _ms(entry: dict[str, Any]) -> str:
    return f"  [{entry['ms']:.1f} ms]" if "ms" in entry else ""
