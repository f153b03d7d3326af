"""The suite's own layout: test modules sit in the folder of the layer they test (the suite's own tests
at the top), and no test module imports another (what tests share lives in helper modules)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
LAYERS = {"rules", "protocol", "referee", "security", "tournament", "ladder", "cli", "report", "env"}
SUITE_OWN = {"test_collection_order.py", "test_tier_guard.py", "test_layout.py"}
_NAMES_A_TEST_MODULE = re.compile(r"\btests(\.\w+)*\.test_")


def all_test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_every_test_module_is_in_a_layer_folder() -> None:
    misplaced = [str(p.relative_to(TESTS)) for p in all_test_modules()
                 if not (p.parent == TESTS and p.name in SUITE_OWN) and p.relative_to(TESTS).parts[0] not in LAYERS]
    assert misplaced == []


def test_no_test_module_imports_another() -> None:
    found = []
    for path in all_test_modules():
        text = path.read_text()
        if not _NAMES_A_TEST_MODULE.search(text):
            continue  # parsed only where such an import may be: parsing every module costs ~1 s of CPU
        for node in ast.walk(ast.parse(text)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.relative_to(TESTS)}: {n}" for n in names
                      if n.startswith("tests.") and n.split(".")[-1].startswith("test_")]
    assert found == []
