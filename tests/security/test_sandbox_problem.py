"""Where the sandbox cannot start, `arena` says so in one sentence, with how to opt out (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]


@pytest.mark.parametrize("bwrap", ["/bin/false", "/nonexistent/bwrap"])
def test_a_sandbox_that_cannot_start_is_one_sentence_with_the_way_out(tmp_path, bwrap):
    done = subprocess.run([sys.executable, "-m", "arena", "play", "basic", "greedy", "greedy",
                           "--record", str(tmp_path / "r.jsonl")], capture_output=True, text=True, timeout=50,
                          env={**os.environ, "ARENA_BWRAP": bwrap})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "sandbox" in lines[0] and "--no-sandbox" in lines[0]
    assert not (tmp_path / "r.jsonl").exists()
