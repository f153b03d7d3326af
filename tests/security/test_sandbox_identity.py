"""The sandbox's identity and what configuration lets into it (issue 21, classes 1 and 2), tried by
a real hostile bot (tests/bots/hostile.py host_powers): it is never the host's root, each seat is a
host user of its own, /proc/sys is read-only, a bot's env reaches only the inside, no command-line
word, PATH entry or link in a data folder widens what it sees, a bot without cwd sees an empty
folder, and SPEC's first-bot walkthrough works with the record hidden."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from arena.referee import identity, sandbox
from arena.referee.host import BotHost
from arena.settings import BotSpec, TimeControl
from tests.conftest import ROOT
from tests.helpers import hostile_report

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.usefixtures("no_leaks"),
              pytest.mark.skipif(sandbox.problem() is not None, reason=str(sandbox.problem()))]

TC = TimeControl(start_ms=20000, decision_ms=2000, grace_ms=100)


def bot_folder(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for name in ("hostile.py", "misbehave.py"):
        shutil.copy(ROOT / "tests" / "bots" / name, where / name)
    return where


def report(host: BotHost, peer) -> dict:
    return hostile_report(host.log_path(peer))


def compartment_uids(peer) -> set[int]:
    """The host uids of everything in the compartment below its launcher (root's bwrap, as root)."""
    top = psutil.Process(peer.process.pid)
    return {p.uids().real for p in top.children(recursive=True)}


def test_each_seat_is_an_unprivileged_host_user_of_its_own(tmp_path):
    bot = bot_folder(tmp_path / "bot")
    (bot / "secret.txt").write_text("root only")
    (bot / "secret.txt").chmod(0o600)
    (bot / "open.txt").write_text("anyone")
    env = {"HOSTILE_PATHS": f"{bot}/secret.txt:{bot}/open.txt"}
    with BotHost(TC, tmp_path / "logs") as host:
        peers = [host.add(BotSpec(name=f"h{i}", command=f"python3 {bot}/hostile.py host_powers", env=env),
                          data=tmp_path / f"data{i}") for i in range(2)]
        for peer in peers:
            assert host.start(peer), peer.problem
        uids = [compartment_uids(p) for p in peers]
        reports = [report(host, p) for p in peers]
        data_modes = [(tmp_path / f"data{i}").stat() for i in range(2)]
    accounts = {int(line.split(":")[2]) for line in Path("/etc/passwd").read_text().splitlines() if line.count(":") > 2}
    for seat, (found, r, data) in enumerate(zip(uids, reports, data_modes)):
        assert len(found) == 1, found  # bwrap, gate and bot: one host user
        uid = found.pop()
        if os.geteuid() == 0:
            assert uid != 0 and uid not in accounts, uid
            assert identity.id_range()[0] <= uid <= identity.id_range()[1]
            assert (data.st_uid, stat.S_IMODE(data.st_mode)) == (uid, 0o700)  # its data folder is its alone
            assert r["shadow"].startswith("refused") and r["core_pattern"].startswith("refused"), r
            assert r["paths"][f"{bot}/secret.txt"].startswith("refused"), r
        else:
            assert uid == os.getuid()  # not root: the bot is the organiser's user (SECURITY.md)
        uids[seat] = {uid}
        assert r["proc_sys"].startswith("refused"), r
        assert r["paths"][f"{bot}/open.txt"] == "done: anyone", r
        assert r["data"] == "done: written", r
    if os.geteuid() == 0:
        assert uids[0] != uids[1], uids  # per-user kernel limits are not shared between seats


def test_a_bots_env_is_set_inside_the_sandbox_only(tmp_path):
    bot = bot_folder(tmp_path / "bot")
    with BotHost(TC, tmp_path / "logs") as host:
        peer = host.add(BotSpec(name="h", command=f"python3 {bot}/hostile.py host_powers", env={"BOT_LEVEL": "3"}))
        assert host.start(peer), peer.problem
        launcher = psutil.Process(peer.process.pid).environ()
        got = report(host, peer)
    assert got["env"] == ["BOT_LEVEL"]  # the bot has it
    assert "BOT_LEVEL" not in launcher  # bubblewrap itself never had it


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler to build the preloaded library")
def test_a_loader_variable_in_env_runs_nothing_outside(tmp_path):
    mark = tmp_path / "outside" / "ran"
    mark.parent.mkdir()
    source = tmp_path / "evil.c"
    source.write_text('#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void run(void) {'
                      ' const char *p = getenv("EVIL_MARK"); FILE *f = p ? fopen(p, "a") : 0;'
                      ' if (f) { fputs("ran\\n", f); fclose(f); } }\n')
    lib = tmp_path / "bot" / "evil.so"
    bot = bot_folder(tmp_path / "bot")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(source)], check=True, timeout=60)
    with BotHost(TC, tmp_path / "logs") as host:
        peer = host.add(BotSpec(name="h", command=f"python3 {bot}/hostile.py host_powers",
                                env={"LD_PRELOAD": str(lib), "EVIL_MARK": str(mark)}))
        started = host.start(peer)
    assert not mark.exists(), "the entrant's library ran outside the sandbox"
    assert not started and peer.problem is not None and "LD_PRELOAD" in peer.problem[1], peer.problem


