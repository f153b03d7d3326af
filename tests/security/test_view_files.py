"""What single files a sandboxed bot without ``cwd`` sees (issue 21, class 2): its program file only,
never a file of the results, the logs or another word of its command line; and a bot's log is its
organiser's alone (0600 in a 0700 folder).  The attacks are a real bot (tests/bots/solo.py peek)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from arena.referee import launch, program, sandbox
from arena.referee.host import BotHost
from arena.settings import BotSpec, TimeControl
from tests.conftest import ROOT
from tests.helpers import hostile_report

TC = TimeControl(start_ms=20000, decision_ms=2000, grace_ms=100)
sandboxed = pytest.mark.skipif(sandbox.problem() is not None, reason=str(sandbox.problem()))


def tournament_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A tournament's folder with the bot's program, another entrant's file and an earlier run's
    results holding another bot's log (readable by anyone, as logs were before)."""
    base = tmp_path / "t"
    base.mkdir()
    shutil.copy(ROOT / "tests" / "bots" / "solo.py", base / "solo.py")
    (base / "other").mkdir()
    (base / "other" / "book.py").write_text("another entrant's file")
    victim = base / "results" / "T" / "logs" / "worker0" / "victim.log"
    victim.parent.mkdir(parents=True)
    victim.write_text("the victim's secret output")
    for p in (victim, *victim.parents):
        if p == base:
            break
        p.chmod(0o755 if p.is_dir() else 0o644)
    return base, victim


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
@sandboxed
def test_a_bot_without_cwd_sees_no_log_named_on_its_command_line(tmp_path):
    base, _victim = tournament_folder(tmp_path)
    results = base / "results" / "T"
    words = ("results/T/logs/worker0/victim.log other/book.py probe=results/T/logs/worker0/victim.log "
             "probe=other/book.py")
    with BotHost(TC, results / "logs" / "worker1", hide=(results,)) as host:
        peer = host.add(BotSpec(name="spy", command=f"python3 solo.py peek {words}", transport="stdio"), cwd=base)
        assert host.start(peer), peer.problem
        got = hostile_report(host.log_path(peer))
    assert got["cwd"] == "done: solo.py", got  # its program file alone, in an empty folder
    assert set(got["paths"]) == {"results/T/logs/worker0/victim.log", "other/book.py"}
    for path, outcome in got["paths"].items():
        assert outcome.startswith("refused"), (path, outcome)


def test_a_log_named_as_the_program_is_not_bound(tmp_path):
    base, victim = tournament_folder(tmp_path)
    results = base / "results" / "T"
    spec = BotSpec(name="spy", command="python3 results/T/logs/worker0/victim.log", transport="stdio")
    assert launch._bot_folders(spec, ["python3", str(victim)], base, hide=(results,)) == (base, [], [])
    assert launch._bot_folders(spec, ["python3", "solo.py"], base, hide=(results,)) == (base, [], [base / "solo.py"])


def test_the_program_file_is_the_interpreters_script_or_the_executable(tmp_path):
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "data.txt").write_text("")
    (tmp_path / "run").write_text("")
    cases = {("python3", "bot.py", "data.txt"): "bot.py", ("python3.11", "-u", "bot.py"): "bot.py",
             ("/usr/bin/node", "bot.py", "data.txt"): "bot.py", ("./run", "data.txt"): "run",
             # an option that may take an argument hides what the script is: nothing is guessed
             ("/usr/bin/node", "--stack-size=99", "bot.py"): None, ("python3", "-W", "data.txt", "-c", "x"): None,
             ("python3", "-X", "data.txt", "bot.py"): None, ("python3", "-u", "-B", "bot.py"): "bot.py",
             ("cat", "data.txt"): None, ("/bin/cat", "data.txt"): None, ("python3", "-c", "x", "data.txt"): None,
             ("python3", "-m", "data.txt"): None, ("python3", "missing.py"): None}
    for argv, expected in cases.items():
        found = program.program_file(list(argv), tmp_path)
        assert (found.name if found else None) == expected, argv


def test_a_file_in_a_hidden_folder_is_never_bound_alone(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "bot.log").write_text("")
    argv = sandbox.wrap(["true"], tmp_path / "empty", hide=[results], expose=[], files=[results / "bot.log"])
    assert str(results / "bot.log") not in argv


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
@sandboxed
def test_a_bots_log_is_private_to_the_organiser(tmp_path):
    logs = tmp_path / "logs"
    with BotHost(TC, logs) as host:
        peer = host.add(BotSpec(name="b", command="random"))
        assert host.start(peer), peer.problem
        peer.process.write_log(b"a line of the referee's\n")
        log = host.log_path(peer)
        assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(logs.stat().st_mode) == 0o700
    assert b"a line of the referee's" in log.read_bytes()


def test_the_results_copies_of_the_tournament_and_the_bots_are_0600_whatever_the_umask(tmp_path):
    from arena.tournament import config, fingerprints

    file = tmp_path / "t.toml"
    file.write_text('name = "p"\nvariant = "basic"\nseats = 2\n\n[[bots]]\nname = "a"\ncommand = "random"\n\n'
                    '[[bots]]\nname = "b"\ncommand = "greedy"\n')
    t = config.load(file)
    old = os.umask(0)
    try:
        out = tmp_path / "out"
        resolved = config.write_resolved(t, out)
        prints = fingerprints.of_tournament(t, out)
        fingerprints.record(out, b"k" * 32, prints, fresh=True)
        fingerprints.record(out, b"k" * 32, prints, fresh=False)
    finally:
        os.umask(old)
    assert stat.S_IMODE(resolved.stat().st_mode) == 0o600
    assert stat.S_IMODE((out / fingerprints.BOTS_FILE).stat().st_mode) == 0o600


@pytest.mark.parametrize("command,refused", [
    ('python3 -W bots/victim/bot.py -c "print(1)"', "'-W' is not one"),
    ("python3 -X importtime solo.py", "'-X' is not one"),
    ("node -r ./victim.js solo.js", "'-r' is not one"),
    ("python3 -u solo.py", None),
    ('python3 -c "print(1)"', None),
])
def test_validate_refuses_an_option_before_the_script_of_a_bot_without_cwd(tmp_path, command, refused):
    """Round four: ``python3 -W FILE -c CODE`` had FILE (another entrant's program) bound into the
    view of a bot without cwd; such a command line is refused with the fix (give it a cwd)."""
    from arena.tournament.config import validate_text

    (tmp_path / "solo.py").write_text("")
    (tmp_path / "solo.js").write_text("")
    text = ('name = "t"\nvariant = "basic"\n[[bots]]\nname = "a"\ncommand = "greedy"\n'
            "[[bots]]\nname = \"b\"\ncommand = '''" + command + "'''\n")
    _t, errors = validate_text(text, base_dir=tmp_path, file=str(tmp_path / "t.toml"))
    problems = [str(e) for e in errors]
    if refused is None:
        assert not [p for p in problems if "command" in p], problems
    else:
        assert any(refused in p and "give the bot a cwd" in p for p in problems), problems
