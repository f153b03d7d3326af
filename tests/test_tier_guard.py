"""The tier guard (tests/tier_guard.py) fails a fast-tier test that starts a process, has a fixture that
does, or takes long, and names the marker to add; a marked test may do all of it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

SUITE = '''
import os, subprocess, time
import pytest

def test_quick():
    assert sum(range(100)) == 4950

def test_starts_a_process():
    subprocess.run(["true"], check=True)

def test_forks():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)

@pytest.fixture
def helper():
    p = subprocess.Popen(["true"])
    yield
    p.wait()

def test_whose_fixture_starts_a_process(helper):
    pass

def test_burns_cpu():
    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass

def test_sleeps():
    time.sleep(0.4)

@pytest.mark.slow
def test_marked_slow():
    subprocess.run(["true"], check=True)
    time.sleep(0.4)

@pytest.mark.timing
def test_marked_timing():
    subprocess.run(["true"], check=True)
'''


@pytest.mark.slow
def test_the_guard_fails_fast_tier_tests_that_start_processes_or_take_long(tmp_path):
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARENA_GUARD_CPU_S": "0.2", "ARENA_GUARD_OWN_S": "0.2"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.tier_guard", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "-rA", "test_suite.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, start_new_session=True)
    out = done.stdout
    outcome = {line.split()[1].split("::")[-1]: line.split()[0] for line in out.splitlines()
               if line.startswith(("PASSED ", "FAILED ", "ERROR "))}
    assert outcome == {"test_quick": "PASSED", "test_starts_a_process": "FAILED", "test_forks": "FAILED",
                       "test_whose_fixture_starts_a_process": "ERROR", "test_burns_cpu": "FAILED",
                       "test_sleeps": "FAILED", "test_marked_slow": "PASSED", "test_marked_timing": "PASSED"}, out
    assert "test_starts_a_process is in the fast tier but it starts a process (subprocess._fork_exec): " \
           "mark it @pytest.mark.slow" in out
    assert "test_forks is in the fast tier but it starts a process (os.fork)" in out
    assert "test_whose_fixture_starts_a_process is in the fast tier but its fixtures start a process" in out
    assert "test_burns_cpu is in the fast tier but it took 0.4 s of CPU (the fast tier allows 0.2 s)" in out
    assert "test_sleeps is in the fast tier but it took 0.4 s not counting waits for a CPU" in out
