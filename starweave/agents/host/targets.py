"""Targets the HostAgent can pick: open application windows and third-party agents (seed 002)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


class TargetKind(StrEnum):
    """What a target is."""

    WINDOW = "window"
    THIRD_PARTY_AGENT = "third_party_agent"


class TargetInfo(BaseModel):
    """One selectable target; ``id`` is 1-based, third-party agents continue after the windows."""

    model_config = ConfigDict(extra="allow")

    id: str
    name: str = ""
    kind: str = TargetKind.WINDOW.value
    type: str = ""

    def describe(self) -> str:
        """``[1] window "Calculator" (gnome-calculator)``."""
        kind = "agent" if self.kind == TargetKind.THIRD_PARTY_AGENT.value else "window"
        extra = f" ({self.type})" if self.type else ""
        return f'[{self.id}] {kind} "{self.name}"{extra}'


class TargetRegistry:
    """The targets of the current step, by id."""

    def __init__(self) -> None:
        self._targets: dict[str, TargetInfo] = {}

    def register(self, targets: list[TargetInfo]) -> None:
        """Add (or replace) targets."""
        for target in targets:
            self._targets[target.id] = target

    def get(self, target_id: Any) -> TargetInfo | None:
        """The target with ``target_id``, or None."""
        return self._targets.get(str(target_id))

    def all(self) -> list[TargetInfo]:
        """Every target, in id order."""
        return sorted(self._targets.values(), key=lambda t: (len(t.id), t.id))

    def clear(self) -> None:
        """Forget every target."""
        self._targets.clear()


def window_targets(payload: Any) -> list[TargetInfo]:
    """The windows of a ``get_desktop_app_info`` answer (a list of dicts with 1-based ids)."""
    if not isinstance(payload, list):
        return []
    targets = []
    for index, item in enumerate(payload, start=1):
        if not isinstance(item, dict):
            continue
        data = {k: v for k, v in item.items() if k not in ("id", "name", "kind", "type")}
        targets.append(
            TargetInfo(
                id=str(item.get("id", index)),
                name=str(item.get("name") or item.get("title") or ""),
                kind=TargetKind.WINDOW.value,
                type=str(item.get("type") or item.get("process_name") or ""),
                **data,
            )
        )
    return targets


def third_party_targets(names: list[str], start_index: int) -> list[TargetInfo]:
    """Third-party agents, numbered after the ``start_index`` windows."""
    return [
        TargetInfo(
            id=str(start_index + i + 1),
            name=name,
            kind=TargetKind.THIRD_PARTY_AGENT.value,
            type="ThirdPartyAgent",
        )
        for i, name in enumerate(names)
    ]
