"""Twins with relabelled suits (``twin_suits = "permute"``): the proof that they are the same game.

The claim: under every preset, dealing a game with a suit map ``s`` gives the
game whose every state, legal action and score is the image under ``s`` of
the game dealt without it.  The built-in policies are not suit-symmetric
(they break ties by card order), so the proof does not ask them to play the
twin; it plays the original with them and checks, at every decision, that the
engine accepts exactly the relabelled moves on the relabelled deal:

- the observation of every decision maps exactly (hand order included);
- both draws are legal on one deal iff they are on the other;
- every probe play (the policy's own, every plain discard, every candidate
  meld, random card subsets as melds, lay-offs and swaps onto every meld, most
  of them illegal) is accepted on one deal iff its image is on the other, with
  the image outcome (hand, melds, opening, going out);
- the record entries every applied action produces map exactly, and so do the
  final placings and totals.

Then the same for the record path (``replay`` of a relabelled record under a
header with ``suits``), the twin's deal being unrecognisable by its cards, the
schedule's suit maps, the tournament key, and one real ``arena run``.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.policies import Policy
from arena.record_check import RecordError, check_header
from arena.referee import wire
from arena.rules.actions import DISCARD, STOCK, LayOff, Meld, Play, Swap, play_from_wire, play_to_wire
from arena.rules.candidates import candidate_melds
from arena.rules.cards import JOKER, SUITS, Card, parse, rank_of, suit_of, text
from arena.rules.game import Game, Phase
from arena.rules.log import DealStart, wire_meld
from arena.rules.options import OPTION_NAMES, RuleSet, resolve
from arena.rules.presets import PRESETS
from arena.rules.record import Header, ReplayError, replay
from arena.rules.suits import (
    ALL_SUIT_MAPS,
    IDENTITY,
    SUIT_FREE_OPTIONS,
    SuitMap,
    SuitMapError,
    from_text,
    relabel,
    suit_asymmetry,
    to_text,
)
from arena.rules.turn import simulate_play
from arena.selfplay import policies_for
from arena.tournament import schedule
from arena.tournament.config import validate_text
from protocol.messages import Action
from tests.engine_helpers import entry_at
from tests.helpers import CLI
from tests.oracles import compose, inverse

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))

# Rule sets beyond the presets, for options no preset uses: wrap, settle, plus10, after_own_meld,
# reshuffle, a wild rank (one deck), only_to_open with a minimum and the going-out exemption.
OVERRIDES: dict[str, RuleSet] = {
    "basic+wrap": resolve("basic", {"ace": "wrap", "scoring": "settle", "rummy_bonus": "plus10",
                                    "layoff": "after_own_meld", "stock_exhausted": "reshuffle", "melds_per_turn": 0}),
    "wrotham+wild2": resolve("wrotham", {"wild_rank": "2", "max_wilds_per_meld": 2, "wilds_adjacent": False,
                                         "meld_all_at_once_deals": [2]}),
    "german+only_to_open": resolve("german", {"take_discard_before_opening": "only_to_open",
                                              "opening_exempt_when_going_out": True, "upcard_after_rebuild": True,
                                              "stock_exhausted": "turn_over"}),
}
RULE_SETS: dict[str, RuleSet] = {**PRESETS, **OVERRIDES}
NON_IDENTITY = st.sampled_from(ALL_SUIT_MAPS[1:])
POLICY_NAMES = st.sampled_from(["random", "greedy"])
PROBED_DECISIONS = 40  # decisions per game checked with every probe; the rest of the game in lockstep only


# -- relabelling plain data -------------------------------------------------------------------------

_CARD_TEXT = re.compile(r"^([A2-9TJQK])([CDHS])(\*?)$")


def relabelled(data: Any, suit_map: SuitMap) -> Any:
    """``data`` (record entries, observations, plays) with every card text relabelled by ``suit_map``."""
    if isinstance(data, str):
        m = _CARD_TEXT.match(data)
        return data if m is None else m.group(1) + SUITS[suit_map[SUITS.index(m.group(2))]] + m.group(3)
    if isinstance(data, list):
        return [relabelled(x, suit_map) for x in data]
    if isinstance(data, dict):
        return {k: relabelled(v, suit_map) for k, v in data.items()}
    return data


def relabel_play(play: Play, suit_map: SuitMap) -> Play:
    actions, discard = play_to_wire(play)
    d = relabelled(msgspec.to_builtins({"actions": actions, "discard": discard}), suit_map)
    return play_from_wire(msgspec.convert(d["actions"], list[Action]), d["discard"])


def outcome_data(game: Game, play: Play) -> dict[str, Any] | None:
    """What ``play`` would do now (None if illegal), as plain data."""
    if not game.can_play(play):
        return None
    o = simulate_play(game.rules, game.turn_view(), play)
    return {"hand": [text(c) for c in o.hand], "melds": [msgspec.to_builtins(wire_meld(m.copy())) for m in o.melds],
            "opened": o.opened, "out": o.out, "discard": None if o.discard is None else text(o.discard),
            "table_played": o.table_played}


# -- probe plays: legal and illegal --------------------------------------------------------------

def _discard_after(hand: list[Card], used: tuple[Card, ...], rng: random.Random) -> Card | None:
    rest = list(hand)
    for c in used:
        if c in rest:
            rest.remove(c)
    return rng.choice(rest) if rest else None


def probes(game: Game, chosen: Play, rng: random.Random) -> list[Play]:
    """The policy's play and a sample of other plays, most of them illegal."""
    hand = game.hands[game.current]
    out: list[Play] = [chosen] + [Play((), c) for c in sorted(set(hand))]
    for m in candidate_melds(hand, game.rules):
        out.append(Play((Meld(m),), _discard_after(hand, m, rng)))
    for _ in range(6):
        cards = tuple(rng.sample(hand, min(len(hand), rng.randint(3, 5))))
        out.append(Play((Meld(cards),), _discard_after(hand, cards, rng)))
    for meld in game.melds:
        for c in rng.sample(hand, min(len(hand), 4)):
            end = rng.choice([None, "low", "high"])
            out.append(Play((LayOff(meld.id, (c,), end=end),), _discard_after(hand, (c,), rng)))
            out.append(Play((Swap(meld.id, c),), rng.choice(hand)))
    if len(hand) >= 4:
        a = tuple(hand[:3])
        out.append(Play((Meld(a), LayOff(0, (hand[3],))), _discard_after(hand, a + (hand[3],), rng)))
    return out


