"""KV-cache slots of the embedded model: which slot a call uses, and prompt prefixes kept on disk.

llama.cpp reuses the KV cache of a slot for the longest prefix the new prompt shares with what the
slot last held. Left to itself it puts a new conversation into the slot that shares the most
(usually just the system prompt), which evicts the conversation living there: the two device
agents of a ``--local`` fleet, or the planner and a device, would keep recomputing each other's
history. :class:`SlotTable` instead keeps a conversation in its own slot: a call that continues a
slot's conversation (shares more than its system message) goes there; a new conversation takes the
least recently used slot, and the caller copies the best warm prefix into it.

:class:`PrefixStore` keeps the KV state of system prompts on disk (``$XDG_CACHE_HOME/starweave/kv``)
so the next process does not recompute them: for a 700-token system prompt that is ~18 s on one
core, most of a short task's time.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starweave.errors import InvalidArgumentError
from starweave.llm.base import Message

# Below this many characters a shared prefix is not worth a slot copy (a copy costs ~10 ms).
MIN_COPY_CHARS = 400
# The system prompts kept on disk; the oldest are deleted beyond this (each is ~28 KB per token).
MAX_STORED_PREFIXES = 12
_SEPARATOR = "\x1e"


def message_text(message: Message) -> str:
    """One message as text: its role and its content (text parts joined; images by their URL)."""
    content = message.get("content")
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text") or (part.get("image_url") or {}).get("url") or ""))
            else:
                parts.append(str(part))
        content = "".join(parts)
    return f"{message.get('role', '')}\x1f{content or ''}"


def conversation_text(messages: list[Message]) -> str:
    """The messages as one string whose prefixes follow the prompt's token prefixes."""
    return "".join(message_text(m) + _SEPARATOR for m in messages)


def system_text(messages: list[Message]) -> str:
    """The leading system message as text ("" when the conversation has none)."""
    if messages and messages[0].get("role") == "system":
        return message_text(messages[0]) + _SEPARATOR
    return ""


def opening_text(messages: list[Message]) -> str:
    """What identifies a conversation: the system message and the first user message, as text."""
    opening: list[Message] = []
    for message in messages:
        opening.append(message)
        if message.get("role") != "system":
            break
    return conversation_text(opening)


def system_part(opening: str) -> str:
    """The system message's text at the start of an opening ("" when there is none)."""
    head, separator, _rest = opening.partition(_SEPARATOR)
    return head + separator if head.startswith("system\x1f") else ""


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    low, high = 0, limit
    # Binary search on slices: C-speed comparisons instead of a Python loop over 10 KB prompts.
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass
class SlotChoice:
    """Where a call runs: ``slot``; ``continues`` when it extends that slot's conversation;
    ``donor`` another slot whose KV prefix (``donor_chars`` long) is worth copying in first."""

    slot: int
    continues: bool
    donor: int | None = None
    donor_chars: int = 0


@dataclass
class SlotTable:
    """What each slot holds (as conversation text) and when it was last used."""

    size: int
    contents: list[str] = field(default_factory=list)
    used: list[int] = field(default_factory=list)
    _clock: int = 0

    def __post_init__(self) -> None:
        if self.size < 1:
            raise InvalidArgumentError(f"the embedded model needs at least one cache slot, not {self.size}")
        self.contents = [""] * self.size
        self.used = [0] * self.size

    def choose(self, text: str, opening: str) -> SlotChoice:
        """The slot for a call whose conversation text is ``text``.

        ``opening`` is the conversation's identity: its system message and first request. A call
        whose opening a slot holds continues there. A new conversation takes an empty slot, else
        the slot that shares at least half of the first request too (a related conversation, such
        as the planner's previous review), else the least recently used one; ``donor`` then names a
        slot whose longer prefix is worth copying in first.
        """
        shared = [common_prefix(text, held) for held in self.contents]
        best = max(range(self.size), key=lambda s: (shared[s], self.used[s]))
        if self.contents[best] and shared[best] >= len(opening):
            return SlotChoice(best, continues=True)
        empty = [s for s in range(self.size) if not self.contents[s]]
        if empty:
            slot = empty[0]
        elif shared[best] >= _related_threshold(opening):
            return SlotChoice(best, continues=True)
        else:
            slot = min(range(self.size), key=lambda s: self.used[s])
        if best != slot and shared[best] - shared[slot] >= MIN_COPY_CHARS:
            return SlotChoice(slot, continues=False, donor=best, donor_chars=shared[best])
        return SlotChoice(slot, continues=False)

    def record(self, slot: int, text: str) -> None:
        """``slot`` now holds ``text`` (the prompt plus the answer)."""
        self._clock += 1
        self.contents[slot] = text
        self.used[slot] = self._clock

    def copy(self, source: int, target: int) -> None:
        """``target`` now holds what ``source`` holds (after a KV copy)."""
        self.contents[target] = self.contents[source]


def _related_threshold(opening: str) -> int:
    """How much of ``opening`` another conversation must share to count as related."""
    system = len(system_part(opening))
    return system + max(1, (len(opening) - system) // 2)


@dataclass(frozen=True)
class PrefixStore:
    """System-prompt KV states on disk, one file per (model, context, system prompt).

    File names are digests, so a request's text never appears in a name; the files hold only the
    system message's tokens (they are saved right after a call that contained nothing else).
    """

    folder: Path
    model_key: str

    def name_for(self, system: str) -> str:
        """The file name of ``system``'s state (a plain name: llama.cpp refuses paths)."""
        digest = hashlib.sha256(f"{self.model_key}\x00{system}".encode()).hexdigest()[:32]
        return f"prefix-{digest}.bin"

    def has(self, system: str) -> bool:
        """Whether a state for ``system`` is stored."""
        return (self.folder / self.name_for(system)).is_file()

    def prepare(self) -> None:
        """Create the folder (private: the states encode prompts)."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)

    def touch(self, system: str) -> None:
        """Mark ``system``'s state as used now (pruning keeps the recently used ones)."""
        path = self.folder / self.name_for(system)
        if path.is_file():
            os.utime(path)

    def prune(self, keep: int = MAX_STORED_PREFIXES) -> None:
        """Delete all but the ``keep`` most recently used states (and left-over partial files)."""
        states = sorted(self.folder.glob("prefix-*.bin"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in states[keep:]:
            stale.unlink(missing_ok=True)


def model_key(path: Path, n_ctx: int) -> str:
    """What a stored KV state depends on: the model file (name, size, mtime) and the slot context."""
    stat = path.stat()
    return json.dumps([path.name, stat.st_size, int(stat.st_mtime), n_ctx])


def timings_of(result: dict[str, Any]) -> dict[str, float]:
    """llama.cpp's per-call timings (prompt and generation milliseconds, token counts, cache hits),
    plus ``warm_ms``: the time spent preparing the call's KV-cache slot."""
    raw = result.get("timings")
    if not isinstance(raw, dict):
        return {}
    keys = ("cache_n", "prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "warm_ms")
    return {k: float(raw[k]) for k in keys if isinstance(raw.get(k), int | float)}
