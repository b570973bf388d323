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


class NodeAdapter(Protocol[N_contra]):
    """Reads one native accessibility element; both methods may raise ``errors``."""

    errors: tuple[type[BaseException], ...]

    def children(self, node: N_contra) -> Sequence[Any]:
        """The element's children (an empty sequence for a leaf)."""
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
) -> WalkResult[N]:
    """Depth-first pre-order walk below ``root`` (the root itself is not listed).

    ``truncated`` names the limit that stopped the walk ("depth" is only reported, the walk goes on
    with the siblings). A node whose properties raise one of ``adapter.errors`` is skipped and its
    children are still tried.
    """
    result: WalkResult[N] = WalkResult()
    deadline = clock() + limits.max_seconds
    stack: list[tuple[Any, int]] = [(child, 1) for child in reversed(_safe_children(adapter, root, result))]
    while stack:
        if result.visited >= limits.max_nodes:
            result.truncated = "max_nodes"
            break
        if clock() > deadline:
            result.truncated = "max_seconds"
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
        stack.extend((child, depth + 1) for child in reversed(_safe_children(adapter, node, result)))
    return result


def build_tree(
    root: N,
    adapter: NodeAdapter[N],
    label: Callable[[N, int], dict[str, Any]],
    limits: WalkLimits,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """A nested ``{..., children: [...]}`` dict under the same limits; unreadable nodes become
    ``{"error": ...}`` leaves so the shape of the rest is kept."""
    deadline = clock() + limits.max_seconds
    budget = [limits.max_nodes]

    def visit(node: N, depth: int) -> dict[str, Any]:
        budget[0] -= 1
        try:
            entry = label(node, depth)
        except adapter.errors as exc:
            return {"error": f"unreadable element: {exc}", "children": []}
        children: list[dict[str, Any]] = []
        if depth < limits.max_depth:
            try:
                kids = list(adapter.children(node))
            except adapter.errors:
                kids = []
            for kid in kids:
                if budget[0] <= 0 or clock() > deadline:
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


def _safe_children(adapter: NodeAdapter[N], node: Any, result: WalkResult[N]) -> list[Any]:
    try:
        return list(adapter.children(node))
    except adapter.errors:
        result.skipped += 1
        return []
