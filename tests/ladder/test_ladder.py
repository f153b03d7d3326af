"""The ladder's parts that need no process: ladder.toml's checks, names, the door's refusals, pairing,
the snapshot's shape and privacy, the final's size, the export (docs/ARCHITECTURE.md, "The ladder")."""

from __future__ import annotations

import csv
import json
import os
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from arena.integrity import folder_key, make_key
from arena.ladder import layout, pairing
from arena.ladder.export import export
from arena.ladder.final import size
from arena.ladder.layout import LadderError, name_problem
from arena.ladder.settings import check_text, load, starter_text
from arena.ladder.snapshot import snapshot
from arena.ladder.submit import submit
from arena.tournament.journal import Journal, JournalEntry

BOT = "command = \"python3 bot.py honest\"\n"


def ladder(tmp_path: Path, **edits: str) -> Path:
    root = tmp_path / "lad"
    root.mkdir()
    text = starter_text("cup", "basic", 2)
    for old, new in edits.items():
        assert old in text, old
        text = text.replace(old, new)
    (root / layout.LADDER_FILE).write_text(text, encoding="utf-8")
    return root


def bot_folder(tmp_path: Path, name: str = "bot") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "bot.toml").write_text(BOT)
    return folder


# -- ladder.toml ------------------------------------------------------------------------------------

def test_the_starter_file_checks_and_loads(tmp_path: Path) -> None:
    s = load(ladder(tmp_path))
    assert (s.base.variant, s.base.seats, s.suspend_after, s.final_top) == ("basic", 2, 3, 8)
    assert s.limits.memory_mb == 512


def test_every_problem_is_named_with_its_line_and_key(tmp_path: Path) -> None:
    text = starter_text("cup", "basic", 2)
    text = text.replace("seats = 2\n", "seats = 2\nformat = \"swiss\"\n")
    text = text.replace("decision_ms = 1000", "decision_ms = -1").replace("suspend_after = 3", "suspend_after = 0")
    text = text.replace("memory_mb = 512", "memory_mb = \"lots\"").replace("top = 8", "top = 8\nprize = 1")
    _s, errors = check_text(text, "lad/ladder.toml")
    got = [(e.key, e.line) for e in errors]
    lines = text.splitlines()
    assert got == [("format", lines.index('format = "swiss"') + 1), ("time.decision_ms", lines.index("decision_ms = -1") + 1),
                   ("ladder.suspend_after", lines.index("suspend_after = 0") + 1),
                   ("ladder.limits.memory_mb", lines.index('memory_mb = "lots"') + 1),
                   ("final.prize", lines.index("prize = 1") + 1)], errors
    assert all(str(e).startswith("lad/ladder.toml:") for e in errors)


def test_a_bad_ladder_file_is_one_sentence(tmp_path: Path) -> None:
    root = ladder(tmp_path, **{"variant = \"basic\"": "variant = \"bridge\""})
    with pytest.raises(LadderError, match=r"ladder.toml:\d+: variant: .*bridge"):
        load(root)
    with pytest.raises(LadderError, match="is not a ladder"):
        load(tmp_path)


@pytest.mark.parametrize("name", ["", "a.b", "../x", "x" * 33, "-x", "a b", "é"])
def test_entrant_names_are_checked(name: str) -> None:
    assert name_problem(name) is not None


def test_a_plain_name_is_fine() -> None:
    assert name_problem("alice_2-b") is None


# -- the door: refusals that need no check ---------------------------------------------------------

def test_a_link_in_the_submission_is_refused_and_nothing_is_entered(tmp_path: Path) -> None:
    root = ladder(tmp_path)
    src = bot_folder(tmp_path)
    os.symlink("/etc/passwd", src / "passwd")
    with pytest.raises(LadderError, match="passwd in the submitted folder is a link"):
        submit(root, src, "alice")
    assert layout.registry(root) == {}
    assert not (root / "entrants").exists()


def test_a_named_pipe_is_refused(tmp_path: Path) -> None:
    root = ladder(tmp_path)
    src = bot_folder(tmp_path)
    os.mkfifo(src / "pipe")
    with pytest.raises(LadderError, match="pipe in the submitted folder is a named pipe"):
        submit(root, src, "alice")


def test_size_and_file_count_caps(tmp_path: Path) -> None:
    root = ladder(tmp_path, **{"max_submission_mb = 50": "max_submission_mb = 1", "max_files = 5000": "max_files = 3"})
    src = bot_folder(tmp_path)
    (src / "big.bin").write_bytes(b"\0" * (2 << 20))
    with pytest.raises(LadderError, match="larger than 1 MiB"):
        submit(root, src, "alice")
    (src / "big.bin").unlink()
    for i in range(3):
        (src / f"f{i}").write_text("x")
    with pytest.raises(LadderError, match="more than 3 files"):
        submit(root, src, "alice")


