"""Fixtures for the ConstellationAgent tests: a real constellation MCP server behind a
LocalCommandDispatcher, the replay LLM provider, and a small fake orchestrator that completes ready
tasks wave by wave and publishes the real event types."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from starweave.agent import Context, ContextNames
from starweave.commands.local import LocalCommandDispatcher
from starweave.config.models import McpServerConfig, McpServerSet, ShellConfig
from starweave.galaxy.agent import ConstellationAgent
from starweave.galaxy.constellation import ConstellationEditor, TaskConstellation
from starweave.galaxy.constellation.mcp_server import create_constellation_server
from starweave.galaxy.events import ConstellationEvent, Event, EventBus, EventType, TaskEvent
from starweave.llm.providers.replay import ReplayClient
from starweave.session.session import BaseRound
from starweave.tools import CommandRouter, ComputerManager, MCPRegistry, MCPServerManager

AGENT = "ConstellationAgent"
DEVICES: list[dict[str, Any]] = [
    {"device_id": "dev_a", "os": "linux", "capabilities": ["shell", "files"], "status": "idle"},
    {"device_id": "dev_b", "os": "linux", "capabilities": ["shell"], "status": "idle"},
    {"device_id": "dev_c", "os": "linux", "capabilities": ["shell", "python"], "status": "busy"},
    {"device_id": "dev_gone", "os": "linux", "capabilities": ["shell"], "status": "disconnected"},
]
TEST_TIMEOUT = 20.0


async def bounded(awaitable: Awaitable[Any], seconds: float = TEST_TIMEOUT) -> Any:
    """Every test awaits its work through this: a hang becomes a TimeoutError, not a stuck suite."""
    return await asyncio.wait_for(awaitable, seconds)


def write_replay(path: Path, answers: list[Any]) -> Path:
    """The replay provider's format: one JSON value per line (object = answer, string = raw text)."""
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n", encoding="utf-8")
    return path


class Forwarder:
    """Stands in for the progress observer: hands completion events to the agent."""

    def __init__(self, agent: ConstellationAgent) -> None:
        self.agent = agent

    async def on_event(self, event: Event) -> None:
        if event.event_type in (EventType.TASK_COMPLETED, EventType.TASK_FAILED):
            await self.agent.add_task_completion_event(event)
        elif event.event_type is EventType.CONSTELLATION_COMPLETED:
            await self.agent.add_constellation_completion_event(event)


