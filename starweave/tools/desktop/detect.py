"""Optional visual control detection and the hybrid merge rule (spec D §17).

No detector is required: the accessibility tree is the default source. A detector (e.g. an OmniParser
endpoint) only has to implement :class:`ControlDetector`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from starweave.tools.desktop.model import ControlInfo, Rect

IOU_THRESHOLD_FOR_MERGE = 0.1


@runtime_checkable
class ControlDetector(Protocol):
    """Finds controls in a screenshot; boxes are returned in screen coordinates (``origin`` added)."""

    async def detect(self, png: bytes, origin: Rect) -> list[ControlInfo]:
        """Controls seen in ``png`` (a capture whose top-left is at ``origin`` on screen)."""
        ...


def merge_controls(
    a11y: list[ControlInfo], detected: list[ControlInfo], iou: float = IOU_THRESHOLD_FOR_MERGE
) -> list[ControlInfo]:
    """Keep every accessibility control; add each detected one whose IoU with all of them is <= ``iou``;
    relabel 1..N (accessibility controls first, in order, so their walk ids stay valid)."""
    kept = [d for d in detected if all(d.rect.iou(a.rect) <= iou for a in a11y)]
    merged: list[ControlInfo] = []
    for index, control in enumerate([*a11y, *kept], start=1):
        source = control.source if index <= len(a11y) else "detector"
        merged.append(control.model_copy(update={"id": str(index), "source": source}))
    return merged