def test_a_submission_needs_its_manifest(tmp_path: Path) -> None:
    root = ladder(tmp_path)
    src = bot_folder(tmp_path)
    (src / "bot.toml").unlink()
    with pytest.raises(LadderError, match="no bot.toml"):
        submit(root, src, "alice")
    (src / "bot.toml").write_text("command = \"remote:me\"\n")
    with pytest.raises(LadderError, match="command"):
        submit(root, src, "alice")


def test_a_frozen_ladder_refuses_submissions(tmp_path: Path) -> None:
    root = ladder(tmp_path)
    layout.set_state(root, "frozen")
    with pytest.raises(LadderError, match="the ladder is frozen: it takes no more submissions"):
        submit(root, bot_folder(tmp_path), "alice")


def test_a_bad_name_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    root = ladder(tmp_path)
    with pytest.raises(LadderError, match="entrant name 'a.b' is not allowed"):
        submit(root, bot_folder(tmp_path), "a.b")


# -- pairing ----------------------------------------------------------------------------------------

def test_new_versions_play_every_batch_and_settled_ones_by_chance() -> None:
    active = [f"e{i}.v1" for i in range(10)]
    games = dict.fromkeys(active[:8], 100)  # e8, e9: new
    seen = dict.fromkeys(active, 0)
    for seed in range(40):
        tables = pairing.choose(active, games, [], 2, 3, 30, 0.25, seed)
        seated = [b for t in tables for b in t]
        assert len(seated) == len(set(seated)) and len(tables) <= 3
        assert {"e8.v1", "e9.v1"} <= set(seated), (seed, tables)
        for b in seated:
            seen[b] += 1
    assert all(seen[b] < 40 for b in active[:8])
    assert sum(seen[b] for b in active[:8]) > 0


def test_too_few_versions_make_no_batch() -> None:
    assert pairing.choose(["a.v1"], {}, [], 2, 8, 30, 0.5, 1) == []
    assert pairing.choose(["a.v1", "b.v1", "c.v1"], {}, [], 4, 8, 30, 0.5, 1) == []


# -- the snapshot ---------------------------------------------------------------------------------

def _entry(i: int, seats: list[str], placings: list[int], failures: list[dict[str, int]] | None = None) -> JournalEntry:
    return JournalEntry(index=i, game_id=f"g{i:04d}", table=i // 2, set=0, seating=i % 2, seats=seats,
                        placings=placings, totals=[0] * len(seats), failures=failures or [{} for _ in seats],
                        record=f"records/g{i:06d}.jsonl")


def fake_ladder(tmp_path: Path) -> Path:
    """Two batches of games by hand: alice beats bob mostly; bob.v1 crashed in one game and was replaced."""
    root = ladder(tmp_path)
    layout.save_registry(root, {
        "alice": [{"version": 1, "submitted": "t0", "fingerprint": "fa", "status": "active", "reason": None,
                   "command": "python3 /secret/host/path/bot.py", "transport": "zmq"}],
        "bob": [{"version": 1, "submitted": "t0", "fingerprint": "fb", "status": "retired", "reason": "replaced by version 2",
                 "command": "python3 bot.py", "transport": "zmq"},
                {"version": 2, "submitted": "t1", "fingerprint": "fc", "status": "active", "reason": None,
                 "command": "python3 bot.py", "transport": "zmq"}],
    })
    for number, bob in ((1, "bob.v1"), (2, "bob.v2")):
        folder = root / "batches" / f"{number:06d}"
        folder.mkdir(parents=True)
        key = make_key(folder)
        with Journal(folder, key) as j:
            for i in range(12):
                fails = [{}, {"crash": 1}] if (number, i) == (1, 3) else None
                j.append(_entry(i, ["alice.v1", bob], [1, 2] if i % 4 else [2, 1], fails))
        logs = root / "entrants" / "bob" / "v1" / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        (logs / "000001.log").write_text("bob's own output\n")
        (root / "entrants" / "alice" / "v1" / "logs").mkdir(parents=True, exist_ok=True)
        (root / "entrants" / "alice" / "v1" / "logs" / "000001.log").write_text("alice's secret plan\n")
    (root / layout.HISTORY_FILE).write_text('{"batch":"000001","ratings":{"alice.v1":[12,1600.0],"bob.v1":[12,1400.0]}}\n'
                                           '{"batch":"000002","ratings":{"alice.v1":[24,1610.0]}}\n{"torn')
    return root


