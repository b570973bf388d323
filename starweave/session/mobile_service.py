"""Phone service sessions: the MobileAgent reasons on the agent server while its servers
(MobileDataCollector, MobileExecutor) run in the device client, next to the phone's adb.

The same MobileAgent as ``starweave run --agent mobile``; only the dispatcher differs. Its commands
carry the agent's name, so the device client picks the MobileAgent entry of its mcp.yaml.
"""

from __future__ import annotations

import time
from typing import Any

from starweave.agents.mobile.tools import AGENT_NAME
from starweave.session.logs import SessionLogs
from starweave.session.mobile_runner import make_mobile_agent
from starweave.session.runner import session_result
from starweave.session.service_base import DeviceServiceSession


class MobileServiceSession(DeviceServiceSession):
    """One task of a phone, run by a MobileAgent on the server."""

    agent_name = AGENT_NAME

    async def play(self, logs: SessionLogs, started: float) -> dict[str, Any]:
        """Run the MobileAgent to the end of its round."""
        agent = make_mobile_agent(self.settings.config, self.llm, self.view, self.settings.auto_approve)
        session = await self.run_agent(agent, logs)
        return {**session_result(session, logs.path, time.monotonic() - started), "agent": AGENT_NAME}
