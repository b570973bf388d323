"""The one place that derives the timeouts around a command from the configuration.

A shell command may run for SHELL.MAX_TIMEOUT; the MCP tool call around it, and the agent's wait for
that tool call, each allow :data:`TIMEOUT_MARGIN` more, so the innermost timeout fires first and its
error (which says what timed out) reaches the agent.
"""

from __future__ import annotations

from starweave.config.models import SystemConfig

#: Seconds by which each wrapping timeout outlasts the one it wraps.
TIMEOUT_MARGIN = 10.0


def tool_timeout(system: SystemConfig) -> float:
    """Seconds one MCP tool call may take: MCP_TOOL_TIMEOUT, but never less than the shell's longest
    command plus the margin."""
    return max(system.mcp_tool_timeout, system.shell.max_timeout + TIMEOUT_MARGIN)


def command_timeout(system: SystemConfig) -> float:
    """Seconds an agent waits for one dispatched command: the tool call's timeout plus the margin."""
    return tool_timeout(system) + TIMEOUT_MARGIN
