"""Resources counted by the kernel (issue 21, class 3): each compartment's cgroup is its CPU clock,
memory and task limit and CPU share; a data folder has a quota; the referee's own work on a seat's
messages is bounded and charged to that seat.  Every attack is a real hostile process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.referee import cgroups, launch
from arena.settings import BotSpec, Limits, TimeControl
from tests.conftest import ROOT, hostile
from tests.helpers import DATA_BOUND_MB, data_volumes, failures_of, play_with_limits

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180), pytest.mark.usefixtures("no_leaks")]

# As root (CI) cgroups must work, so these run and fail if none can be made; run by another user
# they are skipped unless ARENA_EXPECT_CGROUPS is set (set it with ARENA_CGROUPS=0 to watch each
# fail against the polling fallback).
needs_cgroups = pytest.mark.skipif(bool(cgroups.missing()) and os.geteuid() != 0
                                   and not os.environ.get("ARENA_EXPECT_CGROUPS"),
                                   reason="needs writable cgroups (run as root)")


CPU = TimeControl(start_ms=10000, decision_ms=300, grace_ms=50, clock="cpu")


@needs_cgroups
def test_cpu_of_a_child_that_exited_before_the_reply_is_charged(tmp_path):
    # 0.8 s of CPU in a child the bot reaps before it replies: over a 350 ms CPU limit.
    result = play_with_limits(tmp_path, [hostile("fork_burn"), "greedy"], seed=41, tc=CPU)
    res = failures_of(result, 0)
    assert res and res[0].kind == "timeout" and "CPU time" in res[0].reason, res
    assert not failures_of(result, 1)


@needs_cgroups
def test_a_child_killed_at_the_request_is_never_credited_back(tmp_path):
    # Its child burns CPU while the other seat decides and is killed as each request comes: a
    # clock of live processes loses what the child had used and goes backwards.
    result = play_with_limits(tmp_path, [hostile("kill_at_request"), "greedy"], seed=42,
                  tc=TimeControl(start_ms=10000, decision_ms=2000, clock="cpu"))
    assert result.decisions > 10
    negative = [ms for ms in result.latencies_ms[0] if ms < 0]
    assert not negative, f"negative decision times in the record: {negative[:5]}"
    assert not failures_of(result, 1)


@needs_cgroups
@pytest.mark.parametrize("mode", ["memfd_hog", "sock_hog"])
def test_memory_held_by_descriptors_is_counted(tmp_path, mode):
    # 300 MiB that no process maps (a memfd; socket buffers nobody reads), over a 150 MiB limit.
    result = play_with_limits(tmp_path, [hostile(mode), "greedy"], seed=43,
                  tc=TimeControl(start_ms=10000, decision_ms=5000), limits={0: Limits(memory_mb=150)})
    res = failures_of(result, 0)
    assert res and res[0].kind == "resource" and "limits.memory_mb" in res[0].reason, res
    assert result.forfeited == [0]
    assert not failures_of(result, 1)


@needs_cgroups
def test_a_compartment_is_in_its_own_cgroup_from_its_first_instruction_and_it_goes_with_it(tmp_path):
    spec = BotSpec(name="probe", command=f"{sys.executable} -c 'import time; time.sleep(30)'", transport="stdio",
                   limits=Limits(memory_mb=64, processes=8))
    proc = launch.launch(spec, "token", tmp_path / "probe.log", sandbox=False)
    try:
        groups = proc.cgroup.dirs
        assert set(groups) == set(cgroups.CONTROLLERS)
        assert proc.pid in proc.cgroup.pids()
        mem = groups["memory"]
        limit = "memory.max" if proc.cgroup.version == 2 else "memory.limit_in_bytes"
        assert int((mem / limit).read_text()) == (64 + cgroups.INFRA_MB) << 20
        assert int((groups["pids"] / "pids.max").read_text()) == 8 + cgroups.INFRA_TASKS
    finally:
        proc.kill()
    assert not any(d.exists() for d in groups.values()), "the compartment's cgroups outlived it"


@needs_cgroups
def test_an_equal_cpu_share_per_compartment(tmp_path):
    # Six processes burning CPU in one compartment, each in a session of its own (the kernel's
    # autogroups would share per session), one in another: with a share per compartment the lone one
    # gets as much CPU as the six together (not a seventh), on a machine of few cores.
    code = "import os\nfor _ in range({n} - 1):\n    if os.fork() == 0:\n        os.setsid()\n        break\nwhile True: pass\n"
    procs = [launch.launch(BotSpec(name=f"burn{n}", command=f"{sys.executable} -c '{code.format(n=n)}'",
                                   transport="stdio"), "token", tmp_path / f"burn{n}.log", sandbox=False)
             for n in (6, 1)]
    def cpu(proc: launch.BotProcess) -> float:  # measured apart from the referee's clock: the burners never end
        return sum(sum(p.cpu_times()[:2]) for p in proc.tree())

    try:
        time.sleep(0.5)
        start = [cpu(p) for p in procs]
        time.sleep(3)
        used = [cpu(p) - s for p, s in zip(procs, start)]
    finally:
        for p in procs:
            p.kill()
    print(f"six burners: {used[0]:.2f} s, one burner: {used[1]:.2f} s of CPU in 3 s")
    if (os.cpu_count() or 1) <= 4:
        assert used[1] > 0.6 * used[0], used




def test_a_data_folder_is_capped(tmp_path):
    # 2 GiB written in 64 MiB files, going on past refused writes: stopped, charged, the disk spared.
    data = tmp_path / "data0"
    result = play_with_limits(tmp_path, [hostile("data_fill"), "greedy"], seed=44,
                  tc=TimeControl(start_ms=10000, decision_ms=30000), limits={0: Limits(data_mb=64)},
                  data={0: data})
    held = launch.folder_bytes(data, 1 << 40) >> 20
    print(f"the data folder holds {held} MiB")
    res = failures_of(result, 0)
    if data_volumes():  # a volume of 64 MiB: the kernel refused every write past it, nobody is charged
        assert held <= 64 and not res, (held, res)
    else:
        assert res and res[0].kind == "resource" and "limits.data_mb" in res[0].reason, res
        assert held < 64 + DATA_BOUND_MB
    assert not failures_of(result, 1)


def test_a_bot_within_its_data_quota_is_charged_nothing(tmp_path):
    from arena.referee import datafolder, identity

    data = tmp_path / "data0"
    os.close(datafolder.open_folder(tmp_path, ["data0"]))  # a folder the arena made (marked)
    (data / "book.bin").write_bytes(b"b" * (10 << 20))  # kept from earlier games, within the quota
    if os.geteuid() == 0:  # as a seat's user left it: the organiser's own files are never handed over
        os.chown(data / "book.bin", identity.RANGE[0], identity.RANGE[0])
    result = play_with_limits(tmp_path, ["greedy", "greedy"], seed=45, tc=TimeControl(start_ms=10000, decision_ms=5000),
                  limits={0: Limits(data_mb=16)}, data={0: data})
    assert not result.failure_log


# A stand-in referee: starts a bot (no sandbox) whose grandchild leaves its session and drops its
# environment (so no marker), prints that grandchild's pid and the compartment's groups, and waits.
REFEREE = r"""
import os, shlex, sys, time
from pathlib import Path
from arena.referee import launch
from arena.settings import BotSpec

code = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        os.execve('/bin/sleep', ['sleep', '600'], {})\n    os._exit(0)\nos.wait()\ntime.sleep(600)")
spec = BotSpec(name="escaper", command=f"{sys.executable} -c {shlex.quote(code)}", transport="stdio")
proc = launch.launch(spec, "token", Path(sys.argv[1]) / "escaper.log", sandbox=False)
deadline = time.monotonic() + 10
while len(proc.cgroup.pids()) < 2 and time.monotonic() < deadline:
    time.sleep(0.02)
escapee = [p for p in proc.cgroup.pids() if p != proc.pid]
print(escapee[0], *sorted({str(d) for d in proc.cgroup.dirs.values()}), flush=True)
time.sleep(600)
"""


@needs_cgroups
def test_after_a_kill_9_the_undertaker_kills_what_is_in_the_cgroups_and_removes_them(tmp_path):
    import signal
    import subprocess

    from tests.conftest import ROOT
    from tests.helpers import gone, kill_9

    referee = subprocess.Popen([sys.executable, "-c", REFEREE, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                               text=True, start_new_session=True)
    escapee = 0
    try:
        assert referee.stdout is not None
        words = referee.stdout.readline().split()
        escapee, groups = int(words[0]), [Path(w) for w in words[1:]]
        assert groups and all(g.is_dir() for g in groups)
        assert not gone(escapee, timeout=0.3)
        kill_9(referee)
        assert gone(escapee), "a process of the compartment outlived its SIGKILLed referee"
        deadline = time.monotonic() + 10
        while any(g.exists() for g in groups) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(g.exists() for g in groups), "the referee's cgroups were left behind"
    finally:
        kill_9(referee)
        if escapee:
            try:
                os.kill(escapee, signal.SIGKILL)
            except OSError:
                pass


def _decode_ms() -> float:
    """The referee's CPU to decode one reply of the protocol's maximum size (as the junk bot sends)."""
    import json

    from protocol.codec import decode_from_bot
    from protocol.messages import MAX_MESSAGE_BYTES

    data = json.dumps({"v": 1, "type": "draw", "game": "g", "seq": 3, "source": "stock",
                       "x": "p" * (MAX_MESSAGE_BYTES - 400)}).encode()
    start = time.thread_time()
    for _ in range(20):
        decode_from_bot(data)
    return (time.thread_time() - start) / 20 * 1000


@pytest.mark.timing  # asserts on the referee's CPU per flooded request
def test_the_referees_work_on_a_flooding_seats_messages_is_bounded_and_charged_to_it(tmp_path):
    # At every request 40 stale and out-of-turn replies of 1 MiB, then a legal reply of 1 MiB: the
    # referee decodes at most MAX_JUNK + 1 of them per request (the rest end the request as a stale
    # failure), and on the CPU clock what it spends on them is the flooder's time, not the honest seat's.
    from arena.referee.game import MAX_JUNK

    tc = TimeControl(start_ms=10000, decision_ms=1000, grace_ms=50, clock="cpu")
    decode_ms = _decode_ms()
    spent = time.process_time()
    honest = play_with_limits(tmp_path / "honest", ["greedy", "greedy"], seed=46, tc=tc)
    per_decision_ms = (time.process_time() - spent) * 1000 / honest.decisions
    spent = time.process_time()
    result = play_with_limits(tmp_path / "junk", [hostile("junk"), "greedy"], seed=46, tc=tc)
    spent_ms = (time.process_time() - spent) * 1000
    # the flooder's requests: turns alternate, so at least as many as the honest seat's (a retried one
    # only adds to them, which makes the per-request figure below an over-estimate); its failure
    # entries cannot count them, since a seat records at most 50 of them per game
    requests = len(result.latencies_ms[1]) - 1
    ours_ms = (spent_ms - per_decision_ms * result.decisions) / max(1, requests)
    # Each message the referee considers is read (64 KiB at a time) and decoded: about 2.3 decodes' worth on
    # a quiet machine, measured before and after (a CPU second buys less on a loaded machine). Reading
    # every message of the burst would be 41 of them a request: nearly twice what the bound allows.
    bound_ms = 5 * (MAX_JUNK + 2) * max(decode_ms, _decode_ms()) + 2
    print(f"honest: {per_decision_ms:.2f} ms of referee CPU per decision; flooder: {ours_ms:.1f} ms per request "
          f"({requests} requests), bound {bound_ms:.1f} ms")
    assert requests > 10
    assert ours_ms < bound_ms
    assert {e.kind for e in failures_of(result, 0)} <= {"stale", "timeout"}
    assert not failures_of(result, 1), "the honest seat paid for the flooder's messages"


def test_without_cgroups_one_warning_names_what_is_not_enforced(tmp_path):
    import subprocess

    from tests.conftest import ROOT

    file = tmp_path / "t.toml"
    file.write_text('name = "w"\nvariant = "basic"\nseats = 2\n\n[[bots]]\nname = "a"\ncommand = "greedy"\n\n'
                    '[[bots]]\nname = "b"\ncommand = "random"\n')
    env = {**os.environ, "ARENA_CGROUPS": "0"}
    env.pop(cgroups.WARNED, None)
    got = subprocess.run([sys.executable, "-m", "arena", "validate", str(file), "--start"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    warnings = [line for line in got.stderr.splitlines() if line.startswith("warning: the bots' resources")]
    assert len(warnings) == 1, got.stderr
    for what in ("memfd", "CPU clock", "process limit", "CPU share"):
        assert what in warnings[0]


def test_the_data_quota_is_a_limits_key(tmp_path):
    from arena.tournament.config import ConfigFileError, load

    base = ('name = "q"\nvariant = "basic"\nseats = 2\n\n[[bots]]\nname = "a"\ncommand = "greedy"\n'
            'data = "a-data"\nlimits = {{ data_mb = {} }}\n\n[[bots]]\nname = "b"\ncommand = "random"\n')
    file = tmp_path / "t.toml"
    file.write_text(base.format(32))
    assert load(file).bots[0].limits.data_mb == 32
    assert launch.data_quota(Limits()) == launch.DATA_MB << 20
    file.write_text(base.format(0))
    with pytest.raises(ConfigFileError, match="data_mb"):
        load(file)


FORK_BURST = ("import sys, time; sys.path.insert(0, 'tests/bots'); from hostile import fork_burst; "
              "open(sys.argv[1], 'w').write(str(fork_burst())); time.sleep(60)")


@needs_cgroups
def test_a_burst_of_forks_is_refused_by_the_kernel(tmp_path):
    # 200 forks as fast as a process can, in a compartment with no watcher polling it (a loaded machine
    # would let the watcher win the race): the kernel alone refuses those past the limit (plus the
    # gate's allowance), counts the refusal, and the compartment says so.
    said = tmp_path / "forked"
    comp = cgroups.Compartment(f"test{os.getpid()}", "burst", memory_mb=None, processes=10)
    proc = None
    try:
        assert comp.has("pids"), "no pids cgroup could be made"
        proc = subprocess.Popen([sys.executable, "-c", FORK_BURST, str(said)], preexec_fn=comp.enter,
                                cwd=ROOT, start_new_session=True)
        comp.opened()
        deadline = time.monotonic() + 60
        while not (said.exists() and said.stat().st_size) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # the file is made, then written: wait for what it says
        assert said.exists() and said.stat().st_size, "the burst never ended: nothing refused a fork"
        forked = int(said.read_text())
        assert forked < 10 + cgroups.INFRA_TASKS, forked
        assert comp.refused_forks() > 0 and comp.tasks() <= 10 + cgroups.INFRA_TASKS
        assert "limits.processes" in (comp.violation() or "")
    finally:
        comp.kill()
        if proc is not None:
            proc.wait(10)
        comp.remove()


@needs_cgroups
def test_a_burst_of_forks_in_a_game_costs_the_bot_its_seat(tmp_path):
    # The same burst from a seat at its 2nd request: whichever stops it first (the kernel's refusal or
    # the watcher's count, which a loaded machine lets win the race) charges that seat, and only it.
    result = play_with_limits(tmp_path, [hostile("fork_burst"), "greedy"], seed=47,
                  tc=TimeControl(start_ms=10000, decision_ms=5000), limits={0: Limits(processes=10)})
    res = failures_of(result, 0)
    assert res and res[0].kind == "resource" and "limits.processes" in res[0].reason, res
    said = [line for log in (tmp_path / "logs").glob("s0*.log") for line in log.read_text().splitlines()
            if line.startswith("forked ")]
    assert not said or int(said[0].split()[1]) <= 10 + cgroups.INFRA_TASKS, said
    assert not failures_of(result, 1)


def test_cgroup_v2_is_chosen_where_its_controllers_are_delegated_and_read_as_v2(tmp_path, monkeypatch):
    # A v2 hierarchy laid out in a folder (the files the kernel would show): detection, the limits
    # written, and the counters read in v2's formats.
    base = tmp_path / "unified" / "user.slice"
    base.mkdir(parents=True)
    (base / "cgroup.procs").write_text("")
    (base / "cgroup.controllers").write_text("cpu memory pids\n")
    (base / "cgroup.subtree_control").write_text("cpu memory pids\n")
    mounts = [("cgroup", "/sys/fs/cgroup/memory", {"rw", "memory"}), ("cgroup2", str(tmp_path / "unified"), {"rw"})]
    lay = cgroups._v2_layout(mounts, {"": "/user.slice", "memory": "/"})
    assert lay is not None and lay.version == 2 and set(lay.bases.values()) == {base}
    # A group with processes cannot give controllers to children (v2): its compartments go beside it.
    (base / "cgroup.subtree_control").write_text("")
    beside = cgroups._v2_layout(mounts, {"": "/user.slice"})
    assert beside is not None and set(beside.bases.values()) == {base.parent}
    (base / "cgroup.controllers").write_text("cpu\n")
    assert cgroups._v2_layout(mounts, {"": "/user.slice"}) is None, "v2 without memory and pids is not used"

    monkeypatch.setattr(cgroups, "layout", lambda: lay)
    group = base / "arena-ref-bot"
    group.mkdir()
    for name, text in (("cgroup.procs", ""), ("cpu.stat", "usage_usec 2500000\nuser_usec 2000000\n"),
                       ("memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"),
                       ("pids.events", "max 0\n"), ("pids.current", "7\n"), ("memory.current", "1048576\n")):
        (group / name).write_text(text)
    comp = cgroups.Compartment("ref", "bot", memory_mb=100, processes=20)
    try:
        assert comp.version == 2 and set(comp.dirs.values()) == {group}
        assert (group / "memory.max").read_text() == str((100 + cgroups.INFRA_MB) << 20)
        assert (group / "pids.max").read_text() == str(20 + cgroups.INFRA_TASKS)
        assert (group / "cpu.weight").read_text() == str(cgroups.CPU_WEIGHT)
        assert comp.cpu_seconds() == 2.5 and comp.memory_bytes() == 1 << 20 and comp.tasks() == 7
        assert "limits.memory_mb" in (comp.violation() or "")
    finally:
        comp.opened()
