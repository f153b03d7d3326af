"""A bot's data folder is contained (issue 21, SECURITY.md "Data folders"): a tournament file's
``data`` is a folder of the bot's own inside the tournament's folder, refused at ``validate`` and
``run`` with its key otherwise; ``launch`` checks it again at every start; the folder handed over
to the bot's user crosses no link, mount or hard link; and the sandbox binds the very folder that
was checked, whatever its path leads to by the time bubblewrap binds it.  Tried by a real hostile
bot (tests/bots/hostile.py host_powers) that writes into its data folder and reads what it can."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import datafolder, sandbox
from arena.referee.host import BotHost
from arena.settings import BotSpec, TimeControl
from tests.conftest import ROOT
from tests.helpers import data_volumes, hostile_report, remove_chain

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.usefixtures("no_leaks")]
needs_sandbox = pytest.mark.skipif(sandbox.problem() is not None, reason=str(sandbox.problem()))
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root hands a data folder over to a user of its own")

TC = TimeControl(start_ms=20000, decision_ms=2000, grace_ms=100)

TOURNAMENT = """
name = "t"
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
name = "other"
command = "python3 hostile.py host_powers"
cwd = "other"
{other}
"""


def folders(tmp_path: Path) -> Path:
    for name in ("bot", "other"):
        (tmp_path / name).mkdir()
        for program in ("hostile.py", "misbehave.py"):
            shutil.copy(ROOT / "tests" / "bots" / program, tmp_path / name / program)
    return tmp_path / "bot"


def arena(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def private_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("the organiser's")
    path.chmod(0o600)
    return path


def report(host: BotHost, peer) -> dict:
    return hostile_report(host.log_path(peer))


def errors_by_key(stderr: str) -> dict[str, str]:
    out = {}
    for line in stderr.splitlines():
        parts = line.split(": ", 2)
        if len(parts) == 3 and parts[1].startswith("bots["):
            out[parts[1]] = parts[2]
    return out


def test_validate_refuses_a_data_path_that_leaves_the_tournaments_folder_with_its_key(tmp_path):
    folders(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    text = TOURNAMENT.format(data=f'data = "{outside}"\n', other='data = "../elsewhere"\n')
    for name, value in (("third", "bot/../../x"), ("fourth", "."), ("fifth", "a\\u0007b"), ("sixth", "")):
        text += f'\n[[bots]]\nname = "{name}"\ncommand = "random"\ndata = "{value}"\n'
    (tmp_path / "t.toml").write_text(text)
    for command in ("validate", "run"):
        done = arena(command, "t.toml", cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        found = errors_by_key(done.stderr)
        assert "absolute path" in found["bots[0].data"] and str(outside) in found["bots[0].data"], found
        assert "'..'" in found["bots[1].data"] and "'..'" in found["bots[2].data"], found
        assert "not that folder itself" in found["bots[3].data"], found
        assert "control characters" in found["bots[4].data"], found
        assert "expected a folder path" in found["bots[5].data"], found
    assert not outside.exists() and not (tmp_path / "out").exists()


def test_validate_refuses_a_data_folder_over_what_is_not_the_bots_own_with_its_key(tmp_path):
    folders(tmp_path)
    text = TOURNAMENT.format(data='data = "out/mine"\n', other='data = "shared/other"\n')
    extra = (("results", "out"), ("own_cwd", "bot"), ("others_cwd", "other/data"), ("holds_data", "shared"),
             ("fine", "free/data"))
    for name, value in extra:
        text += f'\n[[bots]]\nname = "{name}"\ncommand = "random"\ndata = "{value}"\n'
    (tmp_path / "t.toml").write_text(text)
    done = arena("validate", "t.toml", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    found = errors_by_key(done.stderr)
    assert "is inside the results folder" in found["bots[0].data"], found
    assert "is the results folder" in found["bots[2].data"], found
    assert "is bots[0].cwd" in found["bots[3].data"], found  # a bundled bot's data in another's folder
    assert "is inside bots[1].cwd" in found["bots[4].data"], found
    assert "holds bots[1].data" in found["bots[5].data"] and "bots[1].data" in found, found
    assert "bots[6].data" not in found, found  # inside a folder no bot runs in: fine
    # the bot's own folder: inside it is fine (README's layout), being it is not
    text = TOURNAMENT.format(data='data = "bot"\n', other='data = "other/data"\n')
    (tmp_path / "t.toml").write_text(text)
    found = errors_by_key(arena("validate", "t.toml", cwd=tmp_path).stderr)
    assert list(found) == ["bots[0].data"] and "the bot's own folder" in found["bots[0].data"], found


def test_validate_refuses_a_data_folder_in_the_arenas_own_install(tmp_path):
    text = (f'name = "t"\nvariant = "basic"\nseats = 2\nbase_dir = "{ROOT}"\noutput = "{tmp_path}/out"\n'
            '[[bots]]\nname = "a"\ncommand = "random"\ndata = "arena/referee"\n'
            '[[bots]]\nname = "b"\ncommand = "greedy"\ndata = "sample_bots/b-data"\n')
    (tmp_path / "t.toml").write_text(text)
    done = arena("validate", "t.toml", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    found = errors_by_key(done.stderr)
    assert "the arena's code" in found["bots[0].data"] and "the sample bots" in found["bots[1].data"], found
    assert not (ROOT / "sample_bots" / "b-data").exists()


@needs_sandbox
def test_a_bot_given_the_results_folder_or_an_outside_folder_as_data_is_never_started(tmp_path):
    folders(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    secret = private_file(outside / "secret.txt")
    try:
        for data in (f'data = "{outside}"', 'data = "out"'):
            (tmp_path / "t.toml").write_text(TOURNAMENT.format(data=data + "\n", other=""))
            done = arena("run", "t.toml", cwd=tmp_path)
            assert done.returncode == 2 and "bots[0].data" in done.stderr and "Traceback" not in done.stderr, \
                done.stderr
            assert not (tmp_path / "out" / "logs").exists(), "a bot was started"
            st = secret.stat()
            assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (os.geteuid(), 0o600)
            assert outside.stat().st_uid == os.geteuid()
    finally:
        shutil.rmtree(outside, ignore_errors=True)


@needs_sandbox
def test_launch_checks_a_data_folder_again_whoever_asks_for_it(tmp_path):
    """A tournament reaching the referee another way than through validate: the bot's own program
    folder, a hidden folder (the results) or an absolute ``data`` are refused at the start, before
    anything is made or handed over; the honest seat beside it starts."""
    bot = folders(tmp_path)
    out = tmp_path / "out"
    key = private_file(out / "secret.key")
    mode = stat.S_IMODE(bot.stat().st_mode)
    with BotHost(TC, tmp_path / "logs", hide=(out,)) as host:
        spec = BotSpec(name="h", command="python3 hostile.py host_powers", cwd="bot")
        tries = [host.add(spec, cwd=bot, data=bot),
                 host.add(BotSpec(name="h2", command=spec.command, cwd="bot"), cwd=bot, data=out),
                 host.add(BotSpec(name="h3", command=spec.command, cwd="bot", data=str(tmp_path / "abs")), cwd=bot,
                          data=tmp_path / "abs")]
        # inside its own folder, two levels made now: the seat's user passes the folder on the way
        honest = host.add(BotSpec(name="ok", command=spec.command, cwd="other", data="other/data/deep"),
                          cwd=tmp_path / "other", data=tmp_path / "other" / "data" / "deep")
        started = [host.start(p) for p in tries]
        assert host.start(honest), honest.problem
        honest_report = report(host, honest)
    assert started == [False, False, False]
    reasons = [p.problem[1] for p in tries]
    assert "the bot's own folder" in reasons[0], reasons
    assert "hidden from bots" in reasons[1], reasons
    assert "absolute path" in reasons[2], reasons
    assert (bot.stat().st_uid, stat.S_IMODE(bot.stat().st_mode)) == (os.geteuid(), mode)
    assert key.stat().st_uid == os.geteuid() and not (tmp_path / "abs").exists()
    assert honest_report["data"] == "done: written", honest_report
    assert (tmp_path / "other" / "data" / "deep" / "pwned").read_text() == "written by the bot"


@needs_sandbox
@as_root
def test_a_hard_link_or_a_mount_in_a_data_folder_is_not_handed_to_the_bot(tmp_path):
    bot = folders(tmp_path)
    secret = private_file(tmp_path / "private" / "secret.txt")
    data = tmp_path / "data"
    os.close(datafolder.open_folder(tmp_path, ["data"]))  # made by the arena: only what is in it is refused
    os.link(secret, data / "book.bin")  # the organiser's file under a second name
    mounted = data / "mnt"
    try:
        with BotHost(TC, tmp_path / "logs") as host:
            first = host.add(BotSpec(name="h", command="python3 hostile.py host_powers", cwd="bot"), cwd=bot,
                             data=data)
            assert not host.start(first)
            assert "hard link" in first.problem[1] and "book.bin" in first.problem[1], first.problem
            (data / "book.bin").unlink()
            mounted.mkdir()
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "none", str(mounted)], check=True)
            private_file(mounted / "theirs.txt")
            second = host.add(BotSpec(name="h2", command="python3 hostile.py host_powers", cwd="bot"), cwd=bot,
                              data=data)
            assert not host.start(second)
            assert "another file system" in second.problem[1] and "mnt" in second.problem[1], second.problem
        assert secret.stat().st_uid == 0 and (mounted / "theirs.txt").stat().st_uid == 0
    finally:
        if mounted.is_mount():
            subprocess.run(["umount", "-l", str(mounted)], check=False)


@needs_sandbox
@pytest.mark.parametrize("swapped", ["the folder above", "the folder itself"])
def test_a_data_folder_swapped_for_a_link_after_the_check_is_not_what_the_sandbox_binds(tmp_path, monkeypatch,
                                                                                        swapped):
    """Between the referee's check and bubblewrap's bind, the data folder's path is made to lead
    elsewhere (its folder, or the folder above it, renamed away and a link put in its place, to a
    folder anyone may write): the link's target gets nothing; the bot writes into the folder that was
    checked, and no descriptor of it reaches the bot.  (With the folder itself swapped, the path the
    quota is measured by is a link: the watcher may stop the bot as over its quota instead.)"""
    bot = folders(tmp_path)
    above, data = tmp_path / "p", tmp_path / "p" / "data"
    data.mkdir(parents=True)
    decoy = tmp_path / "decoy"
    (decoy / "data").mkdir(parents=True)
    for d in (decoy, decoy / "data"):
        d.chmod(0o777)  # folders anyone may write: bound instead, they would take the bot's writes
    real_wrap = sandbox.wrap
    moved = tmp_path / ("p-moved" if swapped == "the folder above" else "data-moved")

    def swap_then_wrap(*args, **kwargs):
        if swapped == "the folder above":
            above.rename(moved)
            above.symlink_to(decoy)
        else:
            data.rename(moved)
            data.symlink_to(decoy / "data")
        return real_wrap(*args, **kwargs)

    monkeypatch.setattr(sandbox, "wrap", swap_then_wrap)
    with BotHost(TC, tmp_path / "logs") as host:
        peer = host.add(BotSpec(name="h", command="python3 hostile.py host_powers", cwd="bot", data="p/data"),
                        cwd=bot, data=data)
        started = host.start(peer)
        got = report(host, peer) if started or swapped == "the folder above" else None
    assert list((decoy / "data").iterdir()) == [], "the bind (or the volume's copy back) followed the swapped-in link"
    if swapped == "the folder itself" and data_volumes():  # a volume over it: the kernel refuses to move a mount point
        assert not started and "Device or resource busy" in peer.problem[1], peer.problem
        return
    if swapped == "the folder itself" and not started:
        assert peer.problem is not None and peer.problem[0] == "resource", peer.problem
        return
    assert started, peer.problem
    assert got is not None and got["data"] == "done: written", got
    written = moved / "data" / "pwned" if swapped == "the folder above" else moved / "pwned"
    assert written.read_text() == "written by the bot"
    assert got["dir_fds"] == [], got
    if data_volumes():  # its volume was not copied back through the link: it stays over the moved folder
        from arena.referee import datavolume

        image = datavolume.VOLUMES / f"{datavolume.key_of(str(data))}.img"
        assert image.exists() and (moved / "data").is_mount()
        subprocess.run(["umount", "-l", str(moved / "data")], check=True)
        for leftover in datavolume.VOLUMES.glob(f"{datavolume.key_of(str(data))}.*"):
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()


def test_no_system_folder_or_top_folder_is_a_data_folder_and_nothing_is_made_there():
    from arena.referee import datafolder

    for path, words in ((Path("/etc/arena-data"), "inside the system folder '/etc'"),
                        (Path("/proc/self"), "inside the system folder '/proc'"),
                        (Path("/usr"), "is the system folder '/usr'"), (Path("/tmp"), "is the machine's '/tmp'"),
                        (Path("/"), "is the machine's '/'"), (Path(sys.prefix) / "x", "inside the Python install"),
                        (ROOT / "arena" / "x", "inside the arena's code")):
        why = datafolder.collision(path, [])
        assert why is not None and words in why, (path, why)
        assert not Path("/etc/arena-data").exists()
    assert datafolder.collision(Path("/tmp/somewhere/data"), []) is None
    assert datafolder.names("./a//b/") == ["a", "b"]
    assert datafolder.path_problem("a/./b") is None and datafolder.path_problem("a/../b") is not None


def test_validate_refuses_an_existing_folder_of_the_organisers_as_data_with_its_key(tmp_path):
    """``.git/hooks`` (a dot-named part), an earlier results folder (its secret.key) and any
    non-empty folder the arena did not make are refused at validate, each with its key."""
    folders(tmp_path)
    private_file(tmp_path / ".git" / "hooks" / "pre-commit.sample")
    private_file(tmp_path / "results-2025" / "secret.key")
    private_file(tmp_path / "notes" / "plan.txt")
    expected = {'".git/hooks"': "do not start with '.'", '"results-2025"': "'secret.key'",
                '"notes"': "was not made by the arena"}
    for data, words in expected.items():
        (tmp_path / "t.toml").write_text(TOURNAMENT.format(data=f"data = {data}\n", other=""))
        done = arena("validate", "t.toml", cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert words in errors_by_key(done.stderr).get("bots[0].data", ""), done.stderr
    (tmp_path / "t.toml").write_text(TOURNAMENT.format(data='data = "empty"\n', other=""))
    (tmp_path / "empty").mkdir()
    assert arena("validate", "t.toml", cwd=tmp_path).returncode == 0


@needs_sandbox
def test_an_existing_folder_of_the_organisers_is_never_given_to_a_bot_and_the_arenas_own_is_kept(tmp_path):
    """Reaching the referee without validate: a non-empty folder the arena did not make (hooks) and an
    old results folder are refused at the start, nothing in them handed over or written; a folder
    the arena made is taken again on the next start (the bot's files kept), and as root a file of
    the organiser's put into it stops the hand-over instead of becoming the bot's."""
    bot = folders(tmp_path)
    hook = private_file(tmp_path / "repo" / "hooks" / "post-commit")
    key = private_file(tmp_path / "old" / "secret.key")
    fresh = tmp_path / "fresh"
    spec = BotSpec(name="h", command="python3 hostile.py host_powers", cwd="bot")
    with BotHost(TC, tmp_path / "logs") as host:
        tries = [host.add(spec, cwd=bot, data=hook.parent),
                 host.add(BotSpec(name="h2", command=spec.command, cwd="bot"), cwd=bot, data=key.parent)]
        started = [host.start(p) for p in tries]
        honest = host.add(BotSpec(name="ok", command=spec.command, cwd="bot"), cwd=bot, data=fresh)
        assert host.start(honest), honest.problem
        assert report(host, honest)["data"] == "done: written"
    assert started == [False, False]
    assert "not made by the arena" in tries[0].problem[1], tries[0].problem
    assert "'secret.key'" in tries[1].problem[1], tries[1].problem
    for f in (hook, key):
        st = f.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode), f.read_text()) == (os.geteuid(), 0o600, "the organiser's")
        assert sorted(os.listdir(f.parent)) == [f.name], "the bot wrote into the organiser's folder"
    with BotHost(TC, tmp_path / "logs2") as host:  # the arena's own folder, with the bot's file in it
        again = host.add(BotSpec(name="ok", command=spec.command, cwd="bot"), cwd=bot, data=fresh)
        assert host.start(again), again.problem
        assert report(host, again)["data"] == "done: written"
    if os.geteuid() != 0:
        return
    planted = private_file(fresh / "organisers.txt")
    with BotHost(TC, tmp_path / "logs3") as host:
        third = host.add(BotSpec(name="ok", command=spec.command, cwd="bot"), cwd=bot, data=fresh)
        assert not host.start(third)
    assert "organisers.txt" in third.problem[1] and "belongs to uid 0" in third.problem[1], third.problem
    assert planted.stat().st_uid == 0 and stat.S_IMODE(planted.stat().st_mode) == 0o600


# A bot that nests folders 1,200 deep in its data folder, then leaves (so that it is started again).
NESTER = """\
import os
fd = os.open(os.environ["ARENA_DATA"], os.O_RDONLY)
for _ in range(1200):
    if "n" not in os.listdir(fd):
        os.mkdir("n", dir_fd=fd)
    inner = os.open("n", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = inner
"""


@needs_sandbox
@as_root
def test_a_data_folder_nested_too_deep_fails_its_bots_start_not_the_referee(tmp_path):
    """Handing the folder over walks it (os.fwalk recurses): a chain of 1,200 folders made by the bot once
    crashed the referee with RecursionError at the bot's next start, stopping the tournament."""
    (tmp_path / "nester.py").write_text(NESTER)
    try:
        spec = BotSpec(name="nester", command=f"{sys.executable} nester.py", transport="stdio", data="data")
        with BotHost(TC, tmp_path / "logs") as host:
            peer = host.add(spec, cwd=tmp_path, data=tmp_path / "data")
            assert not host.start(peer)  # it made the chain and left without a hello
            assert "before saying hello" in peer.problem[1], peer.problem
        # The next run: the folder is plain again (a volume is copied back) and handed over afresh.
        with BotHost(TC, tmp_path / "logs") as host:
            peer = host.add(spec, cwd=tmp_path, data=tmp_path / "data")
            assert not host.start(peer)
            assert "nests folders more than 200 deep" in peer.problem[1], peer.problem
            honest = host.add(BotSpec(name="ok", command="greedy"))
            assert host.start(honest), honest.problem
    finally:
        remove_chain(tmp_path / "data")  # else pytest's clean-up of old folders fails on it


@needs_sandbox
def test_a_bot_folder_whose_way_is_swapped_for_a_link_after_the_check_is_not_shown(tmp_path):
    """The bot's ``cwd`` is checked at validate (no link on the way) and again at every start: the
    folder above it renamed away and a link to another entrant's folder put in its place (the
    round-four review) fails the bot's start with that reason; nothing of the other folder is shown."""
    (tmp_path / "entrants" / "alice").mkdir(parents=True)
    for program in ("hostile.py", "misbehave.py"):
        shutil.copy(ROOT / "tests" / "bots" / program, tmp_path / "entrants" / "alice" / program)
    theirs = tmp_path / "rival" / "alice"
    shutil.copytree(tmp_path / "entrants" / "alice", theirs)
    (theirs / "strategy.txt").write_text("the rival's secret")
    spec = BotSpec(name="a", command="python3 hostile.py host_powers", cwd="entrants/alice")
    with BotHost(TC, tmp_path / "logs") as host:
        honest = host.add(spec, cwd=spec.workdir(tmp_path))
        assert host.start(honest), honest.problem  # the path as checked: it starts
        host.stop_peer(honest)
        (tmp_path / "entrants").rename(tmp_path / "entrants-moved")
        (tmp_path / "entrants").symlink_to(tmp_path / "rival")
        swapped = host.add(spec, cwd=spec.workdir(tmp_path))
        assert not host.start(swapped)
    assert swapped.problem is not None and "symbolic link now" in swapped.problem[1], swapped.problem
    assert str(tmp_path / "entrants") in swapped.problem[1]
    assert not any(p.read_text().count("the rival's secret") for p in (tmp_path / "logs").rglob("*.log"))
