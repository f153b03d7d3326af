"""Properties of whole games over every preset and legal table size (hypothesis).

- cards are conserved at every step (``card_count(g) == deck_size``);
- every game ends, and a deal stopped by the turn cap says so;
- illegal actions of every kind are rejected with a reason naming the rule and
  change nothing (every seat's observation, the stock, the log);
- totals equal the sum of the per-deal scores; placings are complete;
- the same seed gives the same record, and the record replays;
- a bot that follows the public events in order sees exactly the engine's
  table after every action: melds as put down, lay-offs and swaps after them,
  a rebuild before the draw it made possible, cards conserved at every event.

Bounded by ``max_examples`` so that the file runs in well under a minute.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.referee import wire
from arena.rules.actions import DISCARD, STOCK, IllegalAction, LayOff, Meld, Play, Swap, TableAction
from arena.rules.candidates import candidate_melds
from arena.rules.cards import JOKER, full_deck, texts
from arena.rules.game import Game, Phase
from arena.rules.log import DealEnd, DealStart, DrawEntry, Entry, GameEnd, LayoffEffect, MeldEffect, PlayEntry, Rebuild
from arena.rules.options import resolve
from arena.rules.presets import PRESETS
from arena.rules.record import header_of, replay
from arena.rules.turn import simulate_play
from arena.selfplay import play_game, policies_for, step
from tests.engine_helpers import card_count
from tests.oracles import in_partial

pytestmark = pytest.mark.timeout(120)

TABLES = [(p, n) for p in PRESETS for n in range(PRESETS[p].players[0], PRESETS[p].players[1] + 1)]
POLICY_MIX = [["greedy"], ["random"], ["greedy", "random"], ["random", "greedy"]]
STEP_CAP = 200_000

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def names_for(mix: list[str], n: int) -> list[str]:
    return (mix * n)[:n]


def state(g: Game) -> Any:
    """Everything an illegal action must leave as it was."""
    return (
        len(g.log), g.log[-1], [wire.observation(g.observation(s)) for s in range(g.n)], list(g.stock), g.phase,
        g.current, g.drawn, g.took_discard, g.turn, g.rebuilds, g.random_acts, list(g.totals), g.deal_no,
        [(m.id, m.owner, m.kind, list(m.cards), list(m.wild), m.low, m.rank, m.suit) for m in g.melds],
    )


def absent_card(g: Game) -> int:
    hand = g.hands[g.current]
    return next(c for c in full_deck(1, 1) if c not in hand)


def illegal_candidates(g: Game, rng: random.Random) -> list[tuple[str, Any]]:
    """Actions of every kind; those marked ``sure`` are illegal whatever the state."""
    hand = g.hands[g.current]
    out: list[tuple[str, Any]] = []
    missing = absent_card(g)
    if g.phase is Phase.DRAW:
        out.append(("sure", Play((), hand[0] if hand else missing)))
        out.append(("sure", "nowhere"))
        if not g.discard:
            out.append(("sure", DISCARD))
        return out
    out.append(("sure", STOCK))
    out.append(("sure", DISCARD))
    out.append(("sure", Play((), missing)))
    out.append(("sure", Play((Meld((missing, missing, missing)),), hand[0])))
    out.append(("sure", Play((LayOff(len(g.melds), (hand[0],)),), hand[-1])))
    out.append(("sure", Play((Swap(len(g.melds) + 3, hand[0]),), hand[-1])))
    if len(hand) >= 2:
        out.append(("sure", Play((Meld(tuple(hand[:2])),), hand[-1])))  # two cards are never a meld
        out.append(("sure", Play((), None)))  # no discard with cards left
    if g.took_discard and g.drawn is not None:
        out.append(("sure", Play((), g.drawn)))
    if len(hand) >= 3:
        picked = rng.sample(hand, 3)
        rest = list(hand)
        for c in picked:
            rest.remove(c)
        out.append(("maybe", Play((Meld(tuple(picked)),), rest[0] if rest else None)))
    if g.melds:
        m = rng.choice(g.melds)
        out.append(("maybe", Play((LayOff(m.id, (rng.choice(hand),)),), rng.choice(hand))))
        naturals = [c for c in hand if c != JOKER]
        if naturals:
            out.append(("maybe", Play((Swap(m.id, rng.choice(naturals)),), rng.choice(hand))))
    return out


def attempt(g: Game, kind: str, action: Any) -> bool:
    """Try an action; if illegal, check the reason and that nothing changed.  True if rejected."""
    before = state(g)
    try:
        if isinstance(action, str):
            g.draw(action)
        else:
            g.play(action)
    except IllegalAction as e:
        msg = str(e)
        assert msg and "RULES" in msg, msg
        assert state(g) == before, f"rejected {action!r} ({msg}) but the game changed"
        return True
    assert kind == "maybe", f"{action!r} should have been illegal"
    return False


def drive(g: Game, names: list[str], seed: int, garbage: float = 0.0) -> dict[str, int]:
    """Play ``g`` to its end with built-in policies, checking conservation at every step and
    trying illegal actions with probability ``garbage`` per step."""
    policies = policies_for(g.rules, names, seed)
    rng = random.Random(seed)
    stats = {"steps": 0, "rejected": 0}
    while not g.over:
        assert card_count(g) == g.deck_size
        if garbage and rng.random() < garbage:
            kind, action = rng.choice(illegal_candidates(g, rng))
            stats["rejected"] += attempt(g, kind, action)
            continue
        step(g, policies)
        stats["steps"] += 1
        assert stats["steps"] < STEP_CAP, "the game did not end"
    assert card_count(g) == g.deck_size
    return stats


def check_finished(g: Game) -> None:
    assert g.over and g.end_reason in ("target", "deals", "elimination", "deal_cap", "forfeit")
    ends = [e for e in g.log if isinstance(e, DealEnd)]
    assert len(ends) == g.deal_no == len(g.deal_scores)
    assert [e.scores for e in ends] == g.deal_scores
    assert [sum(d[s] for d in g.deal_scores) for s in range(g.n)] == g.totals
    for e in ends:
        assert e.reason in ("out", "stock_exhausted", "turn_cap")
        assert (e.out is None) == (e.reason != "out")
    placings = g.placings()
    assert isinstance(g.log[-1], GameEnd) and g.log[-1].placings == placings
    assert min(placings) == 1 and all(1 <= p <= g.n for p in placings)
    # standard competition ranking: place = 1 + number strictly ahead
    assert all(p == 1 + sum(q < p for q in placings) for p in placings)


@pytest.mark.slow
@SETTINGS
@given(table=st.sampled_from(TABLES), seed=st.integers(0, 10**6), mix=st.sampled_from(POLICY_MIX))
def test_cards_conserved_and_games_end(table: tuple[str, int], seed: int, mix: list[str]) -> None:
    preset, n = table
    g = Game(resolve(preset), n, seed)
    drive(g, names_for(mix, n), seed)
    check_finished(g)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_table_size_plays_a_whole_game(preset: str) -> None:
    lo, hi = PRESETS[preset].players
    for n in range(lo, hi + 1):
        g = Game(resolve(preset), n, 1000 + n)
        drive(g, names_for(["greedy", "random"], n), n)
        check_finished(g)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(table=st.sampled_from(TABLES), seed=st.integers(0, 10**6), cap=st.integers(1, 12))
def test_turn_cap_ends_deals_and_says_so(table: tuple[str, int], seed: int, cap: int) -> None:
    preset, n = table
    over: dict[str, Any] = {"max_turns": cap}
    if PRESETS[preset].end != "deals":
        over.update(end="deals", deals=3) if PRESETS[preset].end != "elimination" else over.update(target=60)
    g = Game(resolve(preset, over), n, seed)
    drive(g, names_for(["random"], n), seed)
    check_finished(g)
    turns = 0
    for e in g.log:
        if isinstance(e, DealStart):
            turns = 0
        elif isinstance(e, PlayEntry):
            turns += 1
        elif isinstance(e, DealEnd):
            assert turns <= cap
            if e.reason == "turn_cap":
                assert turns == cap and e.out is None
    assert any(isinstance(e, DealEnd) and e.reason == "turn_cap" for e in g.log) or cap > 3


@pytest.mark.slow
@SETTINGS
@given(table=st.sampled_from(TABLES), seed=st.integers(0, 10**6), mix=st.sampled_from(POLICY_MIX))
def test_illegal_actions_are_rejected_with_a_reason_and_change_nothing(table: tuple[str, int], seed: int, mix: list[str]) -> None:
    preset, n = table
    over: dict[str, Any] = {"max_turns": 60}
    g = Game(resolve(preset, over), n, seed)
    stats = drive(g, names_for(mix, n), seed, garbage=0.3)
    assert stats["rejected"] > 0
    check_finished(g)


@pytest.mark.slow
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(table=st.sampled_from(TABLES), seed=st.integers(0, 10**6), mix=st.sampled_from(POLICY_MIX))
def test_same_seed_same_record_and_it_replays(table: tuple[str, int], seed: int, mix: list[str]) -> None:
    preset, n = table
    r = resolve(preset)
    names = names_for(mix, n)
    a, _ = play_game(r, policies_for(r, names, seed), seed)
    b, _ = play_game(r, policies_for(r, names, seed), seed)
    assert a.log == b.log
    again = replay(header_of(a), a.log)
    assert again.log == a.log and again.totals == a.totals


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(table=st.sampled_from(TABLES), seed=st.integers(0, 10**6))
def test_observations_round_trip_and_hide_other_hands(table: tuple[str, int], seed: int) -> None:
    preset, n = table
    r = resolve(preset, {"max_turns": 40})
    g = Game(r, n, seed)
    policies = policies_for(r, ["random"] * n, seed)
    steps = 0
    while not g.over and steps < 300:
        for s in range(n):
            obs = g.observation(s)
            data = wire.observation(obs)
            assert wire.observation(wire.observation_from_wire(data)) == data
            assert obs.hand == g.hands[s] and obs.hand_sizes == [len(h) for h in g.hands]
            if s != g.current:
                assert obs.drawn is None and obs.legal_draws == []
        obs = g.observation(g.current)
        if g.phase is Phase.DRAW:
            g.draw(policies[g.current].draw(obs))
        else:
            g.play(policies[g.current].play(obs))
        steps += 1


@st.composite
def overrides(draw: st.DrawFn) -> tuple[str, int, dict[str, Any]]:
    """A preset, a table size and a random mix of option overrides that ``resolve`` accepts."""
    preset, n = draw(st.sampled_from(TABLES))
    base = PRESETS[preset]
    over: dict[str, Any] = {"max_turns": draw(st.integers(20, 120))}
    choices: dict[str, Any] = {
        "wild_rank": st.sampled_from(["none", "2", "K"]),
        "ace": st.sampled_from(["low", "high_or_low", "wrap"]),
        "layoff": st.sampled_from(["any", "after_own_meld", "own"]),
        "go_out": st.sampled_from(["any", "discard"]),
        "rummy_bonus": st.sampled_from(["none", "double", "plus10"]),
        "joker_swap": st.sampled_from(["none", "any", "after_opening"]),
        "swapped_wild_must_be_melded": st.booleans(),
        "take_discard_before_opening": st.sampled_from(["yes", "only_to_open"]),
        "initial_meld": st.sampled_from([0, 15, 30, "czech"]),
        "opening_exempt_when_going_out": st.booleans(),
        "melds_per_turn": st.integers(0, 2),
        "meld_all_at_once_deals": st.sampled_from([[], [1], [2, 3]]),
        "max_wilds_per_meld": st.integers(0, 2),
        "wilds_at_most_naturals": st.booleans(),
        "wilds_adjacent": st.booleans(),
        "first_player_extra_card": st.booleans(),
        "reshuffle_turned_joker": st.booleans(),
        "max_stock_rebuilds": st.sampled_from(["unlimited", 0, 1, 3]),
    }
    for key in draw(st.sets(st.sampled_from(sorted(choices)), max_size=8)):
        over[key] = draw(choices[key])
    stock = draw(st.sampled_from(["turn_over", "reshuffle", "end", None]))
    if stock is not None:
        over["stock_exhausted"] = stock
        over["upcard_after_rebuild"] = stock != "end" and draw(st.booleans())
    if base.end != "elimination" and draw(st.booleans()):
        over["scoring"] = draw(st.sampled_from(["winner_collects", "settle", "penalty"]))
    if not base.set_distinct_suits and draw(st.booleans()):
        over["set_max"] = draw(st.integers(3, 6))
    if base.end != "deals":
        over.update(end="deals", deals=2) if base.end == "target" else over.update(target=80)
    return preset, n, over


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=overrides(), seed=st.integers(0, 10**6), mix=st.sampled_from(POLICY_MIX))
def test_any_option_mix_plays_legal_conserving_games(case: tuple[str, int, dict[str, Any]], seed: int, mix: list[str]) -> None:
    preset, n, over = case
    g = Game(resolve(preset, over), n, seed)
    drive(g, names_for(mix, n), seed, garbage=0.15)
    check_finished(g)
    again = replay(header_of(g), g.log)
    assert again.log == g.log


@pytest.mark.slow  # 0.7-1.1 s of CPU or own time alone: too near the fast tier's bounds on a loaded machine
@settings(max_examples=200, deadline=None, derandomize=True)
@given(preset=st.sampled_from(list(PRESETS)), wild=st.sampled_from([None, "2"]), ace=st.sampled_from([None, "wrap", "high_or_low"]),
       size=st.integers(1, 15), data=st.data())
def test_greedy_fast_helpers_agree_with_their_plain_definitions(preset: str, wild: str | None, ace: str | None, size: int,
                                                                data: st.DataObject) -> None:
    """The policy's speed-ups (``_partials``, ``candidate_shapes``) change no decision."""
    from arena.policies import _partials
    from arena.rules.candidates import candidate_shapes
    from arena.rules.melds import form_meld

    rules = resolve(preset, {**({"wild_rank": wild} if wild else {}), **({"ace": ace} if ace else {})} or None)
    deck = full_deck(2, 4)
    hand = data.draw(st.lists(st.sampled_from(deck), min_size=size, max_size=size))
    fast = _partials(hand, rules)
    assert all(fast[c] == in_partial(c, hand, rules) for c in hand)
    for cards, shape in candidate_shapes(hand, rules):
        slow = form_meld(list(cards), rules)
        assert (shape.kind, shape.cards, shape.wild, shape.rank if shape.kind == "set" else (shape.suit, shape.low)) == \
            (slow.kind, slow.cards, slow.wild, slow.rank if slow.kind == "set" else (slow.suit, slow.low))
        rest = list(hand)
        for c in cards:
            rest.remove(c)  # every candidate is made of cards in the hand, each used once