def test_the_snapshot_has_the_promised_shape(tmp_path: Path) -> None:
    snap = snapshot(fake_ladder(tmp_path))
    assert snap["ladder"] | {"updated": None} == {"name": "cup", "variant": "basic", "seats": 2, "state": "open",
                                                  "games": 24, "updated": None}
    board = snap["leaderboard"]
    assert [(r["rank"], r["entrant"], r["version"]) for r in board] == [(1, "alice", 1), (2, "bob", 2)]
    assert set(board[0]) == {"rank", "entrant", "version", "rating", "low", "high", "games", "provisional", "bound", "status"}
    assert board[0]["rating"] > board[1]["rating"] and board[0]["games"] == 24 and not board[0]["provisional"]
    assert board[0]["low"] < board[0]["rating"] < board[0]["high"]
    bob = snap["entrants"]["bob"]
    assert [(v["version"], v["status"], v["games"]) for v in bob["versions"]] == [(1, "retired", 12), (2, "active", 12)]
    assert bob["versions"][0]["check_report"] is None
    assert bob["versions"][0]["rating_history"] == [[12, 1400.0]]
    assert snap["entrants"]["alice"]["versions"][0]["rating_history"] == [[12, 1600.0], [24, 1610.0]]
    recent = bob["recent_games"]
    assert recent[0]["record"] == "batches/000002/records/g000011.jsonl"
    assert recent[0]["placings"] == {"alice.v1": 1, "bob.v2": 2}
    assert bob["failures"] == [{"game": "g0003", "kind": "crash", "reason": bob["failures"][0]["reason"],
                                "log": "entrants/bob/v1/logs/000001.log"}]
    assert snap["entrants"]["alice"]["failures"] == []  # bob's crash is not charged to alice
    assert snap["final"] is None


def test_the_snapshot_holds_no_secret_no_host_path_and_no_other_entrants_log(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path)
    text = json.dumps(snapshot(root))
    assert str(tmp_path) not in text and "/secret/host" not in text and "command" not in text
    for key in root.glob("batches/*/secret.key"):
        assert key.read_bytes().hex() not in text
    # the only log named is bob's own, on bob's page; alice's is never named since she had no failure
    assert "entrants/alice/v1/logs" not in text
    assert text.count("entrants/bob/v1/logs/000001.log") == 1


def test_a_journal_line_that_does_not_verify_is_not_counted(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path)
    journal = root / "batches" / "000002" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    forged = json.loads(lines[0])
    forged["placings"] = [1, 2]  # it was [2, 1]
    journal.write_bytes(b"".join(lines[1:]) + json.dumps(forged).encode() + b"\n")
    assert snapshot(root)["ladder"]["games"] == 23


