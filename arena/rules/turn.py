"""Checking and working out one turn's table play and discard (RULES 3, 4.4, 5).

``simulate_play`` is pure: it takes what the playing seat can see (a
``TurnView``, which both the game and a bot's observation provide) and a
``Play``, and returns the outcome without touching its inputs, or raises
``IllegalAction`` naming the first action that breaks a rule.  The game
applies the outcome; policies use the same function to test their moves, or
``refusal``, which returns the refusal instead (worked out without raising it
where it can: the opening and end checks return theirs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from arena.rules.actions import IllegalAction, LayOff, Meld, Play, Swap, TableAction
from arena.rules.cards import Card, text
from arena.rules.frozen import by_fields
from arena.rules.melds import MeldError, TableMeld, form_meld, lay_off, opening_value, swap_wild
from arena.rules.options import RuleSet


@dataclass(slots=True, init=False)
class TurnView:
    """The playing seat's view of the table after its draw."""

    seat: int
    deal: int
    hand: list[Card]
    melds: list[TableMeld]  # index == meld id
    opened: bool
    requirement: int  # points still needed to open (0: any meld opens)
    drawn: Card | None
    took_discard: bool
    played_before: bool  # melded, laid off or swapped in an earlier turn of this deal

    def __init__(self, seat: int, deal: int, hand: list[Card], melds: list[TableMeld], opened: bool, requirement: int,
                 drawn: Card | None, took_discard: bool, played_before: bool) -> None:
        # written out, as are TurnOutcome's and the other hot dataclasses' (actions.py says why)
        self.seat, self.deal, self.hand, self.melds, self.opened = seat, deal, hand, melds, opened
        self.requirement, self.drawn, self.took_discard, self.played_before = requirement, drawn, took_discard, played_before

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)  # compiled, its __new__ runs __init__ (frozen.py)


@dataclass(slots=True, init=False)
class TurnOutcome:
    hand: list[Card]
    melds: list[TableMeld]
    opened: bool
    out: bool
    discard: Card | None
    table_played: bool
    # What each action did, in order; a meld's effect holds the meld as it was put down ("as_melded").
    effects: list[dict[str, Any]]

    def __init__(self, hand: list[Card], melds: list[TableMeld], opened: bool, out: bool, discard: Card | None,
                 table_played: bool, effects: list[dict[str, Any]] | None = None) -> None:
        self.hand, self.melds, self.opened, self.out = hand, melds, opened, out
        self.discard, self.table_played, self.effects = discard, table_played, [] if effects is None else effects

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)  # compiled, its __new__ runs __init__ (frozen.py)


def _where(n: int, act: TableAction) -> str:
    """How a refusal names action ``n`` (from 1): said only when one is refused, not for every action checked."""
    return f"action {n} ({type(act).__name__.lower()})"


def _take(hand: list[Card], cards: tuple[Card, ...], n: int, act: TableAction | None, rule: str = "RULES 3.2") -> None:
    """Take ``cards`` from ``hand`` for action ``n`` (``act``; None: the discard), or IllegalAction."""
    for c in cards:
        try:
            hand.remove(c)
        except ValueError:
            where = "discard" if act is None else _where(n, act)
            raise IllegalAction(f"{where}: {text(c)} is not in your hand ({rule})") from None


def simulate_play(rules: RuleSet, view: TurnView, play: Play) -> TurnOutcome:
    """The outcome of ``play``, or IllegalAction; nothing passed in is changed."""
    outcome = _worked_out(rules, view, play)
    if isinstance(outcome, IllegalAction):
        raise outcome
    return outcome


def refusal(rules: RuleSet, view: TurnView, play: Play) -> IllegalAction | None:
    """Why ``simulate_play`` refuses ``play`` (its ``IllegalAction``), or None if it is legal."""
    outcome = _worked_out(rules, view, play)
    return outcome if isinstance(outcome, IllegalAction) else None


def _worked_out(rules: RuleSet, view: TurnView, play: Play) -> TurnOutcome | IllegalAction:
    """``simulate_play``'s answer, a refusal returned: policies ask about many plays that are refused,
    and compiled, a raised exception costs a traceback entry in every function it leaves."""
    first = _Turn(rules, view).attempt(play)
    if isinstance(first, TurnOutcome) or not _may_go_out_without_minimum(rules, view):
        return first
    # RULES 5.1: going out in one turn needs no minimum, so judge the play as if none were
    # needed; it stands only if it goes out, and otherwise the first reason is the answer.
    second = _Turn(rules, replace(view, requirement=0)).attempt(play)
    if isinstance(second, IllegalAction):
        # refused at its discard without the minimum: another discard might have gone out
        first.whatever_the_discard = first.whatever_the_discard and second.whatever_the_discard
        return first
    if not second.out:
        # a discard takes one card whichever it is, so no other discard goes out either
        return first
    return second


def _may_go_out_without_minimum(rules: RuleSet, view: TurnView) -> bool:
    """``opening_exempt_when_going_out`` applies to this turn (RULES 5.1)."""
    return rules.opening_exempt_when_going_out and not view.opened and not view.played_before and view.requirement > 0


