"""Service sessions: a device agent reasoning on the agent server while its commands run on a device.

The server's SessionManager creates one per task through :class:`ServiceSessionFactory`, which
picks the session class by the device's platform from :data:`SESSION_KINDS` (a LinuxAgent for a
shell device, a HostAgent for a desktop, a MobileAgent for a phone). A LinuxServiceSession asks the
device for its action tools (the Computer's ``list_tools`` meta tool, one COMMAND round trip), then
runs the same LinuxAgent as ``starweave run``; only the dispatcher differs: a
:class:`WebSocketCommandDispatcher` sends every command as an AIP COMMAND.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from starweave.commands import Command
from starweave.commands.websocket import SendFn
from starweave.config import StarweaveConfig, load_config
from starweave.config.models import AgentLLMConfig
from starweave.device_kinds import DEVICE_KINDS, KIND_ALIASES
from starweave.errors import ConfigError, SessionError
from starweave.llm import LLMClient
from starweave.llm.factory import create_llm
from starweave.session.desktop_service import HostServiceSession
from starweave.session.logs import SessionLogs
from starweave.session.mobile_service import MobileServiceSession
from starweave.session.runner import (
    check_agent_files,
    make_linux_agent,
    model_overrides,
    prompt_tools,
    session_result,
)
from starweave.session.service_base import DeviceServiceSession, ServiceSettings, SessionModels

__all__ = [
    "SESSION_KINDS",
    "LinuxServiceSession",
    "LinuxServiceSessionFactory",
    "ServiceSessionFactory",
    "ServiceSettings",
    "service_config",
]

logger = logging.getLogger(__name__)

TOOLS_TIMEOUT = 60.0


class LinuxServiceSession(DeviceServiceSession):
    """One task of a remote shell device, run by a LinuxAgent on the server (the reference's namesake)."""

    async def device_tools(self) -> list[dict[str, Any]]:
        """The device's action tools, asked for with the Computer's ``list_tools`` meta tool."""
        ask = Command(tool_name="list_tools", tool_type="action", parameters={"tool_type": "action"})
        [answer] = await self.dispatcher.execute_commands([ask], timeout=TOOLS_TIMEOUT)
        if not answer.ok:
            raise SessionError(f"the device did not list its tools: {answer.error or answer.result}")
        infos = answer.result if isinstance(answer.result, list) else json.loads(str(answer.result))
        return prompt_tools([i for i in infos if i.get("tool_name") != "list_tools"])

    async def play(self, logs: SessionLogs, started: float) -> dict[str, Any]:
        """Run the LinuxAgent with the device's tools listed in its prompt."""
        config = self.settings.config
        tools = await self.device_tools()
        agent = make_linux_agent(config, self.llm, self.view, self.settings.auto_approve)
        session = await self.run_agent(agent, logs, tools)
        result = session_result(session, logs.path, time.monotonic() - started)
        # The device's workspace, read after the run: what a Galaxy task's result is checked against.
        result.update(await agent.run_evidence(self.dispatcher) or {})
        return result


SESSION_KINDS: dict[str, type[DeviceServiceSession]] = {
    "linux": LinuxServiceSession,
    "darwin": LinuxServiceSession,
    "linux-desktop": HostServiceSession,
    "windows": HostServiceSession,
    "mobile": MobileServiceSession,
}
"""The session class run for each device platform (``starweave.device_kinds`` names them). A new
kind of device is one entry here: a DeviceServiceSession subclass building its agent."""

SUPPORTED_PLATFORMS = tuple(SESSION_KINDS)


def refusal(platform: str) -> str | None:
    """Why this server cannot run a session for ``platform``, or None when it can."""
    key = KIND_ALIASES.get(platform.lower(), platform.lower())
    if key in SESSION_KINDS:
        return None
    supported = ", ".join(SESSION_KINDS)
    kind = DEVICE_KINDS.get(key)
    if kind is not None:
        return (
            f"device platform {platform!r} ({kind.summary}) is not available on this server yet: "
            f"it needs the {kind.agent}, which this server does not have; supported: {supported}"
        )
    return f"device platform {platform!r} is not supported by this server yet; supported: {supported}"


class ServiceSessionFactory:
    """Creates service sessions for the server, by the device's platform (:data:`SESSION_KINDS`).

    Sessions share one model client per model block (the embedded model is loaded once and serves
    them in turn), created on first use; with the ``replay`` provider each session gets its own
    client, so every session replays the recorded answers from the start, closed when it ends. A
    HostAgent and its AppAgents use one client when their blocks are equal (one replay file is one
    answer stream).
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
        # ``llm``: a client made by the caller for the LinuxAgent's block (APP_AGENT).
        self._shared: dict[str, LLMClient] = {}
        if llm is not None:
            self._shared[_block_key(config.app_agent)] = llm
        self._owned: list[LLMClient] = []

    def _client(self, block: AgentLLMConfig, owned: list[LLMClient]) -> LLMClient:
        """The shared client of ``block``; a replay block gets a new one, put in ``owned`` (the
        session's, closed when it ends)."""
        key = _block_key(block)
        shared = self._shared.get(key)
        if shared is not None and block.api_type != "replay":
            return shared
        client = create_llm(block, self.config.system, prices=self.config.prices)
        if block.api_type == "replay":
            owned.append(client)
        else:
            self._owned.append(client)
            self._shared[key] = client
        return client

    def session_models(self, agent: str) -> SessionModels:
        """The model clients of one session of ``agent`` (a HostAgent also gets its AppAgents')."""
        owned: list[LLMClient] = []
        llm = self._client(self.config.agent_llm(agent), owned)
        if agent != "HostAgent" or self.config.app_agent == self.config.host_agent:
            return SessionModels(llm, owned=tuple(owned))
        return SessionModels(llm, self._client(self.config.app_agent, owned), tuple(owned))

    @property
    def clients(self) -> tuple[LLMClient, ...]:
        """The model clients this factory keeps (the shared ones; a replay session's are its own)."""
        return tuple(self._owned)

    async def aclose(self) -> None:
        """Close the model clients this factory created."""
        for client in self._owned:
            await client.aclose()
        self._owned.clear()

    def __call__(
        self, *, session_id: str, task_name: str, request: str, send: SendFn, platform: str = "linux"
    ) -> DeviceServiceSession:
        """A session for one task of one device; SessionError for a platform without sessions."""
        reason = refusal(platform)
        if reason is not None:
            raise SessionError(reason)
        if not request.strip():
            raise SessionError("the task request is empty")
        session_cls = SESSION_KINDS[KIND_ALIASES.get(platform.lower(), platform.lower())]
        models = self.session_models(session_cls.agent_name)
        return session_cls(session_id, task_name, request, send, models, self.settings)


#: The name this factory had while it made LinuxAgent sessions only.
LinuxServiceSessionFactory = ServiceSessionFactory


def _block_key(block: AgentLLMConfig) -> str:
    """Identifies a model block (equal blocks share a client)."""
    return block.model_dump_json()


def service_config(
    config_dir: Path | None,
    provider: str | None = None,
    model: str | None = None,
    replay_file: Path | None = None,
    log_dir: Path | None = None,
) -> StarweaveConfig:
    """The server's configuration with the command line's model and log options applied."""
    agent = model_overrides(provider, model, replay_file)
    # Both blocks: a desktop device's HostAgent takes the command line's model as its AppAgents do.
    overrides: dict[str, Any] = {"APP_AGENT": agent, "HOST_AGENT": dict(agent)} if agent else {}
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
