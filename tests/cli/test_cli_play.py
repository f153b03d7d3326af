"""`arena play` and `arena replay` from the command line, and what survives Ctrl-C or SIGTERM (nothing)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import MISBEHAVE, arena_processes
from tests.helpers import kill_9

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.usefixtures("no_leaks")]
ROOT = Path(__file__).resolve().parents[2]


def arena(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=ROOT, **kw)


def test_play_german_four_seats_then_verify_and_tamper(tmp_path):
    record = tmp_path / "g.jsonl"
    p = arena("play", "german", "greedy", "greedy", "random", "greedy", "--seed", "7", "--record", str(record))
    assert p.returncode == 0, p.stderr
    assert "Place" in p.stdout and "deals after 3 deal(s)" in p.stdout
    ok = arena("replay", "--verify", str(record))
    assert ok.returncode == 0 and "verified" in ok.stdout
    shown = arena("replay", str(record))
    assert shown.returncode == 0 and "draws" in shown.stdout and "hands" in shown.stdout
    # Change one card of one stock draw: the record must no longer verify, naming the entry.
    lines = record.read_text().splitlines()
    for i, line in enumerate(lines[1:], start=1):
        e = json.loads(line)
        if e["e"] == "draw" and e["source"] == "stock":
            e["card"] = "KS" if e["card"] != "KS" else "QS"
            lines[i] = json.dumps(e)
            break
    record.write_text("\n".join(lines) + "\n")
    bad = arena("replay", "--verify", str(record))
    assert bad.returncode == 1
    assert f"line {i + 1}" in bad.stdout and "'card'" in bad.stdout


def test_play_stdio_prefix_and_bad_input(tmp_path):
    p = arena("play", "basic", "greedy", "stdio:node sample_bots/stdio/minimal.js", "--seed", "3",
              "--record", str(tmp_path / "s.jsonl"), "--quiet")
    assert p.returncode == 0, p.stderr
    assert "minimal" in p.stdout
    for args, words in (
        (("play", "basic", "greedy"), "2 to 6 players"),
        (("play", "nosuch", "greedy", "greedy"), "unknown variant"),
        (("play", "basic", "greedy", "/no/such/bot"), "not found"),
        (("play", "basic", "greedy", "greedy", "--on", "illegal=maybe"), "KIND=POLICY"),
        (("replay", str(tmp_path / "missing.jsonl")), "no such record"),
    ):
        bad = arena(*args)
        assert bad.returncode == 2, (args, bad.stdout, bad.stderr)
        assert words in bad.stderr and "Traceback" not in bad.stderr


def test_a_client_library_bot_on_stdio_plays_and_its_prints_go_to_its_log(tmp_path):
    bot = f"stdio:{sys.executable} tests/bots/printing_client.py --stdio"
    record = tmp_path / "p.jsonl"
    p = arena("play", "basic", "greedy", bot, "--seed", "5", "--record", str(record), "--quiet")
    assert p.returncode == 0, p.stderr
    entries = [json.loads(line) for line in record.read_text().splitlines()[1:]]  # after the header
    assert not [e for e in entries if e["e"] in ("failure", "forfeit")], "a print was read as a message"
    assert sum(1 for e in entries if e["e"] == "play" and e["seat"] == 1) > 3
    log = (tmp_path / "logs" / "printing_client.log").read_text()
    assert "play at seq" in log and "draw at seq" in log


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_play_leaves_no_process(sig, tmp_path):
    slow = f"{sys.executable} {MISBEHAVE} hang"
    proc = subprocess.Popen([sys.executable, "-m", "arena", "play", "basic", "greedy", slow, "--time-ms", "60000",
                             "--record", str(tmp_path / "r.jsonl")], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(arena_processes()) < 3:  # arena + two bots
            time.sleep(0.1)
        time.sleep(1.0)  # the hanging bot is being asked by now
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        killed = proc.poll() is None
        kill_9(proc)
    assert not killed, f"arena play was still running 30 s after {sig.name}"
    assert proc.returncode != 0, err
    deadline = time.monotonic() + 5
    while arena_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not arena_processes()


def test_interrupted_run_leaves_no_process(tmp_path):
    # the demo with 25 times its deal-sets: it cannot end on its own before the signal, however loaded the machine
    demo = (ROOT / "tournaments" / "demo.toml").read_text()
    assert "\ndeal_sets = 2\n" in demo
    long = tmp_path / "long.toml"
    long.write_text(demo.replace("\ndeal_sets = 2\n", "\ndeal_sets = 50\n"))
    proc = subprocess.Popen([sys.executable, "-m", "arena", "run", str(long), "--out", str(tmp_path / "out")], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        journal = tmp_path / "out" / "journal.jsonl"
        while time.monotonic() < deadline and not (journal.exists() and journal.read_text().count("\n") >= 2):
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        killed = proc.poll() is None
        kill_9(proc)
    assert not killed, "arena run was still running 60 s after SIGINT"
    assert proc.returncode == 130, err
    assert "--resume" in err.decode()
    deadline = time.monotonic() + 5
    while arena_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not arena_processes()


@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
def test_play_run_from_the_machines_shared_tmp_plays_in_the_sandbox(folder, tmp_path):
    # The sandbox replaces /tmp and /dev/shm with private ones; run from one of them, it once bound the
    # (empty, read-only) folder over its private /tmp, the gate found no place for its socket, and
    # every seat crashed before its hello.
    record = tmp_path / "record.jsonl"
    got = subprocess.run([sys.executable, "-m", "arena", "play", "basic", "greedy", "random", "--seed", "1",
                          "--record", str(record)], cwd=folder, capture_output=True, text=True, timeout=90)
    assert got.returncode == 0, got.stdout + got.stderr
    entries = [json.loads(line) for line in record.read_text().splitlines()[1:]]
    assert not [e for e in entries if e["e"] == "failure"], got.stdout
    assert any(e["e"] == "play" for e in entries)


def test_a_bot_whose_folder_is_the_shared_tmp_is_told_so(tmp_path):
    # Its folder would be the whole machine's /tmp, bound over the sandbox's private one: refused in a sentence.
    bot = Path("/tmp") / f"arena-test-bot-{tmp_path.name}.py"
    bot.write_text("import sys\n")
    try:
        got = subprocess.run([sys.executable, "-m", "arena", "play", "basic", f"python3 {bot}", "random", "--seed", "1",
                              "--record", str(tmp_path / "r.jsonl")], cwd=tmp_path, capture_output=True, text=True,
                             timeout=90)
    finally:
        bot.unlink()
    assert "the bot's folder '/tmp' is the machine's shared /tmp" in got.stdout + got.stderr, got.stdout + got.stderr
