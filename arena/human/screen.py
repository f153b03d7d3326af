"""The table as the human seat sees it, drawn for an 80x24 terminal (pure: text in, text out).

Everything shown comes from what the seat received (SPEC 5 and 6): its observation (its own hand,
the table, the discard pile, sizes, totals, the opening requirement still to meet), the players and
clock of ``new_game`` and the public events.  No other seat's cards are ever passed in.
Cards are written as they are typed (``7H``, ``TD``, ``JK``), hearts and diamonds in red; a wild on
the table shows what it stands for (``JK=5H``).  Colour is rich markup, which ``NO_COLOR`` turns off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.markup import escape

from arena.untrusted import markup, shown

SUITS = "CDHS"
RANKS = "A23456789TJQK"
WIDTH = 80


def card_markup(card: str) -> str:
    if card == "JK" or card.startswith("JK"):
        return f"[bold magenta]{card}[/]"
    return f"[bold red]{card}[/]" if card[1:2] in "HD" else f"[bold]{card}[/]"


def sort_hand(hand: Sequence[str], by: str) -> list[str]:
    """The hand by suit (C D H S, each by rank) or by rank (A..K, then suit); jokers last."""
    def key(c: str) -> tuple[int, int]:
        if c[:2] == "JK":
            return (99, 99)
        r, s = RANKS.index(c[0]), SUITS.index(c[1])
        return (s, r) if by == "suit" else (r, s)
    return sorted(hand, key=key)


def _name(seat: int, me: int, players: Sequence[str]) -> str:
    """A seat as plain text (``render`` escapes the recent events' lines as a whole)."""
    return "you" if seat == me else (shown(players[seat]) if seat < len(players) else f"seat {seat}")


def _who(seat: int, me: int, players: Sequence[str]) -> str:
    return "you" if seat == me else (markup(players[seat]) if seat < len(players) else f"seat {seat}")


def _meld(m: Any, me: int, players: Sequence[str]) -> str:
    cards = " ".join(card_markup(c) + (f"={w}" if w else "") for c, w in zip(m.cards, m.wilds))
    return f"[{m.id}] {_who(m.owner, me, players)} {m.kind}: {cards}"


@dataclass
class View:
    """What the screen shows besides the observation."""

    variant: str = ""
    players: list[str] = field(default_factory=list)
    clock: str = ""
    sort_by: str = "suit"
    pending: list[str] = field(default_factory=list)      # table actions typed this turn, as moves
    queued: list[dict[str, Any]] = field(default_factory=list)  # the same actions, for their preview
    strikes: str = ""                                     # how many failed moves the referee still retries
    recent: list[str] = field(default_factory=list)       # the last public events, described
    notice: str = ""                                      # the referee's last error, or a hint
    notice_is_error: bool = False


def describe_event(ev: dict[str, Any], me: int, players: Sequence[str]) -> str | None:
    """One line of plain text (names and reasons ``shown``) for a public event (SPEC 6), or None for
    one not worth a line."""
    kind = ev.get("kind")
    who = _name(ev["seat"], me, players) if isinstance(ev.get("seat"), int) else ""
    if kind == "draw":
        return f"{who} took {ev.get('card')} from the discard pile" if ev.get("source") == "discard" else \
            f"{who} drew from the stock"
    if kind == "discard":
        return f"{who} discarded {ev['card']}"
    if kind == "meld":
        return f"{who} melded {' '.join(ev['meld']['cards'])}"
    if kind == "layoff":
        return f"{who} laid off {' '.join(ev['cards'])} on meld {ev['meld']}"
    if kind == "swap":
        return f"{who} swapped {ev['card']} into meld {ev['meld']} for {ev['wild']}"
    if kind == "deal_start":
        return f"deal {ev['deal']} dealt; upcard {ev['upcard']}"
    if kind == "deal_end":
        out = ev.get("out")
        ended = f"{_name(out, me, players)} went out" if isinstance(out, int) else f"ended ({shown(ev.get('reason'))})"
        return f"deal {ev['deal']} {ended}; scores {ev['scores']}, totals {ev['totals']}"
    if kind == "rebuild":
        return "the stock was rebuilt from the discard pile"
    if kind == "forfeit":
        return f"{who} forfeited ({shown(ev.get('failure'))}): {shown(ev.get('reason'))}"
    return None


LINES = 22  # the screen's lines above the prompt (80x24: the prompt and one spare line below)


def _pack(items: list[str], width: int = WIDTH - 2) -> list[str]:
    """Items (rich markup) side by side on lines of at most ``width`` visible columns."""
    from rich.text import Text

    lines: list[str] = []
    for item in items:
        if lines and Text.from_markup(lines[-1] + "   " + item).cell_len <= width:
            lines[-1] += "   " + item
        else:
            lines.append(item)
    return lines


def _notice(view: View) -> list[str]:
    """The last error or hint: a multi-line text as it is, else wrapped to at most 3 lines."""
    import textwrap

    if not view.notice:
        return []
    style = "bold red" if view.notice_is_error else "cyan"
    text = ("! " if view.notice_is_error else "") + view.notice
    lines = text.splitlines() if "\n" in text else textwrap.wrap(text, WIDTH - 2, max_lines=3, placeholder=" ...")
    return [f"[{style}]{markup(line)}[/]" for line in lines]


def render(obs: Any, decision: str, view: View) -> list[str]:
    """The screen's lines (rich markup) for a request: at most ``LINES`` lines, and 80 columns once folded."""
    me = obs.seat
    top = obs.discard[-1] if obs.discard else None
    name = view.variant.replace("+overrides", " (with rule overrides)")
    head = [f"[bold]{escape(name)}[/] · deal {obs.deal} · turn {obs.turn} · you are seat {me} · "
            f"dealer {_who(obs.dealer, me, view.players)}",
            "Totals: " + ", ".join(f"{_who(s, me, view.players)} {t}" for s, t in enumerate(obs.totals)),
            "Others: " + "; ".join(f"{_who(s, me, view.players)} {n} cards" + ("" if obs.in_game[s] else " (out)")
                                   + (" opened" if obs.opened[s] else "")
                                   for s, n in enumerate(obs.hand_sizes) if s != me),
            f"Stock {obs.stock_size} · discard pile {len(obs.discard)}, top "
            + (card_markup(top) if top else "(empty)") + (f" · {view.clock}" if view.clock else "")]
    hand = sort_hand(_after(obs.hand, view.queued), view.sort_by)
    after = ", after the moves typed" if view.queued else ""
    mine = [f"Your hand ({len(hand)}, by {view.sort_by}{after}): " + " ".join(card_markup(c) for c in hand)]
    if obs.drawn:
        mine.append(f"  drawn this turn: {card_markup(obs.drawn)}"
                    + (" (from the discard pile: you may not discard it)" if obs.took_discard else ""))
    if obs.opening_requirement:
        mine.append(f"To open you still need {obs.opening_requirement} points in melds (RULES 5.1)")
    if obs.must_go_out_to_meld:
        mine.append("This deal you may table cards only in the turn you go out (RULES 3.5)")
    if view.pending:
        mine.append("Typed this turn: " + escape("; ".join(view.pending)) + "   (u: undo, c: clear)")
        mine += _preview(view.queued, obs.melds)
    if decision == "draw":
        take = f"p (take {top})" if top and "discard" in obs.legal_draws else "p (not allowed now)"
        ask = f"Draw: d (stock) or {take} · hint · ? for help"
    else:
        ask = "Play: m/l/w to table cards, then x CARD to discard (or out) · hint · ? for help"
    tail = _notice(view) + ([f"[yellow]{escape(view.strikes)}[/]"] if view.strikes else []) + [ask]
    room = LINES - len(head) - len(mine) - len(tail)
    melds = _pack([_meld(m, me, view.players) for m in obs.melds])
    table = ["Table: no melds yet"] if not melds else ["Table:"] + ["  " + m for m in melds]
    if len(table) > max(room - 1, 2):
        keep = max(room - 2, 1)
        table = ["Table:", f"  ... {len(melds) - keep} more line(s) of earlier melds"] + ["  " + m for m in melds[-keep:]]
    fit = max(0, room - len(table))  # as many of the latest public events as the screen has lines for
    recent = [f"  · {escape(e)}" for e in view.recent[-fit:]] if fit else []
    return head + table + mine + recent + tail


def _after(hand: Sequence[str], queued: Sequence[dict[str, Any]]) -> list[str]:
    """The hand once the table moves typed this turn are made (a swap's wild comes to the hand)."""
    left = list(hand)
    for action in queued:
        for c in action.get("cards", [action.get("card")]):
            if c is not None and c.rstrip("*") in left:
                left.remove(c.rstrip("*"))
        if action["type"] == "swap" and action.get("wild"):
            left.append(action["wild"])
    return left


def _preview(queued: Sequence[dict[str, Any]], melds: Sequence[Any]) -> list[str]:
    """What each typed table move will make on the table: a new meld, or a meld with cards added."""
    by_id = {m.id: m for m in melds}
    lines = []
    for action in queued:
        cards = [c.rstrip("*") for c in action.get("cards", [])]
        target = by_id.get(action.get("meld", -1))
        if action["type"] == "meld":
            lines.append("  -> new meld: " + " ".join(card_markup(c) for c in cards))
        elif action["type"] == "layoff" and target is not None:
            now = list(target.cards)
            grown = cards + now if action.get("end") == "low" else now + cards
            lines.append(f"  -> [{target.id}] {target.kind}: " + " ".join(card_markup(c) for c in grown))
        elif action["type"] == "swap" and target is not None:
            lines.append(f"  -> [{target.id}]: {card_markup(action['card'])} in for its wild"
                         + (f" {card_markup(action['wild'])}" if action.get("wild") else "")
                         + ", which comes to your hand")
    return lines
