"""HostProcessorContext: every value a HostAgent step's strategies provide, typed.

As in the AppAgent's context, a field is ``None`` until provided when a strategy depends on it or
the step record copies it only when set; the others start empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.agents.app.actions import ActionCommandInfo
from starweave.agents.app.local import WindowStepContext
from starweave.agents.host.response import HostAgentResponse
from starweave.agents.host.targets import TargetRegistry


@dataclass
class HostProcessorContext(WindowStepContext):
    """The local context of one HostAgent step."""

    # DATA_COLLECTION: the open windows and third-party agents.
    application_windows_info: list[dict[str, Any]] = field(default_factory=list)
    target_registry: TargetRegistry | None = None
    target_info_list: list[dict[str, Any]] | None = None
    # LLM_INTERACTION: the answer and its parts.
    parsed_response: HostAgentResponse | None = None
    host_message: str = ""
    question_list: list[str] = field(default_factory=list)
    function_name: str | None = None
    function_arguments: dict[str, Any] | None = None
    # ACTION_EXECUTION: the call and the target it selected.
    action_info: ActionCommandInfo | None = None
    selected_target_id: str = ""
    selected_application_root: str | None = None
    assigned_third_party_agent: str | None = None
    target: dict[str, Any] = field(default_factory=dict)
    # MEMORY_UPDATE.
    memory_keys_count: int = 0
