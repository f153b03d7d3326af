"""The replay viewer's page, without a browser: the record embedded as its file says, self-contained,
the clock of its tournament, and clear errors (docs/ARCHITECTURE.md section 8)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.record_check import RecordError
from arena.report import write_viewer
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"


def embedded(html: str) -> dict:
    m = re.search(r"<script>window\.ARENA_RECORD = (.*?);</script>", html, re.S)
    assert m
    return json.loads(m.group(1))


def test_the_page_embeds_the_record_entry_for_entry_and_needs_no_other_file(tmp_path: Path):
    record = GOLDEN / "international.jsonl"
    out = write_viewer(record, tmp_path / "v.html")
    html = out.read_text()
    lines = [json.loads(x) for x in record.read_text().splitlines() if x.strip()]
    data = embedded(html)
    assert data["header"] == lines[0] and data["entries"] == lines[1:]
    assert data["clock"] is None  # not in a results folder
    assert "<script src=" not in html and "<link" not in html and "ArenaTable" in html


def test_the_clock_comes_from_the_tournament_of_the_records_folder(tmp_path: Path):
    records = tmp_path / "results" / "records"
    records.mkdir(parents=True)
    (tmp_path / "results" / "tournament.toml").write_text('name = "x"\n[time]\ndecision_ms = 1234\nbank_ms = 5\n')
    record = records / "g000001.jsonl"
    record.write_bytes((GOLDEN / "basic.jsonl").read_bytes())
    data = embedded(write_viewer(record).read_text())
    assert data["clock"] == {"decision_ms": 1234, "bank_ms": 5}
    assert (records / "g000001.html").is_file()


def test_names_chosen_by_bots_cannot_break_out_of_the_page(tmp_path: Path):
    lines = (GOLDEN / "basic.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["seats"] = ["</script><script>alert(1)</script>", "<b>x</b>", "c"]
    record = tmp_path / "r.jsonl"
    record.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    html = write_viewer(record).read_text()
    assert "<script>alert(1)" not in html and "<b>x</b>" not in html
    assert embedded(html)["header"]["seats"][0] == "</script><script>alert(1)</script>"


def test_a_file_that_is_not_a_record_is_one_sentence(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record": 2}\nnot json\n')
    with pytest.raises(RecordError):
        write_viewer(bad)
    got = CliRunner().invoke(app, ["view", str(bad)])
    assert got.exit_code == 2 and got.output.startswith("error: ") and "Traceback" not in got.output
    got = CliRunner().invoke(app, ["view", str(GOLDEN / "czech.jsonl"), "-o", str(tmp_path / "c.html")])
    assert got.exit_code == 0 and (tmp_path / "c.html").is_file()


def test_timed_entries_are_embedded_as_the_file_has_them(tmp_path: Path):
    """A record of `arena play` or `arena run` carries "ms" on draws and plays; `arena view` embeds those
    entries as in the file (the shape the report's replay pages embed and table_state.js reads)."""
    lines = [json.loads(x) for x in (GOLDEN / "basic.jsonl").read_text().splitlines() if x.strip()]
    for i, e in enumerate(lines[1:], start=1):
        if e["e"] in ("draw", "play"):
            lines[i] = e | {"ms": 0.5 + i}
    record = tmp_path / "timed.jsonl"
    record.write_text("".join(json.dumps(x) + "\n" for x in lines))
    data = embedded(write_viewer(record).read_text())
    assert data["entries"] == lines[1:]
    assert all("entry" not in e for e in data["entries"])
