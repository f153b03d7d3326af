"""The table of failure kinds (arena/failures.py) and everything that reads it agree."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

import pytest

from arena import failures
from arena.failures import FAILURE_KINDS, GONE, POLICIES, RESTART_AFTER, TABLE, column, parse_override
from arena.settings import FailurePolicy
from protocol.messages import ERROR_KINDS

ROOT = Path(__file__).resolve().parents[2]


def test_failure_policy_has_one_field_per_row_with_its_default():
    kinds = [f.name for f in fields(FailurePolicy) if f.name != "strikes"]
    assert kinds == list(FAILURE_KINDS)
    policy = FailurePolicy()
    for row in TABLE:
        assert policy.policy(row.kind) == row.default
    with pytest.raises(KeyError):
        policy.policy("strikes")


def test_what_a_bot_is_told_is_a_protocol_error_kind_unless_it_is_gone():
    for row in TABLE:
        if row.gone:
            assert row.told is None, row.kind
        else:
            assert row.told in ERROR_KINDS, row.kind
    assert set(GONE) == {"crash", "disconnect", "resource"}
    assert set(RESTART_AFTER) == {"crash", "disconnect", "resource", "timeout"}


def test_protocol_does_not_declare_the_kinds_again():
    import protocol
    import protocol.messages

    assert not hasattr(protocol.messages, "FAILURE_KINDS") and not hasattr(protocol, "FAILURE_KINDS")


def test_readme_failure_table_is_the_table():
    text = (ROOT / "README.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \| `(\w+)` \|$", text, re.M)
    readme = [(k, what, default) for k, what, default in rows if k in failures.KINDS]
    assert readme == [(r.kind, r.what, r.default) for r in TABLE]


def test_on_kind_policy_parses_every_pair_and_refuses_others():
    for kind in FAILURE_KINDS:
        for policy in POLICIES:
            assert parse_override(f"{kind}={policy}") == (kind, policy)
    for bad in ("strikes=3", "illegal", "illegal=ignore", "=retry", "Illegal=retry"):
        with pytest.raises(ValueError, match="expected KIND=POLICY"):
            parse_override(bad)


def test_standings_column_of_a_kind_and_of_one_the_table_no_longer_has():
    assert [column(k) for k in FAILURE_KINDS][:3] == ["Timeout", "Crash", "Disconnect"]
    assert column("gremlin") == "Gremlin"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_import_cycle_between_the_cli_and_the_referee():
    for path in (ROOT / "arena" / "referee").glob("*.py"):
        bad = {n for n in _imports(path) if n == "arena.cli" or n.startswith("arena.tournament")}
        assert not bad, (path.name, bad)
    assert not {n for n in _imports(ROOT / "arena" / "failures.py") if n.startswith("arena")}
