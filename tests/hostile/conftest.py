"""Fixtures of the hostile suite (see hostile.session): the selected items are collected first, so
``-k`` or a single test id runs only what it names; they then run together, split over
``HOSTILE_WORKERS`` isolated workers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hostile.isolation import available
from hostile.session import SELECTED, Verdicts
from hostile.supervisor import Key


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected what the session will not run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remember which hostile (mode, kind, case) triples this session runs."""
    selected: set[Key] = set()
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is not None and "hostile_case" in spec.params:
            selected.add(
                (spec.params["hostile_mode"], spec.params["hostile_kind"], spec.params["hostile_case"])
            )
    config.stash[SELECTED] = selected


@pytest.fixture(scope="session")
def hostile_verdicts(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Verdicts]:
    """The session's verdicts (skips where an isolated root cannot be built)."""
    why = available()
    if why:
        pytest.skip(f"the hostile suite needs an isolated root: {why}")
    yield Verdicts(pytestconfig, str(tmp_path_factory.mktemp("hostile-logs")))
