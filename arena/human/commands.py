"""What a person types at the human seat, parsed into a command (docs: README "Play your own bot").

Moves are short and forgiving: case does not matter, ``10`` may stand for ``T``, commas are spaces.

======================  =========================================================
``d`` / ``draw``        draw from the stock
``p`` / ``pick``        take the top card of the discard pile
``m 7H 8H 9H``          meld these cards (``set``/``run`` after ``m`` when it could be either)
``l 9H 2``              lay off 9H on meld 2 (several cards: ``l 9H TH 2``; ``low``/``high``: the end)
``w 5H 0``              swap 5H into meld 0 for its wild (``w 5H 0 JK``: which wild)
``x 5C``                discard 5C: ends the turn with the table actions typed so far
``out``                 end the turn without a discard (going out by table play)
``u`` / ``undo``        take back the last table action typed; ``c`` / ``clear``: all of them
``hint``                what the built-in greedy policy would do
``s`` / ``sort``        sort the hand by suit or by rank
``?`` / ``help``        this list; ``q`` / ``quit``: leave the game (the seat forfeits)
======================  =========================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

CARD = re.compile(r"^(?:(10|[2-9TJQKA])([CDHS])(\*?)|(JK))$", re.IGNORECASE)

# Every line at most 78 columns: the screen is 80 wide and a line is never wrapped mid-phrase.
HELP = """moves (case does not matter; Tab completes the cards of your hand):
  d           draw from the stock       p           take the top discard
  m 7H 8H 9H  meld (m set/m run ...)    x 5C        discard 5C: ends the turn
  l 9H 2      lay off 9H on meld [2]    l 9H 2 low  ...at a run's low end
  w 5H 0      swap 5H into meld [0] for its wild (w 5H 0 JK: for that wild)
  out         end the turn without a discard (going out by melding all)
  u           undo the last table move  c           clear the table moves
  hint        what the greedy bot would do
  s           sort by suit / by rank    ?           this help
  q           leave the game (your seat forfeits, the bots play on)"""


class CommandError(ValueError):
    """A line that is not a move; the message says what was expected."""


@dataclass(frozen=True)
class Draw:
    source: str  # "stock" or "discard"


@dataclass(frozen=True)
class Table:
    action: dict[str, Any]  # a protocol action object (SPEC 3: meld, layoff, swap)


@dataclass(frozen=True)
class Finish:
    discard: str | None  # None: going out by table play


@dataclass(frozen=True)
class Simple:
    word: str  # "undo", "clear", "hint", "sort", "help", "quit"


Command = Draw | Table | Finish | Simple

_WORDS: dict[str, Command] = {"d": Draw("stock"), "draw": Draw("stock"), "stock": Draw("stock"), "p": Draw("discard"),
          "pick": Draw("discard"), "take": Draw("discard"), "out": Finish(None), "u": Simple("undo"),
          "undo": Simple("undo"), "c": Simple("clear"), "clear": Simple("clear"), "hint": Simple("hint"),
          "h": Simple("hint"), "s": Simple("sort"), "sort": Simple("sort"), "?": Simple("help"),
          "help": Simple("help"), "q": Simple("quit"), "quit": Simple("quit")}


def card(word: str) -> str:
    """A card as the protocol writes it (``7h`` -> ``7H``, ``10d`` -> ``TD``, ``jk`` -> ``JK``)."""
    m = CARD.match(word)
    if not m:
        raise CommandError(f"{word!r} is not a card: write rank then suit, e.g. 7H, TD (or 10D), AS, JK")
    if m.group(4):
        return "JK"
    rank = "T" if m.group(1) == "10" else m.group(1).upper()
    return rank + m.group(2).upper() + m.group(3)


def _meld_id(word: str) -> int:
    if not word.isdigit():
        raise CommandError(f"{word!r} is not a meld number: the melds on the table are numbered [0], [1], ...")
    return int(word)


def parse(line: str) -> Command:
    """The command of one typed line; CommandError says what is wrong with it."""
    words = line.replace(",", " ").split()
    if not words:
        raise CommandError("type a move (? for help)")
    head, rest = words[0].lower(), words[1:]
    if head in _WORDS and not rest:
        return _WORDS[head]
    if head in ("m", "meld"):
        kind = None
        if rest and rest[0].lower() in ("set", "run"):
            kind, rest = rest[0].lower(), rest[1:]
        if len(rest) < 1:
            raise CommandError("m needs the cards of the meld, e.g. m 7H 8H 9H")
        action: dict[str, Any] = {"type": "meld", "cards": [card(w) for w in rest]}
        if kind:
            action["kind"] = kind
        return Table(action)
    if head in ("l", "lay", "layoff"):
        end = None
        if rest and rest[-1].lower() in ("low", "high"):
            end, rest = rest[-1].lower(), rest[:-1]
        if len(rest) < 2:
            raise CommandError("l needs the cards and the meld number, e.g. l 9H 2")
        action = {"type": "layoff", "meld": _meld_id(rest[-1]), "cards": [card(w) for w in rest[:-1]]}
        if end:
            action["end"] = end
        return Table(action)
    if head in ("w", "swap"):
        if len(rest) not in (2, 3):
            raise CommandError("w needs a card of your hand and a meld number, e.g. w 5H 0 (or w 5H 0 JK)")
        action = {"type": "swap", "meld": _meld_id(rest[1]), "card": card(rest[0])}
        if len(rest) == 3:
            action["wild"] = card(rest[2])
        return Table(action)
    if head in ("x", "discard"):
        if len(rest) != 1:
            raise CommandError("x needs the one card to discard, e.g. x 5C")
        return Finish(card(rest[0]))
    if head in _WORDS:
        raise CommandError(f"{head} takes nothing after it")
    raise CommandError(f"unknown move {words[0]!r} (? for help)")


def as_text(action: dict[str, Any]) -> str:
    """A protocol action written back as the move that makes it (for hints and the pending list)."""
    if action["type"] == "meld":
        return "m " + " ".join(([action["kind"]] if action.get("kind") else []) + list(action["cards"]))
    if action["type"] == "layoff":
        return f"l {' '.join(action['cards'])} {action['meld']}" + (f" {action['end']}" if action.get("end") else "")
    return f"w {action['card']} {action['meld']}" + (f" {action['wild']}" if action.get("wild") else "")


def check(cmd: Command, hand: list[str], meld_ids: list[int], pending: list[dict[str, Any]]) -> str | None:
    """Why ``cmd`` cannot be what the person meant, checked here before anything is sent (a typo must
    not cost a strike): a card that is not in the hand (after the table moves typed this turn), or a
    meld number that is not on the table.  None when it may go to the referee, which judges the rest."""
    left = list(hand)
    new_melds = 0
    for action in pending:
        new_melds += action["type"] == "meld"
        for c in action.get("cards", [action.get("card")]):
            if c is not None and c.rstrip("*") in left:
                left.remove(c.rstrip("*"))
    swapped = any(a["type"] == "swap" for a in pending)  # a swap brings a wild into the hand: not checked
    if isinstance(cmd, Table):
        cards = [c.rstrip("*") for c in cmd.action.get("cards", [cmd.action.get("card")])]
        meld = cmd.action.get("meld")
    elif isinstance(cmd, Finish) and cmd.discard is not None:
        cards, meld = [cmd.discard.rstrip("*")], None
    else:
        return None
    if not swapped:
        for c in cards:
            if c not in left:
                where = " any more (it is in a table move you typed this turn)" if c in hand else ""
                return f"{c} is not in your hand{where}: nothing was sent, no strike used"
            left.remove(c)
    if meld is not None:
        first_new = max(meld_ids, default=-1) + 1
        if meld not in meld_ids and not first_new <= meld < first_new + new_melds:
            there = (f"the melds are numbered {', '.join(f'[{i}]' for i in sorted(meld_ids))}" if meld_ids
                     else "there are no melds on the table yet")
            return f"there is no meld [{meld}]: {there}; nothing was sent, no strike used"
    return None
