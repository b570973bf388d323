"""Controls as the AppAgent sees them: normalised records, their text for the prompt, and the check
of a speculative action against the live control list (spec D §19).

The UICollector answers ``get_app_window_controls_info`` with the reference's field names
(``label``, ``control_text``, ``control_type``, ``control_rect``) or, for the TargetInfo variant,
``id``, ``name``, ``type``, ``rect``; both are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The fields asked of ``get_app_window_controls_info``.
CONTROL_FIELDS = ["label", "control_text", "control_type", "control_rect", "is_enabled", "is_visible"]
#: Controls listed in the prompt at most (the embedded model's window is small).
MAX_PROMPT_CONTROLS = 120


@dataclass(frozen=True)
class Control:
    """One control of the selected window, addressed by its label (``id``) within one walk."""

    id: str
    name: str
    control_type: str
    rect: Any = None
    is_enabled: bool = True
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Control:
        """Read either naming of the fields."""
        ident = data.get("id", data.get("label"))
        name = data.get("name", data.get("control_text"))
        kind = data.get("type", data.get("control_type"))
        return cls(
            id=str(ident if ident is not None else ""),
            name=str(name or ""),
            control_type=str(kind or ""),
            rect=data.get("rect", data.get("control_rect")),
            is_enabled=bool(data.get("is_enabled", True)),
            extra={k: v for k, v in data.items() if k not in _KNOWN},
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for logs."""
        return {"id": self.id, "name": self.name, "type": self.control_type, "rect": self.rect}

    def describe(self) -> str:
        """``[3] Button "7"`` (and ``(disabled)`` when it is)."""
        text = f'[{self.id}] {self.control_type} "{self.name}"'
        return text if self.is_enabled else f"{text} (disabled)"


_KNOWN = {"id", "label", "name", "control_text", "type", "control_type", "rect", "control_rect", "is_enabled"}


def parse_controls(payload: Any) -> list[Control]:
    """The controls of a tool result (a list of dicts); anything else gives an empty list."""
    if not isinstance(payload, list):
        return []
    return [Control.from_dict(item) for item in payload if isinstance(item, dict)]


def annotation_dict(controls: list[Control]) -> dict[str, Control]:
    """Controls keyed by label (``"1"``, ``"2"``...), as the set-of-mark screenshot numbers them."""
    return {c.id: c for c in controls if c.id}


def controls_prompt(controls: list[Control], limit: int = MAX_PROMPT_CONTROLS) -> str:
    """The control list as text, one per line: the model is text-only, this replaces the image."""
    if not controls:
        return "(no controls were found in the window)"
    lines = [c.describe() for c in controls[:limit]]
    if len(controls) > limit:
        lines.append(f"... and {len(controls) - limit} more controls not shown")
    return "\n".join(lines)


def validation_problem(control_id: str | None, planned: dict[str, Control], live: dict[str, Control]) -> str:
    """Why an action on ``control_id`` must not run now, or ``""`` when it may.

    The control the model saw (``planned``) must still be in the live list under the same label
    with the same name and type; otherwise the UI changed and the label means something else.
    """
    if control_id is None:
        return ""
    seen = planned.get(control_id)
    if seen is None:
        return f"control [{control_id}] is not in the control list of this step"
    now = live.get(control_id)
    if now is None:
        return f'control [{control_id}] {seen.control_type} "{seen.name}" is gone from the window'
    if (now.name, now.control_type) != (seen.name, seen.control_type):
        return (
            f'control [{control_id}] was {seen.control_type} "{seen.name}" and is now '
            f'{now.control_type} "{now.name}": the window changed'
        )
    return ""
