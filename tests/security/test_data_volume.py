"""A data folder as a volume of its quota (arena/referee/datavolume.py, issue 21 class 3): what the
bot wrote outlives the run as plain files, the copy back costs the host no more than the volume
held and follows no link, a volume shared by two hosts stays until the last lets it go, an image
left by a machine that went down is mounted again, and a referee killed with SIGKILL has its
volume copied back by its undertaker."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.referee import datafolder, datavolume
from arena.settings import Limits, TimeControl
from tests.conftest import ROOT
from tests.helpers import data_volumes, deep_folder, kill_9

needs_volumes = pytest.mark.skipif(not data_volumes(), reason="data folders are volumes only as root with loop "
                                   "devices and mkfs.ext4 (the watcher's tests cover the rest)")
DIARIST = ROOT / "tests" / "bots" / "diarist.py"
TC = TimeControl(start_ms=20000, decision_ms=20000)


def test_the_copy_keeps_holes_hard_links_and_links_as_they_are(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    with open(src / "sparse", "wb") as f:  # 1 GiB long, 1 MiB of data: copied whole it would cost the host 1 GiB
        f.seek(512 << 20)
        f.write(b"s" * (1 << 20))
        f.truncate(1 << 30)
    (src / "book").write_bytes(b"b" * 4096)
    (src / "book").chmod(0o4755)  # set-user-id: not on the host's copy
    for i in range(5):
        os.link(src / "book", src / f"name{i}")
    os.symlink("/etc/shadow", src / "shadow")
    os.mkfifo(src / "pipe")
    fd = deep_folder(src)  # past PATH_MAX
    with open(os.open("deep", os.O_WRONLY | os.O_CREAT, 0o640, dir_fd=fd), "wb") as f:
        f.write(b"deep")
    os.close(fd)
    s, d = os.open(src, os.O_RDONLY), os.open(dst, os.O_RDONLY)
    try:
        datavolume._copy_tree(s, d)
    finally:
        os.close(s)
        os.close(d)
    sparse = (dst / "sparse").stat()
    assert sparse.st_size == 1 << 30 and sparse.st_blocks * 512 < 4 << 20, sparse
    with open(dst / "sparse", "rb") as f:
        f.seek(512 << 20)
        assert f.read(1 << 20) == b"s" * (1 << 20)
    assert {(dst / f"name{i}").stat().st_ino for i in range(5)} == {(dst / "book").stat().st_ino}
    assert stat.S_IMODE((dst / "book").stat().st_mode) == 0o755
    assert os.readlink(dst / "shadow") == "/etc/shadow" and (dst / "shadow").is_symlink()
    assert stat.S_ISFIFO((dst / "pipe").lstat().st_mode)
    fd = deep_folder(dst, make=False)
    deep = os.open("deep", os.O_RDONLY, dir_fd=fd)
    assert os.read(deep, 10) == b"deep" and stat.S_IMODE(os.fstat(deep).st_mode) == 0o640
    os.close(deep)
    os.close(fd)


def play_diarist(tmp_path: Path, data: Path, seed: int) -> str:
    """One game of the diarist (a sandboxed bot keeping a diary in its data folder) against greedy;
    the diarist's log."""
    from tests.security.test_kernel_limits import play

    play(tmp_path / f"run{seed}", [f"{sys.executable} {DIARIST}", "greedy"], seed, TC,
         limits={0: Limits(data_mb=8)}, data={0: data})
    return "".join(p.read_text() for p in (tmp_path / f"run{seed}" / "logs").rglob("s0*.log"))


def volume_files(data: Path) -> list[Path]:
    return list(datavolume.VOLUMES.glob(f"{datavolume.key_of(str(data))}.*[!k]"))  # all but the lock


@needs_volumes
@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
def test_what_a_bot_wrote_on_its_volume_is_in_its_folder_after_the_run_and_in_its_next(tmp_path):
    data = tmp_path / "data"
    first = play_diarist(tmp_path, data, 61)
    assert "DIARY 1" in first, first
    assert not data.is_mount() and (data / "diary.txt").read_text().count("\n") == 1
    assert volume_files(data) == []  # the image is gone: the folder holds plain files
    second = play_diarist(tmp_path, data, 62)
    assert "DIARY 2" in second, second  # it read what it wrote in the first run
    assert (data / "diary.txt").read_text().count("\n") == 2 and not data.is_mount()


def open_data(tmp_path: Path) -> int:
    return datafolder.open_folder(tmp_path, ["data"])