class _Turn:
    """One turn worked out on copies of the view: each action, the opening check, the discard, the end checks."""

    __slots__ = ("all_at_once", "any_meld_opens", "copied", "drawn_in_opening", "effects", "hand", "melds",
                 "new_melds", "opened", "opening_total", "pending_wilds", "rules", "view")

    def __init__(self, rules: RuleSet, view: TurnView) -> None:
        self.rules = rules
        self.view = view
        self.hand = list(view.hand)
        self.melds = list(view.melds)
        self.copied: set[int] = set()  # melds of the view already replaced by a copy in ``melds``
        self.opened = view.opened
        # with no minimum, lay-offs and swaps need no opening first (RULES 5.2)
        self.any_meld_opens = rules.initial_meld == 0 or view.requirement == 0
        self.all_at_once = view.deal in rules.meld_all_at_once_deals
        self.opening_total = 0
        self.new_melds = 0
        self.drawn_in_opening = False
        self.pending_wilds: list[tuple[Card, int]] = []  # swapped wilds still to be melded: (card, origin meld)
        self.effects: list[dict[str, Any]] = []

    def attempt(self, play: Play) -> TurnOutcome | IllegalAction:
        """The outcome, or the first refusal (returned; the actions and the discard raise theirs)."""
        try:
            self.table_play(play)
        except IllegalAction as in_actions:
            in_actions.whatever_the_discard = True  # nothing below has looked at the discard yet
            return in_actions
        refused = self.opening_refusal()  # the most frequent refusal a policy meets: returned, not raised
        if refused is not None:
            refused.whatever_the_discard = True
            return refused
        table_played = bool(play.actions)
        try:
            out = self.discard(play.discard)
        except IllegalAction as at_discard:
            return at_discard
        refused = self.end_refusal(table_played, out)
        if refused is not None:
            return refused
        return TurnOutcome(self.hand, self.melds, self.opened, out, play.discard, table_played, self.effects)

    def table_play(self, play: Play) -> None:
        """Every action in turn: what, with the opening check, does not depend on the discard."""
        for i, act in enumerate(play.actions):
            if not self.hand:
                raise IllegalAction(f"{_where(i + 1, act)}: your hand is already empty, so nothing can follow going out (RULES 3.4)")
            if isinstance(act, Meld):
                self.meld(act, i + 1)
            elif isinstance(act, LayOff):
                self.lay_off(act, i + 1)
            elif isinstance(act, Swap):
                self.swap(act, i + 1)
            else:  # pragma: no cover - the type union is closed
                raise IllegalAction(f"{_where(i + 1, act)}: unknown action")

    # -- the actions (RULES 3.2) ------------------------------------------
    def meld(self, act: Meld, n: int) -> None:
        rules = self.rules
        if rules.melds_per_turn and not self.all_at_once and self.new_melds >= rules.melds_per_turn:
            raise IllegalAction(
                f"{_where(n, act)}: at most {rules.melds_per_turn} new meld{'s' if rules.melds_per_turn > 1 else ''} per turn (melds_per_turn, RULES 3.2)"
            )
        _take(self.hand, act.cards, n, act)
        try:
            m = form_meld(list(act.cards), rules, act.marked, act.kind)
        except MeldError as e:
            raise IllegalAction(f"{_where(n, act)}: {' '.join(text(c) for c in act.cards)} is not a valid meld: {e}") from None
        m.id, m.owner = len(self.melds), self.view.seat
        self.settle_wilds(m.cards, m.id, n)
        # Not marked as copied: a later action of this turn on it works on a copy, so ``m``
        # stays the meld as it was put down (what the record and the meld event show).
        self.melds.append(m)
        self.new_melds += 1
        if not self.opened:
            self.count_towards_opening(m)
        self.effects.append({"kind": "meld", "seat": self.view.seat, "meld": m.id, "as_melded": m})

    def count_towards_opening(self, m: TableMeld) -> None:
        """A new meld before opening counts towards the requirement (RULES 5.1, 3.1 only_to_open)."""
        view = self.view
        self.opening_total += opening_value(m, self.rules)
        if view.took_discard and view.drawn in m.cards:
            self.drawn_in_opening = True
        if self.opening_total >= view.requirement:
            self.opened = True

    def lay_off(self, act: LayOff, n: int) -> None:
        rules, seat = self.rules, self.view.seat
        if not self.opened and not self.any_meld_opens:
            raise IllegalAction(f"{_where(n, act)}: cannot lay off before opening (RULES 5.2)")
        m = self.touch_meld(act.meld, n)
        if rules.layoff == "own" and m.owner != seat:
            raise IllegalAction(f"{_where(n, act)}: you may lay off only onto your own melds (layoff = own, RULES 5.3)")
        if rules.layoff == "after_own_meld" and not any(x.owner == seat for x in self.melds):
            raise IllegalAction(
                f"{_where(n, act)}: you may lay off only once you have a meld of your own on the table (layoff = after_own_meld, RULES 5.3)"
            )
        _take(self.hand, act.cards, n, act)
        for k, c in enumerate(act.cards):
            try:
                lay_off(m, c, rules, as_wild=k in act.marked, end=act.end)
            except MeldError as e:
                raise IllegalAction(f"{_where(n, act)}: cannot lay off {text(c)} on meld {m.id}: {e}") from None
            self.settle_wilds((c,), m.id, n)
        self.effects.append({"kind": "layoff", "seat": seat, "meld": m.id, "cards": list(act.cards)})

    def swap(self, act: Swap, n: int) -> None:
        rules = self.rules
        if rules.joker_swap == "none":
            raise IllegalAction(f"{_where(n, act)}: swapping wilds is not allowed in this variant (joker_swap = none, RULES 4.4)")
        if not self.opened and (not self.any_meld_opens or rules.joker_swap == "after_opening"):
            raise IllegalAction(f"{_where(n, act)}: cannot swap a wild before opening (RULES 5.2)")
        m = self.touch_meld(act.meld, n)
        _take(self.hand, (act.card,), n, act)
        try:
            wild = swap_wild(m, act.card, rules, act.wild)
        except MeldError as e:
            raise IllegalAction(f"{_where(n, act)}: {e}") from None
        self.hand.append(wild)
        if rules.swapped_wild_must_be_melded:
            self.pending_wilds.append((wild, m.id))
        self.effects.append({"kind": "swap", "seat": self.view.seat, "meld": m.id, "card": act.card, "wild": wild})

    def touch_meld(self, mid: int, n: int) -> TableMeld:
        """Meld ``mid`` of the table, copied the first time this turn changes it."""
        melds = self.melds
        if not 0 <= mid < len(melds):
            raise IllegalAction(f"action {n}: there is no meld {mid} on the table (RULES 3.2)")
        if mid not in self.copied:
            melds[mid] = melds[mid].copy()
            self.copied.add(mid)
        return melds[mid]

    def settle_wilds(self, cards: tuple[Card, ...] | list[Card], target: int, n: int) -> None:
        """Cards just put into meld ``target`` settle swapped wilds still to be melded (RULES 4.4).

        The swapped card counts as melded whether it goes in as a wild or (a card of
        the wild rank in its own place) as a natural: RULES 4.4 asks only that it be
        put into a different meld.
        """
        pending = self.pending_wilds
        if not pending:
            return
        for c in cards:
            for k, (pc, origin) in enumerate(pending):
                if pc == c:
                    if origin == target:
                        raise IllegalAction(
                            f"action {n}: a wild taken by a swap may never go back into the meld it came from (RULES 4.4)"
                        )
                    del pending[k]
                    break

    # -- after the actions --------------------------------------------------
    def opening_refusal(self) -> IllegalAction | None:
        """A turn that does not open has no melds; only_to_open needs the taken card in the opening (RULES 5.1, 3.1)."""
        view, rules = self.view, self.rules
        if not self.opened and self.new_melds:
            return IllegalAction(
                f"your new melds total {self.opening_total} points, short of the {view.requirement} needed to open; "
                f"a turn that does not open may contain no melds (RULES 5.1)"
            )
        if (view.took_discard and not view.opened and rules.take_discard_before_opening == "only_to_open"
                and not self.drawn_in_opening):
            return IllegalAction(
                "you took the discard before opening, so this turn must open with melds that contain that card "
                "(take_discard_before_opening = only_to_open, RULES 3.1)"
            )
        return None

    def discard(self, card: Card | None) -> bool:
        """The discard, or going out by table play (RULES 3.3, 3.4); whether the hand is now empty."""
        view, hand = self.view, self.hand
        if not hand:
            if self.rules.go_out == "discard":
                raise IllegalAction("table play must leave a card to discard: you go out by discarding (go_out = discard, RULES 3.4)")
            if card is not None:
                raise IllegalAction("your hand is empty after table play, so there is nothing to discard (RULES 3.4)")
            return True
        if card is None:
            raise IllegalAction("a turn ends with a discard unless table play empties the hand (RULES 3.3)")
        if view.took_discard and card == view.drawn:
            raise IllegalAction(
                f"cannot discard {text(card)}: it is (or equals) the card taken from the discard pile this turn (RULES 3.3)"
            )
        _take(hand, (card,), 0, None, "RULES 3.3")
        for k, (pc, _origin) in enumerate(self.pending_wilds):
            if pc == card:
                del self.pending_wilds[k]
                break
        return not hand

    def end_refusal(self, table_played: bool, out: bool) -> IllegalAction | None:
        """No swapped wild left unmelded (RULES 4.4); table play only when going out in all-at-once deals (RULES 3.5)."""
        if self.pending_wilds:
            return IllegalAction(
                f"the wild {text(self.pending_wilds[0][0])} taken by a swap must go into another meld or be the discard this turn "
                f"(swapped_wild_must_be_melded, RULES 4.4)"
            )
        if self.all_at_once and table_played and not out:
            return IllegalAction(
                f"in deal {self.view.deal} you may meld, lay off or swap only in a turn in which you go out (meld_all_at_once_deals, RULES 3.5)"
            )
        return None
