"""AppAgentPrompter: the system prompt with the application's tools, and one user message holding the
request, the subtask, the controls as text, the shared Blackboard and this subtask's earlier steps.

The controls are always listed as ``[label] Type "name"`` lines, which is what the set-of-mark
screenshot shows a visual model; the text-only embedded model gets only that list and the
screenshot's path, a visual model (``VISUAL_MODE``) the screenshots too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starweave.agent import BasicPrompter, Blackboard, MemoryItem
from starweave.agent.blackboard import QUESTIONS_HEADER, REQUESTS_HEADER, TRAJECTORIES_HEADER
from starweave.agents.app.vision import Image, visual_content
from starweave.agents.linux.prompter import compact_tool_prompt

#: Earlier steps of the subtask shown in full; older ones are summarised by their call.
RECENT_STEPS = 4
MAX_STEPS_SHOWN = 12
BLACKBOARD_ITEMS = 8
BLACKBOARD_CHARS = 3000


def blackboard_text(blackboard: Blackboard) -> str:
    """The Blackboard's text sections (latest items), and the saved screenshots by path."""
    parts: list[str] = []
    for memory, header in (
        (blackboard.questions, QUESTIONS_HEADER),
        (blackboard.requests, REQUESTS_HEADER),
        (blackboard.trajectories, TRAJECTORIES_HEADER),
    ):
        items = memory.to_list_of_dicts()[-BLACKBOARD_ITEMS:]
        if items:
            body = "\n".join(json.dumps(i, ensure_ascii=False, default=str) for i in items)
            parts.append(f"{header}\n{body}")
    shots = [item.get_value("screenshot_path") for item in blackboard.screenshots]
    if shots:
        parts.append("[Saved screenshots:]\n" + "\n".join(str(s) for s in shots))
    text = "\n".join(parts)
    return text[-BLACKBOARD_CHARS:] if len(text) > BLACKBOARD_CHARS else text


def steps_text(items: list[MemoryItem]) -> str:
    """This subtask's earlier steps: the calls and their outcomes, the newest in full."""
    if not items:
        return "(none yet: this is the first step of the subtask)"
    shown = items[-MAX_STEPS_SHOWN:]
    lines = []
    for index, item in enumerate(shown):
        recent = index >= len(shown) - RECENT_STEPS
        output = str(item.get_value("output") or "")
        if not recent:
            output = output[:200]
        lines.append(f"Step {item.get_value('step')}: {item.get_value('call')}\n{output}")
    return "\n".join(lines)


class AppAgentPrompter(BasicPrompter):
    """Builds the AppAgent's messages from ``app_agent.yaml`` and its examples."""

    def __init__(
        self, is_visual: bool, prompt_template: str | Path, example_prompt_template: str | Path
    ) -> None:
        super().__init__(is_visual, prompt_template, example_prompt_template)

    def system_prompt_construction(
        self, tools: list[dict[str, Any]] | None = None, multi_action: bool = False
    ) -> str:
        """``system`` (one action) or ``system_as`` (a list of actions), with the tools listed."""
        apis = "\n".join(compact_tool_prompt(t) for t in tools or []) or "(no tools available)"
        key = "system_as" if multi_action else "system"
        return str(self.prompt_template[key]).format(apis=apis, examples=self.examples_prompt_helper())

    def user_prompt_construction(
        self,
        user_request: str,
        subtask: str,
        current_application: str,
        host_message: str,
        control_info: str,
        blackboard_prompt: str,
        previous_steps: str,
        screenshot_note: str = "",
        note: str = "",
    ) -> str:
        """The user message text."""
        return str(self.prompt_template["user"]).format(
            user_request=user_request,
            subtask=subtask or user_request,
            current_application=current_application,
            host_message=host_message or "(none)",
            control_info=control_info,
            blackboard=blackboard_prompt or "(empty)",
            previous_steps=previous_steps,
            screenshot=screenshot_note or "(no screenshot)",
            note=note,
        )

    def user_content_construction(self, image_list: list[Image], **kwargs: Any) -> list[dict[str, Any]] | str:
        """The user message: the text alone, or for a visual model each screenshot and then the text."""
        text = self.user_prompt_construction(**kwargs)
        return visual_content(text, image_list) if self.is_visual and image_list else text
