"""AppProcessorContext: every value an AppAgent step's strategies provide, typed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starweave.agent import BasicProcessorContext
from starweave.agents.app.actions import ListActionCommandInfo
from starweave.agents.app.controls import Control
from starweave.agents.app.response import AppAgentResponse
from starweave.commands import Result


@dataclass
class WindowStepContext(BasicProcessorContext):
    """What the AppAgent's and the HostAgent's steps both provide (``None``: not provided yet)."""

    desktop_screenshot_path: str | None = None
    desktop_screenshot_url: str | None = None
    plan: list[str] | None = None
    result: str | None = None
    # The action phase's results, a note to the model and, from the memory phase, the step's output.
    execution_result: list[Result] | None = None
    note: str | None = None
    additional_memory: dict[str, Any] | None = None
    output: str | None = None


@dataclass
class AppProcessorContext(WindowStepContext):
    """The local context of one AppAgent step."""

    # DATA_COLLECTION: the screenshots, the window and its controls.
    clean_screenshot_path: str | None = None
    annotated_screenshot_path: str | None = None
    ui_tree_path: str | None = None
    clean_screenshot_url: str | None = None
    annotated_screenshot_url: str | None = None
    application_window_info: dict[str, Any] | None = None
    screenshot_saved_time: float | None = None
    control_info: list[dict[str, Any]] | None = None
    annotation_dict: dict[str, Control] | None = None
    control_filter_time: float | None = None
    control_recorder: dict[str, Any] | None = None
    # LLM_INTERACTION: the answer and its parts.
    parsed_response: AppAgentResponse | None = None
    save_screenshot: dict[str, Any] | None = None
    comment: str | None = None
    concat_screenshot_path: str | None = None
    observation: str | None = None
    thought: str | None = None
    last_control_screenshot_path: str | None = None
    action: list[dict[str, Any]] | None = None
    multi_action: bool | None = None
    # ACTION_EXECUTION.
    action_info: ListActionCommandInfo | None = None
    control_log: list[Any] | None = None
    selected_control_screenshot_path: str | None = None
    checked_result: str | None = None
    # MEMORY_UPDATE.
    updated_blackboard: bool | None = None