# -- the events say what happened, in order ----------------------------------------


class EventFollower:
    """A bot's picture of the table built only from public events, as they arrive."""

    def __init__(self, n: int, multiplicity: dict[str, int]) -> None:
        self.n = n
        self.multiplicity = multiplicity  # most copies of each card the deck can hold
        self.melds: dict[int, tuple[str, int, list[str]]] = {}  # id -> (kind, owner, cards)
        self.stock = 0
        self.discard: list[str] = []
        self.hands = [0] * n
        self.dead = 0
        self.deck = 0

    def follow(self, ev: dict[str, Any], action: dict[str, Any] | None) -> None:
        kind = ev["kind"]
        if kind == "deal_start":
            self.melds, self.dead = {}, 0
            self.hands = list(ev["hand_sizes"])
            self.stock, self.discard = ev["stock_size"], [ev["upcard"]]
            self.deck = sum(self.hands) + self.stock + 1
        elif kind == "draw":
            self.hands[ev["seat"]] += 1
            if ev["source"] == "discard":
                assert self.discard and self.discard[-1] == ev["card"]
                self.discard.pop()
            else:
                self.stock -= 1
                assert self.stock >= 0, "a draw from an empty stock (its rebuild must come first)"
        elif kind == "rebuild":
            assert self.stock == 0, "the stock was rebuilt while it still held cards"
            assert len(self.discard) == ev["stock_size"] + (ev["upcard"] is not None)
            self.stock = ev["stock_size"]
            self.discard = [] if ev["upcard"] is None else [ev["upcard"]]
        elif kind == "meld":
            m = ev["meld"]
            assert m["id"] not in self.melds and m["id"] == len(self.melds)
            self.melds[m["id"]] = (m["kind"], m["owner"], list(m["cards"]))
            self.hands[ev["seat"]] -= len(m["cards"])
            assert action is not None
            put_down = [a for a in action["actions"] if a["type"] == "meld"]
            shown = [e for e in action["effects"] if e["kind"] == "meld"]
            want = put_down[shown.index(next(e for e in shown if e["meld"]["id"] == m["id"]))]["cards"]
            assert sorted(m["cards"]) == sorted(c.upper().rstrip("*").replace("10", "T") for c in want), \
                "a meld event shows more (or other) cards than were melded"
        elif kind == "layoff":
            self.melds[ev["meld"]][2].extend(ev["cards"])
            self.hands[ev["seat"]] -= len(ev["cards"])
        elif kind == "swap":
            cards = self.melds[ev["meld"]][2]
            cards.remove(ev["wild"])
            cards.append(ev["card"])
        elif kind == "discard":
            self.hands[ev["seat"]] -= 1
            self.discard.append(ev["card"])
        elif kind == "forfeit":
            self.dead += self.hands[ev["seat"]]
            self.hands[ev["seat"]] = 0
        self.check()

    def check(self) -> None:
        """What must hold after every event: conservation, and no card more often than the deck has it."""
        if not self.deck:
            return
        on_table = [c for _, _, cards in self.melds.values() for c in cards] + self.discard
        assert min(self.hands) >= 0 and self.stock >= 0
        assert sum(self.hands) + self.stock + len(on_table) + self.dead == self.deck, "cards not conserved"
        seen: dict[str, int] = {}
        for c in on_table:
            seen[c] = seen.get(c, 0) + 1
            assert seen[c] <= self.multiplicity.get(c, 0), f"{c} appears more often than the deck holds it"

    def matches(self, g: Game) -> None:
        """The follower's picture equals the engine's table."""
        obs = msgspec.to_builtins(wire.observation(g.observation(0)))
        assert {m["id"]: (m["kind"], m["owner"], sorted(m["cards"])) for m in obs["melds"]} == \
            {i: (k, o, sorted(cs)) for i, (k, o, cs) in self.melds.items()}
        assert obs["stock_size"] == self.stock and obs["discard"] == self.discard
        if not g.over:
            assert obs["hand_sizes"] == self.hands


