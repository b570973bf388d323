"""Bounded, best-effort walks over an accessibility tree, shared by the Linux and Windows backends.

A backend supplies a :class:`NodeAdapter` for its native elements; the walk enforces the limits (depth,
node count, wall time) and skips any element whose properties cannot be read, keeping the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from starweave.tools.desktop.model import ControlInfo, Rect, WalkLimits

N = TypeVar("N")
N_contra = TypeVar("N_contra", contravariant=True)


# Children read from one element at most: a spreadsheet reports millions of cells as children.
MAX_CHILDREN_PER_NODE = 1000


class NodeAdapter(Protocol[N_contra]):
    """Reads one native accessibility element; both methods may raise ``errors``."""

    errors: tuple[type[BaseException], ...]

    def children(self, node: N_contra, max_count: int, deadline: float) -> Sequence[Any]:
        """At most ``max_count`` of the element's children (empty for a leaf); stops reading early
        once ``time.monotonic()`` passes ``deadline`` (each child may be a round trip)."""
        ...

    def describe(self, node: N_contra, depth: int) -> ControlInfo | None:
        """The element as a control with ``id=""``, or None when it is not worth listing."""
        ...


@dataclass
class WalkResult(Generic[N]):
    """Controls found (ids "1", "2", ... in walk order) with their native elements."""

    controls: list[ControlInfo] = field(default_factory=list)
    elements: dict[str, N] = field(default_factory=dict)
    visited: int = 0
    skipped: int = 0
    truncated: str = ""


def walk_controls(
    root: N,
    adapter: NodeAdapter[N],
    limits: WalkLimits,
    clock: Callable[[], float] = time.monotonic,
    cancelled: Callable[[], bool] | None = None,
) -> WalkResult[N]:
    """Depth-first pre-order walk below ``root`` (the root itself is not listed).

    ``truncated`` names the limit that stopped the walk ("depth" is only reported, the walk goes on
    with the siblings; "cancelled" when ``cancelled()`` turned true). A node whose properties raise one
    of ``adapter.errors`` is skipped and its children are still tried. ``clock`` is only the walk's own
    clock; adapters stop reading children at the same deadline on ``time.monotonic``.
    """
    result: WalkResult[N] = WalkResult()
    deadline = clock() + limits.max_seconds
    adapter_deadline = time.monotonic() + limits.max_seconds
    budget = min(limits.max_nodes, MAX_CHILDREN_PER_NODE)
    kids = _safe_children(adapter, root, result, budget, adapter_deadline)
    _note_cut(result, len(kids), budget)
    stack: list[tuple[Any, int]] = [(child, 1) for child in reversed(kids)]
    while stack:
        if result.visited >= limits.max_nodes:
            result.truncated = "max_nodes"
            break
        if clock() > deadline or time.monotonic() > adapter_deadline:
            result.truncated = "max_seconds"
            break
        if cancelled is not None and cancelled():
            result.truncated = "cancelled"
            break
        node, depth = stack.pop()
        result.visited += 1
        try:
            info = adapter.describe(node, depth)
        except adapter.errors:
            result.skipped += 1
            info = None
        if info is not None:
            control_id = str(len(result.controls) + 1)
            result.controls.append(info.model_copy(update={"id": control_id, "depth": depth}))
            result.elements[control_id] = node
        if depth >= limits.max_depth:
            result.truncated = result.truncated or "max_depth"
            continue
        # Never read more children than the walk can still visit.
        budget = min(limits.max_nodes - result.visited - len(stack), MAX_CHILDREN_PER_NODE)
        if budget <= 0:
            result.truncated = result.truncated or "max_nodes"
            continue
        kids = _safe_children(adapter, node, result, budget, adapter_deadline)
        _note_cut(result, len(kids), budget)
        stack.extend((child, depth + 1) for child in reversed(kids))
    return result


def build_tree(
    root: N,
    adapter: NodeAdapter[N],
    label: Callable[[N, int], dict[str, Any]],
    limits: WalkLimits,
    clock: Callable[[], float] = time.monotonic,
    cancelled: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """A nested ``{..., children: [...]}`` dict under the same limits; unreadable nodes become
    ``{"error": ...}`` leaves so the shape of the rest is kept."""
    deadline = clock() + limits.max_seconds
    adapter_deadline = time.monotonic() + limits.max_seconds
    budget = [limits.max_nodes]

    def stop() -> bool:
        return (
            budget[0] <= 0
            or clock() > deadline
            or time.monotonic() > adapter_deadline
            or (cancelled is not None and cancelled())
        )

    def visit(node: N, depth: int) -> dict[str, Any]:
        budget[0] -= 1
        try:
            entry = label(node, depth)
        except adapter.errors as exc:
            return {"error": f"unreadable element: {exc}", "children": []}
        children: list[dict[str, Any]] = []
        if depth < limits.max_depth and not stop():
            try:
                kids = list(adapter.children(node, min(budget[0], MAX_CHILDREN_PER_NODE), adapter_deadline))
            except adapter.errors:
                kids = []
            for kid in kids:
                if stop():
                    entry["truncated"] = True
                    break
                children.append(visit(kid, depth + 1))
        entry["children"] = children
        return entry

    return visit(root, 0)


def ui_node(index: int, name: str, control_type: str, rect: Rect, window: Rect, level: int) -> dict[str, Any]:
    """One UI-tree node in the reference's shape (absolute, window-adjusted and 0-1 relative boxes)."""
    adjusted = Rect(x=rect.x - window.x, y=rect.y - window.y, width=rect.width, height=rect.height)
    w, h = max(window.width, 1), max(window.height, 1)
    return {
        "id": f"node_{index}",
        "name": name,
        "control_type": control_type,
        "rectangle": rect.to_ltrb(),
        "adjusted_rectangle": adjusted.to_ltrb(),
        "relative_rectangle": {
            "left": round(adjusted.left / w, 4),
            "top": round(adjusted.top / h, 4),
            "right": round(adjusted.right / w, 4),
            "bottom": round(adjusted.bottom / h, 4),
        },
        "level": level,
    }


def _note_cut(result: WalkResult[Any], count: int, budget: int) -> None:
    # A full read may have left children unread (the count is not asked for separately).
    if count >= budget:
        result.truncated = result.truncated or (
            "max_children" if budget >= MAX_CHILDREN_PER_NODE else "max_nodes"
        )


def _safe_children(
    adapter: NodeAdapter[N], node: Any, result: WalkResult[N], max_count: int, deadline: float
) -> list[Any]:
    try:
        return list(adapter.children(node, max_count, deadline))[:max_count]
    except adapter.errors:
        result.skipped += 1
        return []