def test_the_snapshot_is_cached_until_a_file_it_reads_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.ladder import games
    from arena.ladder import snapshot as snapshot_module

    root = fake_ladder(tmp_path)
    opened: list[str] = []
    real = games.read

    def counting(folder: Path, *a: object, **k: object) -> object:
        opened.append(Path(folder).name)
        return real(folder, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(games, "read", counting)
    first = snapshot(root)
    assert sorted(opened) == ["000001", "000002"]
    opened.clear()
    assert snapshot(root) is first and opened == []  # nothing new: no journal read, no fit
    folder = root / "batches" / "000002"
    with Journal(folder, folder_key(folder) or b"") as j:
        j.append(_entry(12, ["alice.v1", "bob.v2"], [2, 1]))
    second = snapshot(root)
    assert opened == ["000002"] and second["ladder"]["games"] == 25  # only the journal that grew is read again
    opened.clear()
    reg = layout.registry(root)
    reg["bob"][1]["status"] = "suspended"
    layout.save_registry(root, reg)
    third = snapshot(root)
    assert opened == [] and third["entrants"]["bob"]["versions"][1]["status"] == "suspended"  # a registry change only
    games._cache.clear()
    assert json.dumps(third, sort_keys=True) == json.dumps(snapshot_module.compute(root), sort_keys=True)


# -- the final's size and the export ----------------------------------------------------------------

def test_the_final_is_sized_from_the_precision_goal(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path)
    s = load(root)
    s = replace(s, max_deal_sets=10_000)
    loose, why = size(root, s, ["alice.v1", "bob.v2"])
    tight, _ = size(root, replace(s, precision_elo=s.precision_elo / 2), ["alice.v1", "bob.v2"])
    # half the half width takes four times the deal-sets (1/sqrt(n)), from the ladder's own intervals
    assert "±50 Elo: the ladder's intervals" in why and 4 * loose - 4 <= tight <= 4 * loose + 4, (loose, tight, why)
    capped, why = size(root, replace(s, precision_elo=1.0), ["alice.v1", "bob.v2"])
    assert capped == s.max_deal_sets and "capped" in why


def test_export_writes_json_csv_and_an_archive_without_keys_or_logs(tmp_path: Path) -> None:
    root = fake_ladder(tmp_path)
    for folder in root.glob("batches/*"):
        (folder / "records").mkdir()
        (folder / "records" / "g000000.jsonl").write_text("{}\n")
        (folder / "logs").mkdir()
        (folder / "logs" / "x.log").write_text("log")
    written = export(root)
    out = root / "exports"
    assert json.loads((out / "results.json").read_text()) == json.loads(json.dumps(snapshot(root), sort_keys=True))
    with open(out / "leaderboard.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["rank"], r["entrant"], r["status"]) for r in rows] == [("1", "alice", "active"), ("2", "bob", "active")]
    with tarfile.open(out / "records.tar.gz") as tar:
        names = sorted(tar.getnames())
    assert names == ["batches/000001/journal.jsonl", "batches/000001/records/g000000.jsonl",
                     "batches/000002/journal.jsonl", "batches/000002/records/g000000.jsonl"]
    assert out / "final.csv" not in written


def test_a_resumed_batch_whose_version_no_longer_starts_is_closed_not_retried_forever(tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.ladder import run as ladder_run
    from arena.tournament import runner

    root = fake_ladder(tmp_path)
    entrants = layout.registry(root)
    folder = ladder_run.new_batch(root, load(root), 3, [("alice.v1", "bob.v2")], entrants)
    with Journal(folder, folder_key(folder) or b"") as j:
        j.append(_entry(0, ["alice.v1", "bob.v2"], [1, 2]))
    calls = []

    def no_start(t: object, out: Path, resume: bool = False, **_kw: object) -> None:
        calls.append((out, resume))
        raise runner.BotProblems("1 bot(s) did not start", ["bot 'bob.v2' (python3 bot.py) did not start: it exited"])

    monkeypatch.setattr(runner, "run", no_start)
    stats = ladder_run.run_ladder(root, max_batches=5, idle_exit=True)
    assert calls == [(folder, True)]  # resumed once, then closed: the next batch has too few versions
    assert (folder / ladder_run.CLOSED).read_text().startswith("closed: bob.v2 did not start")
    bob = layout.registry(root)["bob"][-1]
    assert bob["status"] == "suspended" and bob["reason"].startswith("did not start: it exited")
    assert stats.suspended == ["bob.v2"] and snapshot(root)["ladder"]["games"] == 25


def test_a_submission_killed_during_its_check_is_refused_by_the_next_one(tmp_path: Path) -> None:
    root = ladder(tmp_path, **{"check = true": "check = false"})
    stale = {"version": 1, "submitted": "2026-01-01T00:00:00+00:00", "fingerprint": "", "status": "checking",
             "reason": None, "command": "python3 bot.py", "transport": "zmq"}
    layout.save_registry(root, {"alice": [stale]})
    out = submit(root, bot_folder(tmp_path), "alice")
    assert out.accepted and out.version == 2
    versions = layout.registry(root)["alice"]
    assert [(v["status"], v["reason"]) for v in versions] == [("refused", "the check was interrupted"), ("active", None)]


def test_a_run_killed_after_a_batch_s_last_game_does_its_bookkeeping_next_time(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.ladder import run as ladder_run

    root = fake_ladder(tmp_path)
    folder = ladder_run.new_batch(root, load(root), 3, [("alice.v1", "bob.v2")], layout.registry(root))
    with Journal(folder, folder_key(folder) or b"") as j:
        for i in range(4):  # the whole batch: one table, two deal-sets, two seatings
            j.append(_entry(i, ["alice.v1", "bob.v2"], [1, 2], [{}, {"timeout": 1}]))
    (folder / "logs" / "worker0").mkdir(parents=True)
    (folder / "logs" / "worker0" / "bob.v2.log").write_text("bob's output in batch 3\n")
    monkeypatch.setattr(pairing, "choose", lambda *a, **k: [])
    before = (root / layout.HISTORY_FILE).read_text()
    ladder_run.run_ladder(root, idle_exit=True)
    lines = (root / layout.HISTORY_FILE).read_text()[len(before):].splitlines()
    assert lines[0] == "" and json.loads(lines[1])["batch"] == "000003"  # after the torn line, on a line of its own
    assert (root / "entrants" / "bob" / "v2" / "logs" / "000003.log").read_text() == "bob's output in batch 3\n"
    bob = layout.registry(root)["bob"][-1]
    assert bob["status"] == "suspended" and "4 games with a failure (the last: timeout)" in bob["reason"]
    ladder_run.run_ladder(root, idle_exit=True)  # done once: not again
    assert (root / layout.HISTORY_FILE).read_text().count('"batch":"000003"') == 1
