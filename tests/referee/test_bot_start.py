"""How a bot is started (issues 24/25): a bundled bot without ``site`` and on stdio, the gate with
``-S``, a user's command word for word; the real bots still play, in the sandbox (as root: as a user of their own)
and outside it."""

from __future__ import annotations

import os
import shlex
import sys

import psutil
import pytest

from arena.referee import identity, launch, sandbox
from arena.referee.game import play_one
from arena.referee.host import BotHost
from arena.rules.options import resolve
from arena.settings import BotSpec, FailurePolicy, TimeControl

TC = TimeControl(start_ms=30_000, decision_ms=5000)


def test_a_bundled_bot_runs_its_module_without_site_and_a_user_command_is_unchanged():
    argv = launch.command_line("greedy")
    assert argv[:4] == [sys.executable, "-S", "-P", "-c"]
    assert "runpy.run_module('sample_bots.greedy', run_name='__main__'" in argv[4]
    first, after = launch.bundled_path()
    assert first == (launch._project_root(),)
    import msgspec
    import zmq

    for module in (zmq, msgspec):  # each third-party import of the sample bots is on the path given
        assert any(os.path.dirname(os.path.dirname(module.__file__ or "")) == d for d in after), module
    user = "python3 -u bot.py --level 'two words' -X greedy"
    assert launch.command_line(user) == shlex.split(user)
    assert launch.command_line("greedy --fast") == ["greedy", "--fast"]  # not the bare name: the user's own


def test_the_zmtp_gate_starts_without_site_and_the_libzmq_gate_with_it(monkeypatch):
    monkeypatch.delenv("ARENA_GATE", raising=False)
    assert launch.gate_argv(sandbox=True) == [sys.executable, "-I", "-S", launch.GATE]
    assert launch.gate_argv() == [sys.executable, "-S", launch.GATE]
    assert launch.gate_argv(curve=True) == [sys.executable, launch.GATE_LIBZMQ]  # it imports zmq
    monkeypatch.setenv("ARENA_GATE", "libzmq")
    assert launch.gate_argv(sandbox=True) == [sys.executable, "-I", launch.GATE_LIBZMQ]


def _bot_process(tree: list[psutil.Process]) -> psutil.Process:
    """The bundled bot's own Python in a compartment's tree (not the bwraps or the gate, whose argv hold its line)."""
    for p in tree:
        try:
            words = p.cmdline()
            if words[:1] == [sys.executable] and launch.GATE not in words \
                    and any("runpy.run_module" in w for w in words):
                return p
        except psutil.Error:
            continue
    raise AssertionError(f"no bundled bot in {[p.pid for p in tree]}")


@pytest.mark.slow
@pytest.mark.parametrize("box", [True, False], ids=["sandbox", "no-sandbox"])
def test_bundled_bots_started_without_site_play_a_game(box, tmp_path, no_leaks):
    if box and sandbox.problem() is not None:
        pytest.skip(str(sandbox.problem()))  # the machine cannot sandbox; the no-sandbox case still runs
    rules = resolve("basic", {"target": 10})
    with BotHost(TC, tmp_path / "logs", sandbox=box) as host:
        peers = [host.add(BotSpec(name=f"s{i}", command=c)) for i, c in enumerate(("greedy", "random"))]
        for peer in peers:
            assert host.start(peer), peer.problem
        sandbox_pids = set()  # the compartments' own processes (bwraps, init), not the bots
        for peer in peers:
            assert peer.process is not None
            bot = _bot_process(peer.process.tree())
            sandbox_pids |= {p.pid for p in peer.process.tree()[1:] if p.pid != bot.pid}
            assert bot.cmdline()[1:4] == ["-S", "-P", "-c"]
            if box and identity.needed():  # as root: the compartment's own user, never root
                low, high = identity.id_range()
                assert low <= bot.uids().real <= high and bot.uids().effective != 0
            assert bot.cmdline()[-1] == "--stdio"  # a bundled bot speaks stdio: no gate, no ZeroMQ
            assert not [p for p in peer.process.tree() if launch.GATE in p.cmdline()]
            assert not peer.process.channel.notices  # and its pipe can carry no gate's notice
        result = play_one(host, peers, rules, 3, "start-test", TC, FailurePolicy(), tmp_path / "record.jsonl")
    assert result.end_reason not in ("", None) and result.decisions > 0
    assert result.failures == [{}, {}] and result.forfeited == []
    assert result.hellos == ["greedy", "random"]
    # The bots exited on shutdown, and their sandbox's init outlived its parent: adopted by us (the
    # subreaper), it must have been reaped, not left a zombie for as long as the referee runs.
    zombies = [c.pid for c in psutil.Process().children() if c.pid in sandbox_pids]
    assert not zombies, zombies


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["zmq", "tcp"])
def test_a_zeromq_bot_plays_on_the_referees_endpoint_or_through_its_gate(transport, tmp_path, no_leaks):
    # zmq: the referee holds the bot's ipc endpoint (arena/referee/endpoint.py), no gate in the compartment;
    # tcp: a gate in the sandbox (it imports the ZMTP codec beside it, under -I -S) binds loopback TCP there
    from tests.helpers import ROOT, run_game

    js = f"node {ROOT / 'sample_bots' / 'js' / 'bot.js'}"
    py = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'misbehave.py'} honest"
    seen: list[list[str]] = []
    real_launch = launch.BotProcess.__init__

    def spy(self, spec, argv, *args, **kwargs):
        seen.append(list(argv))
        real_launch(self, spec, argv, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(launch.BotProcess, "__init__", spy)
        mp.delenv("ARENA_GATE", raising=False)
        result, _ = run_game("basic", [js, py], tmp_path, seed=5, transports={0: transport, 1: transport},
                             overrides={"target": 30})
    assert result.failures == [{}, {}] and result.decisions > 0, result.failure_log
    for argv in seen:
        gated = launch.GATE in argv
        assert gated == (transport == "tcp"), argv
        ends = argv[argv.index("--endpoint") + 1] if "--endpoint" in argv else None
        assert (ends == launch.SANDBOX_ENDPOINT) == (transport == "zmq"), argv


@pytest.mark.skipif(sandbox.problem() is not None or not identity.needed(),
                    reason="only a sandbox run as root checks that the bot's own user can read its program")
def test_a_launch_refused_before_its_start_leaves_no_endpoint_behind(tmp_path, monkeypatch):
    # the endpoint is listened on just before the compartment starts: a bot refused earlier (here its
    # program is unreadable by the user it would run as) leaves no socket in the referee's folder
    monkeypatch.delenv("ARENA_GATE", raising=False)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    bot = tmp_path / "bot"
    bot.mkdir(mode=0o755)
    (bot / "b.py").write_text("print('hi')\n")
    os.chmod(bot / "b.py", 0o600)
    with pytest.raises(ValueError, match="cannot read"):
        launch.launch(BotSpec(name="b", command="python3 b.py", cwd=str(bot)), "ab" * 16, tmp_path / "b.log",
                      cwd=bot, sandbox=True, private_dir=private)
    assert list(private.iterdir()) == []
