"""What every service session shares: one task of a remote device, its agent reasoning on the server
while every command travels to the device as an AIP COMMAND (a WebSocketCommandDispatcher).

A kind of device (``starweave.device_kinds``) gets a subclass that builds its agent and plays the
session (:meth:`DeviceServiceSession.play`); ``starweave.session.service.SESSION_KINDS`` maps the
device's platform to that subclass.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from starweave.agent import BasicAgent
from starweave.aip.messages import ClientMessage
from starweave.commands.websocket import SendFn, WebSocketCommandDispatcher
from starweave.config import StarweaveConfig
from starweave.errors import StarweaveError
from starweave.llm import LLMClient
from starweave.session.console import ConsoleView
from starweave.session.logs import SessionLogs
from starweave.session.loop import new_session, open_logs, secrets_of, session_context
from starweave.session.session import LinuxSession
from starweave.tools.mcp_manager import describe_exception

#: Why a service session asks nothing: its requester is elsewhere, and the server's terminal (if
#: any) belongs to the operator, shared by every session.
UNATTENDED = "the agent server runs unattended; start it with --yes to allow such actions"


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
    #: The clients made for this session alone (replay ones), closed when it ends.
    owned: tuple[LLMClient, ...] = ()


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
        #: Asks nothing and never reads stdin: a dangerous action is refused unless ``--yes``.
        self.view = ConsoleView(quiet=True, ask=False, unasked=UNATTENDED)
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
        """Run the agent to a terminal state; the outcome lands in :attr:`results` and result.json.

        A StarweaveError (a device that cannot take the task, an agent that cannot be built) is the
        session's one-line error; anything else (a bug, a cancellation) is written as well, then
        raised. The session's own model clients are closed at its end."""
        started = time.monotonic()
        config = self.settings.config
        logs = open_logs(config.system.log_dir, self.task, [*secrets_of(config), *self.settings.secrets])
        try:
            results = explain_refusals(await self.play(logs, started), self.view.refused)
        except StarweaveError as exc:
            results = self.failure(str(exc))
        except BaseException as exc:  # written for the requester's records, then raised on
            self._end(logs, self.failure(_stopped(exc)))
            raise
        finally:
            for client in self.models.owned:
                await client.aclose()
        self._end(logs, results)

    def failure(self, error: str) -> dict[str, Any]:
        """The result of a session that could not run to its end."""
        return {"task": self.task, "request": self.request, "status": "FAIL", "error": error}

    def _end(self, logs: SessionLogs, results: dict[str, Any]) -> None:
        self.results = results
        self._failed = results.get("status") != "FINISH"
        self._finished = True
        logs.write_result(results)

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


def explain_refusals(results: dict[str, Any], refused: list[str]) -> dict[str, Any]:
    """``results`` with the actions refused without asking named in its error, and why."""
    if not refused:
        return results
    why = f"not allowed: {', '.join(refused)} ({UNATTENDED})"
    error = str(results.get("error") or "")
    return {**results, "error": f"{error}; {why}" if error else why}


def _stopped(exc: BaseException) -> str:
    """The one-line error of a session stopped by an unexpected exception or a cancellation."""
    if isinstance(exc, asyncio.CancelledError):
        return "the session was cancelled"
    return "the session stopped: " + " ".join(describe_exception(exc).split())
