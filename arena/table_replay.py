"""The table as it stands after each turn of a recorded game, for ``arena replay`` in the terminal.

A ``TableReplay`` feeds a record's actions to the engine (the record's own header: rules, seed, suit
map) and, after each turn, says what is on the table: the melds with their numbers (the ids that
lay-offs and swaps name), their owners and what each wild stands for, every seat's hand size, the
stock and the discard pile's top; and the hand of one seat (``seat``) or of every seat.  If the
record stops replaying (an edited file), it says so once and shows no more table states; whether a
record holds is ``arena replay --verify``'s question.
"""

from __future__ import annotations

from arena.referee.entries import Line, Timed
from arena.rules.actions import IllegalAction, play_from_wire
from arena.rules.cards import texts
from arena.rules.game import Game
from arena.rules.log import DrawEntry, ForfeitEntry, PlayEntry
from arena.rules.record import Header
from arena.untrusted import shown


class TableReplay:
    def __init__(self, header: Header, names: list[str], seat: int | None = None, hands: bool = True) -> None:
        self.game = Game(header.rules, header.players, header.seed, header.suits)
        self.names = names
        self.seat = seat
        self.hands = hands  # show hands (all, or only ``seat``'s)
        self.broken = False

    def after(self, line: Line) -> list[str]:
        """Apply ``line`` if it is an action; after a turn (a play or a forfeit), the table's lines."""
        entry = line.entry if isinstance(line, Timed) else line
        if self.broken or not isinstance(entry, DrawEntry | PlayEntry | ForfeitEntry):
            return []
        g = self.game
        try:
            if isinstance(entry, DrawEntry):
                g.draw(entry.source)
                return []
            if isinstance(entry, PlayEntry):
                g.play(play_from_wire(list(entry.actions), entry.discard))
            else:
                g.forfeit(entry.seat, entry.reason, entry.failure)
        except (IllegalAction, ValueError) as e:
            self.broken = True
            return [f"  (the record stops replaying here, so no more table states: {shown(e)}; see arena replay --verify)"]
        return self.state()

    def _who(self, s: int) -> str:
        return shown(self.names[s]) if s < len(self.names) else f"seat {s}"

    def state(self) -> list[str]:
        g = self.game
        if g.over and not g.melds:
            return []
        melds = [f"[{m.id}] {self._who(m.owner)} {m.kind} "
                 + " ".join(c + (f"={m.wild_text(i)}" if m.wild[i] else "") for i, c in enumerate(texts(m.cards)))
                 for m in g.melds]
        sizes = ", ".join(f"{self._who(s)} {len(h)}" for s, h in enumerate(g.hands) if g.in_game[s])
        top = texts(g.discard[-1:])[0] if g.discard else "none"
        out = ["    table: " + (" | ".join(melds) if melds else "no melds"),
               f"    hands: {sizes} · stock {len(g.stock)} · discard top {top}"]
        if self.hands:
            for s, h in enumerate(g.hands):
                if self.seat is None or s == self.seat:
                    out.append(f"    {self._who(s)} holds: {' '.join(texts(sorted(h))) or '-'}")
        return out
