"""The Blackboard: memory shared by cooperating agents (and saved across sessions).

It holds four :class:`Memory` sections. Screenshots are stored as a path plus metadata; the
image file is read (and turned into a ``data:`` URL) only when the prompt is built.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import mimetypes
from pathlib import Path
from typing import Any

from starweave.agent.memory import Memory, MemoryItem
from starweave.errors import ConfigError
from starweave.log_folder import read_log_file

logger = logging.getLogger(__name__)

BLACKBOARD_HEADER = "[Blackboard:]"
QUESTIONS_HEADER = "[Questions & Answers:]"
REQUESTS_HEADER = "[Request History:]"
TRAJECTORIES_HEADER = "[Step Trajectories Completed Previously:]"

_SECTIONS = ("questions", "requests", "trajectories", "screenshots")


def image_to_data_url(path: str | Path) -> str:
    """Read an image file of a log folder and return it as a base64 ``data:`` URL.

    Read as :func:`read_log_file` reads: the log folder is often in the workspace, and a link the
    model planted under a screenshot's name would otherwise send any file Starweave can read to the
    model. ConfigError when the folder itself goes through such a link."""
    mime = mimetypes.guess_type(str(path))[0] or "image/png"
    encoded = base64.b64encode(read_log_file(Path(path))).decode("ascii")
    return f"data:{mime};base64,{encoded}"


class Blackboard:
    """Questions, requests, trajectories and screenshots shared by agents.

    Hand the *same instance* to agents that cooperate (e.g. host and app agent).
    """

    def __init__(self) -> None:
        self._questions = Memory()
        self._requests = Memory()
        self._trajectories = Memory()
        self._screenshots = Memory()

    @property
    def questions(self) -> Memory:
        """Questions asked to the user and their answers."""
        return self._questions

    @property
    def requests(self) -> Memory:
        """Past requests of the session."""
        return self._requests

    @property
    def trajectories(self) -> Memory:
        """Steps completed previously."""
        return self._trajectories

    @property
    def screenshots(self) -> Memory:
        """Saved screenshots: ``screenshot_path`` plus ``metadata``."""
        return self._screenshots

    # -- writing --------------------------------------------------------------------------
    @staticmethod
    def add_data(data: dict[str, Any] | MemoryItem, memory: Memory) -> None:
        """Append ``data`` (a dict or a MemoryItem) to ``memory``."""
        item = data if isinstance(data, MemoryItem) else MemoryItem.from_dict(dict(data))
        memory.add_memory_item(item)

    def add_questions(self, questions: dict[str, Any] | MemoryItem) -> None:
        """Record a question and its answer."""
        self.add_data(questions, self._questions)

    def add_requests(self, requests: dict[str, Any] | MemoryItem) -> None:
        """Record a request, e.g. ``{"request_0": "..."}``."""
        self.add_data(requests, self._requests)

    def add_trajectories(self, trajectories: dict[str, Any] | MemoryItem) -> None:
        """Record a completed step."""
        self.add_data(trajectories, self._trajectories)

    def add_image(self, screenshot_path: str | Path, metadata: dict[str, Any] | None = None) -> None:
        """Record a screenshot by path; the file is read when the prompt is built."""
        self.add_data(
            {"screenshot_path": str(screenshot_path), "metadata": dict(metadata or {})}, self._screenshots
        )

    # -- prompt ---------------------------------------------------------------------------
    @staticmethod
    def texts_to_prompt(memory: Memory, prefix: str) -> list[dict[str, Any]]:
        """One text part: ``prefix`` and the section's items as JSON."""
        body = json.dumps(memory.to_list_of_dicts(), ensure_ascii=False, default=str)
        return [{"type": "text", "text": f"{prefix}\n{body}"}]

    def screenshots_to_prompt(self) -> list[dict[str, Any]]:
        """For each screenshot a text part (its metadata) and an ``image_url`` part.

        A screenshot whose file is gone becomes a text note instead of failing the prompt.
        """
        parts: list[dict[str, Any]] = []
        for item in self._screenshots:
            path = item.get_value("screenshot_path", "")
            metadata = item.get_value("metadata", {})
            parts.append({"type": "text", "text": json.dumps(metadata, ensure_ascii=False, default=str)})
            try:
                url = image_to_data_url(path)
            except (OSError, ConfigError) as exc:
                logger.warning("Blackboard screenshot %s cannot be read: %s", path, exc)
                parts.append({"type": "text", "text": f"[Screenshot unavailable: {path}]"})
                continue
            parts.append({"type": "image_url", "image_url": {"url": url}})
        return parts

    def blackboard_to_prompt(self) -> list[dict[str, Any]]:
        """The blackboard as multimodal content parts; empty sections are left out.

        Returns ``[]`` when the blackboard is empty. Reads screenshot files: from async code
        call :meth:`ablackboard_to_prompt`.
        """
        if self.is_empty():
            return []
        parts: list[dict[str, Any]] = [{"type": "text", "text": BLACKBOARD_HEADER}]
        for memory, header in (
            (self._questions, QUESTIONS_HEADER),
            (self._requests, REQUESTS_HEADER),
            (self._trajectories, TRAJECTORIES_HEADER),
        ):
            if not memory.is_empty():
                parts.extend(self.texts_to_prompt(memory, header))
        parts.extend(self.screenshots_to_prompt())
        return parts

    async def ablackboard_to_prompt(self) -> list[dict[str, Any]]:
        """:meth:`blackboard_to_prompt` off the event loop."""
        return await asyncio.to_thread(self.blackboard_to_prompt)

    # -- persistence ----------------------------------------------------------------------
    def blackboard_to_dict(self) -> dict[str, list[dict[str, Any]]]:
        """The four sections as lists of dicts."""
        return {name: getattr(self, name).to_list_of_dicts() for name in _SECTIONS}

    def blackboard_from_dict(self, data: dict[str, Any]) -> None:
        """Replace the contents with :meth:`blackboard_to_dict` output (missing sections: empty)."""
        for name in _SECTIONS:
            setattr(self, f"_{name}", Memory.from_list_of_dicts(data.get(name, [])))

    def save(self, path: str | Path) -> None:
        """Write the blackboard as JSON to ``path``."""
        Path(path).write_text(
            json.dumps(self.blackboard_to_dict(), ensure_ascii=False, indent=2, default=str), encoding="utf-8"
        )

    def load(self, path: str | Path) -> None:
        """Replace the contents with the JSON file at ``path`` (written by :meth:`save`)."""
        self.blackboard_from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def clear(self) -> None:
        """Empty every section."""
        for name in _SECTIONS:
            getattr(self, name).clear()

    def is_empty(self) -> bool:
        """True when every section is empty."""
        return all(getattr(self, name).is_empty() for name in _SECTIONS)
