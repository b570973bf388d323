"""Hybrid control detection (spec D §17): visually detected controls next to the accessibility ones.

A detector is optional (``AppAgent.detector``, a ``ControlDetector``); without one the accessibility
tree is the only source. Detected controls whose box overlaps no accessibility control by more than
the IoU threshold are added after them with the next labels, marked ``source: detector``. They
have no accessibility element, so only clicks can reach them: ``click_input`` on one is sent as
``click_on_coordinates`` at its centre, as fractions of the window.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from starweave.agents.app.controls import Control
from starweave.agents.app.response import AppAction
from starweave.log_folder import read_log_file
from starweave.tools.desktop.detect import IOU_THRESHOLD_FOR_MERGE, ControlDetector
from starweave.tools.desktop.model import Rect

DETECTOR = "detector"


def rect_of(value: Any) -> Rect | None:
    """A control rectangle from ``[left, top, right, bottom]`` or ``{x, y, width, height}``."""
    if isinstance(value, dict):
        try:
            return Rect(
                x=int(value["x"]), y=int(value["y"]), width=int(value["width"]), height=int(value["height"])
            )
        except (KeyError, TypeError, ValueError):
            return None
    if isinstance(value, list | tuple) and len(value) == 4:
        left, top, right, bottom = (int(v) for v in value)
        return Rect(x=left, y=top, width=max(0, right - left), height=max(0, bottom - top))
    return None


async def add_detected_controls(
    detector: ControlDetector, screenshot: Path, controls: list[Control], window: dict[str, Any]
) -> list[Control]:
    """``controls`` plus the detected ones no accessibility control already covers."""
    origin = rect_of(window)
    if origin is None:
        return controls
    # The screenshot lies in the log folder, often in the workspace: a link planted under its name is
    # never followed (it would hand the detector, and the model, any file Starweave can read).
    png = await asyncio.to_thread(read_log_file, screenshot)
    detected = await detector.detect(png, origin)
    known = [r for r in (rect_of(c.rect) for c in controls) if r is not None]
    next_label = max((int(c.id) for c in controls if c.id.isdigit()), default=0) + 1
    merged = list(controls)
    for found in detected:
        if all(found.rect.iou(rect) <= IOU_THRESHOLD_FOR_MERGE for rect in known):
            box = found.rect
            merged.append(
                Control(
                    id=str(next_label),
                    name=found.name,
                    control_type=found.control_type or "Custom",
                    rect=[box.left, box.top, box.right, box.bottom],
                    extra={"source": DETECTOR},
                )
            )
            known.append(box)
            next_label += 1
    return merged


def is_detected(control: Control | None) -> bool:
    """True for a control found only by the detector."""
    return control is not None and control.extra.get("source") == DETECTOR


def visual_action(action: AppAction, control: Control, window: dict[str, Any] | None) -> AppAction | str:
    """The coordinate click standing in for ``action`` on a detected control, or why there is none."""
    box, frame = rect_of(control.rect), rect_of(window)
    if action.function != "click_input":
        return (
            f"control {control.id} was found on the screenshot only; it can be clicked, "
            f"not used with {action.function}"
        )
    if box is None or frame is None or frame.width <= 0 or frame.height <= 0:
        return f"control {control.id} has no position to click"
    x, y = box.center
    arguments = {
        "x": min(1.0, max(0.0, (x - frame.x) / frame.width)),
        "y": min(1.0, max(0.0, (y - frame.y) / frame.height)),
        "button": action.arguments.get("button", "left"),
        "double": bool(action.arguments.get("double", False)),
    }
    return AppAction(function="click_on_coordinates", arguments=arguments)