def _multiplicity(g: Game) -> dict[str, int]:
    r = g.rules
    most = max(r.count_value("decks", k) for k in range(2, g.n + 1))
    jokers = max(r.count_value("jokers", k) for k in range(2, g.n + 1))
    out = dict.fromkeys(texts(full_deck(1, 0)), most)
    out["JK"] = jokers
    return out


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=overrides(), seed=st.integers(0, 10**6), mix=st.sampled_from(POLICY_MIX), forfeit=st.floats(0, 0.01))
def test_following_the_events_in_order_reconstructs_the_table(
    case: tuple[str, int, dict[str, Any]], seed: int, mix: list[str], forfeit: float
) -> None:
    preset, n, over = case
    g = Game(resolve(preset, over), n, seed)
    policies = policies_for(g.rules, names_for(mix, n), seed)
    rng = random.Random(seed)
    follower = EventFollower(n, _multiplicity(g))
    for entry in g.log:
        for ev in wire.events(entry):
            follower.follow(msgspec.to_builtins(ev), None)
    follower.matches(g)
    steps = 0
    while not g.over:
        obs = g.observation(g.current)
        if rng.random() < forfeit:
            entries = g.forfeit(g.current, "test", "crash")
        elif g.phase is Phase.DRAW:
            entries = g.draw(policies[g.current].draw(obs))
        else:
            entries = g.play(policies[g.current].play(obs))
        for entry in entries:
            for ev in wire.events(entry):
                follower.follow(msgspec.to_builtins(ev), msgspec.to_builtins(entry) if isinstance(entry, PlayEntry) else None)
        if not g.over or g.end_reason == "forfeit":
            follower.matches(g)
        steps += 1
        assert steps < STEP_CAP


