"""A real Dask cluster on loopback for tests and the bench: ``dask scheduler`` and ``dask worker`` processes.

Each process is started in its own process group (``start_new_session``) and ``LoopbackCluster.close``
kills every group, whatever state the processes are in; use it as a context manager so that happens
on every exit path.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

STARTUP_S = 60.0


def _dask() -> list[str]:
    exe = shutil.which("dask")
    return [exe] if exe else [sys.executable, "-m", "dask"]


class LoopbackCluster:
    """A scheduler and ``workers`` single-threaded workers (no nanny: the worker IS the process) on 127.0.0.1."""

    def __init__(self, folder: Path, workers: int = 2) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.procs: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []
        self.address = ""
        self._n = workers

    def __enter__(self) -> LoopbackCluster:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _spawn(self, args: list[str], name: str) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}.log", "wb")
        env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False",
               "DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": "5s"}
        p = subprocess.Popen(_dask() + args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env=env, cwd=self.folder)
        log.close()
        self.procs.append(p)
        return p

    def _start(self) -> None:
        info = self.folder / "scheduler.json"
        self._spawn(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(info)], "scheduler")
        deadline = time.monotonic() + STARTUP_S
        while not info.exists() or not info.read_text().strip():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the dask scheduler did not start; see {self.folder / 'scheduler.log'}")
            time.sleep(0.1)
        time.sleep(0.1)
        self.address = json.loads(info.read_text())["address"]
        for _ in range(self._n):
            self.add_worker()
        self.wait_workers(self._n)

    def add_worker(self) -> subprocess.Popen[bytes]:
        n = len(self.workers)
        local = self.folder / f"worker{n}"
        p = self._spawn(["worker", self.address, "--nthreads", "1", "--nworkers", "1", "--no-nanny",
                         "--no-dashboard", "--host", "127.0.0.1", "--local-directory", str(local),
                         "--name", f"w{n}"], f"worker{n}")
        self.workers.append(p)
        return p

    def wait_workers(self, n: int) -> None:
        """Wait until the scheduler knows ``n`` workers."""
        from distributed import Client

        with Client(self.address, timeout=STARTUP_S, set_as_default=False) as c:
            c.wait_for_workers(n, timeout=STARTUP_S)

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker ``i``'s process (its bots die with it: ``PR_SET_PDEATHSIG``)."""
        try:
            os.kill(self.workers[i].pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.workers[i].wait(5)

    def close(self) -> None:
        for p in reversed(self.procs):
            _killpg(p, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for p in self.procs:
            _killpg(p, signal.SIGKILL)
            try:
                p.wait(2)
            except subprocess.TimeoutExpired:
                pass


def _killpg(p: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