# -- the proof ---------------------------------------------------------------------------------------

@dataclass
class Twins:
    """The original game and its relabelled twin, moved in lockstep."""

    original: Game
    twin: Game
    suit_map: SuitMap

    def check_observation(self) -> None:
        seat = self.original.current
        mine = relabelled(msgspec.to_builtins(wire.observation(self.original.observation(seat))), self.suit_map)
        assert msgspec.to_builtins(wire.observation(self.twin.observation(seat))) == mine

    def check_draws(self) -> None:
        for source in (STOCK, DISCARD):
            assert self.original.can_draw(source) == self.twin.can_draw(source), source

    def check_plays(self, chosen: Play, rng: random.Random) -> None:
        for p in probes(self.original, chosen, rng):
            image = relabel_play(p, self.suit_map)
            want = outcome_data(self.original, p)
            assert outcome_data(self.twin, image) == relabelled(want, self.suit_map), p

    def step(self, policy: Policy, probe: bool, rng: random.Random) -> None:
        g, t = self.original, self.twin
        assert g.current == t.current and g.phase == t.phase
        obs = g.observation(g.current)
        if probe:
            self.check_observation()
        if g.phase is Phase.DRAW:
            if probe:
                self.check_draws()
            source = policy.draw(obs)
            mine, theirs = g.draw(source), t.draw(source)
        else:
            play = policy.play(obs)
            if probe:
                self.check_plays(play, rng)
            mine, theirs = g.play(play), t.play(relabel_play(play, self.suit_map))
        assert msgspec.to_builtins(theirs) == relabelled(msgspec.to_builtins(mine), self.suit_map)


