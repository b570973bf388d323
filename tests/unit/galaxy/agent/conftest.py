"""Fixtures of the ConstellationAgent tests (defined in agent_testkit)."""

from unit.galaxy.agent.agent_testkit import (  # noqa: F401 (pytest finds fixtures by name)
    bus,
    editor,
    editor_dispatcher,
    make_agent,
    recorder,
)
