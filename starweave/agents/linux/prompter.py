"""LinuxAgentPrompter: the system prompt with the device's tools, and the history as chat turns.

The embedded 1.5B model only finishes reliably when earlier steps come back as chat turns (its
own JSON as the assistant, the tool's output as the user, with an explicit "reply FINISH if
done" cue): spec/embedded-llm.md §3.4, prompt v3. Old steps are shortened so the history fits
the context window.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starweave.agent import BasicPrompter, MemoryItem
from starweave.agents.linux.feedback import clip

# Steps older than FULL_HISTORY_STEPS keep only their call and a short output; steps older than
# MAX_HISTORY_STEPS are left out (the embedded model's window is 4,096 tokens).
FULL_HISTORY_STEPS = 4
MAX_HISTORY_STEPS = 12
OLD_OUTPUT_LIMIT = 300
MIN_RESULT_CHARS = 200


def _signature(name: str, schema: dict[str, Any]) -> str:
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    params = []
    for pname, spec in properties.items():
        if pname in required:
            params.append(pname)
        elif isinstance(spec, dict) and "default" in spec:
            params.append(f"{pname}={json.dumps(spec['default'])}")
        else:
            params.append(f"{pname}=...")
    return f"{name}({', '.join(params)})"


def compact_tool_prompt(tool: dict[str, Any]) -> str:
    """One tool in a few lines: signature, the description's first paragraph, required parameters.

    The reference's full rendering (``tool_to_llm_prompt``) costs the embedded model about 30 s of
    prompt processing on one core; this keeps what the model needs to call the tool right.
    """
    schema: dict[str, Any] = tool.get("input_schema") or {}
    summary = " ".join(str(tool.get("description") or "").strip().split("\n\n")[0].split())
    lines = [f"- {_signature(str(tool.get('name')), schema)}: {summary}"]
    for pname in schema.get("required") or []:
        spec = (schema.get("properties") or {}).get(pname) or {}
        if spec.get("description"):
            lines.append(f"    {pname}: {spec['description']}")
    return "\n".join(lines)


class LinuxAgentPrompter(BasicPrompter):
    """Builds the LinuxAgent's messages from ``linux_agent.yaml`` and its examples."""

    def __init__(self, prompt_template: str | Path, example_prompt_template: str | Path) -> None:
        super().__init__(False, prompt_template, example_prompt_template)
        self.api_prompt_template = None

    def system_prompt_construction(self, tools: list[dict[str, Any]] | None = None) -> str:
        """The system prompt listing the action tools."""
        apis = "\n".join(compact_tool_prompt(t) for t in tools or []) or "(no tools available)"
        return str(self.prompt_template["system"]).format(apis=apis, examples=self.examples_prompt_helper())

    def user_prompt_construction(self, user_request: str) -> str:
        """The first user message: the request."""
        return str(self.prompt_template["user"]).format(user_request=user_request)

    def user_content_construction(self, user_request: str) -> list[dict[str, Any]]:
        """The request as a text content part."""
        return [{"type": "text", "text": self.user_prompt_construction(user_request)}]

    def step_result_message(self, item: MemoryItem, recent: bool) -> str:
        """The user turn that reports one step's outcome."""
        output = str(item.get_value("output") or "")
        if not recent:
            output = clip(output, OLD_OUTPUT_LIMIT)
        return str(self.prompt_template["step_result"]).format(call=item.get_value("call"), output=output)

    def history_messages(
        self, items: list[MemoryItem], budget_chars: int | None = None
    ) -> list[dict[str, Any]]:
        """Earlier steps as alternating assistant (the answer) and user (the result) turns.

        At most MAX_HISTORY_STEPS steps, the oldest shortened; when ``budget_chars`` is given, the
        oldest steps are left out (and, if one step alone is too big, its output is cut) so the
        turns fit in it.
        """
        omitted = max(0, len(items) - MAX_HISTORY_STEPS)
        items = items[omitted:]
        first_recent = max(0, len(items) - FULL_HISTORY_STEPS)
        pairs = [
            (
                json.dumps(item.get_value("response") or {}, ensure_ascii=False),
                self.step_result_message(item, index >= first_recent),
            )
            for index, item in enumerate(items)
        ]
        if budget_chars is not None:
            while len(pairs) > 1 and sum(len(a) + len(u) for a, u in pairs) > budget_chars:
                pairs.pop(0)
                omitted += 1
            if pairs and len(pairs[0][0]) + len(pairs[0][1]) > budget_chars:
                room = max(MIN_RESULT_CHARS, budget_chars - len(pairs[0][0]))
                pairs[0] = (pairs[0][0], clip(pairs[0][1], room))
        messages: list[dict[str, Any]] = []
        for index, (answer, result) in enumerate(pairs):
            if index == 0 and omitted:
                result = f"({omitted} earlier steps are not shown.)\n{result}"
            messages.append({"role": "assistant", "content": answer})
            messages.append({"role": "user", "content": result})
        return messages