def play_twins(rules: RuleSet, names: list[str], seed: int, suit_map: SuitMap) -> Twins:
    twins = Twins(Game(rules, len(names), seed), Game(rules, len(names), seed, suit_map), suit_map)
    assert msgspec.to_builtins(twins.twin.log) == relabelled(msgspec.to_builtins(twins.original.log), suit_map)
    policies = policies_for(rules, names, seed)
    rng = random.Random(seed)
    decisions = 0
    while not twins.original.over:
        twins.step(policies[twins.original.current], decisions < PROBED_DECISIONS, rng)
        decisions += 1
    assert twins.twin.over
    return twins


def _names(rules: RuleSet) -> st.SearchStrategy[list[str]]:
    lo, hi = rules.players
    return st.integers(lo, min(hi, 3)).flatmap(lambda n: st.lists(POLICY_NAMES, min_size=n, max_size=n))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_every_legal_action_and_score_maps_exactly_under_a_suit_map(name: str) -> None:
    rules = RULE_SETS[name]
    assert suit_asymmetry(rules) is None

    @settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(0, 2**31), suit_map=NON_IDENTITY, names=_names(rules))
    def prove(seed: int, suit_map: SuitMap, names: list[str]) -> None:
        twins = play_twins(rules, names, seed, suit_map)
        g, t = twins.original, twins.twin
        assert (t.placings(), t.totals, t.deal_no, t.end_reason) == (g.placings(), g.totals, g.deal_no, g.end_reason)
        assert msgspec.to_builtins(t.log) == relabelled(msgspec.to_builtins(g.log), suit_map)

    prove()


@pytest.mark.slow  # plays and replays whole games: one to several seconds of CPU each
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_a_relabelled_record_replays_under_a_header_with_suits(name: str) -> None:
    rules = RULE_SETS[name]

    @settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(0, 2**31), suit_map=NON_IDENTITY, names=_names(rules))
    def prove(seed: int, suit_map: SuitMap, names: list[str]) -> None:
        from arena.selfplay import play_game

        game, _ = play_game(rules, policies_for(rules, names, seed), seed)
        header = Header(seed, len(names), rules, suits=suit_map)
        data = header.to_data()
        assert data["suits"] == to_text(suit_map) and Header.from_data(data) == header
        twin = replay(Header.from_data(data), relabelled(msgspec.to_builtins(game.log), suit_map))
        assert (twin.placings(), twin.totals) == (game.placings(), game.totals)
        with pytest.raises(ReplayError):  # the same entries do not replay without the suit map
            replay(replace(header, suits=None), relabelled(msgspec.to_builtins(game.log), suit_map))

    prove()


def test_the_identity_and_no_suit_map_deal_the_same_bytes() -> None:
    for name, rules in PRESETS.items():
        lo = rules.players[0]
        a, b = Game(rules, lo, 5), Game(rules, lo, 5, IDENTITY)
        assert a.log == b.log, name
        assert Header(5, lo, rules).to_data() == {k: v for k, v in Header(5, lo, rules, suits=IDENTITY).to_data().items()
                                                  if k != "suits"}


# -- not recognisable ----------------------------------------------------------------------------

def shape(hand: list[str]) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """What survives relabelling: the ranks, and the ranks held in each suit as a sorted pattern."""
    cards = [parse(c) for c in hand]
    ranks = tuple(sorted(rank_of(c) for c in cards))
    per_suit = tuple(sorted(tuple(sorted(rank_of(c) for c in cards if c != JOKER and suit_of(c) == s))
                            for s in range(4)))
    return ranks, per_suit