def test_command_words_and_path_do_not_widen_the_view(tmp_path):
    bot = bot_folder(tmp_path / "bot")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.txt").write_text("not the bot's")
    env = {"PATH": f"{outside}:{Path(sys.executable).parent}:/usr/bin:/bin",
           "HOSTILE_PATHS": f"{outside}/note.txt:{outside}"}
    with BotHost(TC, tmp_path / "logs") as host:
        peer = host.add(BotSpec(name="h", command=f"python3 {bot}/hostile.py host_powers {outside} / /proc", env=env))
        assert host.start(peer), peer.problem
        got = report(host, peer)
    for path, outcome in got["paths"].items():
        assert outcome.startswith("refused"), (path, outcome)
    # the sandbox's PID 1 (the gate, undumpable; or bwrap's init, with the launcher's short environment)
    assert got["pid1_env"] in ("done: []", "refused: PermissionError: [Errno 13] Permission denied: '/proc/1/environ'"), \
        got["pid1_env"]


def test_a_tournament_bot_without_cwd_sees_an_empty_folder_and_its_program(tmp_path):
    base = bot_folder(tmp_path / "t")
    (base / "private.key").write_text("the organiser's key")
    (base / "other").mkdir()
    (base / "other" / "book.txt").write_text("another entrant's file")
    (base / "leak.md").symlink_to(ROOT / "README.md")  # a file anyone may read, named through an entrant's link
    env = {"HOSTILE_PATHS": f"{base}/private.key:{base}/other/book.txt:{base}/leak.md"}
    shutil.copy(ROOT / "tests" / "bots" / "solo.py", base / "solo.py")
    with BotHost(TC, tmp_path / "logs") as host:
        # misbehave.py named on the command line too: a bot without cwd gets its program file alone
        peer = host.add(BotSpec(name="h", command="python3 solo.py peek misbehave.py leak.md", env=env,
                                transport="stdio"), cwd=base)
        assert host.start(peer), peer.problem
        got = report(host, peer)
    assert got["cwd"] == "done: solo.py", got
    for path, outcome in got["paths"].items():
        assert outcome.startswith("refused"), (path, outcome)


def test_a_link_as_data_folder_gives_no_write_access_to_its_target(tmp_path):
    bot = bot_folder(tmp_path / "bot")
    target = tmp_path / "target"
    target.mkdir()
    (bot / "data").symlink_to(target)
    with BotHost(TC, tmp_path / "logs") as host:
        peer = host.add(BotSpec(name="h", command="python3 hostile.py host_powers", cwd="bot"), cwd=bot,
                        data=bot / "data")
        started = host.start(peer)
    assert list(target.iterdir()) == [], "the bot wrote through the link"
    assert not started and peer.problem is not None and "symbolic link" in peer.problem[1], peer.problem


def test_spec_walkthrough_plays_in_the_bots_folder_with_the_record_hidden(tmp_path):
    spec = (ROOT / "protocol" / "SPEC.md").read_text()
    code = re.split(r"save this as `minimal.py`", spec, flags=re.I)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "minimal.py").write_text(code)
    bot_folder(tmp_path)
    command = [sys.executable, "-m", "arena", "play", "basic", "python3 minimal.py", "greedy", "--record", "game.jsonl"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(x) for x in (tmp_path / "game.jsonl").read_text().splitlines()]
    assert not [x for x in lines if x.get("e") == "failure"], done.stdout[-2000:]
    # A bot beside the record may not read it or the logs while the game runs.
    peek = [sys.executable, "-m", "arena", "play", "basic", "python3 hostile.py host_powers probe=game2.jsonl probe=logs",
            "greedy", "--record", "game2.jsonl"]
    done = subprocess.run(peek, cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-2000:]
    got = hostile_report(tmp_path / "logs" / "hostile.log", wait=0)
    listing = got["cwd"]
    assert "minimal.py" in listing and "hostile.py" in listing, listing  # its own folder
    hidden = got["paths"]["game2.jsonl"]  # /dev/null in its place (which a user namespace may not open)
    assert hidden == "done: " or hidden.startswith("refused: PermissionError"), got
    assert got["paths"]["logs"] == "done: ", got  # an empty folder in its place
    record = Path(tmp_path / "game2.jsonl")
    assert record.read_text().startswith("{")  # written after the game, from outside


TOURNAMENT = """
name = "odd"
variant = "basic"
seats = 2
deal_sets = 1
output = "out"

[rules]
deals = 1

[[bots]]
name = "mine"
command = "python3 hostile.py host_powers"
cwd = "bot"
{data}
[[bots]]
name = "greedy"
command = "greedy"
"""


