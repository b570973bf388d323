"""GalaxySession: one request carried out across the device fleet (spec E §11).

A session wires, for one request, the ConstellationAgent, the orchestrator with its modification
synchronizer, the constellation MCP server the agent edits through, and the observers (agent
progress, metrics, event log, optional live view) on the run's event bus. It runs the agent's
state machine to FINISH or FAIL, stops any orchestration still running, and leaves in its log
folder ``response.log``, ``request.log``, ``events.log``, ``result.json``, ``constellation.json``
and the ``output.md`` trajectory report. The device manager (and its connections) outlives the
session, so interactive mode reuses the fleet for the next request.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from starweave.agent import Context, ContextNames
from starweave.commands.local import LocalCommandDispatcher
from starweave.config.models import McpServerConfig, McpServerSet, ShellConfig
from starweave.errors import StarweaveError
from starweave.galaxy.agent import ConstellationAgent
from starweave.galaxy.constellation import ConstellationEditor
from starweave.galaxy.constellation.mcp_server import create_constellation_server
from starweave.galaxy.devices import ConstellationDeviceManager
from starweave.galaxy.events import EventBus, IEventObserver
from starweave.galaxy.observers import (
    ConstellationProgressObserver,
    LiveViewObserver,
    SessionLogObserver,
    SessionMetricsObserver,
)
from starweave.galaxy.orchestrator import (
    SYNC_EVENT_TYPES,
    ConstellationModificationSynchronizer,
    TaskConstellationOrchestrator,
    device_answer,
)
from starweave.galaxy.reports import SessionSummary, write_reports_async
from starweave.galaxy.settings import ConstellationSettings
from starweave.llm.base import LLMClient
from starweave.redaction import redact
from starweave.session.logs import JsonLinesWriter
from starweave.session.loop import INTERRUPTED, INTERRUPTED_ERROR, new_session
from starweave.tools import CommandRouter, ComputerManager, MCPRegistry, MCPServerManager

log = logging.getLogger("starweave.galaxy.session")

AGENT_NAME = "ConstellationAgent"
# After the agent says FINISH, how long the orchestration may take to wrap up (publish its end).
FINISH_GRACE = 10.0
EDITOR_NAMESPACE = "ConstellationEditor"


def safe_task_name(task: str, fallback: str) -> str:
    """A folder name from ``task``: letters, digits, space, ``-`` and ``_``; at most 50 characters."""
    cleaned = re.sub(r"[^\w \-]", "", task, flags=re.ASCII).strip()[:50].rstrip()
    return cleaned or fallback


def unique_folder(path: Path) -> Path:
    """``path``, or ``path_2``, ``path_3``... when a previous run already wrote there (runs with the
    same task name must not mix their logs), created."""
    candidate, number = path, 1
    while candidate.exists() and any(candidate.iterdir()):
        number += 1
        candidate = path.with_name(f"{path.name}_{number}")
    candidate.mkdir(parents=True, exist_ok=True)
    return candidate


@dataclass
class GalaxyOutcome:
    """What a finished session reports to its caller."""

    status: str  # "completed" | "failed" | "interrupted" (cancelled: Ctrl+C, or the caller stopped it)
    agent_status: str
    log_path: Path
    error: str = ""
    task_count: int = 0
    execution_time: float = 0.0
    reports: dict[str, str] = field(default_factory=dict)
    answer: str = ""  # the agent's final answer (FINISH), for the user to read at once


class GalaxySession:
    """One request on the fleet behind ``device_manager``; ``run()`` returns a GalaxyOutcome.

    ``guards``: whether the ConstellationAgent's plan guards are on (``GUARDS`` in system.yaml).
    """

    def __init__(
        self,
        request: str,
        task_name: str,
        log_root: Path,
        device_manager: ConstellationDeviceManager,
        llm: LLMClient,
        settings: ConstellationSettings,
        event_bus: EventBus,
        console: Console | None = None,
        live: bool = False,
        secrets: list[str] | None = None,
        session_name: str | None = None,
        guards: bool = True,
    ) -> None:
        self.request = request
        self.guards = guards
        self.task_name = task_name
        self.session_name = session_name or f"galaxy_session_{task_name}"
        self.log_path = unique_folder(
            Path(log_root) / safe_task_name(task_name, f"galaxy_session_{int(time.time())}")
        )
        self.device_manager = device_manager
        self.llm = llm
        self.settings = settings
        self.bus = event_bus
        self.console = console
        self.live = live
        self.secrets = [s for s in (secrets or []) if s]
        self.editor = ConstellationEditor()
        self.orchestrator = TaskConstellationOrchestrator(
            device_manager,
            event_bus,
            task_timeout=settings.task_timeout,
            assignment_strategy=settings.assignment_strategy,
        )
        self.synchronizer = ConstellationModificationSynchronizer(
            self.orchestrator, modification_timeout=settings.modification_timeout
        )
        self.orchestrator.set_modification_synchronizer(self.synchronizer)
        self.metrics = SessionMetricsObserver(f"galaxy_session_{self.session_name}_{task_name}")
        self.agent: ConstellationAgent | None = None

    def known_device_ids(self) -> set[str]:
        """Every registered device id (the MCP server refuses assignments to any other)."""
        return set(self.device_manager.get_all_devices())

    def device_info(self) -> list[dict[str, Any]]:
        """The AgentProfiles the ConstellationAgent plans with."""
        return [profile.to_dict() for profile in self.device_manager.get_all_devices().values()]

    def _editor_tools(self) -> tuple[MCPServerManager, ComputerManager]:
        registry = MCPRegistry()
        registry.register_factory(
            EDITOR_NAMESPACE,
            lambda _shell: create_constellation_server(self.editor, known_devices=self.known_device_ids),
        )
        servers = MCPServerManager(
            ShellConfig.model_validate({"workspace": str(self.log_path)}), registry=registry
        )
        mcp = {
            AGENT_NAME: {
                "default": McpServerSet(action=[McpServerConfig(namespace=EDITOR_NAMESPACE, type="local")])
            }
        }
        return servers, ComputerManager(mcp, servers, tool_timeout=60)

    async def run(self) -> GalaxyOutcome:
        """Plan, execute and edit until the agent finishes or fails; then write every output."""
        start = time.time()
        servers, computers = self._editor_tools()
        dispatcher = LocalCommandDispatcher(CommandRouter(computers), agent_name=AGENT_NAME)
        agent = ConstellationAgent(
            self.orchestrator,
            self.llm,
            dispatcher,
            self.bus,
            self.device_info,
            editor=self.editor,
            continue_timeout=self.settings.event_timeout,
            batch_window=self.settings.batch_window,
            review_mode=self.settings.review_mode,
            edit_retries=self.settings.edit_retries,
            guards=self.guards,
        )
        self.agent = agent
        observers: list[tuple[IEventObserver, Any]] = [
            (self.synchronizer, SYNC_EVENT_TYPES),
            (ConstellationProgressObserver(agent), None),
            (self.metrics, None),
            (SessionLogObserver(self.log_path, secrets=self.secrets), None),
        ]
        live = (
            LiveViewObserver(console=self.console, title=f"starweave galaxy: {self.task_name}")
            if self.live
            else None
        )
        if live is not None:
            observers.append((live, None))
        for observer, types in observers:
            self.bus.subscribe(observer, types)
        context = Context()
        context.set(ContextNames.REQUEST, self.request)
        context.set(ContextNames.LOGGER, JsonLinesWriter(self.log_path / "response.log", self.secrets))
        context.set(ContextNames.REQUEST_LOGGER, JsonLinesWriter(self.log_path / "request.log", self.secrets))
        agent_status = "FAIL"
        cancelled = False
        try:
            if live is not None:
                live.seed_devices(self.device_info())
                live.start()
            agent_status = await self._run_round(agent, context)
        except asyncio.CancelledError:
            cancelled = True
            raise
        except StarweaveError as exc:
            agent.error_message = agent.error_message or str(exc)
            log.error("Galaxy session failed: %s", exc)
        finally:
            await self._stop_orchestration(agent, agent_status)
            if live is not None:
                live.stop()
            for observer, _ in observers:
                self.bus.unsubscribe(observer)
            for closer in (computers, servers):
                try:
                    await closer.aclose()
                except (OSError, RuntimeError) as exc:  # reports must still be written
                    log.warning("Closing the constellation MCP server failed: %s", exc)
            answer = str(context.get(ContextNames.ROUND_RESULT) or "")
            outcome = await self._finish(agent, agent_status, start, cancelled, answer)
        return outcome

    async def _run_round(self, agent: ConstellationAgent, context: Context) -> str:
        """Run the agent's request in the one session loop (FINISH or FAIL, at most ``max_step``
        state handlings); returns its final status."""
        session = new_session(self.task_name, context, self.request, agent, max_step=self.settings.max_step)
        await session.run()
        if any(round_.stopped_by_cap for round_ in session.rounds.values()):
            agent.error_message = str(context.get(ContextNames.ERROR_MESSAGE) or "")
        log.info("The ConstellationAgent ended in %s", agent.status)
        return agent.status

    async def _stop_orchestration(self, agent: ConstellationAgent, agent_status: str) -> None:
        """After FINISH the orchestrator still publishes its completion (bounded); then stop it."""
        task = agent.orchestration_task
        if task is not None and not task.done() and agent_status == "FINISH":
            await asyncio.wait({task}, timeout=FINISH_GRACE)
        await agent.cancel_orchestration()

    async def _finish(
        self, agent: ConstellationAgent, agent_status: str, start: float, cancelled: bool, answer: str = ""
    ) -> GalaxyOutcome:
        constellation = agent.current_constellation
        status = INTERRUPTED if cancelled else ("completed" if agent_status == "FINISH" else "failed")
        error = agent.error_message or (INTERRUPTED_ERROR if cancelled else "")
        end = time.time()
        summary = SessionSummary(
            session_name=self.session_name,
            request=self.request,
            task_name=self.task_name,
            status=status,
            start_time=start,
            end_time=end,
            trajectory_path=str(self.log_path),
            agent_status=agent_status,
            # "answer": the agent's final answer (FINISH) or the reason it failed; "result" per task.
            final_results=[
                {"request": self.request, "result": _final_result(constellation), "answer": answer}
            ],
            metrics=self.metrics.get_metrics(),
            final_constellation=constellation,
            extra={"error": error} if error else {},
        )
        paths = await write_reports_async(self.log_path, summary, self.secrets)
        return GalaxyOutcome(
            status=status,
            agent_status=agent_status,
            log_path=self.log_path,
            error=error,
            task_count=constellation.task_count if constellation is not None else 0,
            execution_time=end - start,
            answer=redact(answer, self.secrets) if agent_status == "FINISH" else "",
            reports={
                name: str(path)
                for name, path in (
                    ("output_md", paths.output_md),
                    ("result_json", paths.result_json),
                    ("constellation_json", paths.constellation_json),
                )
                if path is not None
            },
        )


def _final_result(constellation: Any) -> dict[str, Any]:
    """Each task's outcome, for ``final_results`` in result.json."""
    if constellation is None:
        return {}
    out: dict[str, Any] = {}
    for task in constellation.get_all_tasks():
        answer = device_answer(task.result)
        out[task.task_id] = {
            "status": task.status.value,
            "device": task.target_device_id,
            "result": answer if isinstance(answer, str | int | float | bool | type(None)) else str(answer),
            "error": str(task.error) if task.error is not None else None,
        }
    return out