@needs_volumes
@pytest.mark.slow
def test_a_volume_two_hosts_hold_stays_until_the_last_lets_it_go_and_an_image_left_behind_is_mounted_again(
        tmp_path):
    data = tmp_path / "data"
    fd = open_data(tmp_path)
    try:
        datavolume.use(str(data))
        datavolume.use(str(data))
        datavolume.acquire(fd, str(data), 8 << 20, 0, 0)
    finally:
        os.close(fd)
    assert data.is_mount()
    (data / "kept.txt").write_text("kept")
    datavolume.done_with(str(data))
    assert data.is_mount()  # the other host still seats the bot
    # The machine goes down: the mount is lost, the image stays, no holder is alive.
    subprocess.run(["umount", "-l", str(data)], check=True)
    state_path = datavolume.VOLUMES / f"{datavolume.key_of(str(data))}.json"
    state = json.loads(state_path.read_text())
    state_path.write_text(json.dumps({**state, "holders": [[1 << 22, 1]]}))
    datavolume._held.discard(datavolume.key_of(str(data)))
    assert not (data / "kept.txt").exists()
    fd = open_data(tmp_path)
    try:
        datavolume.acquire(fd, str(data), 8 << 20, 0, 0)
    finally:
        os.close(fd)
    assert (data / "kept.txt").read_text() == "kept"  # the image left behind, mounted again
    datavolume.done_with(str(data))
    assert not data.is_mount() and (data / "kept.txt").read_text() == "kept" and volume_files(data) == []


# A stand-in referee: launches a sandboxed bot that writes into its data folder and sleeps, says
# so once the file is on the volume, and waits to be killed.
REFEREE = r"""
import os, shlex, sys, time
from pathlib import Path
from arena.referee import launch
from arena.settings import BotSpec, Limits

data = Path(sys.argv[1]) / "data"
code = "import os, time\nopen(os.environ['ARENA_DATA'] + '/kept.txt', 'w').write('kept')\ntime.sleep(600)"
spec = BotSpec(name="keeper", command=f"{sys.executable} -c {shlex.quote(code)}", transport="stdio",
               limits=Limits(data_mb=8))
proc = launch.launch(spec, "token", Path(sys.argv[1]) / "keeper.log", data=data)
deadline = time.monotonic() + 20
while not (data / "kept.txt").exists() and time.monotonic() < deadline:
    time.sleep(0.02)
print("written" if data.is_mount() else "not a volume", flush=True)
time.sleep(600)
"""


@needs_volumes
@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
def test_after_a_kill_9_of_the_referee_its_undertaker_copies_the_volume_back(tmp_path):
    referee = subprocess.Popen([sys.executable, "-c", REFEREE, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                               start_new_session=True, cwd=ROOT)
    try:
        assert referee.stdout is not None
        assert referee.stdout.readline().strip() == "written"
    finally:
        kill_9(referee)
    data = tmp_path / "data"
    deadline = time.monotonic() + 20
    while (data.is_mount() or volume_files(data)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not data.is_mount() and volume_files(data) == []
    assert (data / "kept.txt").read_text() == "kept"


@needs_volumes
@pytest.mark.slow
@pytest.mark.parametrize("who", ["the next referee", "the undertaker"])
def test_a_copy_in_cut_short_by_a_kill_is_thrown_away_and_the_folder_is_whole(tmp_path, who):
    """A referee killed while it copied a folder in left its staging mount and a partial image (attack
    round 4: mounted later as the volume, it failed the bot's every start); the image counts only once
    complete, so the next referee, or the undertaker, throws the partial one away."""
    data = tmp_path / "data"
    os.close(open_data(tmp_path))  # made by the arena, then written by the bot's earlier runs
    (data / "kept.txt").write_text("kept")
    key = datavolume.key_of(str(data))
    part, staging = datavolume._partial(key), datavolume._paths(key)[3]
    datavolume.VOLUMES.mkdir(parents=True, exist_ok=True)
    datavolume._make_image(part, 8 << 20, 0, 0)  # as the killed referee left it: mounted, half copied
    staging.mkdir(exist_ok=True)
    datavolume._mount(part, str(staging))
    (staging / "half.txt").write_text("half")
    if who == "the undertaker":
        datavolume.release_orphans()
        assert not os.path.ismount(staging) and not part.exists()
        assert not (datavolume.VOLUMES / f"{key}.json").exists()
    fd = open_data(tmp_path)
    try:
        datavolume.acquire(fd, str(data), 8 << 20, 0, 0)
    finally:
        os.close(fd)
    try:
        assert data.is_mount() and sorted(os.listdir(data)) == ["kept.txt"]  # the folder's files, not the half copy
        assert not part.exists() and not os.path.ismount(staging)
    finally:
        datavolume.done_with(str(data))
        datavolume.release_mine()
    assert not data.is_mount() and (data / "kept.txt").read_text() == "kept" and volume_files(data) == []


@pytest.mark.slow
def test_a_holder_that_died_and_is_not_yet_reaped_holds_no_volume():
    """A worker that died with its referee stays a zombie until reaped; its start time was once read as
    alive, so the undertaker left the volume mounted (attack round 4, a SIGTERM of ``arena run``)."""
    child = subprocess.Popen([sys.executable, "-c", "import os; print(os.getpid(), flush=True)"],
                             stdout=subprocess.PIPE, text=True)
    pid = int(child.stdout.readline())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.02)
    try:
        assert not datavolume._alive([pid, 0]) and datavolume._start_time(pid) is None
        assert datavolume._alive(datavolume._me())
    finally:
        child.wait()
        child.stdout.close()
