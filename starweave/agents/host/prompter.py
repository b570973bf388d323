"""HostAgentPrompter: the targets (windows and third-party agents), the tools, the Blackboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starweave.agent import BasicPrompter, MemoryItem
from starweave.agents.app.prompter import exchange_text
from starweave.agents.app.vision import Image, visual_content
from starweave.agents.common import plain_request
from starweave.agents.host.targets import TargetInfo
from starweave.agents.linux.prompter import compact_tool_prompt
from starweave.knowledge.retrieval import with_block

MAX_STEPS_SHOWN = 8
#: Characters of a step's outcome shown (a selection's window record is long and says little more).
OUTPUT_CHARS = 240


def host_steps_text(items: list[MemoryItem]) -> str:
    """The HostAgent's earlier steps: subtask, call, status and outcome."""
    if not items:
        return "(none yet)"
    lines = []
    for item in items[-MAX_STEPS_SHOWN:]:
        subtask = item.get_value("current_subtask") or ""
        output = str(item.get_value("output") or "")[:OUTPUT_CHARS]
        head = f"Step {item.get_value('step')}: [{item.get_value('status')}] {subtask}"
        lines.append(f"{head} {item.get_value('call')}\n{output}")
    return "\n".join(lines)


class HostAgentPrompter(BasicPrompter):
    """Builds the HostAgent's messages from ``host_agent.yaml`` and its examples."""

    def __init__(
        self, is_visual: bool, prompt_template: str | Path, example_prompt_template: str | Path
    ) -> None:
        super().__init__(is_visual, prompt_template, example_prompt_template)

    def _template(self, key: str) -> str:
        """``key``, or its text-only variant ``key_text`` when the model is text-only and it exists."""
        if not self.is_visual and f"{key}_text" in self.prompt_template:
            return str(self.prompt_template[f"{key}_text"])
        return str(self.prompt_template[key])

    def examples_prompt_helper(
        self,
        header: str = "## Response Examples",
        separator: str = "Example",
        additional_examples: Any = (),
    ) -> str:
        """The examples; a text-only model gets the ``text_example*`` ones, when the file has them,
        rendered as a real exchange."""
        template = self.example_prompt_template
        texts = [v for k, v in template.items() if str(k).startswith("text_example") and isinstance(v, dict)]
        if not self.is_visual and texts:
            return "\n\n".join([*(exchange_text(example) for example in texts), *additional_examples])
        return super().examples_prompt_helper(header, separator, additional_examples)

    def system_prompt_construction(
        self,
        tools: list[dict[str, Any]],
        third_party: dict[str, str],
        additional_examples: list[str] | None = None,
    ) -> str:
        """The system prompt with the host tools and the third-party agents' introductions;
        ``additional_examples`` (retrieved ones) follow the template's examples."""
        apis = "\n".join(compact_tool_prompt(t) for t in tools) or "(no tools available)"
        return self._template("system").format(
            apis=apis,
            third_party_instructions=self.third_party_agent_instruction(third_party),
            examples=self.examples_prompt_helper(additional_examples=additional_examples or []),
        )

    @staticmethod
    def third_party_agent_instruction(third_party: dict[str, str]) -> str:
        """One line per third-party agent: ``name: introduction``."""
        if not third_party:
            return "(none)"
        return "\n".join(f"- {name}: {intro}" for name, intro in third_party.items())

    def user_prompt_construction(
        self,
        user_request: str,
        targets: list[TargetInfo],
        previous_subtasks: list[dict[str, Any]],
        blackboard_prompt: str,
        previous_steps: str,
        screenshot_note: str = "",
        knowledge: str = "",
    ) -> str:
        """The user message text (for a text-only model: no screenshot, the subtasks one per line),
        followed by the retrieved ``knowledge`` when there is some."""
        user_request = plain_request(user_request)
        if not self.is_visual and "user_text" in self.prompt_template:
            done = "\n".join(
                f"- {s.get('application') or s.get('agent_name')}: {s.get('subtask')} -> "
                f"{s.get('status')}: {s.get('result')}"
                for s in previous_subtasks
            )
            text = self._template("user").format(
                user_request=user_request,
                targets="\n".join(t.describe() for t in targets) or "(no windows are open)",
                previous_subtasks=done or "(none)",
                blackboard=f"\n{blackboard_prompt}" if blackboard_prompt else "",
                previous_steps=previous_steps,
            )
            return with_block(text, knowledge)
        subtasks = (
            "\n".join(json.dumps(s, ensure_ascii=False, default=str) for s in previous_subtasks) or "(none)"
        )
        text = str(self.prompt_template["user"]).format(
            user_request=user_request,
            targets="\n".join(t.describe() for t in targets) or "(no windows are open)",
            previous_subtasks=subtasks,
            blackboard=blackboard_prompt or "(empty)",
            previous_steps=previous_steps,
            screenshot=screenshot_note or "(no screenshot)",
        )
        return with_block(text, knowledge)

    def user_content_construction(self, image_list: list[Image], **kwargs: Any) -> list[dict[str, Any]] | str:
        """The user message: the text alone, or for a visual model the desktop screenshot, then the text."""
        text = self.user_prompt_construction(**kwargs)
        return visual_content(text, image_list) if self.is_visual and image_list else text