def _one_turn_meld_then_layoff() -> tuple[Game, list[Entry]]:
    """A parlett game (seed 34 of the golden games) at a turn that melds and then lays off on that meld."""
    r = resolve("parlett")
    g = Game(r, 3, 34)
    policies = policies_for(r, ["greedy"] * 3, 34)
    while not g.over:
        obs = g.observation(g.current)
        if g.phase is Phase.DRAW:
            g.draw(policies[g.current].draw(obs))
            continue
        play = policies[g.current].play(obs)
        kinds = [type(a).__name__ for a in play.actions]
        entries = g.play(play)
        if "Meld" in kinds and "LayOff" in kinds[kinds.index("Meld"):]:
            return g, entries
    raise AssertionError("no turn melded and laid off")


def test_a_meld_entry_shows_the_meld_as_it_was_put_down() -> None:
    g, entries = _one_turn_meld_then_layoff()
    play = entries[0]
    assert isinstance(play, PlayEntry)
    meld_fx = next(fx for fx in play.effects if isinstance(fx, MeldEffect))
    layoff_fx = next(fx for fx in play.effects if isinstance(fx, LayoffEffect) and fx.meld == meld_fx.meld.id)
    table = next(m for m in g.observation(0).melds if m.id == meld_fx.meld.id)
    assert len(meld_fx.meld.cards) + len(layoff_fx.cards) == len(table.cards)


