"""The human seat: moves typed short and forgiving, the screen in 80 columns with only the seat's own
cards, and a whole deal played for real in a terminal (tmux: send-keys to type, capture-pane to read)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from arena.human import commands
from arena.human.screen import View, render, sort_hand
from protocol.messages import Observation, TableMeld

ROOT = Path(__file__).resolve().parents[2]


def test_moves_are_short_and_forgiving():
    assert commands.parse("d") == commands.Draw("stock") and commands.parse(" P ") == commands.Draw("discard")
    assert commands.parse("m 7h 8H, 9h") == commands.Table({"type": "meld", "cards": ["7H", "8H", "9H"]})
    assert commands.parse("m run 7H JK 9H").action["kind"] == "run"
    assert commands.parse("l 10h 2") == commands.Table({"type": "layoff", "meld": 2, "cards": ["TH"]})
    assert commands.parse("l 9H TH 0 low").action == {"type": "layoff", "meld": 0, "cards": ["9H", "TH"], "end": "low"}
    assert commands.parse("w 5h 1 jk").action == {"type": "swap", "meld": 1, "card": "5H", "wild": "JK"}
    assert commands.parse("x 5c") == commands.Finish("5C") and commands.parse("out") == commands.Finish(None)
    for line in ("hint", "?", "u", "c", "s", "q"):
        assert isinstance(commands.parse(line), commands.Simple)
    for bad, words in (("x", "one card"), ("m", "cards of the meld"), ("l 9H", "meld number"), ("x 1Z", "not a card"),
                       ("l 9H two", "not a meld number"), ("fly", "unknown move"), ("", "type a move")):
        with pytest.raises(commands.CommandError, match=words):
            commands.parse(bad)
    for move in ("m 7H 8H 9H", "m set 7H 7D JK", "l 9H TH 2 high", "w 5H 0 JK"):
        parsed = commands.parse(move)
        assert isinstance(parsed, commands.Table) and commands.as_text(parsed.action) == move


def _obs(**kw) -> Observation:
    base = dict(seat=0, deal=2, turn=9, phase="play", dealer=1, current=0, hand=["QS", "2H", "JK", "5C", "AD"],
                drawn="5C", took_discard=False, discard=["4C", "KD"], stock_size=12, hand_sizes=[5, 4, 6],
                totals=[12, 0, 31], in_game=[True, True, True], opened=[True, True, False],
                melds=[TableMeld(id=i, owner=i % 3, kind="run", cards=["3H", "4H", "JK", "6H"],
                                 wilds=[None, None, "5H", None]) for i in range(40)],
                opening_requirement=30, rebuilds=0, must_go_out_to_meld=True, legal_draws=[])
    return Observation(**{**base, **kw})


def test_screen_fits_80_by_24_and_shows_the_seat_its_table():
    view = View(variant="german", players=["me", "greedy", "other"], clock="600 s a move", pending=["m 7H 8H 9H"],
                recent=[f"event {i}" for i in range(6)], notice="illegal: " + "x" * 200, notice_is_error=True)
    lines = render(_obs(), "play", view)
    console = Console(width=80, record=True, color_system=None)
    for line in lines:
        console.print(line, overflow="fold")
    shown = console.export_text().splitlines()
    assert len(shown) <= 23 and all(len(line) <= 80 for line in shown)
    text = "\n".join(shown)
    assert "[39] you run: 3H 4H JK=5H 6H" in text and "earlier melds" in text  # owners and what wilds stand for
    assert "greedy 4 cards opened" in text and "other 6 cards" in text and "top KD" in text
    assert "still need 30 points" in text and "Typed this turn: m 7H 8H 9H" in text and "! illegal" in text
    assert sort_hand(["QS", "2H", "JK", "5C", "AD"], "suit") == ["5C", "AD", "2H", "QS", "JK"]
    assert sort_hand(["QS", "2H", "JK", "5C", "AD"], "rank") == ["AD", "2H", "5C", "QS", "JK"]


class Pane:
    """A tmux session of 80x24 running one command."""

    def __init__(self, command: str, cwd: Path) -> None:
        self.name = f"arena-human-{time.monotonic_ns()}"
        self.typed: list[str] = []
        # A tmux server of its own (-L): its sessions get this process's environment, not an older server's.
        subprocess.run(["tmux", "-L", self.name, "new-session", "-d", "-s", self.name, "-x", "80", "-y", "24",
                        "-c", str(cwd), f"{command}; echo EXITED $?; sleep 600"], check=True)

    def screen(self) -> str:
        return subprocess.run(["tmux", "-L", self.name, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True).stdout

    def type(self, text: str) -> None:
        self.typed.append(text)
        subprocess.run(["tmux", "-L", self.name, "send-keys", "-t", self.name, "-l", text], check=True)
        subprocess.run(["tmux", "-L", self.name, "send-keys", "-t", self.name, "Enter"], check=True)

    def wait(self, pattern: str, old: str = "", timeout_s: float = 30.0) -> str:
        """The screen once it matches ``pattern`` and differs from ``old``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            shown = self.screen()
            if re.search(pattern, shown, flags=re.M) and shown != old:
                return shown
            time.sleep(0.05)
        raise AssertionError(f"the screen never matched {pattern!r} after typing {self.typed}:\n{self.screen()}")

    def wait_for(self, ready, timeout_s: float = 30.0) -> str:
        """The screen once ``ready`` and still the same a moment later: a screen caught while the seat
        redraws it can show the old request under the new header (a loaded machine did)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            shown = self.screen()
            if ready(shown):
                time.sleep(0.2)
                if self.screen() == shown:
                    return shown
                continue
            time.sleep(0.05)
        raise AssertionError(f"the screen never got ready after typing {self.typed}:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True)


PROMPT = r"^(Draw:|Play:).*\n> ?$"  # a request on screen, nothing typed yet
REDRAWN = r"^(Draw:|Play:)[^\n]*\n> ?$"  # the same, after a message: (?s) lets ".*" reach it


def _request(shown: str) -> tuple[str, str]:
    """Which request a screen asks: (deal and turn, Draw or Play)."""
    where = re.search(r"· (deal \d+ · turn \d+) ·", shown)
    phase = re.search(r"^(Draw|Play):", shown, flags=re.M)
    return (where.group(1) if where else "", phase.group(1) if phase else "")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_person_plays_a_whole_deal_in_a_terminal(tmp_path):
    record = tmp_path / "human.jsonl"
    pane = Pane(f"NO_COLOR=1 {sys.executable} -m arena play basic human greedy --seed 11 --rules end=deals "
                f"--rules deals=1 --time-ms 200 --record {record}", tmp_path)  # the bot's clock; the person's: --human-time
    screens: list[str] = []
    illegal_seen = melded = discarded = False
    try:
        shown = pane.wait(PROMPT + "|EXITED")
        while "EXITED" not in shown:
            screens.append(shown)
            asked = _request(shown)
            if asked[1] == "Draw":
                pane.type("d")
            else:
                if not illegal_seen:
                    shown = _typos_then_an_illegal_play(pane, shown)
                    screens.append(shown)
                    illegal_seen = True
                pane.type("hint")
                shown = pane.wait(r"^hint: ", shown)
                screens.append(shown)
                moves = re.search(r"^hint: (.*)$", shown, flags=re.M).group(1).split("; ")
                for move in moves:
                    melded = melded or move.startswith("m ")
                    discarded = discarded or move.startswith("x ")
                    before = pane.screen()
                    pane.type(move)
                    if move.startswith(("x ", "out")):
                        break
                    pane.wait(r"^Typed this turn: ", before)
            shown = pane.wait_for(lambda text, asked=asked: "EXITED" in text or (
                re.search(PROMPT, text, flags=re.M) is not None and _request(text) != asked))
        screens.append(shown)
    finally:
        pane.close()
    assert "EXITED 0" in screens[-1] and "record:" in screens[-1], screens[-1]
    assert illegal_seen and melded and discarded
    verified = subprocess.run([sys.executable, "-m", "arena", "replay", "--verify", str(record)], capture_output=True,
                              text=True, cwd=ROOT)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    entries = [json.loads(line) for line in record.read_text().splitlines()[1:]]
    assert any(e["e"] == "play" and e["seat"] == 0 and any(a["type"] == "meld" for a in e["actions"]) for e in entries)
    # At every turn the person saw, none of the bot's cards in hand then (known from the record) was on screen.
    hidden = _bot_hand_by_turn(entries, bot=1)
    for shown in screens:
        turn = re.search(r"· turn (\d+) ·", shown)
        if turn is None:
            continue  # the final screens: the game is over
        for card in hidden[int(turn.group(1))]:
            assert not re.search(rf"\b{card}\b", shown), (card, shown)


def _hand(shown: str) -> list[str]:
    found = re.search(r"^Your hand \(\d+, by \w+[^)]*\): (.*)$", shown, flags=re.M)
    assert found is not None, shown
    return found.group(1).split()


def _typos_then_an_illegal_play(pane: Pane, shown: str) -> str:
    """At a play request: two typos, caught by the seat itself (no strike), then a meld that is no meld,
    which the referee refuses (one strike); the screen after it."""
    hand = _hand(shown)
    assert "strikes left 3 of 3" in shown, shown
    absent = next(c for c in ("2C", "3D", "4H", "5S", "6C", "7D", "8H") if c not in hand)
    pane.type(f"x {absent}")
    # each message, then the request drawn again under it (a screen caught mid-redraw ends at the message)
    shown = pane.wait(rf"(?s)! {absent} is not in your hand: nothing was sent, no strike used.*{REDRAWN}", shown)
    pane.type(f"l {hand[0]} 99")
    shown = pane.wait(rf"(?s)! there is no meld \[99\]: .*nothing was sent.*{REDRAWN}", shown)
    assert "strikes left 3 of 3" in shown, shown
    # Two cards of different ranks and suits and any third: never a set, never a run.
    a = hand[0]
    b = next(c for c in hand if c[0] != a[0] and c[1] != a[1])
    c = next(x for x in hand if x not in (a, b))
    pane.type(f"m {a} {b} {c}")
    shown = pane.wait(r"^  -> new meld: ", shown)  # the preview of what was typed, and the hand after it
    assert re.search(r"^Your hand \(\d+, by \w+, after the moves typed\)", shown, flags=re.M), shown
    assert not {a, b, c} & set(_hand(shown))
    discard = next(x for x in hand if x not in (a, b, c))
    pane.type(f"x {discard}")
    return pane.wait(r"(?s)! illegal: .*strikes left 2 of 3", shown)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_person_reads_the_help_makes_typos_and_leaves_with_q(tmp_path):
    record = tmp_path / "left.jsonl"
    pane = Pane(f"NO_COLOR=1 {sys.executable} -m arena play basic human greedy --seed 11 --time-ms 200 "
                f"--record {record}", tmp_path)
    try:
        shown = pane.wait(PROMPT)
        pane.type("?")
        # The help, and then the request drawn again under it (a loaded machine may catch the screen between the two).
        shown = pane.wait(r"(?s)^  q +leave the game.*^(Draw:|Play:)[^\n]*\n> ?$", shown)
        lines = shown.splitlines()
        assert all(len(line) <= 80 for line in lines)
        # Every move of the help on one line of its own, not wrapped mid-phrase.
        for phrase in ("l 9H 2      lay off 9H on meld [2]", "x 5C        discard 5C: ends the turn",
                       "w 5H 0      swap 5H into meld [0] for its wild (w 5H 0 JK: for that wild)"):
            assert any(phrase in line for line in lines), (phrase, shown)
        if _request(shown)[1] == "Draw":
            pane.type("d")
            shown = pane.wait(r"^Play:", shown)
        shown = _typos_then_an_illegal_play(pane, shown)
        pane.type("q")
        shown = pane.wait(r"EXITED \d+", shown)
    finally:
        pane.close()
    assert "EXITED 0" in shown, shown
    entries = [json.loads(line) for line in record.read_text().splitlines()[1:]]
    forfeit = next(e for e in entries if e["e"] == "forfeit")
    assert forfeit["seat"] == 0 and forfeit["reason"] == "the player left the game", forfeit
    assert forfeit["failure"] == "disconnect"
    assert not any("SIGKILL" in json.dumps(e) or e.get("kind") == "crash" for e in entries)
    illegal = [e for e in entries if e["e"] == "failure" and e["kind"] == "illegal"]
    assert len(illegal) == 1, illegal  # the typos never reached the referee; the meld that is no meld did
    verified = subprocess.run([sys.executable, "-m", "arena", "replay", "--verify", str(record)], capture_output=True,
                              text=True, cwd=ROOT)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _bot_hand_by_turn(entries: list[dict], bot: int) -> dict[int, set[str]]:
    """The bot's hand at the start of every turn of the (one) deal, from the record's private entries."""
    hand = set(next(e for e in entries if e["e"] == "deal_start")["hands"][bot])
    turn, at = 1, {1: set(hand)}
    for e in entries:
        if e["e"] == "draw" and e["seat"] == bot and "card" in e:
            hand.add(e["card"])
        elif e["e"] == "play":
            if e["seat"] == bot:
                for a in e["actions"]:
                    hand -= {c.rstrip("*") for c in a.get("cards", [])} | ({a["card"]} if "card" in a else set())
                for fx in e.get("effects", []):
                    if fx["kind"] == "swap":
                        hand.add(fx["wild"])
                hand.discard(e["discard"])
            turn += 1
            at[turn] = set(hand)
    return at


def test_the_screen_previews_typed_moves_and_lists_as_many_recent_moves_as_fit():
    melds = [TableMeld(id=0, owner=1, kind="run", cards=["3H", "4H", "5H"], wilds=[None, None, None])]
    queued = [{"type": "meld", "cards": ["7C", "8C", "9C"]}, {"type": "layoff", "meld": 0, "cards": ["6H"]}]
    view = View(variant="basic", players=["me", "greedy"], pending=[commands.as_text(a) for a in queued],
                queued=queued, recent=[f"event {i}" for i in range(30)], strikes="strikes left 2 of 3")
    obs = _obs(hand=["7C", "8C", "9C", "6H", "QS", "2D"], drawn=None, melds=melds, hand_sizes=[6, 7],
               totals=[0, 0], in_game=[True, True], opened=[False, True], opening_requirement=0,
               must_go_out_to_meld=False)
    console = Console(width=80, record=True, color_system=None)
    for line in render(obs, "play", view):
        console.print(line, overflow="fold")
    shown = console.export_text().splitlines()
    assert len(shown) <= 23 and all(len(line) <= 80 for line in shown)
    text = "\n".join(shown)
    assert "Your hand (2, by suit, after the moves typed): 2D QS" in text
    assert "  -> new meld: 7C 8C 9C" in text and "  -> [0] run: 3H 4H 5H 6H" in text
    assert "strikes left 2 of 3" in text
    listed = [line for line in shown if line.startswith("  · event ")]
    assert len(listed) > 3 and listed[-1] == "  · event 29"  # the latest, as many as fit
