"""The MobileAgent's DATA_COLLECTION phase (spec C §4.4): the screenshot, the installed apps and the
screen's controls, composed in one ``MobileDataCollectionStrategy``.

The screenshot is saved as ``action_step{N}.png`` and, with the controls' ids drawn on it, as
``action_step{N}_annotated.png``. A text-only model never sees them (the controls come as text), so a
failed capture is a warning; a failed app or control list is an empty list with a warning, and the
model is told the screen showed no controls. When adb no longer reaches the phone (no screenshot, the
control list failed, and ``get_device_state`` reads from adb's device list that the phone is absent,
offline or unauthorized, or that adb cannot start), the step FAILs the task with that reason instead
of letting the model act blind until the step limit. The state is read, never the wording of an
error message.

The controls are read with ``force_refresh`` each step: the server's 5 s cache is for repeated reads
within a step, and the screen may have changed since the last one (a ``wait``, an app still loading).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starweave.agent import (
    BaseProcessingStrategy,
    ComposedStrategy,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    depends_on,
    provides,
)
from starweave.agents.app.controls import annotation_dict
from starweave.agents.app.data_strategies import capture, step_file
from starweave.agents.app.vision import file_urls
from starweave.agents.mobile import tools
from starweave.agents.mobile.local import MobileProcessorContext
from starweave.commands import Result

if TYPE_CHECKING:
    from starweave.agents.mobile.agent import MobileAgent

logger = logging.getLogger(__name__)


async def collect_logged(
    context: ProcessingContext, tool_name: str, parameters: dict[str, Any] | None = None
) -> Result:
    """Call a data-collection tool; a failure is logged (the step goes on with an empty list)."""
    result = await tools.collect(context.global_context.command_dispatcher, tool_name, parameters)
    if not result.ok:
        logger.warning("%s failed: %s", tool_name, result.error)
    return result


async def unreachable_state(context: ProcessingContext) -> str:
    """The phone's state when adb cannot use it (absent, offline, unauthorized, no adb), else ""."""
    state = tools.device_state(await collect_logged(context, tools.DEVICE_STATE))
    return state if tools.phone_gone(state) else ""


@depends_on("log_path", "session_step")
@provides(
    "clean_screenshot_path", "clean_screenshot_url", "annotated_screenshot_url", "screenshot_saved_time"
)
class MobileScreenshotCaptureStrategy(BaseProcessingStrategy):
    """``capture_screenshot``, saved to the log folder."""

    strategy_name = "mobile_screenshot_capture"

    async def execute(self, agent: MobileAgent, context: ProcessingContext) -> ProcessingResult:
        """Take and save the screenshot."""
        started = time.perf_counter()
        dispatcher = context.global_context.command_dispatcher
        path, url = await capture(dispatcher, tools.CAPTURE_SCREENSHOT, {}, step_file(context, ".png"))
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.DATA_COLLECTION,
            data={
                "clean_screenshot_path": path,
                "clean_screenshot_url": url,
                "annotated_screenshot_url": "",
                "screenshot_saved_time": time.perf_counter() - started,
            },
        )


@depends_on("clean_screenshot_url")
@provides("installed_apps", "apps_collection_time")
class MobileAppsCollectionStrategy(BaseProcessingStrategy):
    """``get_mobile_app_target_info``: the user's installed apps (the server caches them)."""

    strategy_name = "mobile_apps_collection"
    default_fail_fast = False

    async def execute(self, agent: MobileAgent, context: ProcessingContext) -> ProcessingResult:
        """List the apps."""
        started = time.perf_counter()
        result = await collect_logged(context, tools.INSTALLED_APPS)
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.DATA_COLLECTION,
            data={
                "installed_apps": tools.apps_of(result),
                "apps_collection_time": time.perf_counter() - started,
            },
        )


@depends_on("clean_screenshot_url")
@provides(
    "current_controls",
    "controls_collection_time",
    "annotated_screenshot_url",
    "annotated_screenshot_path",
    "annotation_dict",
)
class MobileControlsCollectionStrategy(BaseProcessingStrategy):
    """``get_app_window_controls_target_info``, and the screenshot with their ids drawn on it."""

    strategy_name = "mobile_controls_collection"
    default_fail_fast = True  # only a phone adb cannot reach fails it; a failed list is a warning

    async def execute(self, agent: MobileAgent, context: ProcessingContext) -> ProcessingResult:
        """List the controls and annotate the screenshot (FAIL when the phone is gone)."""
        started = time.perf_counter()
        result = await collect_logged(context, tools.SCREEN_CONTROLS, {"force_refresh": True})
        local = context.local(MobileProcessorContext)
        gone = "" if result.ok or local.clean_screenshot_url else await unreachable_state(context)
        if gone:
            return ProcessingResult(
                success=False,
                phase=ProcessingPhase.DATA_COLLECTION,
                error=(
                    f"the phone is no longer reachable (no screenshot, no controls; adb: {gone}): "
                    f"{result.error}"
                ),
            )
        controls = tools.controls_of(result)
        clean = local.clean_screenshot_path or ""
        annotated_path = annotated_url = ""
        out = step_file(context, "_annotated.png")
        if agent.annotator is not None and clean and out is not None:
            annotated_path = str(await agent.annotator(Path(clean), controls, out))
            if agent.prompter.is_visual:
                annotated_url = "".join(
                    url for _what, url in await file_urls([("annotated", annotated_path)])
                )
        return ProcessingResult(
            success=True,
            phase=ProcessingPhase.DATA_COLLECTION,
            data={
                "current_controls": controls,
                "controls_collection_time": time.perf_counter() - started,
                "annotated_screenshot_url": annotated_url,
                "annotated_screenshot_path": annotated_path,
                "annotation_dict": annotation_dict(controls),
            },
        )


def mobile_data_collection() -> ComposedStrategy:
    """The DATA_COLLECTION phase: screenshot, apps, controls."""
    return ComposedStrategy(
        strategies=[
            MobileScreenshotCaptureStrategy(),
            MobileAppsCollectionStrategy(),
            MobileControlsCollectionStrategy(),
        ],
        name="MobileDataCollectionStrategy",
        fail_fast=True,
    )
