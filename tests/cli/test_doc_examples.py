"""Every shell example of README.md and protocol/SPEC.md, run as a user types it, from a fresh folder.

The examples (``tests/doc_examples.py``: fenced ``sh`` blocks and ``$ `` prompts) of one document run in
order in one shell session (a ``cd`` carries on to the next command): the SPEC's first-bot walkthrough
(its section 13) from an empty folder, writing the files it says to save; everything else from a fresh
copy of the checkout's files, as after a clone.  Each must exit 0 and print what the document shows,
where it shows output.  The commands that cannot run here are in ``SKIP``, each with its reason; a test
checks that list names exactly the examples that are not run, so it cannot go stale.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.doc_examples import Example, examples, shows

DOCS = ("README.md", "protocol/SPEC.md")
# (document, the command's start): why it is not run here.
SKIP = {
    ("README.md", "apt-get update"):
        "installs system packages and runs the whole suite (this test included): it is CI itself",
    ("README.md", 'python3 -m pip install -e ".[cluster]"'):
        "installs packages from the network; the test extra already holds dask",
    ("README.md", "dask scheduler"): "a server that runs until stopped, on another machine",
    ("README.md", "dask worker tcp://HOST:8786"): "HOST is a placeholder for the scheduler's machine",
    ("README.md", "arena run league.toml --cluster tcp://HOST:8786"):
        "HOST and league.toml are placeholders for the reader's cluster and league",
    ("README.md", 'arena match "python3 v2.py" "python3 v1.py"'):
        "v1.py and v2.py are placeholders for two versions of the reader's bot",
    ("protocol/SPEC.md", "npm ci --prefix sample_bots/js"):
        "needs the npm registry; the checkout's installed node_modules is linked into the copy instead",
}
# An install in front of a command is not run (it would reinstall the package under test); the rest is.
INSTALL = re.compile(r"^python3 -m pip install -e \.(?:\[[a-z,]+\])?(?: --config-settings editable_mode=compat)?\s*&&\s*")
WALKTHROUGH = "### 13.1 Step by step"
COMMENT = re.compile(r"\s+# (.*)$")


def comment_output(command: str) -> tuple[int, str | dict[str, Any]] | None:
    """What a command's trailing comment shows it prints, when it shows output: a JSON object with
    ``...`` for fields left out (exit 0, those fields), or ``invalid: WHY`` (exit 1, WHY printed)."""
    m = COMMENT.search(command)
    if not m:
        return None
    shown = m.group(1)
    if shown.startswith("{"):
        return 0, json.loads(shown.replace(", ...}", "}"))
    if shown.startswith("invalid: "):
        return 1, shown.removeprefix("invalid: ")
    return None


def all_examples() -> list[Example]:
    return [e for doc in DOCS for e in examples(ROOT / doc, doc)]


def skip_reason(e: Example) -> str | None:
    return next((why for (doc, start), why in SKIP.items() if e.doc == doc and e.command.startswith(start)), None)


def in_walkthrough(e: Example) -> bool:
    if e.doc != "protocol/SPEC.md":
        return False
    text = (ROOT / e.doc).read_text(encoding="utf-8").splitlines()
    start = text.index(WALKTHROUGH)
    end = next(i for i in range(start + 1, len(text)) if text[i].startswith("### "))
    return start < e.line <= end


RUN = [e for e in all_examples() if skip_reason(e) is None]


def test_the_skip_list_names_exactly_the_examples_that_are_not_run():
    every = all_examples()
    assert len(every) > 25 and RUN
    for (doc, start), why in SKIP.items():
        hits = [e for e in every if e.doc == doc and e.command.startswith(start)]
        assert len(hits) == 1, f"SKIP entry {doc}: {start!r} matches {len(hits)} examples"
        assert why
    assert any(in_walkthrough(e) and e.file == "minimal.py" for e in RUN)  # the walkthrough writes its bot


class Session:
    """One document's shell: a folder, and the folder its last `cd` left it in."""

    def __init__(self, root: Path) -> None:
        self.cwd = root

    def run(self, command: str, timeout: float = 100) -> tuple[int, str]:
        state = self.cwd / ".." / f".cwd-{os.getpid()}"
        script = f"{command}\n__rc=$?\npwd > {state.resolve()}\nexit $__rc\n"
        p = subprocess.Popen(["bash", "-c", script], cwd=self.cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True,
                             env=os.environ | {"COLUMNS": "120", "NO_COLOR": "1"})
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            return -9, out + f"\n(timed out after {timeout} s)"
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        try:
            self.cwd = Path(state.read_text().strip())
        except OSError:
            pass
        return p.returncode, out


def fresh_checkout(dest: Path) -> Path:
    """The checkout's tracked files (as a clone has them) in ``dest``, with the JS bot's packages linked."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in files.stdout.split("\0"):
        if name and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    modules = ROOT / "sample_bots" / "js" / "node_modules"
    if modules.is_dir():  # a copy: a link would lead outside the folder the bot's sandbox shows
        shutil.copytree(modules, dest / "sample_bots" / "js" / "node_modules", symlinks=True)
    return dest


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Session]:
    empty = tmp_path_factory.mktemp("walkthrough") / "work"
    empty.mkdir()
    return {"walkthrough": Session(empty),
            **{doc: Session(fresh_checkout(tmp_path_factory.mktemp("clone") / "arena")) for doc in DOCS}}


@pytest.mark.slow
@pytest.mark.xdist_group("doc-sessions")  # one shell per document: its examples run in order, in one worker
@pytest.mark.timeout(300)
@pytest.mark.parametrize("ex", RUN, ids=lambda e: e.id)
def test_the_example_runs_and_prints_what_the_document_shows(ex: Example, sessions: dict[str, Session],
                                                             no_leaks):
    session = sessions["walkthrough" if in_walkthrough(ex) else ex.doc]
    if ex.file is not None:
        (session.cwd / ex.file).write_text(ex.command, encoding="utf-8")
        return
    rc, out = session.run(INSTALL.sub("", ex.command), timeout=250)
    shown = comment_output(ex.command)
    want_rc = shown[0] if shown else 0
    assert rc == want_rc, f"{ex.doc}:{ex.line}: `{ex.command}` exited {rc}:\n{out[-3000:]}"
    if shown and isinstance(shown[1], dict):
        printed = json.loads(out)
        assert {k: printed.get(k) for k in shown[1]} == shown[1], out
    elif shown:
        assert str(shown[1]) in out, out
    if ex.output:
        missing = shows(ex.output, out)
        assert missing is None, f"{ex.doc}:{ex.line}: the output lacks {missing!r}:\n{out[-3000:]}"
