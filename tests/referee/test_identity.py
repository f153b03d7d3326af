"""Identity leases (arena/referee/identity.py) in a folder of their own: a key keeps its uid across
referees, a keyless lease whose referee ended is forgotten, and an allocation reads only its own
key's index and the keyless markers, however many leases earlier data folders left."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.referee import identity

FIRST = 1_999_000_000


@pytest.fixture
def leases(tmp_path, monkeypatch):
    monkeypatch.setattr(identity, "LEASES", tmp_path)
    monkeypatch.setattr(identity, "_held", {})
    monkeypatch.setenv("ARENA_UID_RANGE", f"{FIRST}-{FIRST + 999_999}")
    return tmp_path


def reads_under(folder: Path, monkeypatch) -> list[Path]:
    seen: list[Path] = []
    real = Path.read_text

    def counted(self: Path, *a, **k) -> str:
        if self.is_relative_to(folder):
            seen.append(self)
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", counted)
    return seen


def test_a_key_keeps_its_uid_and_an_allocation_reads_only_its_own_lease(leases, monkeypatch):
    for uid in range(FIRST, FIRST + 2_000):  # what 2,000 earlier data folders leave behind
        (leases / f"{uid}.lease").write_text(f"data:/gone/{uid}")
    seen = reads_under(leases, monkeypatch)
    first = identity.allocate("data:/here")
    assert not FIRST <= first.uid < FIRST + 2_000  # their uids are still theirs
    monkeypatch.setattr(identity, "_held", {})  # as another referee would look it up
    assert identity.allocate("data:/here") == first
    assert len(seen) <= 4, seen  # the key's index and its lease, twice: not 2,000 leases
    assert (leases / f"{first.uid}.lease").read_text() == "data:/here"


def test_a_keyless_lease_is_forgotten_once_its_referee_ended(leases):
    stale = FIRST + 5
    (leases / f"{stale}.lease").write_text("once:ended")  # no one holds its lock: its referee ended
    (leases / f"once-{stale}").touch()
    a, b = identity.allocate(), identity.allocate()
    assert a != b
    assert not (leases / f"{stale}.lease").exists() and not (leases / f"once-{stale}").exists()
    assert (leases / f"once-{a.uid}").exists()  # held by this process: kept
    identity.allocate()
    assert (leases / f"{a.uid}.lease").read_text().startswith("once:")


def test_a_key_whose_uid_was_taken_by_another_key_gets_a_new_one(leases):
    first = identity.allocate("data:/one")
    (leases / f"{first.uid}.lease").write_text("data:/other")  # the lease went to another key since
    identity._held.clear()
    assert identity.allocate("data:/one") != first
