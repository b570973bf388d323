"""MobileProcessorContext: every value a MobileAgent step's strategies provide, typed (spec C §4.4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.agents.app.controls import Control
from starweave.agents.app.local import WindowStepContext
from starweave.agents.mobile.response import MobileAgentResponse


@dataclass
class MobileProcessorContext(WindowStepContext):
    """The local context of one MobileAgent step (a :class:`WindowStepContext`, so the AppAgent's step
    logging writes it)."""

    # DATA_COLLECTION: the screenshots, the installed apps and the screen's controls.
    clean_screenshot_path: str | None = None
    clean_screenshot_url: str | None = None
    annotated_screenshot_url: str | None = None
    annotated_screenshot_path: str | None = None
    screenshot_saved_time: float = 0.0
    installed_apps: list[str] | None = None
    apps_collection_time: float = 0.0
    current_controls: list[Control] | None = None
    controls_collection_time: float = 0.0
    annotation_dict: dict[str, Control] = field(default_factory=dict)
    # LLM_INTERACTION: the answer and its parts.
    parsed_response: MobileAgentResponse | None = None
    action: dict[str, Any] | None = None
    thought: str | None = None
    comment: str | None = None
    # ACTION_EXECUTION: the call as text (the results are ``execution_result``).
    call: str | None = None
