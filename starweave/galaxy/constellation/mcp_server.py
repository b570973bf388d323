"""The "Constellation Editor MCP Server" (spec B §4): editing tools over a ConstellationEditor.

Every tool returns the whole updated constellation as a JSON string. The tools are coroutines that
never await: the SDK runs plain functions in a worker thread, and the editor's constellation is the
one the orchestrator runs, so every edit must happen on the event loop, in one piece, between the
orchestrator's own steps. ``build_constellation`` is a
normal tool, but it is meant for the agent's own bulk creation step, not for the LLM: prompt builders
must leave every name in :data:`HIDDEN_FROM_LLM` out of the tool list they show the model.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from starweave.errors import (
    CycleError,
    DependencyNotFoundError,
    DuplicateIdError,
    ModificationError,
    TaskNotFoundError,
)

from .editor import ConstellationEditor
from .schema import TaskConstellationSchema
from .task_star import short_name

SERVER_NAME = "Constellation Editor MCP Server"
HIDDEN_FROM_LLM: frozenset[str] = frozenset({"build_constellation"})


def _tool_error(exc: ValueError, action: str) -> ToolError:
    """Translate a model error into the spec's ToolError texts."""
    if isinstance(exc, TaskNotFoundError):
        return ToolError(f"Task not found: {exc}")
    if isinstance(exc, DependencyNotFoundError):
        return ToolError(f"Dependency not found: {exc}")
    if isinstance(exc, CycleError):
        return ToolError(f"Failed to {action}: Adding edge would create cycle ({exc})")
    if isinstance(exc, DuplicateIdError):
        what = "task_id" if action in {"add task", "build constellation"} else "dependency_id"
        return ToolError(f"Duplicate {what}: {exc}")
    if isinstance(exc, ModificationError):
        return ToolError(f"Task not modifiable: {exc}")
    return ToolError(f"Failed to {action}: {exc}")


def create_constellation_server(
    editor: ConstellationEditor | None = None,
    known_devices: Callable[[], Collection[str]] | None = None,
) -> MCPServer:
    """Build the server; all tools edit ``editor`` (a fresh one when None).

    ``known_devices`` returns the ids of the registered devices: when given, a task assigned to any
    other device is refused with "Invalid device" naming the known ones (asked on every call, so
    devices that register later are accepted).
    """
    ed = editor or ConstellationEditor()
    srv = MCPServer(SERVER_NAME, log_level="WARNING")

    def apply(action: str, edit: Callable[[], object]) -> str:
        """Run one editor operation; a refused edit becomes the spec's ToolError text for ``action``,
        success returns the whole constellation as JSON."""
        try:
            edit()
        except ValueError as exc:
            raise _tool_error(exc, action) from exc
        return ed.constellation.to_json()

    def check_devices(*device_ids: str | None) -> None:
        if known_devices is None:
            return
        known = known_devices()
        for device_id in device_ids:
            if device_id is not None and device_id not in known:
                listed = ", ".join(sorted(known)) or "none registered"
                raise ToolError(f"Invalid device: {device_id} is not a registered device (known: {listed})")

    @srv.tool()
    async def add_task(
        task_id: Annotated[str, Field(description="Unique id of the new task")],
        description: Annotated[
            str, Field(description="What the device agent must do (default: the name)")
        ] = "",
        target_device_id: str | None = None,
        tips: list[str] | None = None,
        name: Annotated[str, Field(description="Short task name (default: from the description)")] = "",
    ) -> str:
        """Add a PENDING task (priority MEDIUM); returns the whole constellation as JSON."""
        # A model that wrote only a full-sentence name has said what to do: that is the description.
        description = description.strip() or name.strip()
        if not description:
            raise ToolError("add_task needs a description of what the device agent must do")
        name = name or short_name(description)
        check_devices(target_device_id)
        return apply(
            "add task",
            lambda: ed.create_and_add_task(
                task_id, description, name=name, target_device_id=target_device_id, tips=tips
            ),
        )

    @srv.tool()
    async def remove_task(task_id: str) -> str:
        """Remove a task and every dependency into or out of it; returns the constellation JSON."""
        return apply("remove task", lambda: ed.remove_task(task_id))

    @srv.tool()
    async def update_task(
        task_id: str,
        name: str | None = None,
        description: str | None = None,
        target_device_id: str | None = None,
        tips: list[str] | None = None,
    ) -> str:
        """Change the given fields of a pending/waiting task; returns the constellation JSON."""
        fields: dict[str, Any] = {
            k: v
            for k, v in {
                "name": name,
                "description": description,
                "target_device_id": target_device_id,
                "tips": tips,
            }.items()
            if v is not None
        }
        if not fields:
            raise ToolError("At least one field required: name, description, target_device_id or tips")
        check_devices(target_device_id)
        return apply("update task", lambda: ed.update_task(task_id, **fields))

    @srv.tool()
    async def add_dependency(
        dependency_id: str, from_task_id: str, to_task_id: str, condition_description: str | None = None
    ) -> str:
        """Add an unconditional dependency from_task_id -> to_task_id; returns the constellation JSON."""
        return apply(
            "add dependency",
            lambda: ed.create_and_add_dependency(
                from_task_id,
                to_task_id,
                "unconditional",
                line_id=dependency_id,
                condition_description=condition_description,
            ),
        )

    @srv.tool()
    async def remove_dependency(dependency_id: str) -> str:
        """Remove a dependency (its target may become ready); returns the constellation JSON."""
        return apply("remove dependency", lambda: ed.remove_dependency(dependency_id))

    @srv.tool()
    async def update_dependency(dependency_id: str, condition_description: str) -> str:
        """Change a dependency's condition description; returns the constellation JSON."""
        return apply(
            "update dependency",
            lambda: ed.update_dependency(dependency_id, condition_description=condition_description),
        )

    @srv.tool()
    async def build_constellation(config: TaskConstellationSchema, clear_existing: bool = True) -> str:
        """Bulk build (not shown to the LLM, see HIDDEN_FROM_LLM); returns the constellation JSON."""
        check_devices(*(task.target_device_id for task in config.get_tasks_as_list()))
        return apply(
            "build constellation", lambda: ed.build_constellation(config, clear_existing=clear_existing)
        )

    return srv
