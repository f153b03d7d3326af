"""The game state machine (RULES.md sections 2, 3, 5, 6, 7, 8).

One ``Game`` object moves through deals and turns.  Every operation comes as
``verify_x`` (raises ``IllegalAction`` with a reason naming the rule),
``can_x`` (bool) and ``x`` (applies it and returns the record entries it
produced): ``draw``, ``play`` and ``forfeit``.  An illegal action changes
nothing.  Deals start and end by themselves; when the game is over
``phase`` is ``OVER`` and ``placings()`` gives the full placing.

With a ``suit_map`` (``arena.rules.suits``) every deck the game builds is
relabelled after its shuffle: the same deal with the suits renamed, card for
card in the same places (RULES 2.3).  Cards that reach the stock again (a
rebuild, RULES 6.3) are cards already dealt, so they follow.  No rule names a
suit, so the game is the same up to relabelling (RULES 1, 4.1, 4.2, 7).

Rule source: ``RULES.md`` (RULES 10 names each preset's source text); every option
of RULES 9 is a field of ``RuleSet``.  Randomness comes only from the game's
``RandomSource`` (``chance.py``; by default seeded from the game seed: the deck
of deal d is a function of (seed, d), and the k-th later random act of a deal
of (seed, d, k), RULES 2.3), so a deal replays exactly under any seating.

``verify_play`` changes nothing and returns a ``CheckedPlay``; ``play`` given
that value applies its outcome without working the turn out again, if the game
is still in the state it was checked in.  ``position()`` is the whole state as
one value and ``Game.from_position`` a game that goes on from one.

The record (``log``) holds every action and its effect, including private
ones (hands, drawn cards) as ``arena.rules.log`` entries; what every seat may
see of them is ``arena.referee.wire.events``.
Each entry shows the state at its own moment: a meld as it was put down
(lay-offs and swaps on it later in the same turn follow as their own
effects), and a stock rebuild before the draw it made possible (RULES 6.3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from arena.rules import search
from arena.rules.actions import DISCARD, STOCK, IllegalAction, Play, play_to_wire
from arena.rules.cards import Card, full_deck, rank_of, text, texts
from arena.rules.chance import RandomSource, SeededSource, Shuffler
from arena.rules.log import (
    DealEnd,
    DealStart,
    DrawEntry,
    Effect,
    Entry,
    ForfeitEntry,
    GameEnd,
    GameStart,
    LayoffEffect,
    MeldEffect,
    PlayEntry,
    Rebuild,
    SwapEffect,
    wire_meld,
)
from arena.rules.melds import TableMeld, hand_value, is_wild_card
from arena.rules.observation import Observation
from arena.rules.options import MAX_DEALS, RulesError, RuleSet
from arena.rules.position import Position
from arena.rules.scoring import score_deal
from arena.rules.suits import SuitMap, check_suit_map, relabel_all
from arena.rules.turn import TurnOutcome, TurnView, simulate_play


class Phase(str, Enum):
    DRAW = "draw"
    PLAY = "play"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class CheckedPlay:
    """A play ``Game.verify_play`` found legal, with its outcome and the state it was checked in."""

    play: Play
    outcome: TurnOutcome = field(repr=False)
    game: Game = field(repr=False, compare=False)
    at: int  # length of the game's log when checked: every change of state adds an entry


class Game:
    def __init__(self, rules: RuleSet, players: int, seed: int, suit_map: SuitMap | None = None,
                 source: RandomSource | None = None, position: Position | None = None) -> None:
        """A new game: the first dealer is drawn and the first deal dealt (RULES 2).

        ``source`` gives every shuffle and random act; by default ``SeededSource(seed)``.
        With ``position``, the game goes on from it instead (``from_position``).
        """
        self._constants(rules, players, seed, suit_map, source)
        if position is not None:
            self._resume(position)
            return
        self.totals = [0] * players
        self.in_game = [True] * players
        self.left_in_deal: list[int | None] = [None] * players  # elimination (RULES 8)
        self.forfeited: list[int] = []
        self.deal_no = 0
        self.deal_scores: list[list[int]] = []
        self.log: list[Entry] = []
        self.end_reason = ""
        # deal state, set by _start_deal
        self.hands: list[list[Card]] = [[] for _ in range(players)]
        self.stock: list[Card] = []  # top is the end
        self.discard: list[Card] = []  # top is the end
        self.melds: list[TableMeld] = []
        self.dead: list[Card] = []  # hands of players who forfeited mid-deal
        self.opened = [False] * players
        self.played_before = [False] * players
        self.phase = Phase.DRAW
        self.turn = 0
        self.current = 0
        self.rebuilds = 0
        self.random_acts = 0
        self.skip_draw: int | None = None
        self.drawn: Card | None = None
        self.took_discard = False
        self.deck_size = 0
        self.dealer = self._first_dealer()
        self._start_deal()

    def _constants(self, rules: RuleSet, players: int, seed: int, suit_map: SuitMap | None,
                   source: RandomSource | None) -> None:
        lo, hi = rules.players
        if not lo <= players <= hi:
            raise RulesError(f"players: {rules.name} is played by {lo} to {hi} players, not {players} (RULES 10)")
        self.rules = rules
        self.n = players
        self.seed = seed
        self.suit_map = None if suit_map is None else check_suit_map(suit_map)
        self.source: RandomSource = SeededSource(seed) if source is None else source

    @classmethod
    def from_position(cls, rules: RuleSet, position: Position, seed: int = 0, suit_map: SuitMap | None = None,
                      source: RandomSource | None = None) -> Game:
        """A game that goes on from ``position``, with an empty log (for tests and analysis).

        Nothing is checked beyond the seat count: the position is taken as given, and
        ``deck_size`` is the number of cards in it.
        """
        return cls(rules, len(position.hands), seed, suit_map, source, position=position)

    def _resume(self, p: Position) -> None:
        self.totals, self.in_game, self.left_in_deal = list(p.totals), list(p.in_game), list(p.left_in_deal)
        self.forfeited, self.deal_scores, self.end_reason = list(p.forfeited), [list(x) for x in p.deal_scores], p.end_reason
        self.deal_no, self.dealer, self.log = p.deal_no, p.dealer, []
        self.hands, self.stock, self.discard = [list(h) for h in p.hands], list(p.stock), list(p.discard)
        self.melds, self.dead = [m.copy() for m in p.melds], list(p.dead)
        self.opened, self.played_before = list(p.opened), list(p.played_before)
        self.rebuilds, self.random_acts = p.rebuilds, p.random_acts
        self.phase, self.turn, self.current, self.skip_draw = Phase(p.phase), p.turn, p.current, p.skip_draw
        self.drawn, self.took_discard = p.drawn, p.took_discard
        self.deck_size = p.card_count()

    def __reduce__(self) -> tuple[Callable[..., Game], tuple[object, ...]]:
        """Copied and pickled as its position and log (compiled, a ``Game`` has no other way)."""
        return _resumed, (self.rules, self.seed, self.suit_map, self.source, self.position(), list(self.log))

    def position(self) -> Position:
        """The whole state of the game now, as one value (``position.py``)."""
        return Position(
            tuple(self.totals), tuple(self.in_game), tuple(self.left_in_deal), tuple(self.forfeited),
            tuple(tuple(x) for x in self.deal_scores), self.end_reason, self.deal_no, self.dealer,
            tuple(tuple(h) for h in self.hands), tuple(self.stock), tuple(self.discard),
            tuple(m.copy() for m in self.melds), tuple(self.dead), tuple(self.opened), tuple(self.played_before),
            self.rebuilds, self.random_acts, self.phase.value, self.turn, self.current, self.skip_draw,
            self.drawn, self.took_discard,
        )

    # ------------------------------------------------------------------ seats
    def active(self) -> list[int]:
        return [s for s in range(self.n) if self.in_game[s]]

    def left_of(self, seat: int) -> int:
        """The next seat clockwise that is still in the game (RULES 2.1)."""
        for k in range(1, self.n + 1):
            s = (seat + k) % self.n
            if self.in_game[s]:
                return s
        return seat

    # -------------------------------------------------------------- randomness
    def _act_rng(self) -> Shuffler:
        rng = self.source.act(self.deal_no, self.random_acts)
        self.random_acts += 1
        return rng

    def _relabelled(self, deck: list[Card]) -> list[Card]:
        """A shuffled deck with the game's suit map applied, card for card (RULES 2.3)."""
        return deck if self.suit_map is None else relabel_all(deck, self.suit_map)

    def _first_dealer(self) -> int:
        """Highest card deals; ties draw again; a wild counts lowest (RULES 2.2)."""
        r = self.rules
        deck = full_deck(r.count_value("decks", self.n), r.count_value("jokers", self.n))
        self.source.first_dealer(0).shuffle(deck)
        deck = self._relabelled(deck)
        drawing = list(range(self.n))
        draws: list[list[str]] = []
        while True:
            got = {s: deck.pop() for s in drawing}
            draws.append([text(got[s]) for s in drawing])

            def strength(c: Card) -> int:
                if is_wild_card(c, r):
                    return 0
                k = rank_of(c)
                return 14 if k == 1 and r.ace != "low" else k

            best = max(strength(c) for c in got.values())
            drawing = [s for s in drawing if strength(got[s]) == best]
            if len(drawing) == 1:
                self.log.append(GameStart(self.seed, self.n, draws, drawing[0]))
                return drawing[0]
            if len(deck) < len(drawing):  # pragma: no cover - needs more ties than a deck holds
                deck = full_deck(r.count_value("decks", self.n), r.count_value("jokers", self.n))
                self.source.first_dealer(len(draws)).shuffle(deck)
                deck = self._relabelled(deck)

    # ------------------------------------------------------------------- deals
    def _start_deal(self) -> None:
        r = self.rules
        self.deal_no += 1
        seats = self.active()
        count = len(seats)
        deck = full_deck(r.count_value("decks", count), r.count_value("jokers", count))
        self.source.deal(self.deal_no).shuffle(deck)
        deck = self._relabelled(deck)
        self.deck_size = len(deck)
        self.random_acts = 0
        self.hands = [[] for _ in range(self.n)]
        order = []
        s = self.dealer
        for _ in range(count):
            s = self.left_of(s)
            order.append(s)
        for _ in range(r.count_value("hand_size", count)):
            for s in order:
                self.hands[s].append(deck.pop())
        self.skip_draw = None
        if r.first_player_extra_card:
            self.hands[order[0]].append(deck.pop())
            self.skip_draw = order[0]
        upcard = deck.pop()
        returned: list[str] = []
        if r.reshuffle_turned_joker:
            while is_wild_card(upcard, r) and any(not is_wild_card(c, r) for c in deck):
                deck.insert(self._act_rng().randint(0, len(deck)), upcard)
                returned.append(text(upcard))
                upcard = deck.pop()
        self.stock = deck
        self.discard = [upcard]
        self.melds = []
        self.dead = []
        self.opened = [False] * self.n
        self.played_before = [False] * self.n
        self.turn = 0
        self.rebuilds = 0
        self.log.append(DealStart(self.deal_no, self.dealer, [texts(h) for h in self.hands], text(upcard), returned,
                                  len(self.stock)))
        self.current = order[0]
        self._begin_turn()

    def _begin_turn(self) -> None:
        self.drawn = None
        self.took_discard = False
        if self.skip_draw == self.current:
            self.skip_draw = None
            self.phase = Phase.PLAY
            return
        self.phase = Phase.DRAW
        if not self.stock and self.rules.upcard_after_rebuild:
            self._rebuild(upcard=True)

    def _can_rebuild(self, upcard: bool) -> bool:
        """Whether the discard pile may become a new stock now (RULES 6.3): rebuilds left, and cards for it."""
        r = self.rules
        if r.max_stock_rebuilds is not None and self.rebuilds >= r.max_stock_rebuilds:
            return False
        return len(self.discard) >= (2 if upcard else 1)

    def _rebuild(self, upcard: bool) -> bool:
        """Turn the discard pile into a new stock (RULES 6.3); False if the deal ended instead."""
        if not self._can_rebuild(upcard):
            self._end_deal(None, "stock_exhausted")
            return False
        r = self.rules
        new = list(self.discard)
        if r.stock_exhausted == "reshuffle":
            self._act_rng().shuffle(new)
        else:
            new.reverse()
        self.stock = new
        self.discard = [self.stock.pop()] if upcard else []
        self.rebuilds += 1
        self.log.append(Rebuild(len(self.stock), text(self.discard[-1]) if upcard else None))
        return True

    def _end_deal(self, out: int | None, reason: str) -> None:
        r = self.rules
        seats = self.active()
        values = [hand_value(self.hands[s], r) if self.in_game[s] else 0 for s in range(self.n)]
        rummy = out is not None and not self.played_before[out]  # RULES 6.2
        scores = score_deal(r, values, out, rummy, seats)
        for s in range(self.n):
            self.totals[s] += scores[s]
        self.deal_scores.append(scores)
        eliminated: list[int] = []
        if r.end == "elimination":
            eliminated = [s for s in seats if self.totals[s] >= r.target]
            for s in eliminated:
                self.in_game[s] = False
                self.left_in_deal[s] = self.deal_no
        self.log.append(DealEnd(self.deal_no, out, rummy, reason, [texts(h) for h in self.hands], values, scores,
                                list(self.totals), eliminated))
        self.phase = Phase.OVER  # until the next deal starts
        remaining = self.active()
        if len(remaining) < 2:
            return self._finish("elimination" if r.end == "elimination" else "forfeit")
        if r.end == "target" and any(self.totals[s] >= r.target for s in remaining):
            return self._finish("target")
        if r.end == "deals" and self.deal_no >= (r.deals or 0):
            return self._finish("deals")
        if self.deal_no >= MAX_DEALS:
            return self._finish("deal_cap")
        self.dealer = self.left_of(self.dealer)
        self._start_deal()

    def _finish(self, reason: str) -> None:
        self.phase = Phase.OVER
        self.end_reason = reason
        self.log.append(GameEnd(reason, list(self.totals), self.placings()))

    # ------------------------------------------------------------ information
    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    def requirement(self, seat: int) -> int:
        """Points ``seat`` still needs to open (RULES 5.1); 0 once opened or with no minimum."""
        if self.opened[seat]:
            return 0
        im = self.rules.initial_meld
        if im == "czech":
            return 15 + 5 * sum(1 for s in self.active() if self.totals[s] > self.totals[seat])
        return im

    def turn_view(self) -> TurnView:
        s = self.current
        return TurnView(s, self.deal_no, self.hands[s], self.melds, self.opened[s], self.requirement(s),
                        self.drawn, self.took_discard, self.played_before[s])

    def legal_draws(self) -> list[str]:
        if self.phase is not Phase.DRAW:
            return []
        return [STOCK, DISCARD] if self._can_take_discard() else [STOCK]

    def observation(self, seat: int) -> Observation:
        mine = seat == self.current
        # positional arguments, in the field order of Observation (this is on the hot path)
        return Observation(
            seat, self.deal_no, self.turn + 1, self.phase._value_, self.dealer, self.current, list(self.hands[seat]),
            self.drawn if mine else None, self.took_discard if mine else False,
            list(self.discard), len(self.stock), list(map(len, self.hands)), list(self.totals),
            list(self.in_game), list(self.opened), list(self.melds), self.requirement(seat), self.rebuilds,
            self.deal_no in self.rules.meld_all_at_once_deals, self.played_before[seat],
            self.legal_draws() if mine else [],
        )

    def placings(self) -> list[int]:
        """Standard competition ranking of every seat, 1 = best (RULES 8)."""
        sign = 1 if self.rules.scoring == "penalty" else -1
        keys = []
        for s in range(self.n):
            if s in self.forfeited:
                keys.append((2, -self.forfeited.index(s), 0))
            elif self.left_in_deal[s] is not None:
                keys.append((1, -self.left_in_deal[s], sign * self.totals[s]))  # type: ignore[operator]
            else:
                keys.append((0, 0, sign * self.totals[s]))
        return [1 + sum(1 for k in keys if k < keys[s]) for s in range(self.n)]

    # ------------------------------------------------------------------- draw
    def _can_take_discard(self) -> bool:
        """Taking the discard needs a legal way to finish the turn (RULES 3.1)."""
        if not self.discard:
            return False
        top = self.discard[-1]
        s = self.current
        only_to_open = not self.opened[s] and self.rules.take_discard_before_opening == "only_to_open"
        hand = self.hands[s]
        if not only_to_open and hand.count(top) < len(hand):
            return True  # a card other than the taken one can be discarded
        view = TurnView(s, self.deal_no, self.hands[s] + [top], self.melds, self.opened[s], self.requirement(s),
                        top, True, self.played_before[s])
        return search.finishing_play(self.rules, view) is not None

    def verify_draw(self, source: str) -> None:
        if self.phase is not Phase.DRAW:
            raise IllegalAction(f"it is not time to draw (phase is {self.phase.value}) (RULES 3)")
        if source == STOCK:
            return
        if source != DISCARD:
            raise IllegalAction(f"draw source must be \"stock\" or \"discard\", not {source!r} (RULES 3.1)")
        if not self.discard:
            raise IllegalAction("the discard pile is empty (RULES 3.1)")
        if not self._can_take_discard():
            if not self.opened[self.current] and self.rules.take_discard_before_opening == "only_to_open":
                raise IllegalAction(
                    "before opening you may take the discard only to open with it this turn, and no such opening exists "
                    "(take_discard_before_opening = only_to_open, RULES 3.1)"
                )
            raise IllegalAction("taking the discard would leave no legal way to finish the turn (RULES 3.1)")

    def can_draw(self, source: str) -> bool:
        try:
            self.verify_draw(source)
        except IllegalAction:
            return False
        return True

    def draw(self, source: str) -> list[Entry]:
        self.verify_draw(source)
        start = len(self.log)
        if source == DISCARD:
            card = self.discard.pop()
            self.took_discard = True
        elif self.stock:
            card = self.stock.pop()
        elif self.rules.stock_exhausted != "end" and self._can_rebuild(upcard=False):
            self._rebuild(upcard=False)  # logged before the draw it makes possible
            card = self.stock.pop()
        else:
            # The draw that found no stock and no way to rebuild it, then the end of the deal (RULES 6.3).
            self.log.append(DrawEntry(self.current, source))
            self._end_deal(None, "stock_exhausted")
            return self.log[start:]
        self.log.append(DrawEntry(self.current, source, text(card)))
        self.hands[self.current].append(card)
        self.drawn = card
        self.phase = Phase.PLAY
        return self.log[start:]

    # ------------------------------------------------------------------- play
    def verify_play(self, play: Play) -> CheckedPlay:
        """The play checked against the state now (IllegalAction if illegal); changes nothing."""
        return CheckedPlay(play, self._outcome(play), self, len(self.log))

    def _outcome(self, play: Play) -> TurnOutcome:
        if self.phase is not Phase.PLAY:
            raise IllegalAction(f"it is not time to play (phase is {self.phase.value}) (RULES 3)")
        return simulate_play(self.rules, self.turn_view(), play)

    def can_play(self, play: Play) -> bool:
        try:
            self.verify_play(play)
        except IllegalAction:
            return False
        return True

    def play(self, checked: Play | CheckedPlay) -> list[Entry]:
        """Apply a play (a ``CheckedPlay`` from this game in this state is not worked out again)."""
        if isinstance(checked, CheckedPlay) and checked.game is self and checked.at == len(self.log):
            play, outcome = checked.play, checked.outcome
        else:
            play = checked.play if isinstance(checked, CheckedPlay) else checked
            outcome = self._outcome(play)
        start = len(self.log)
        seat = self.current
        self.hands[seat] = outcome.hand
        self.melds = outcome.melds
        self.opened[seat] = outcome.opened
        actions, discard = play_to_wire(play)
        if outcome.effects:
            self.log.append(PlayEntry(seat, actions, discard, [self._effect_data(fx) for fx in outcome.effects]))
        else:
            self.log.append(PlayEntry(seat, actions, discard))
        if outcome.discard is not None:
            self.discard.append(outcome.discard)
        if outcome.out:
            self._end_deal(seat, "out")
            return self.log[start:]
        if outcome.table_played:
            self.played_before[seat] = True
        self.turn += 1
        if self.turn >= self.rules.max_turns:
            self._end_deal(None, "turn_cap")
            return self.log[start:]
        self.current = self.left_of(seat)
        self._begin_turn()
        return self.log[start:]

    def _effect_data(self, fx: dict[str, Any]) -> Effect:
        kind = fx["kind"]
        if kind == "meld":
            return MeldEffect(wire_meld(fx["as_melded"]))
        if kind == "layoff":
            return LayoffEffect(fx["meld"], texts(fx["cards"]))
        return SwapEffect(fx["meld"], text(fx["card"]), text(fx["wild"]))

    # ---------------------------------------------------------------- forfeit
    def forfeit(self, seat: int, reason: str = "", failure: str = "forfeit") -> list[Entry]:
        """``seat`` leaves the game, placed last; the others play on while two remain."""
        if self.over or not self.in_game[seat]:
            return []
        start = len(self.log)
        self.in_game[seat] = False
        self.forfeited.append(seat)
        self.dead.extend(self.hands[seat])
        self.hands[seat] = []
        self.log.append(ForfeitEntry(seat, failure, reason))
        if len(self.active()) < 2:
            self._finish("forfeit")
        elif seat == self.current:
            self.current = self.left_of(seat)
            self._begin_turn()
        return self.log[start:]

    # --------------------------------------------------------------- defaults
    def safe_play(self) -> Play:
        """The referee's ``default`` move now (``search.safe_play``)."""
        return search.safe_play(self.rules, self.turn_view())


def _resumed(rules: RuleSet, seed: int, suit_map: SuitMap | None, source: RandomSource, position: Position,
             log: list[Entry]) -> Game:
    game = Game.from_position(rules, position, seed, suit_map, source)
    game.log = log
    return game