@settings(max_examples=60, deadline=None, derandomize=True)
@given(name=st.sampled_from(list(PRESETS)), seed=st.integers(0, 2**31), suit_map=NON_IDENTITY)
def test_a_twin_deals_other_cards_of_the_same_shape(name: str, seed: int, suit_map: SuitMap) -> None:
    rules = PRESETS[name]
    n = rules.players[0]
    mine = entry_at(Game(rules, n, seed).log, 1, DealStart).hands
    twin = entry_at(Game(rules, n, seed, suit_map).log, 1, DealStart).hands
    moved = {SUITS[s] for s in range(4) if suit_map[s] != s}
    for a, b in zip(mine, twin):
        assert shape(a) == shape(b)
        assert (a != b) == any(c[1] in moved for c in a if c != "JK")
    dealt = [c for h in mine for c in h if c != "JK"]
    assert any(c[1] in moved for c in dealt)  # a two-suit swap moves cards in every deal
    assert sorted(map(tuple, mine)) != sorted(map(tuple, twin))


def test_suit_maps_compose_invert_and_read_back() -> None:
    for m in ALL_SUIT_MAPS:
        assert from_text(to_text(m)) == m and compose(m, inverse(m)) == IDENTITY
        assert relabel(JOKER, m) == JOKER
        assert relabel(parse("7C"), m) == parse("7" + SUITS[m[0]])
    assert to_text(IDENTITY) == "CDHS" and from_text("hscd") == (2, 3, 0, 1)
    for bad in ("CDH", "CDHH", "CDHX", 7, None, ["C", "D", "H", "S"]):
        with pytest.raises(SuitMapError):
            from_text(bad)


# -- which rule sets may be relabelled ----------------------------------------------------------

def test_every_option_is_classified_and_every_preset_is_suit_symmetric() -> None:
    assert set(OPTION_NAMES) == SUIT_FREE_OPTIONS
    for name, rules in PRESETS.items():
        assert suit_asymmetry(rules) is None, name


def test_a_wild_rank_with_two_decks_is_not_proven_symmetric() -> None:
    why = suit_asymmetry(resolve("czech", {"wild_rank": "2"}))
    assert why is not None and "wild_rank" in why and "RULES 3.1" in why
    assert suit_asymmetry(resolve("basic", {"wild_rank": "2"})) is None  # one deck: no equal cards to search


# -- the schedule ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class T:
    bot_names: tuple[str, ...]
    seats: int
    deal_sets: int = 2
    seating: str = "all"
    max_tables: int | None = None
    seed: int = 1
    twin_suits: str = "permute"


def test_every_seating_of_a_set_gets_its_own_suit_map_from_the_key() -> None:
    t = T(tuple(f"b{i}" for i in range(5)), 4, deal_sets=2)  # 24 seatings per set
    games = list(schedule.iter_games(t, KEY))
    assert [schedule.game_at(t, g.index, KEY) for g in games] == games
    by_set: dict[tuple[int, int], list[schedule.GameSpec]] = {}
    for g in games:
        by_set.setdefault((g.table, g.set), []).append(g)
    orders = set()
    for group in by_set.values():
        maps = [g.suit_map for g in group]
        assert len(set(maps)) == 24 and set(maps) == set(ALL_SUIT_MAPS)
        assert len({g.deal_seed for g in group}) == 1
        orders.add(tuple(maps))
    assert len(orders) == len(by_set)  # each set has its own order
    other = [g.suit_map for g in schedule.iter_games(t, bytes(32))]
    assert other != [g.suit_map for g in games]
    same = replace(t, twin_suits="same")
    assert all(g.suit_map is None for g in schedule.iter_games(same, KEY))


def test_more_seatings_than_suit_maps_repeat_them_in_order() -> None:
    t = T(tuple(f"b{i}" for i in range(5)), 5, deal_sets=1)  # 120 seatings
    maps = [g.suit_map for g in schedule.iter_games(t, KEY)]
    assert maps[:24] == maps[24:48] and len(set(maps[:24])) == 24


# -- the tournament key --------------------------------------------------------------------------

def tournament(variant: str = "basic", twin: str | None = '"permute"', rules: str = "") -> str:
    line = "" if twin is None else f"twin_suits = {twin}\n"
    return (f'name = "t"\nvariant = "{variant}"\nseats = 2\n{line}'
            + (f"[rules]\n{rules}\n" if rules else "")
            + '[[bots]]\nname = "a"\ncommand = "greedy"\n[[bots]]\nname = "b"\ncommand = "random"\n')


