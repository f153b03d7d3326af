"""The parallel tier's order (tests/conftest.py): tests are collected longest first (the LONGEST_FIRST
ones in that order, the other slow ones, then the fast, each file's own order kept), and every test of
a ONE_WORKER module carries one xdist group, so one worker runs them together."""

from __future__ import annotations

from typing import Any

import pytest

from tests import conftest
from tests.conftest import LONGEST_FIRST, ONE_WORKER, collection_rank


class Item:
    """What the hook reads of a test: its id and its markers."""

    def __init__(self, nodeid: str, *markers: str) -> None:
        self.nodeid = nodeid
        self.markers: dict[str, Any] = {m: pytest.Mark(m, (), {}) for m in markers}

    def get_closest_marker(self, name: str) -> Any:
        return self.markers.get(name)

    def add_marker(self, mark: Any) -> None:
        self.markers[mark.name] = mark.mark


def order(items: list[Any]) -> list[Any]:
    hook = conftest.pytest_collection_modifyitems(items)  # a hook wrapper: its sort runs after the yield
    next(hook)
    with pytest.raises(StopIteration):
        next(hook)
    return items


def test_the_longest_tests_come_first_then_the_slow_then_the_fast_each_file_in_its_order() -> None:
    longest, second = LONGEST_FIRST[0], LONGEST_FIRST[1]
    items = [Item("tests/a.py::test_fast"), Item("tests/a.py::test_slow", "slow"),
             Item(f"{second}::test_x", "slow"), Item("tests/b.py::test_slow", "slow"),
             Item(f"{longest}[one]", "slow"), Item(f"{second}::test_fast_here"), Item(f"{longest}[two]", "slow")]
    got = [i.nodeid for i in order(items)]
    assert got == [f"{longest}[one]", f"{longest}[two]", f"{second}::test_x", "tests/a.py::test_slow",
                   "tests/b.py::test_slow", "tests/a.py::test_fast", f"{second}::test_fast_here"]


def test_a_one_worker_modules_tests_share_a_group_and_a_test_keeps_its_own() -> None:
    module = ONE_WORKER[0]
    mine, own, other = Item(f"{module}::test_a", "slow"), Item(f"{module}::test_b", "xdist_group"), \
        Item("tests/elsewhere.py::test_c", "slow")
    order([mine, own, other])
    assert mine.get_closest_marker("xdist_group").args == (module,)
    assert own.get_closest_marker("xdist_group").args == ()  # its own group, not replaced
    assert other.get_closest_marker("xdist_group") is None


def test_this_session_is_in_that_order(request: pytest.FixtureRequest) -> None:
    items = request.session.items
    assert [collection_rank(i) for i in items] == sorted(collection_rank(i) for i in items)
    for item in items:
        if item.nodeid.split("::", 1)[0] in ONE_WORKER:
            assert item.get_closest_marker("xdist_group") is not None, item.nodeid
