"""An entrant's own ``limits`` are bounded by the organiser's (issue 21, round four): the tournament's
``[limits]`` is every bot's default and the ceiling of what its entry may ask; without it, built-in
ceilings hold.  The resolved copy keeps ``[limits]`` so the workers' re-validation agrees."""

from __future__ import annotations

from pathlib import Path

from arena.tournament.config import LIMIT_CEILINGS, read_resolved, validate_text, write_resolved

BASE = 'name = "t"\nvariant = "basic"\nseats = 2\n'
BOTS = ('[[bots]]\nname = "a"\ncommand = "greedy"\n{limits}\n'
        '[[bots]]\nname = "b"\ncommand = "random"\n')


def check(tmp_path: Path, top: str = "", limits: str = ""):
    text = BASE + top + BOTS.format(limits=limits)
    return validate_text(text, base_dir=tmp_path, file=str(tmp_path / "t.toml"))


def test_an_entry_asking_more_than_the_builtin_ceiling_is_refused_with_its_key(tmp_path):
    _t, errors = check(tmp_path, limits="limits = { memory_mb = 100000000, processes = 100000000, data_mb = 999999 }")
    text = "\n".join(str(e) for e in errors)
    for key in ("memory_mb", "processes", "data_mb"):
        assert f"bots[0].limits.{key}: expected at most {LIMIT_CEILINGS[key]}" in text, text
    assert "t.toml:" in text  # with its line


def test_the_organisers_limits_raise_the_ceiling_and_fill_what_an_entry_leaves_unset(tmp_path):
    t, errors = check(tmp_path, top="[limits]\nmemory_mb = 8192\ncpu_seconds = 60\n",
                      limits="limits = { memory_mb = 6000 }")
    assert not errors, errors
    assert t is not None
    a, b = t.bots
    assert (a.limits.memory_mb, a.limits.cpu_seconds) == (6000, 60)
    assert (b.limits.memory_mb, b.limits.cpu_seconds) == (8192, 60)
    _t, errors = check(tmp_path, top="[limits]\nmemory_mb = 512\n", limits="limits = { memory_mb = 1024 }")
    assert any("expected at most 512" in str(e) for e in errors), errors


def test_the_resolved_copy_keeps_the_ceiling_so_a_worker_reads_it_back(tmp_path):
    t, errors = check(tmp_path, top="[limits]\nmemory_mb = 8192\n", limits="limits = { memory_mb = 6000 }")
    assert t is not None and not errors
    out = tmp_path / "results"
    out.mkdir()
    write_resolved(t, out)
    again = read_resolved(out)
    assert again.limits.memory_mb == 8192 and again.bot("a").limits.memory_mb == 6000


def test_an_unknown_key_in_limits_is_refused(tmp_path):
    _t, errors = check(tmp_path, top="[limits]\nmemory = 8192\n")
    assert any("limits" in str(e) and "memory" in str(e) for e in errors), errors
