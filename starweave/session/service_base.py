"""What every service session shares: one task of a remote device, its agent reasoning on the server
while every command travels to the device as an AIP COMMAND (a WebSocketCommandDispatcher).

A kind of device (``starweave.device_kinds``) gets a subclass that builds its agent and plays the
session (:meth:`DeviceServiceSession.play`); ``starweave.session.service.SESSION_KINDS`` maps the
device's platform to that subclass.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from starweave.agent import BasicAgent
from starweave.aip.messages import ClientMessage
from starweave.commands.websocket import SendFn, WebSocketCommandDispatcher
from starweave.config import StarweaveConfig
from starweave.errors import SessionError
from starweave.llm import LLMClient
from starweave.session.logs import SessionLogs
from starweave.session.loop import new_session, open_logs, secrets_of, session_context
from starweave.session.session import LinuxSession


@dataclass(frozen=True)
class ServiceSettings:
    """What every service session of a server shares: the configuration, whether dangerous
    commands run without asking, and the secrets masked in the logs besides the model keys."""

    config: StarweaveConfig
    auto_approve: bool = False
    secrets: tuple[str, ...] = ()


@dataclass(frozen=True)
class SessionModels:
    """The model clients of one session: the agent's, and the AppAgents' when they use another."""

    llm: LLMClient
    app_llm: LLMClient | None = None


class DeviceServiceSession(ABC):
    """One task of one remote device, run to a terminal state by the server-side agent.

    Implements the server's ServiceSession protocol; subclasses only build and run their agent.
    """

    #: The agent whose tool set (mcp.yaml entry) the dispatcher addresses first.
    agent_name = "LinuxAgent"

    def __init__(
        self,
        session_id: str,
        task_name: str,
        request: str,
        send: SendFn,
        models: SessionModels,
        settings: ServiceSettings,
    ) -> None:
        self.id = session_id
        self.task = task_name
        self.request = request
        self.models = models
        self.settings = settings
        self.dispatcher = WebSocketCommandDispatcher(send, session_id, task_name, agent_name=self.agent_name)
        self.results: dict[str, Any] = {}
        self._finished = False
        self._failed = False

    @property
    def llm(self) -> LLMClient:
        """The agent's model client."""
        return self.models.llm

    async def set_result(self, response_id: str, message: ClientMessage) -> None:
        """Hand a device's COMMAND_RESULTS to the waiting dispatcher."""
        await self.dispatcher.set_result(response_id, message)

    def is_finished(self) -> bool:
        """True once the session ran to its end."""
        return self._finished

    def is_error(self) -> bool:
        """True when the agent did not finish the task."""
        return self._failed

    async def run(self) -> None:
        """Run the agent to a terminal state; the outcome lands in :attr:`results` and result.json."""
        started = time.monotonic()
        config = self.settings.config
        logs = open_logs(config.system.log_dir, self.task, [*secrets_of(config), *self.settings.secrets])
        try:
            self.results = await self.play(logs, started)
        except SessionError as exc:
            self.results = {"task": self.task, "request": self.request, "status": "FAIL", "error": str(exc)}
        self._failed = self.results.get("status") != "FINISH"
        self._finished = True
        logs.write_result(self.results)

    async def run_agent(
        self, agent: BasicAgent, logs: SessionLogs, tools: list[dict[str, Any]] | None = None
    ) -> LinuxSession:
        """Run ``agent`` on this task to the end of its round, its commands sent to the device."""
        context = session_context(self.request, logs, self.dispatcher, tools)
        session = new_session(self.task, context, self.request, agent, self.settings.config.system)
        await session.run()
        return session

    @abstractmethod
    async def play(self, logs: SessionLogs, started: float) -> dict[str, Any]:
        """Build the agent, run the session and return its result (``status`` FINISH or FAIL);
        SessionError for a device that cannot take the task (its message becomes the error)."""
