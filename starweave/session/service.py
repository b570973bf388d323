"""Service sessions: a LinuxAgent reasoning on the agent server while its commands run on a device.

The server's SessionManager creates one per task through :class:`LinuxServiceSessionFactory`.
The session asks the device for its action tools (the Computer's ``list_tools`` meta tool, one
COMMAND round trip), then runs the same LinuxAgent as ``starweave run``; only the dispatcher
differs: a :class:`WebSocketCommandDispatcher` sends every command as an AIP COMMAND.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starweave.aip.messages import ClientMessage
from starweave.commands import Command
from starweave.commands.websocket import SendFn, WebSocketCommandDispatcher
from starweave.config import StarweaveConfig, load_config
from starweave.errors import ConfigError, SessionError
from starweave.llm import LLMClient
from starweave.llm.factory import create_llm
from starweave.session.console import ConsoleView
from starweave.session.loop import new_session, open_logs, secrets_of, session_context
from starweave.session.runner import (
    check_agent_files,
    make_linux_agent,
    model_overrides,
    prompt_tools,
    session_result,
)

logger = logging.getLogger(__name__)

SUPPORTED_PLATFORMS = ("linux", "darwin")
TOOLS_TIMEOUT = 60.0


@dataclass(frozen=True)
class ServiceSettings:
    """What every service session of a server shares: the configuration, whether dangerous
    commands run without asking, and the secrets masked in the logs besides the model keys."""

    config: StarweaveConfig
    auto_approve: bool = False
    secrets: tuple[str, ...] = ()


class LinuxServiceSession:
    """One task of a remote device, run by a LinuxAgent on the server (the reference's namesake)."""

    def __init__(
        self,
        session_id: str,
        task_name: str,
        request: str,
        send: SendFn,
        llm: LLMClient,
        settings: ServiceSettings,
    ) -> None:
        self.id = session_id
        self.task = task_name
        self.request = request
        self.llm = llm
        self.settings = settings
        self.dispatcher = WebSocketCommandDispatcher(send, session_id, task_name)
        self.results: dict[str, Any] = {}
        self._finished = False
        self._failed = False

    async def set_result(self, response_id: str, message: ClientMessage) -> None:
        """Hand a device's COMMAND_RESULTS to the waiting dispatcher."""
        await self.dispatcher.set_result(response_id, message)

    def is_finished(self) -> bool:
        """True once the session ran to its end."""
        return self._finished

    def is_error(self) -> bool:
        """True when the agent did not finish the task."""
        return self._failed

    async def device_tools(self) -> list[dict[str, Any]]:
        """The device's action tools, asked for with the Computer's ``list_tools`` meta tool."""
        ask = Command(tool_name="list_tools", tool_type="action", parameters={"tool_type": "action"})
        [answer] = await self.dispatcher.execute_commands([ask], timeout=TOOLS_TIMEOUT)
        if not answer.ok:
            raise SessionError(f"the device did not list its tools: {answer.error or answer.result}")
        infos = answer.result if isinstance(answer.result, list) else json.loads(str(answer.result))
        return prompt_tools([i for i in infos if i.get("tool_name") != "list_tools"])

    async def run(self) -> None:
        """Run the LinuxAgent to a terminal state; the outcome lands in :attr:`results`."""
        started = time.monotonic()
        config = self.settings.config
        logs = open_logs(config.system.log_dir, self.task, [*secrets_of(config), *self.settings.secrets])
        try:
            tools = await self.device_tools()
            context = session_context(self.request, logs, self.dispatcher, tools)
            agent = make_linux_agent(config, self.llm, ConsoleView(quiet=True), self.settings.auto_approve)
            session = new_session(self.task, context, self.request, agent, config.system)
            await session.run()
            self.results = session_result(session, logs.path, time.monotonic() - started)
        except SessionError as exc:
            self.results = {"task": self.task, "request": self.request, "status": "FAIL", "error": str(exc)}
        self._failed = self.results.get("status") != "FINISH"
        self._finished = True
        logs.write_result(self.results)


class LinuxServiceSessionFactory:
    """Creates service sessions for the server.

    Sessions share one model client (the embedded model is loaded once and serves them in turn),
    created on first use; with the ``replay`` provider each session gets its own client, so every
    session replays the recorded answers from the start.
    """

    def __init__(
        self,
        config: StarweaveConfig,
        llm: LLMClient | None = None,
        auto_approve: bool = False,
        secrets: tuple[str, ...] = (),
    ) -> None:
        # The server's own key, masked in the session logs next to the model keys.
        self.settings = ServiceSettings(config, auto_approve, tuple(s for s in secrets if s))
        self.config = config
        self._shared = llm
        self._owned: list[LLMClient] = []

    def model_client(self) -> LLMClient:
        """The model client for the next session."""
        agent = self.config.agent_llm("LinuxAgent")
        if self._shared is not None and agent.api_type != "replay":
            return self._shared
        client = create_llm(agent, self.config.system, prices=self.config.prices)
        self._owned.append(client)
        if agent.api_type != "replay":
            self._shared = client
        return client

    async def aclose(self) -> None:
        """Close the model clients this factory created."""
        for client in self._owned:
            await client.aclose()
        self._owned.clear()

    def __call__(
        self, *, session_id: str, task_name: str, request: str, send: SendFn, platform: str = "linux"
    ) -> LinuxServiceSession:
        """A session for one task of one device."""
        if platform not in SUPPORTED_PLATFORMS:
            raise SessionError(
                f"device platform {platform!r} is not supported by this server yet; "
                f"supported: {', '.join(SUPPORTED_PLATFORMS)}"
            )
        if not request.strip():
            raise SessionError("the task request is empty")
        return LinuxServiceSession(session_id, task_name, request, send, self.model_client(), self.settings)


def service_config(
    config_dir: Path | None,
    provider: str | None = None,
    model: str | None = None,
    replay_file: Path | None = None,
    log_dir: Path | None = None,
) -> StarweaveConfig:
    """The server's configuration with the command line's model and log options applied."""
    agent = model_overrides(provider, model, replay_file)
    overrides: dict[str, Any] = {"APP_AGENT": agent} if agent else {}
    if log_dir:
        overrides["system"] = {"LOG_DIR": str(log_dir)}
    config = load_config(config_dir, overrides=overrides)
    llm = config.app_agent
    if llm.api_type == "replay" and not llm.replay_file:
        raise ConfigError(
            "--provider replay needs --replay-file PATH (recorded answers, one JSON object per line)"
        )
    check_agent_files(llm)
    return config
