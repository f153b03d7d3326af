"""The examples in the docstrings of the small pure functions a newcomer reads first (melds, the schedule's
designs, failure overrides) run as tests, so they stay true.

The docstrings are read from each module's source file (a module compiled with mypyc keeps none that
doctest can find) and their examples run against the module as imported, compiled or not."""

from __future__ import annotations

import ast
import doctest
import importlib
from pathlib import Path

import pytest

import arena

MODULES = ["arena.rules.melds", "arena.tournament.designs", "arena.failures"]
ROOT = Path(arena.__file__).resolve().parent.parent


def docstrings(source: str) -> list[tuple[str, str, int]]:
    """(name, docstring, line) of the module and of every class and function in ``source``."""
    tree = ast.parse(source)
    found = [("module", ast.get_docstring(tree, clean=False), 0)]
    found += [(node.name, ast.get_docstring(node, clean=False), node.lineno) for node in ast.walk(tree)
              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return [(name, doc, line) for name, doc, line in found if doc]


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    source = ROOT.joinpath(*name.split(".")).with_suffix(".py")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    parser = doctest.DocTestParser()
    for where, doc, line in docstrings(source.read_text()):
        runner.run(parser.get_doctest(doc, dict(vars(module)), f"{name}.{where}", str(source), line))
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{name} has no examples left"
    assert result.failed == 0
