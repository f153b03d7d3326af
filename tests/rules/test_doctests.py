"""The examples in the docstrings of the small pure functions a newcomer reads first (melds, the schedule's
designs, failure overrides) run as tests, so they stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["arena.rules.melds", "arena.tournament.schedule", "arena.failures"]


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples left"
    assert result.failed == 0
