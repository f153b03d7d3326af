"""Checking and working out one turn's table play and discard (RULES 3, 4.4, 5).

``simulate_play`` is pure: it takes what the playing seat can see (a
``TurnView``, which both the game and a bot's observation provide) and a
``Play``, and returns the outcome without touching its inputs, or raises
``IllegalAction`` naming the first action that breaks a rule.  The game
applies the outcome; policies use the same function to test their moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.rules.actions import IllegalAction, LayOff, Meld, Play, Swap
from arena.rules.cards import Card, text
from arena.rules.melds import MeldError, TableMeld, form_meld, lay_off, opening_value, swap_wild
from arena.rules.options import RuleSet


@dataclass(slots=True)
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


@dataclass(slots=True)
class TurnOutcome:
    hand: list[Card]
    melds: list[TableMeld]
    opened: bool
    out: bool
    discard: Card | None
    table_played: bool
    # What each action did, in order; a meld's effect holds the meld as it was put down ("as_melded").
    effects: list[dict[str, Any]] = field(default_factory=list)


def _take(hand: list[Card], cards: tuple[Card, ...], where: str, rule: str = "RULES 3.2") -> None:
    for c in cards:
        try:
            hand.remove(c)
        except ValueError:
            raise IllegalAction(f"{where}: {text(c)} is not in your hand ({rule})") from None


def simulate_play(rules: RuleSet, view: TurnView, play: Play) -> TurnOutcome:
    """The outcome of ``play``, or IllegalAction; nothing passed in is changed."""
    try:
        return _simulate(rules, view, play, waive_opening=False)
    except IllegalAction as first:
        if (
            rules.opening_exempt_when_going_out
            and not view.opened
            and not view.played_before
            and view.requirement > 0
        ):
            try:
                return _simulate(rules, view, play, waive_opening=True)
            except IllegalAction:
                pass
        raise first


def _simulate(rules: RuleSet, view: TurnView, play: Play, waive_opening: bool) -> TurnOutcome:
    hand = list(view.hand)
    melds = list(view.melds)
    copied: set[int] = set()
    opened = view.opened
    requirement = 0 if waive_opening else view.requirement
    initial_zero = waive_opening or rules.initial_meld == 0
    all_at_once = view.deal in rules.meld_all_at_once_deals
    opening_total = 0
    new_melds = 0
    drawn_in_opening = False
    pending_wilds: list[tuple[Card, int]] = []  # swapped wilds still to be melded: (card, origin meld)
    effects: list[dict[str, Any]] = []
    seat = view.seat

    def touch_meld(mid: int) -> TableMeld:
        if not 0 <= mid < len(melds):
            raise IllegalAction(f"action {i + 1}: there is no meld {mid} on the table (RULES 3.2)")
        if mid not in copied:
            melds[mid] = melds[mid].copy()
            copied.add(mid)
        return melds[mid]

    def settle_wilds(cards: tuple[Card, ...] | list[Card], target: int) -> None:
        """Cards just put into meld ``target`` settle swapped wilds still to be melded (RULES 4.4).

        The swapped card counts as melded whether it goes in as a wild or (a card of
        the wild rank in its own place) as a natural: RULES 4.4 asks only that it be
        put into a different meld.
        """
        if not pending_wilds:
            return
        for c in cards:
            for k, (pc, origin) in enumerate(pending_wilds):
                if pc == c:
                    if origin == target:
                        raise IllegalAction(
                            f"action {i + 1}: a wild taken by a swap may never go back into the meld it came from (RULES 4.4)"
                        )
                    del pending_wilds[k]
                    break

    for i, act in enumerate(play.actions):
        where = f"action {i + 1} ({type(act).__name__.lower()})"
        if not hand:
            raise IllegalAction(f"{where}: your hand is already empty, so nothing can follow going out (RULES 3.4)")
        if isinstance(act, Meld):
            if rules.melds_per_turn and not all_at_once and new_melds >= rules.melds_per_turn:
                raise IllegalAction(
                    f"{where}: at most {rules.melds_per_turn} new meld{'s' if rules.melds_per_turn > 1 else ''} per turn (melds_per_turn, RULES 3.2)"
                )
            _take(hand, act.cards, where)
            try:
                m = form_meld(list(act.cards), rules, act.marked, act.kind)
            except MeldError as e:
                raise IllegalAction(f"{where}: {' '.join(text(c) for c in act.cards)} is not a valid meld: {e}") from None
            m.id, m.owner = len(melds), seat
            settle_wilds(m.cards, m.id)
            # Not marked as copied: a later action of this turn on it works on a copy, so ``m``
            # stays the meld as it was put down (what the record and the meld event show).
            melds.append(m)
            new_melds += 1
            if not opened:
                opening_total += opening_value(m, rules)
                if view.took_discard and view.drawn in m.cards:
                    drawn_in_opening = True
                if opening_total >= requirement:
                    opened = True
            effects.append({"kind": "meld", "seat": seat, "meld": m.id, "as_melded": m})
        elif isinstance(act, LayOff):
            if not opened and not initial_zero:
                raise IllegalAction(f"{where}: cannot lay off before opening (RULES 5.2)")
            m = touch_meld(act.meld)
            if rules.layoff == "own" and m.owner != seat:
                raise IllegalAction(f"{where}: you may lay off only onto your own melds (layoff = own, RULES 5.3)")
            if rules.layoff == "after_own_meld" and not any(x.owner == seat for x in melds):
                raise IllegalAction(
                    f"{where}: you may lay off only once you have a meld of your own on the table (layoff = after_own_meld, RULES 5.3)"
                )
            _take(hand, act.cards, where)
            for k, c in enumerate(act.cards):
                try:
                    lay_off(m, c, rules, as_wild=k in act.marked, end=act.end)
                except MeldError as e:
                    raise IllegalAction(f"{where}: cannot lay off {text(c)} on meld {m.id}: {e}") from None
                settle_wilds((c,), m.id)
            effects.append({"kind": "layoff", "seat": seat, "meld": m.id, "cards": list(act.cards)})
        elif isinstance(act, Swap):
            if rules.joker_swap == "none":
                raise IllegalAction(f"{where}: swapping wilds is not allowed in this variant (joker_swap = none, RULES 4.4)")
            if not opened and (not initial_zero or rules.joker_swap == "after_opening"):
                raise IllegalAction(f"{where}: cannot swap a wild before opening (RULES 5.2)")
            m = touch_meld(act.meld)
            _take(hand, (act.card,), where)
            try:
                wild = swap_wild(m, act.card, rules, act.wild)
            except MeldError as e:
                raise IllegalAction(f"{where}: {e}") from None
            hand.append(wild)
            if rules.swapped_wild_must_be_melded:
                pending_wilds.append((wild, m.id))
            effects.append({"kind": "swap", "seat": seat, "meld": m.id, "card": act.card, "wild": wild})
        else:  # pragma: no cover - the type union is closed
            raise IllegalAction(f"{where}: unknown action")

    if not opened and new_melds:
        raise IllegalAction(
            f"your new melds total {opening_total} points, short of the {requirement} needed to open; "
            f"a turn that does not open may contain no melds (RULES 5.1)"
        )
    if view.took_discard and not view.opened and rules.take_discard_before_opening == "only_to_open" and not drawn_in_opening:
        raise IllegalAction(
            "you took the discard before opening, so this turn must open with melds that contain that card "
            "(take_discard_before_opening = only_to_open, RULES 3.1)"
        )
    out = False
    if not hand:
        if rules.go_out == "discard":
            raise IllegalAction("table play must leave a card to discard: you go out by discarding (go_out = discard, RULES 3.4)")
        if play.discard is not None:
            raise IllegalAction("your hand is empty after table play, so there is nothing to discard (RULES 3.4)")
        out = True
    else:
        if play.discard is None:
            raise IllegalAction("a turn ends with a discard unless table play empties the hand (RULES 3.3)")
        if view.took_discard and play.discard == view.drawn:
            raise IllegalAction(
                f"cannot discard {text(play.discard)}: it is (or equals) the card taken from the discard pile this turn (RULES 3.3)"
            )
        _take(hand, (play.discard,), "discard", "RULES 3.3")
        for k, (pc, _origin) in enumerate(pending_wilds):
            if pc == play.discard:
                del pending_wilds[k]
                break
        out = not hand
    if pending_wilds:
        raise IllegalAction(
            f"the wild {text(pending_wilds[0][0])} taken by a swap must go into another meld or be the discard this turn "
            f"(swapped_wild_must_be_melded, RULES 4.4)"
        )
    table_played = bool(play.actions)
    if all_at_once and table_played and not out:
        raise IllegalAction(
            f"in deal {view.deal} you may meld, lay off or swap only in a turn in which you go out (meld_all_at_once_deals, RULES 3.5)"
        )
    if waive_opening and not out:
        raise IllegalAction("the opening requirement is waived only for a turn that goes out (RULES 5.1)")
    return TurnOutcome(hand, melds, opened, out, play.discard, table_played, effects)
