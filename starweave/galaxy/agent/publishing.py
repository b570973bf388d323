"""Event publishing of the ConstellationAgent: AGENT_RESPONSE, AGENT_ACTION and CONSTELLATION_MODIFIED."""

from __future__ import annotations

from typing import Any

from starweave.galaxy.agent.merge import diff_constellations
from starweave.galaxy.agent.response import ActionCommandInfo, ConstellationAgentResponse, WeavingMode
from starweave.galaxy.constellation import TaskConstellation
from starweave.galaxy.events import AgentEvent, ConstellationEvent, EventBus, EventType


class ConstellationEventsMixin:
    """Publishes the agent's events on ``event_bus`` (payloads as spec E §10.2)."""

    name: str
    event_bus: EventBus
    last_edit_errors: list[str]

    # -- events -------------------------------------------------------------------------------
    async def print_response(
        self,
        response: ConstellationAgentResponse,
        print_action: bool = False,
        usage: dict[str, float] | None = None,
    ) -> None:
        """Publish the answer as AGENT_RESPONSE (the observers show it), with the call's token
        counts and cost (``prompt_tokens``, ``completion_tokens``, ``cost``) when given."""
        data = response.model_dump(mode="json")
        data["print_action"] = print_action
        data.update(usage or {})
        await self.event_bus.publish_event(
            AgentEvent(
                event_type=EventType.AGENT_RESPONSE,
                source_id=self.name,
                agent_name=self.name,
                agent_type="constellation",
                output_type="response",
                output_data=data,
            )
        )

    async def publish_actions(self, mode: WeavingMode, actions: list[ActionCommandInfo], status: str) -> None:
        """Publish AGENT_ACTION: a summary for creation, every call for editing."""
        if mode is WeavingMode.CREATION:
            config = actions[0].arguments.get("config", {}) if actions else {}
            output: dict[str, Any] = {
                "actions": [
                    {
                        "function": a.function,
                        "arguments": {
                            "task_count": len(config.get("tasks") or []),
                            "dependency_count": len(config.get("dependencies") or []),
                        },
                        "status": a.status,
                    }
                    for a in actions
                ],
                "status": status,
            }
        else:
            output = {
                "action_type": "constellation_editing",
                "actions": [a.model_dump(mode="json") for a in actions],
                "status": status,
            }
        await self.event_bus.publish_event(
            AgentEvent(
                event_type=EventType.AGENT_ACTION,
                source_id=self.name,
                agent_name=self.name,
                agent_type="constellation",
                output_type="action",
                output_data=output,
            )
        )

    async def _publish_constellation_modified_event(
        self,
        before: TaskConstellation,
        after: TaskConstellation,
        task_ids: list[str],
        timing_info: dict[str, float],
    ) -> None:
        """CONSTELLATION_MODIFIED: resolves the synchronizer's pending edits for ``task_ids``."""
        await self.event_bus.publish_event(
            ConstellationEvent(
                event_type=EventType.CONSTELLATION_MODIFIED,
                source_id=self.name,
                constellation_id=after.constellation_id,
                constellation_state=after.state.value,
                new_ready_tasks=[t.task_id for t in after.get_ready_tasks()],
                data={
                    "on_task_id": list(task_ids),
                    "old_constellation": before,
                    "new_constellation": after,
                    "modification_type": f"Edited by {self.name}",
                    "changes": diff_constellations(before, after),
                    "edit_errors": list(self.last_edit_errors),
                    **timing_info,
                },
            )
        )
