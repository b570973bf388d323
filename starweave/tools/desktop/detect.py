"""Optional visual control detection and the IoU threshold of the hybrid merge rule (spec D §17;
the merge itself is `starweave.agents.app.detection.add_detected_controls`).

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