def arena(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def test_a_named_pipe_in_a_bots_folder_is_refused_with_its_path(tmp_path):
    bot = bot_folder(tmp_path / "bot")
    os.mkfifo(bot / "book.pipe")
    (tmp_path / "t.toml").write_text(TOURNAMENT.format(data=""))
    for args in (["validate", "t.toml"], ["validate", "t.toml", "--start"], ["run", "t.toml"]):
        done = arena(*args, cwd=tmp_path)  # `run` hung on reading the pipe
        assert done.returncode == 2, (args, done.stderr)
        assert f"{bot / 'book.pipe'}" in done.stderr and "named pipe" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    done = arena("play", "basic", "python3 bot/hostile.py host_powers", "greedy", cwd=tmp_path)
    assert done.returncode == 2 and "named pipe" in done.stderr and "Traceback" not in done.stderr, done.stderr
    done = arena("check-bot", "python3 bot/hostile.py host_powers", cwd=tmp_path)
    assert done.returncode == 2 and "named pipe" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_link_as_data_folder_is_refused_by_validate_with_its_key(tmp_path):
    bot_folder(tmp_path / "bot")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "bot" / "data").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "t.toml").write_text(TOURNAMENT.format(data='data = "bot/data"\n'))
    done = arena("validate", "t.toml", cwd=tmp_path)
    assert done.returncode == 2 and "bots[0].data" in done.stderr and "symbolic link" in done.stderr, done.stderr


def test_validate_refuses_a_loader_variable_in_env_with_its_key(tmp_path):
    bot_folder(tmp_path / "bot")
    text = TOURNAMENT.format(data='env = { LD_PRELOAD = "/tmp/x.so", BOT_LEVEL = "3" }\n')
    (tmp_path / "t.toml").write_text(text)
    done = arena("validate", "t.toml", cwd=tmp_path)
    assert done.returncode == 2 and "LD_PRELOAD" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "BOT_LEVEL" not in done.stderr


def test_validate_says_when_the_sandbox_would_hide_a_bots_program(tmp_path):
    bot_folder(tmp_path / "bot")
    shutil.copy(ROOT / "tests" / "bots" / "misbehave.py", tmp_path / "shared.py")
    text = TOURNAMENT.format(data="").replace("python3 hostile.py host_powers", "python3 ../shared.py honest")
    (tmp_path / "t.toml").write_text(text)
    done = arena("validate", "t.toml", cwd=tmp_path)
    assert done.returncode == 2 and "bots[0].command" in done.stderr, done.stderr
    assert "outside the bot's folder" in done.stderr and "move it into that folder" in done.stderr, done.stderr
    (tmp_path / "t.toml").write_text(text.replace('output = "out"', 'output = "out"\nsandbox = false'))
    assert arena("validate", "t.toml", cwd=tmp_path).returncode == 0  # without a sandbox it is found


ALLOCATE = """
import json, sys
from arena.referee import identity
keyless = [identity.allocate().uid for _ in range(int(sys.argv[1]))]
keyed = [identity.allocate("data:/x").uid, identity.allocate("data:/x").uid]
print(json.dumps({"keyless": keyless, "keyed": keyed}))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives a bot a host user of its own")
def test_identities_skip_accounts_and_users_of_live_processes(tmp_path):
    taken = 1_999_999_000
    squatter = subprocess.Popen(["setpriv", f"--reuid={taken + 1}", f"--regid={taken + 1}", "--clear-groups",
                                 "sleep", "60"], start_new_session=True)
    try:
        env = {**os.environ, "ARENA_UID_RANGE": f"{taken}-{taken + 3}"}
        if Path("/etc/passwd").read_text().find(f":{taken}:") >= 0:
            pytest.fail("the test's uids are taken by an account here")
        done = subprocess.run([sys.executable, "-c", ALLOCATE, "2"], env=env, capture_output=True, text=True,
                              timeout=30, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        assert taken + 1 not in got["keyless"] + got["keyed"]  # a live process has it
        assert len(set(got["keyless"])) == 2 and got["keyed"][0] == got["keyed"][1]
        assert not set(got["keyless"]) & set(got["keyed"])
        done = subprocess.run([sys.executable, "-c", ALLOCATE, "3"], env=env, capture_output=True, text=True,
                              timeout=30, cwd=ROOT)  # 3 free uids, 4 asked for
        assert done.returncode != 0 and "no unused uid found" in done.stderr, done.stderr
        nobody = subprocess.run([sys.executable, "-c", ALLOCATE, "1"], capture_output=True, text=True, timeout=30,
                                cwd=ROOT, env={**os.environ, "ARENA_UID_RANGE": "65534-65536"})
        assert 65534 not in json.loads(nobody.stdout)["keyless"], nobody.stdout  # nobody's uid is an account's
    finally:
        squatter.kill()
        squatter.wait()


def test_play_without_record_hides_every_earlier_game_from_a_bot_in_that_folder(tmp_path):
    bot_folder(tmp_path)
    command = [sys.executable, "-m", "arena", "play", "basic", "python3 hostile.py host_powers probe=arena-play",
               "greedy", "--seed", "3"]
    for _ in range(2):
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=100)
        assert done.returncode == 0, done.stderr[-2000:]
    assert len(list((tmp_path / "arena-play").iterdir())) == 2
    for log in (tmp_path / "arena-play").glob("*/logs/hostile.log"):
        got = hostile_report(log, wait=0)
        assert got["paths"]["arena-play"] == "done: ", got  # an empty folder: no record, no log
