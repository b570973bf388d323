"""An agent's short-term memory: one typed :class:`MemoryItem` per step."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    # dataclasses.fields() is slow and get_value() is called for every history item of every prompt.
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name != "extras")
    return names


@dataclass
class MemoryItem:
    """One step's record.

    The common fields are typed; any other key (``"Thought"``, ``"ControlLabel"``, ...) goes to
    :attr:`extras`. Unset (None) fields are left out of :meth:`to_dict`.
    """

    step: int | None = None
    request: str | None = None
    response: Any = None
    parsed_response: Any = None
    action: Any = None
    arguments: Any = None
    results: Any = None
    observation: Any = None
    control_text: str | None = None
    screenshot: str | None = None
    cost: float | None = None
    error: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The typed field names, in order."""
        return _field_names(cls)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryItem:
        """Build an item from a dict (typed keys to fields, others to extras)."""
        item = cls()
        item.add_values_from_dict(data)
        return item

    def set_value(self, key: str, value: Any) -> None:
        """Set one key."""
        if key in self.field_names():
            setattr(self, key, value)
        else:
            self.extras[key] = value

    def add_values_from_dict(self, values: dict[str, Any]) -> None:
        """Set several keys."""
        for key, value in values.items():
            self.set_value(key, value)

    def get_value(self, key: str, default: Any = None) -> Any:
        """Return one key's value, or ``default``."""
        if key in self.field_names():
            value = getattr(self, key)
            return default if value is None else value
        return self.extras.get(key, default)

    @property
    def attributes(self) -> list[str]:
        """The keys that hold a value."""
        return list(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The set fields followed by the extras."""
        out = {name: getattr(self, name) for name in self.field_names() if getattr(self, name) is not None}
        out.update(self.extras)
        return out

    def filter(self, keys: Iterable[str]) -> dict[str, Any]:
        """The subset of :meth:`to_dict` named by ``keys`` (in ``keys`` order)."""
        data = self.to_dict()
        return {k: data[k] for k in keys if k in data}


class Memory:
    """An ordered list of MemoryItems."""

    def __init__(self, items: Iterable[MemoryItem] = ()) -> None:
        self._content: list[MemoryItem] = list(items)

    @property
    def content(self) -> list[MemoryItem]:
        """The items, oldest first (a copy)."""
        return list(self._content)

    def __iter__(self) -> Iterator[MemoryItem]:
        return iter(self._content)

    def __len__(self) -> int:
        return len(self._content)

    @property
    def length(self) -> int:
        """How many items there are."""
        return len(self._content)

    def add_memory_item(self, item: MemoryItem) -> None:
        """Append an item."""
        self._content.append(item)

    def get_latest_item(self) -> MemoryItem | None:
        """The newest item, or None when empty."""
        return self._content[-1] if self._content else None

    def filter_memory_from_keys(self, keys: Iterable[str]) -> list[dict[str, Any]]:
        """Each item reduced to ``keys``."""
        wanted = list(keys)
        return [item.filter(wanted) for item in self._content]

    def filter_memory_from_steps(self, steps: Iterable[int]) -> list[dict[str, Any]]:
        """The items whose ``step`` is in ``steps``, as dicts."""
        wanted = set(steps)
        return [item.to_dict() for item in self._content if item.step in wanted]

    def delete(self, step: int) -> None:
        """Remove the items of ``step``."""
        self._content = [item for item in self._content if item.step != step]

    delete_memory_item = delete

    def clear(self) -> None:
        """Remove every item."""
        self._content.clear()

    def is_empty(self) -> bool:
        """True when there is no item."""
        return not self._content

    def to_list_of_dicts(self) -> list[dict[str, Any]]:
        """The items as dicts, oldest first."""
        return [item.to_dict() for item in self._content]

    @classmethod
    def from_list_of_dicts(cls, data: Iterable[dict[str, Any]]) -> Memory:
        """Rebuild a Memory from :meth:`to_list_of_dicts` output."""
        return cls(MemoryItem.from_dict(d) for d in data)