class Recorder:
    """Keeps every event it receives."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def on_event(self, event: Event) -> None:
        self.events.append(event)

    def of(self, event_type: EventType) -> list[Event]:
        return [e for e in self.events if e.event_type is event_type]


class FakeOrchestrator:
    """Completes all ready tasks at once (one wave) in the constellation it is given (the agent's own,
    as the real orchestrator does), publishes their events, then waits (bounded) for the agent's
    CONSTELLATION_MODIFIED, whose edits are already in that constellation, before the next wave."""

    def __init__(
        self,
        bus: EventBus,
        results: dict[str, str] | None = None,
        failing: frozenset[str] = frozenset(),
        wave_timeout: float = 5.0,
    ) -> None:
        self.bus = bus
        self.results = results or {}
        self.failing = failing
        self.wave_timeout = wave_timeout
        self.calls: list[dict[str, Any]] = []
        self.waves: list[list[str]] = []
        self.current_constellation: TaskConstellation | None = None
        self._modified: asyncio.Queue[Event] = asyncio.Queue()
        bus.subscribe(self, {EventType.CONSTELLATION_MODIFIED})

    async def on_event(self, event: Event) -> None:
        await self._modified.put(event)

    async def orchestrate_constellation(
        self, constellation: TaskConstellation, metadata: dict[str, Any] | None = None, **_: Any
    ) -> dict[str, Any]:
        self.calls.append({"tasks": sorted(constellation.tasks), "metadata": metadata})
        c = constellation
        self.current_constellation = c
        c.start_execution()
        while not c.is_complete():
            ready = c.get_ready_tasks()
            assert ready, "fake orchestrator: nothing ready but the constellation is not complete"
            events = []
            for task in ready:
                ok = task.task_id not in self.failing
                newly = c.mark_task_completed(
                    task.task_id,
                    ok,
                    result=self.results.get(task.task_id, f"output of {task.task_id}") if ok else None,
                    error=None if ok else "device error",
                )
                events.append(
                    TaskEvent(
                        event_type=EventType.TASK_COMPLETED if ok else EventType.TASK_FAILED,
                        source_id="fake_orchestrator",
                        data={
                            "constellation_id": c.constellation_id,
                            "newly_ready_tasks": [t.task_id for t in newly],
                            "constellation": c,
                        },
                        task_id=task.task_id,
                        status="completed" if ok else "failed",
                    )
                )
            wave = [t.task_id for t in ready]
            self.waves.append(wave)
            await asyncio.gather(*(self.bus.publish_event(event) for event in events))
            if c.is_complete():
                break
            # Like the synchronizer: go on once the agent's edits cover every task of the wave.
            pending = set(wave)
            while pending:
                modified = await asyncio.wait_for(self._modified.get(), self.wave_timeout)
                pending -= set(modified.data["on_task_id"])
            assert modified.data["new_constellation"] is c, "the agent edited another constellation"
        c.complete_execution()
        await self.bus.publish_event(
            ConstellationEvent(
                event_type=EventType.CONSTELLATION_COMPLETED,
                source_id="fake_orchestrator",
                constellation_id=c.constellation_id,
                constellation_state=c.state.value,
                data={"total_tasks": c.task_count, "constellation": c},
            )
        )
        return {"status": "completed", "total_tasks": c.task_count}


@pytest.fixture
def editor() -> ConstellationEditor:
    return ConstellationEditor()


@pytest.fixture
async def editor_dispatcher(
    editor: ConstellationEditor, tmp_path: Path
) -> AsyncIterator[LocalCommandDispatcher]:
    """The constellation MCP server, in process, behind the normal command path."""
    registry = MCPRegistry()
    known = [d["device_id"] for d in DEVICES]
    registry.register_factory(
        "ConstellationEditor", lambda _shell: create_constellation_server(editor, known_devices=lambda: known)
    )
    servers = MCPServerManager(ShellConfig.model_validate({"workspace": str(tmp_path)}), registry=registry)
    mcp = {
        AGENT: {
            "default": McpServerSet(action=[McpServerConfig(namespace="ConstellationEditor", type="local")])
        }
    }
    computers = ComputerManager(mcp, servers, tool_timeout=10)
    yield LocalCommandDispatcher(CommandRouter(computers), agent_name=AGENT)
    await computers.aclose()
    await servers.aclose()


@pytest.fixture
def bus() -> EventBus:
    return EventBus()


@pytest.fixture
def recorder(bus: EventBus) -> Recorder:
    rec = Recorder()
    bus.subscribe(rec)
    return rec


AgentMaker = Callable[..., ConstellationAgent]


@pytest.fixture
def make_agent(
    tmp_path: Path, bus: EventBus, editor: ConstellationEditor, editor_dispatcher: LocalCommandDispatcher
) -> AgentMaker:
    """Build an agent over recorded answers; the Forwarder wires events to it."""

    def make(answers: list[Any], orchestrator: Any, **kwargs: Any) -> ConstellationAgent:
        llm = ReplayClient(write_replay(tmp_path / "answers.jsonl", answers), json_retries=3, timeout=5)
        kwargs.setdefault("completion_check_timeout", 0.2)
        kwargs.setdefault("continue_timeout", 10.0)
        kwargs.setdefault("batch_window", 0.05)
        agent = ConstellationAgent(
            orchestrator,
            llm,
            editor_dispatcher,
            bus,
            lambda: [dict(d) for d in DEVICES],
            editor=editor,
            **kwargs,
        )
        bus.subscribe(
            Forwarder(agent),
            {EventType.TASK_COMPLETED, EventType.TASK_FAILED, EventType.CONSTELLATION_COMPLETED},
        )
        return agent

    return make


async def run_round(agent: ConstellationAgent, context: Context, max_step: int = 200) -> str:
    """Drive the agent through one round of the session layer, as GalaxySession does; its status."""
    request = str(context.get(ContextNames.REQUEST) or "")
    await BaseRound("test", context, request, agent, 0, max_step).run()
    return agent.status


def new_context(request: str = "Collect the disk usage of three machines and summarise it") -> Context:
    ctx = Context()
    ctx.set(ContextNames.REQUEST, request)
    return ctx