def test_a_rebuild_is_logged_before_the_draw_it_made_possible() -> None:
    r = resolve("basic")
    for seed in range(40):
        g, _ = play_game(r, policies_for(r, ["greedy", "random", "greedy"], seed), seed)
        log = g.log
        for i, e in enumerate(log):
            if isinstance(e, Rebuild) and e.upcard is None:
                draw = log[i + 1]
                assert isinstance(draw, DrawEntry) and draw.source == "stock" and draw.card is not None
                assert isinstance(log[i - 1], PlayEntry)
                return
    raise AssertionError("no game rebuilt its stock")


def _tried_table_plays(g: Game, rng: random.Random) -> list[tuple[TableAction, ...]]:
    """Table actions a policy might try now: each candidate meld, and random melds, lay-offs and swaps."""
    hand = g.hands[g.current]
    out: list[tuple[TableAction, ...]] = [(Meld(m),) for m in candidate_melds(hand, g.rules)]
    for _kind, action in illegal_candidates(g, rng):
        if isinstance(action, Play) and action.actions:
            out.append(action.actions)
    return out


@pytest.mark.slow
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=overrides(), seed=st.integers(0, 10**6))
def test_a_play_refused_whatever_the_discard_is_refused_with_every_discard(case: tuple[str, int, dict[str, Any]],
                                                                           seed: int) -> None:
    """``IllegalAction.whatever_the_discard`` (what lets greedy skip the other discards) never lies:
    the same table actions with any card of the hand, or none, as the discard are refused too."""
    preset, n, over = case
    g = Game(resolve(preset, over), n, seed)
    policies = policies_for(g.rules, names_for(["greedy", "random"], n), seed)
    rng = random.Random(seed)
    flagged = steps = 0
    while not g.over and steps < 400:
        if g.phase is Phase.PLAY:
            view = g.turn_view()
            for actions in _tried_table_plays(g, rng):
                try:
                    simulate_play(g.rules, view, Play(actions, rng.choice([*view.hand, None])))
                    continue
                except IllegalAction as refused:
                    if not refused.whatever_the_discard:
                        continue
                flagged += 1
                for discard in [*sorted(set(view.hand)), None]:
                    with pytest.raises(IllegalAction):
                        simulate_play(g.rules, view, Play(actions, discard))
        step(g, policies)
        steps += 1
    assert flagged > 0, "no play was refused whatever its discard: the property was not exercised"
