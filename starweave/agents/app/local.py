"""AppProcessorContext: every value an AppAgent step's strategies provide, typed.

A field is ``None`` until provided when a strategy depends on it (a missing input stays
detectable) or the step record copies it only when set (``middleware.RECORD_KEYS``); the others
start empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.agent import BasicProcessorContext
from starweave.agents.app.actions import ListActionCommandInfo
from starweave.agents.app.controls import Control
from starweave.agents.app.response import AppAgentResponse
from starweave.commands import Result


@dataclass
class WindowStepContext(BasicProcessorContext):
    """What the AppAgent's and the HostAgent's steps both provide."""

    desktop_screenshot_path: str | None = None
    desktop_screenshot_url: str | None = None
    plan: list[str] | None = None
    result: str | None = None
    # The action phase's results, a note to the model and, from the memory phase, the step's output.
    execution_result: list[Result] = field(default_factory=list)
    note: str | None = None
    additional_memory: dict[str, Any] = field(default_factory=dict)
    output: str | None = None


@dataclass
class AppProcessorContext(WindowStepContext):
    """The local context of one AppAgent step."""

    # DATA_COLLECTION: the screenshots, the window and its controls.
    clean_screenshot_path: str | None = None
    annotated_screenshot_path: str | None = None
    ui_tree_path: str = ""
    clean_screenshot_url: str = ""
    annotated_screenshot_url: str = ""
    application_window_info: dict[str, Any] | None = None
    screenshot_saved_time: float = 0.0
    control_info: list[dict[str, Any]] = field(default_factory=list)
    annotation_dict: dict[str, Control] = field(default_factory=dict)
    control_filter_time: float = 0.0
    control_recorder: dict[str, Any] = field(default_factory=dict)
    # LLM_INTERACTION: the answer and its parts.
    parsed_response: AppAgentResponse | None = None
    save_screenshot: dict[str, Any] = field(default_factory=dict)
    comment: str | None = None
    concat_screenshot_path: str = ""
    observation: str | None = None
    thought: str | None = None
    last_control_screenshot_path: str = ""
    action: list[dict[str, Any]] | None = None
    multi_action: bool | None = None
    # ACTION_EXECUTION: what ran, the controls it targeted and the checked FINISH result.
    action_info: ListActionCommandInfo = field(default_factory=ListActionCommandInfo)
    control_log: list[Any] = field(default_factory=list)
    selected_control_screenshot_path: str | None = None
    checked_result: str = ""
    # MEMORY_UPDATE.
    updated_blackboard: bool = False
