"""Desktop service sessions: a HostAgent (handing subtasks to AppAgents) reasons on the agent server
while the desktop UI servers (UICollector, HostUIExecutor, AppUIExecutor, ...) run on the device.

The same HostAgent as ``starweave run --agent host``; only the dispatcher differs. Each agent's
commands carry its name (RoutedDispatcher), so the device client picks that agent's tool set from
its mcp.yaml: the Linux backend (AT-SPI + X11) on a ``linux-desktop`` device, UI Automation on a
``windows`` one.
"""

from __future__ import annotations

import time
from typing import Any

from starweave.session.desktop_runner import HOST_NAME, DesktopOptions, host_result, make_host_agent
from starweave.session.logs import SessionLogs
from starweave.session.service_base import DeviceServiceSession


class HostServiceSession(DeviceServiceSession):
    """One task of a desktop device, run by a HostAgent on the server."""

    agent_name = HOST_NAME

    async def play(self, logs: SessionLogs, started: float) -> dict[str, Any]:
        """Run the HostAgent and its AppAgents to the end of the round."""
        config = self.settings.config
        agent = make_host_agent(
            config,
            self.models.llm,
            self.models.app_llm,
            self.view,
            self.settings.auto_approve,
            DesktopOptions(),
        )
        session = await self.run_agent(agent, logs)
        return host_result(session, logs.path, time.monotonic() - started)
