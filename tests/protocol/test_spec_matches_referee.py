"""SPEC.md says what the referee sends: every message a bot receives has exactly the fields of the
SPEC's example of its type (per event kind, per error kind), the observation exactly the fields of
SPEC 5's table, and the values SPEC promises (an error's `seq`, the `welcome` name, the reasons of
`game_over` and `deal_end`).  The bot is `tests/bots/spec_reader.py`, written from the spec alone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import protocol

ROOT = Path(__file__).resolve().parents[2]
SPEC = Path(protocol.__file__).with_name("SPEC.md").read_text(encoding="utf-8")
BOT = ROOT / "tests" / "bots" / "spec_reader.py"


def _examples() -> list[dict]:
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)```", SPEC, flags=re.S)]


def _section(title: str) -> str:
    start = SPEC.index(f"## {title}")
    return SPEC[start:SPEC.index("\n## ", start + 1)]


def _table_fields(text: str) -> list[str]:
    """The first column of a markdown table's rows (each `name` in backticks)."""
    return re.findall(r"^\| `(\w+)` \|", text, flags=re.M)


def _listed(row_start: str) -> set[str]:
    """Backticked words of the SPEC table row that starts with ``row_start``."""
    row = next(line for line in SPEC.splitlines() if line.startswith(row_start))
    return set(re.findall(r"`(\w+)`", row.split("|", 3)[3]))


def _key(msg: dict) -> tuple[str, str | None]:
    if msg["type"] == "event":
        ev = msg["event"]
        return ("event", ev["kind"] + (f" from {ev['source']}" if ev["kind"] == "draw" else ""))
    if msg["type"] == "error":
        return ("error", msg["kind"])
    return (msg["type"], None)


def _fields(msg: dict) -> set[str]:
    return set(msg["event"]) if msg["type"] == "event" else set(msg)


@pytest.fixture(scope="module")
def received(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    tmp = tmp_path_factory.mktemp("spec")
    diary = tmp / "diary.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "arena", "play", "basic", f"stdio:{sys.executable} {BOT} {diary}", "greedy",
         "--seed", "5", "--no-sandbox", "--quiet", "--record", str(tmp / "game.jsonl")],
        capture_output=True, text=True, cwd=tmp, timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in diary.read_text().splitlines()]


@pytest.mark.slow
def test_every_message_has_the_fields_of_its_spec_example(received: list[dict]) -> None:
    examples: dict[tuple[str, str | None], set[str]] = {}
    for ex in _examples():
        if ex["type"] not in ("hello", "draw", "play"):
            examples.setdefault(_key(ex), _fields(ex))
    seen = {_key(m) for m in received}
    assert {("welcome", None), ("new_game", None), ("request", None), ("game_over", None), ("shutdown", None),
            ("error", "illegal"), ("error", "stale"), ("event", "deal_start"), ("event", "draw from stock"),
            ("event", "discard"), ("event", "deal_end")} <= seen
    for msg in received:
        key = _key(msg)
        assert key in examples, f"SPEC.md has no example of {key}: {msg}"
        assert _fields(msg) == examples[key], f"{key}: the referee sends {sorted(_fields(msg))}, SPEC's example shows {sorted(examples[key])}"


@pytest.mark.slow
def test_observation_fields_are_spec_5s_table(received: list[dict]) -> None:
    table = _table_fields(_section("5. The observation").split("A meld on the table")[0])
    for msg in received:
        if msg["type"] == "request":
            assert list(msg["observation"]) == table


@pytest.mark.slow
def test_values_the_spec_promises(received: list[dict]) -> None:
    asked: list[int] = []
    for msg in received:
        if msg["type"] == "request":
            asked.append(msg["seq"])
        if msg["type"] == "error":
            # The illegal play answered the request just sent; the stale reply repeated the answer to the
            # request before the one now open (SPEC 3: the seq the dropped reply carried).
            assert msg["seq"] == (asked[-2] if msg["kind"] == "stale" else asked[-1]), msg
            assert msg["game"] is not None
    welcome = next(m for m in received if m["type"] == "welcome")
    example = next(e for e in _examples() if e["type"] == "welcome")
    assert welcome["name"] == example["name"]
    game_over = [m for m in received if m["type"] == "game_over"]
    assert game_over and all(m["reason"] in _listed("| `reason` | string | why the game ended") for m in game_over)
    deal_end_reasons = _listed("| `deal_end` |")
    for msg in received:
        if msg["type"] == "event" and msg["event"]["kind"] == "deal_end":
            assert msg["event"]["reason"] in deal_end_reasons
