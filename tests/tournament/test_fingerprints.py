"""Bot fingerprints (arena/tournament/fingerprints.py): what is hashed, what is not, and the signed file."""

from __future__ import annotations

import pytest

from arena.integrity import make_key
from arena.settings import BotSpec
from arena.tournament import fingerprints
from arena.tournament.config import validate_text
from arena.tournament.fingerprints import BOTS_FILE, FingerprintError, changes, of_bot, of_tournament, record, recorded

FILE = """\
name = "fp"
variant = "basic"
seats = 2
output = "results"

[[bots]]
name = "mine"
command = "python3 bot.py"
cwd = "mine"
data = "mine/data"

[[bots]]
name = "plain"
command = "python3 plain.py --fast"

[[bots]]
name = "greedy"
command = "greedy"
"""


@pytest.fixture
def setup(tmp_path):
    (tmp_path / "mine" / "data").mkdir(parents=True)
    (tmp_path / "mine" / "bot.py").write_text("print('hi')\n")
    (tmp_path / "mine" / "lib").mkdir()
    (tmp_path / "mine" / "lib" / "weights.txt").write_text("1 2 3\n")
    (tmp_path / "plain.py").write_text("print('plain')\n")
    t, errors = validate_text(FILE, base_dir=tmp_path)
    assert not errors and t is not None
    return t, tmp_path, tmp_path / "results"


def by_bot(t, out):
    return {fp.bot: fp for fp in of_tournament(t, out)}


def test_what_each_kind_of_bot_is_hashed_by(setup):
    t, base, out = setup
    fp = by_bot(t, out)
    assert fp["mine"].what == "folder mine" and len(fp["mine"].program) == 64
    assert fp["plain"].what == "program file plain.py"
    assert fp["greedy"].what.endswith("sample_bots/greedy.py")
    assert len({f.command for f in fp.values()}) == 3
    far = of_bot(BotSpec(name="far", command="remote:far"), base)
    assert far.what == "command line only" and far.program == ""


def test_a_folder_bot_changes_with_any_file_but_not_with_its_data_or_caches(setup):
    t, base, out = setup
    first = by_bot(t, out)
    (base / "mine" / "data" / "memory.json").write_text("{}")
    (base / "mine" / "__pycache__").mkdir()
    (base / "mine" / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0")
    assert by_bot(t, out)["mine"].same_as(first["mine"])
    (base / "mine" / "lib" / "weights.txt").write_text("1 2 4\n")
    now = by_bot(t, out)
    assert not now["mine"].same_as(first["mine"])
    assert now["plain"].same_as(first["plain"])
    found = changes(first, list(now.values()))
    assert [fp.bot for fp, _ in found] == ["mine"]
    assert found[0][1].startswith("bot 'mine' changed since this results folder was first run: its folder ")
    (base / "mine" / "lib" / "new.txt").write_text("")
    assert not by_bot(t, out)["mine"].same_as(now["mine"])


def test_a_moved_tournament_folder_holds_the_same_bots(setup, tmp_path_factory):
    t, base, out = setup
    first = by_bot(t, out)
    moved = tmp_path_factory.mktemp("moved") / "club"
    base.rename(moved)
    t2, errors = validate_text(FILE, base_dir=moved)
    assert not errors and t2 is not None
    assert changes(first, of_tournament(t2, moved / "results")) == []


def test_the_results_folder_inside_a_bots_folder_is_not_hashed(tmp_path):
    (tmp_path / "bot.py").write_text("x = 1\n")
    spec = BotSpec(name="b", command="python3 bot.py", cwd=".")
    skip = {(tmp_path / "results").resolve()}
    first = of_bot(spec, tmp_path, skip)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "journal.jsonl").write_text("{}\n")
    assert of_bot(spec, tmp_path, skip).same_as(first)


def test_a_big_folder_is_hashed_up_to_a_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(fingerprints, "MAX_FILES", 3)
    for i in range(5):
        (tmp_path / f"f{i}").write_text(str(i))
    fp = of_bot(BotSpec(name="b", command="./run", cwd="."), tmp_path)
    assert fp.what == "folder . (first 3 files)"
    (tmp_path / "f4").write_text("changed after the bound")
    assert of_bot(BotSpec(name="b", command="./run", cwd="."), tmp_path).same_as(fp)


def test_a_changed_program_file_is_named_with_both_hashes(setup):
    t, base, out = setup
    first = by_bot(t, out)
    (base / "plain.py").write_text("print('tuned')\n")
    (fp, why), = changes(first, of_tournament(t, out))
    assert fp.bot == "plain"
    assert f"its program file plain.py (sha256 {first['plain'].program[:12]} then, " in why


def test_the_file_is_signed_and_a_changed_line_is_refused(setup):
    t, _base, out = setup
    out.mkdir()
    key = make_key(out)
    prints = of_tournament(t, out)
    record(out, key, prints, fresh=True)
    assert {b: fp.program for b, fp in recorded(out, key).items()} == {fp.bot: fp.program for fp in prints}
    # appending keeps the history; the last line of a bot wins
    later = [fp for fp in prints if fp.bot == "plain"]
    later[0].program = "0" * 64
    record(out, key, later, fresh=False)
    assert recorded(out, key)["plain"].program == "0" * 64
    assert len((out / BOTS_FILE).read_text().splitlines()) == 4
    text = (out / BOTS_FILE).read_text().replace('"bot":"mine"', '"bot":"mime"', 1)
    (out / BOTS_FILE).write_text(text)
    with pytest.raises(FingerprintError, match=r"bots.jsonl:1: a bot fingerprint that does not verify"):
        recorded(out, key)
