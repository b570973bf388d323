"""Settings for the whole suite."""

from __future__ import annotations

import os
import tempfile

import pytest

# Starweave remembers every workspace it hands to an agent (starweave.config.known_workspaces) in
# $XDG_STATE_HOME; the suite keeps that record (and device tokens) out of the user's home, and
# subprocesses inherit it. Each xdist worker gets a folder of its own (they inherit the controller's).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="starweave-test-state-")
else:
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="starweave-test-state-"))

# Tests that share one expensive thing run on one xdist worker (``--dist loadgroup``), first: the
# hostile suite computes every verdict in one session fixture (over its own isolated workers), then
# the desktop tests, which share one X display and its applications. They follow each other on that
# worker because the hostile suite loads both cores, and an accessibility walk of an application
# is bounded in seconds.


def _group(item: pytest.Item) -> str | None:
    """The xdist group of ``item``, if it needs one."""
    if item.nodeid.startswith("tests/hostile/") and "hostile_verdicts" in getattr(item, "fixturenames", ()):
        return "hostile"
    if "desktop_session" in getattr(item, "fixturenames", ()):
        return "desktop"
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the grouped tests first (the longest chains start at once) and mark their group."""
    groups: dict[str | None, list[pytest.Item]] = {"hostile": [], "desktop": [], None: []}
    for item in items:
        name = _group(item)
        if name:
            item.add_marker(pytest.mark.xdist_group("heavy"))
        groups[name].append(item)
    items[:] = groups["hostile"] + groups["desktop"] + groups[None]
