"""Plain data of the desktop layer: rectangles, windows, controls and walk limits.

Coordinates are always screen pixels (origin top-left of the X screen / Windows virtual desktop).
The backends correct toolkit quirks (GTK4 window-relative extents) before building these models.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field


class Rect(BaseModel):
    """An axis-aligned rectangle in screen pixels."""

    x: int
    y: int
    width: int
    height: int

    @property
    def left(self) -> int:
        return self.x

    @property
    def top(self) -> int:
        return self.y

    @property
    def right(self) -> int:
        return self.x + self.width

    @property
    def bottom(self) -> int:
        return self.y + self.height

    @property
    def center(self) -> tuple[int, int]:
        return self.x + self.width // 2, self.y + self.height // 2

    @property
    def area(self) -> int:
        return max(0, self.width) * max(0, self.height)

    def is_empty(self) -> bool:
        """True for zero-sized or off-screen sentinel rectangles (GTK3 reports -2**31 for hidden items)."""
        return self.width <= 0 or self.height <= 0 or self.x <= -(2**30) or self.y <= -(2**30)

    def intersection(self, other: Rect) -> int:
        """Area shared with ``other``."""
        w = min(self.right, other.right) - max(self.left, other.left)
        h = min(self.bottom, other.bottom) - max(self.top, other.top)
        return max(0, w) * max(0, h)

    def iou(self, other: Rect) -> float:
        """Intersection over union (0 when either rectangle is empty)."""
        inter = self.intersection(other)
        union = self.area + other.area - inter
        return inter / union if union > 0 else 0.0

    def to_ltrb(self) -> dict[str, int]:
        """The reference's ``{left, top, right, bottom}`` form."""
        return {"left": self.left, "top": self.top, "right": self.right, "bottom": self.bottom}


class WindowInfo(BaseModel):
    """A top-level application window (spec C §13.2 WindowInfo, minus the per-listing annotation id)."""

    id: str
    name: str
    title: str
    handle: int = 0
    class_name: str = ""
    process_id: int = 0
    is_visible: bool = True
    is_minimized: bool = False
    is_maximized: bool = False
    is_active: bool = False
    rectangle: Rect
    control_type: str = "Window"
    app_name: str = ""


class ControlInfo(BaseModel):
    """One control of a window, from the most recent walk (``id`` is stable within that walk)."""

    id: str
    name: str
    control_type: str
    rect: Rect
    is_enabled: bool = True
    is_visible: bool = True
    automation_id: str = ""
    actions: list[str] = Field(default_factory=list)
    value: str = ""
    depth: int = 0
    source: str = "a11y"


class WalkLimits(BaseModel):
    """Bounds of one best-effort tree walk."""

    max_depth: int = 30
    max_nodes: int = 2000
    max_seconds: float = 5.0


class SettlePolicy(BaseModel):
    """How long an action waits for the UI to settle (screen polled, never a fixed sleep).

    The wait ends when the screen changed and then stayed unchanged for ``quiet`` seconds, when it did
    not change at all within ``first_change`` seconds, or after ``max_wait`` seconds in any case.
    """

    poll: float = 0.03
    quiet: float = 0.15
    first_change: float = 0.6
    max_wait: float = 3.0


@dataclass(frozen=True)
class Drag:
    """One mouse drag in screen pixels: press ``button`` at (x1, y1), move over ``duration``
    seconds, release at (x2, y2), holding ``key_hold`` ("ctrl", "shift", "alt") when given."""

    x1: int
    y1: int
    x2: int
    y2: int
    button: str = "left"
    duration: float = 1.0
    key_hold: str | None = None
