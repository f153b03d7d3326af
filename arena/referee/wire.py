"""Engine <-> protocol: every message the referee sends is built here (docs/ARCHITECTURE.md section 3).

The shapes are ``protocol.messages`` (the one definition of what travels);
this module fills them from the engine and turns what a bot sends into engine
values: an ``Observation`` into a ``request``, a log entry into its public
``event`` objects (SPEC 6: no hands, no stock cards), a bot's ``play`` into an
engine ``Play`` (``IllegalAction`` with the reason the bot is told), and the
``welcome``, ``error``, ``new_game``, ``game_over`` and ``shutdown`` messages.
``observation_from_wire`` goes the other way, for Python bots that decide
with the engine's own policies (``sample_bots``).
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from arena.rules.actions import Play, play_from_wire
from arena.rules.cards import parse, rank_of, suit_of, texts
from arena.rules.log import (
    DealEnd,
    DealStart,
    DrawEntry,
    Entry,
    ForfeitEntry,
    LayoffEffect,
    MeldEffect,
    PlayEntry,
    Rebuild,
    wire_meld,
)
from arena.rules.melds import RUN, SET
from arena.rules.melds import TableMeld as EngineMeld
from arena.rules.observation import Observation as EngineObservation
from protocol import messages as m

# -- observations -------------------------------------------------------------------


def observation(o: EngineObservation) -> m.Observation:
    """The protocol form of what one seat may see (SPEC 5)."""
    drawn = None if o.drawn is None else texts((o.drawn,))[0]
    phase: Any = o.phase
    legal: Any = o.legal_draws
    return m.Observation(
        seat=o.seat, deal=o.deal, turn=o.turn, phase=phase, dealer=o.dealer, current=o.current, hand=texts(o.hand),
        drawn=drawn, took_discard=o.took_discard, discard=texts(o.discard), stock_size=o.stock_size,
        hand_sizes=o.hand_sizes, totals=o.totals, in_game=o.in_game, opened=o.opened,
        melds=[wire_meld(x) for x in o.melds], opening_requirement=o.opening_requirement, rebuilds=o.rebuilds,
        must_go_out_to_meld=o.must_go_out_to_meld, played_before=o.played_before, legal_draws=legal,
    )


def meld_from_wire(t: m.TableMeld) -> EngineMeld:
    """The engine form of a meld on the table (its geometry read back from ``wilds``)."""
    cards = [parse(c) for c in t.cards]
    wild = [s is not None for s in t.wilds]
    meld = EngineMeld(t.id, t.owner, t.kind, cards, wild)
    if meld.kind == SET:
        meld.rank = next(rank_of(c) for c, w in zip(cards, wild) if not w)
    else:
        assert meld.kind == RUN
        meld.suit = next(suit_of(c) for c, w in zip(cards, wild) if not w)
        first = t.wilds[0]
        meld.low = rank_of(parse(first)) if first is not None else rank_of(cards[0])
    return meld


def observation_from_wire(o: m.Observation) -> EngineObservation:
    """The engine form of an observation a bot received (int cards, engine melds)."""
    return EngineObservation(
        o.seat, o.deal, o.turn, o.phase, o.dealer, o.current, [parse(c) for c in o.hand],
        None if o.drawn is None else parse(o.drawn), o.took_discard, [parse(c) for c in o.discard], o.stock_size,
        list(o.hand_sizes), list(o.totals), list(o.in_game), list(o.opened), [meld_from_wire(x) for x in o.melds],
        o.opening_requirement, o.rebuilds, o.must_go_out_to_meld, o.played_before, list(o.legal_draws),
    )


# -- referee -> bot -----------------------------------------------------------------------


def request(game: str, seq: int, decision: str, obs: EngineObservation, decision_ms: int, bank_left: int) -> m.Request:
    kind: Any = decision
    return m.Request(game=game, seq=seq, decision=kind, observation=observation(obs),
                     clock=m.DecisionClock(decision_ms=decision_ms, bank_ms_left=bank_left))


def events(entry: Entry) -> list[m.KnownEvent]:
    """What every seat may see of one log entry (SPEC 6), in order."""
    if type(entry) is PlayEntry:
        seat = entry.seat
        out: list[m.KnownEvent] = []
        for fx in entry.effects:
            if isinstance(fx, MeldEffect):
                out.append(m.MeldEvent(meld=fx.meld, seat=seat))
            elif isinstance(fx, LayoffEffect):
                out.append(m.LayoffEvent(meld=fx.meld, cards=fx.cards, seat=seat))
            else:
                out.append(m.SwapEvent(meld=fx.meld, card=fx.card, wild=fx.wild, seat=seat))
        if entry.discard is not None:
            out.append(m.DiscardEvent(seat=seat, card=entry.discard))
        return out
    if type(entry) is DrawEntry:
        if entry.card is None:
            return []  # the stock was empty and could not be rebuilt: nothing was drawn, the deal_end says why
        source: Any = entry.source
        return [m.DrawEvent(seat=entry.seat, source=source, card=entry.card if entry.source == "discard" else None)]
    if type(entry) is DealStart:
        return [m.DealStartEvent(deal=entry.deal, dealer=entry.dealer, hand_sizes=[len(h) for h in entry.hands],
                                 upcard=entry.upcard, stock_size=entry.stock_size)]
    if type(entry) is DealEnd:
        return [m.DealEndEvent(deal=entry.deal, out=entry.out, rummy=entry.rummy, reason=entry.reason,
                               hand_values=entry.hand_values, scores=entry.scores, totals=entry.totals,
                               eliminated=entry.eliminated)]
    if type(entry) is Rebuild:
        return [m.RebuildEvent(stock_size=entry.stock_size, upcard=entry.upcard)]
    if type(entry) is ForfeitEntry:
        return [m.ForfeitEvent(seat=entry.seat, failure=entry.failure, reason=entry.reason)]
    return []


def event(game: str, ev: m.KnownEvent) -> m.Event:
    return m.Event(game=game, event=ev)


def new_game(game: str, seat: int, players: list[str], rules: dict[str, Any], clock: m.Clock) -> m.NewGame:
    return m.NewGame(game=game, seat=seat, players=players, rules=rules, clock=clock)


def game_over(game: str, placings: list[int], totals: list[int], reason: str) -> m.GameOver:
    return m.GameOver(game=game, placings=placings, totals=totals, reason=reason)


def welcome(name: str) -> m.Welcome:
    return m.Welcome(name=name, max_message_bytes=m.MAX_MESSAGE_BYTES, protocol=m.PROTOCOL_VERSION)


def error(kind: str, reason: str, retry: bool, game: str | None = None, seq: int | None = None) -> m.Error:
    """An ``error`` about a message or a request (``game``/``seq`` null when there is none)."""
    k: Any = kind
    return m.Error(game=game, seq=seq, kind=k, reason=reason, retry=retry, supported_versions=UNSET)


def version_refusal(reason: str, supported: list[int]) -> m.Error:
    """The ``error`` that refuses a ``hello`` with no common version (no game, no seq)."""
    return m.Error(game=UNSET, seq=UNSET, kind="version", reason=reason, retry=False, supported_versions=supported)


def shutdown(reason: str) -> m.Shutdown:
    return m.Shutdown(reason=reason)


# -- bot -> referee -------------------------------------------------------------------------


def play_from_message(msg: m.Play) -> Play:
    """The engine form of a bot's ``play`` reply; ``IllegalAction`` says what is not a card (RULES 1, 3.2)."""
    return play_from_wire(msg.actions, msg.discard)
