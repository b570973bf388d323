"""The AppAgent's DATA_COLLECTION phase: window screenshot, then the control list (seed 001 wiring).

The two strategies run inside one ComposedStrategy. The screenshot is optional input (the embedded
model is text-only; the controls are described as text), so a failed capture is logged and the
step goes on; a failed control walk fails the phase.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starweave.agent import (
    BaseProcessingStrategy,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    depends_on,
    provides,
)
from starweave.agents.app.controls import annotation_dict
from starweave.agents.app.detection import add_detected_controls
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.execution import fetch_controls
from starweave.agents.app.local import AppProcessorContext
from starweave.agents.app.screenshots import data_url, save_image
from starweave.errors import ToolError
from starweave.log_folder import write_log_file

if TYPE_CHECKING:
    from starweave.agents.app.agent import AppAgent

logger = logging.getLogger(__name__)

WINDOW_FIELDS = ["control_text", "control_type", "control_rect", "process_id", "class_name", "is_visible"]


def step_file(context: ProcessingContext, suffix: str) -> Path | None:
    """``<log_path>/action_step{N}{suffix}``, or None when the session keeps no log folder."""
    log_path = str(context.get("log_path") or "")
    if not log_path:
        return None
    return Path(log_path) / f"action_step{context.get('session_step') or 0}{suffix}"


async def capture(dispatcher: Any, tool: str, params: dict[str, Any], path: Path | None) -> tuple[str, str]:
    """Take a screenshot with ``tool``; returns (saved path or "", data URL or "")."""
    result = await run_one(dispatcher, tool, params, "data_collection")
    if not result.ok or not isinstance(result.result, str) or not result.result:
        logger.warning("%s gave no screenshot: %s", tool, result.error or result.result)
        return "", ""
    try:
        if path is not None:
            await save_image(result.result, path)
    except (ToolError, OSError) as exc:
        logger.warning("%s: screenshot not saved: %s", tool, exc)
        return "", ""
    return (str(path) if path else ""), data_url(result.result)


def window_origin(context: ProcessingContext) -> dict[str, Any] | None:
    """The selected window's screen rectangle ``{x, y, width, height}`` from this step's window info."""
    info = context.local(AppProcessorContext).application_window_info or {}
    rect = info.get("control_rect") if isinstance(info, dict) else None
    return rect if isinstance(rect, dict) else None


@depends_on("app_root", "log_path", "session_step")
@provides(
    "clean_screenshot_path",
    "annotated_screenshot_path",
    "desktop_screenshot_path",
    "ui_tree_path",
    "clean_screenshot_url",
    "desktop_screenshot_url",
    "application_window_info",
    "screenshot_saved_time",
)
class AppScreenshotCaptureStrategy(BaseProcessingStrategy):
    """Window screenshot (and, if configured, the desktop and the UI tree), then the window's info."""

    strategy_name = "app_screenshot_capture"

    async def execute(self, agent: AppAgent, context: ProcessingContext) -> ProcessingResult:
        """Collect the pictures and the window record."""
        started = time.perf_counter()
        dispatcher = agent.dispatcher(context.global_context)
        clean_path, clean_url = await capture(
            dispatcher, "capture_window_screenshot", {}, step_file(context, ".png")
        )
        desktop_path = desktop_url = ""
        if agent.save_full_screen:
            desktop_path, desktop_url = await capture(
                dispatcher,
                "capture_desktop_screenshot",
                {"all_screens": True},
                step_file(context, "_desktop.png"),
            )
        ui_tree_path = await self._ui_tree(agent, dispatcher, context) if agent.save_ui_tree else ""
        info = await run_one(
            dispatcher, "get_app_window_info", {"field_list": WINDOW_FIELDS}, "data_collection"
        )
        window_info = info.result if info.ok and isinstance(info.result, dict) else {}
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.DATA_COLLECTION,
            data={
                "clean_screenshot_path": clean_path,
                "annotated_screenshot_path": "",
                "desktop_screenshot_path": desktop_path,
                "ui_tree_path": ui_tree_path,
                "clean_screenshot_url": clean_url,
                "desktop_screenshot_url": desktop_url,
                "application_window_info": window_info,
                "screenshot_saved_time": time.perf_counter() - started,
            },
        )

    @staticmethod
    async def _ui_tree(agent: AppAgent, dispatcher: Any, context: ProcessingContext) -> str:
        log_path = str(context.get("log_path") or "")
        result = await run_one(dispatcher, "get_ui_tree", {}, "data_collection")
        if not log_path or not result.ok:
            return ""
        path = Path(log_path) / "ui_trees" / f"ui_tree_step{context.get('session_step') or 0}.json"
        text = json.dumps(result.result, ensure_ascii=False, indent=1, default=str)

        await asyncio.to_thread(write_log_file, path, text.encode("utf-8"))
        return str(path)


@depends_on("clean_screenshot_path", "application_window_info")
@provides(
    "control_info",
    "annotation_dict",
    "control_filter_time",
    "control_recorder",
    "annotated_screenshot_path",
    "annotated_screenshot_url",
)
class AppControlInfoStrategy(BaseProcessingStrategy):
    """The window's controls, keyed by label, and the set-of-mark screenshot when an annotator is set."""

    strategy_name = "app_control_info"

    async def execute(self, agent: AppAgent, context: ProcessingContext) -> ProcessingResult:
        """Walk the controls and annotate the screenshot."""
        started = time.perf_counter()
        controls = await fetch_controls(agent.dispatcher(context.global_context), with_values=True)
        controls = [c for c in controls if c.id]
        annotated_path = ""
        clean_path = context.local(AppProcessorContext).clean_screenshot_path or ""
        window = window_origin(context)
        if agent.detector is not None and clean_path and window is not None:
            controls = await add_detected_controls(agent.detector, Path(clean_path), controls, window)
        if agent.annotator is not None and clean_path:
            annotated = step_file(context, "_annotated.png")
            if annotated is not None:
                origin = window_origin(context)
                done = await agent.annotator(Path(clean_path), controls, annotated, origin=origin)
                annotated_path = str(done)
        kinds: dict[str, int] = {}
        for control in controls:
            kinds[control.control_type] = kinds.get(control.control_type, 0) + 1
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.DATA_COLLECTION,
            data={
                "control_info": [c.to_dict() for c in controls],
                "annotation_dict": annotation_dict(controls),
                "control_filter_time": time.perf_counter() - started,
                "control_recorder": {"count": len(controls), "types": kinds},
                "annotated_screenshot_path": annotated_path,
                "annotated_screenshot_url": "",
            },
        )