@pytest.mark.parametrize("variant", list(PRESETS))
def test_permute_is_accepted_for_every_preset(variant: str) -> None:
    t, errors = validate_text(tournament(variant))
    assert errors == [] and t is not None and t.twin_suits == "permute"
    assert t.to_toml_data()["twin_suits"] == "permute"


def test_twin_suits_defaults_to_same() -> None:
    t, errors = validate_text(tournament(twin=None))
    assert errors == [] and t is not None and t.twin_suits == "same"
    assert all(g.suit_map is None for g in schedule.iter_games(t, KEY))


@pytest.mark.parametrize("value, expect", [('"shuffle"', "expected one of: same, permute, got 'shuffle'"),
                                           ("true", "expected one of: same, permute, got true"),
                                           ('"permut"', "did you mean 'permute'?")])
def test_a_bad_value_is_named_with_its_key_and_line(value: str, expect: str) -> None:
    _t, errors = validate_text(tournament(twin=value), file="t.toml")
    assert [(e.key, e.line) for e in errors] == [("twin_suits", 4)]
    assert expect in str(errors[0]) and str(errors[0]).startswith("t.toml:4: twin_suits: ")


def test_permute_is_refused_where_the_rules_are_not_proven_suit_symmetric() -> None:
    _t, errors = validate_text(tournament("czech", rules='wild_rank = "2"'), file="t.toml")
    assert [(e.key, e.line) for e in errors] == [("twin_suits", 4)]
    message = str(errors[0])
    assert "'czech'" in message and "wild_rank" in message and "RULES 3.1" in message
    assert message.count(". ") == 0  # one sentence
    ok, errors = validate_text(tournament("czech", twin='"same"', rules='wild_rank = "2"'))
    assert errors == [] and ok is not None


# -- record headers ------------------------------------------------------------------------------

def test_the_record_check_accepts_suits_and_names_a_bad_one() -> None:
    header = Header(3, 2, PRESETS["basic"], ("a", "b"), suits=(1, 0, 3, 2)).to_data()
    assert header["suits"] == "DCSH" and check_header(header, "r:1") == 2
    assert check_header({**header, "suits": None}, "r:1") == 2
    for bad in ("DCS", "DCSX", 12):
        with pytest.raises(RecordError, match=r"^r:1: header field 'suits': a suit map is the four suit letters"):
            check_header({**header, "suits": bad}, "r:1")


# -- one real tournament ---------------------------------------------------------------------------

RUN = """\
name = "twins"
variant = "basic"
seats = 2
deal_sets = 1
twin_suits = "permute"
[time]
decision_ms = 10000
[[bots]]
name = "greedy"
command = "greedy"
[[bots]]
name = "greedy-2"
command = "greedy"
"""


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_permuted_tournament_deals_each_twin_with_its_own_suits(tmp_path: Path, no_leaks: None) -> None:
    file = tmp_path / "twins.toml"
    file.write_text(RUN)
    out = tmp_path / "out"
    got = subprocess.run(CLI + ["run", str(file), "--out", str(out), "--format", "csv"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    journal = sorted(_lines(out / "journal.jsonl"), key=lambda e: e["index"])
    assert [e["seating"] for e in journal] == [0, 1] and len({e["deal_seed"] for e in journal}) == 1
    records = [_lines(out / e["record"]) for e in journal]
    maps = [from_text(r[0]["suits"]) for r in records]
    assert maps[0] != maps[1]
    between = compose(inverse(maps[0]), maps[1])  # from the first game's cards to the second's
    deals = [[e["hands"] for e in r[1:] if e["e"] == "deal_start"] for r in records]
    for first, second in zip(*deals):
        assert second == relabelled(first, between) and second != first
    for e in journal:
        check = subprocess.run(CLI + ["replay", "--verify", str(out / e["record"])], cwd=ROOT,
                               capture_output=True, text=True, timeout=30)
        assert check.returncode == 0 and "MAC verified" in check.stdout, check.stdout + check.stderr
