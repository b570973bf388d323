"""AppAgentPrompter: the system prompt with the application's tools, and one user message holding the
request, the subtask, the shared Blackboard, this subtask's earlier steps and the controls as text.

A visual model (``VISUAL_MODE``) sees the controls as ``[label] Type "name"`` lines, the numbers of
the set-of-mark screenshot it also gets. The text-only embedded model gets its own template keys
(``system_text``, ``system_as_text``, ``user_text`` and the ``text_example*`` examples, falling back
to the visual ones when a template has none): controls as ``Type "name" (id N)`` with the text they
hold, only the tools it can use without seeing the window (no coordinates), and the parameters
``id``/``name`` explained once instead of under every tool.

Every prompt token costs the embedded model ~25 ms unless the server has it cached from the previous
call, and the cache covers a matching prefix only: the user message puts what stays the same during
a subtask first (request, subtask, Blackboard up to the subtask's start), then the steps (which
only grow), and the controls, which change with every step, last.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from starweave.agent import BasicPrompter, Blackboard, MemoryItem
from starweave.agent.blackboard import QUESTIONS_HEADER, REQUESTS_HEADER, TRAJECTORIES_HEADER
from starweave.agents.app.vision import Image, visual_content
from starweave.agents.common import plain_request
from starweave.agents.linux.prompter import compact_tool_prompt
from starweave.knowledge.retrieval import with_block

#: Earlier steps of the subtask shown in full; older ones are summarised by their call.
RECENT_STEPS = 4
MAX_STEPS_SHOWN = 12
BLACKBOARD_ITEMS = 8
BLACKBOARD_CHARS = 3000
#: Tools a model that does not see the window cannot use: it has no coordinates.
COORDINATE_TOOLS = frozenset({"click_on_coordinates", "drag_on_coordinates"})
#: Parameters the text-only system prompt explains once.
CONTROL_PARAMETERS = ("id", "name")
TEXT_SUFFIX = "_text"
# Two letters or digits before the stop: "e.g." does not end a sentence.
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]]{2})[.!?](?=\s|$)")


def blackboard_text(blackboard: Blackboard, upto: int | None = None, trajectories: bool = True) -> str:
    """The Blackboard's text sections (latest items), and the saved screenshots by path.

    ``upto`` shows only the trajectories recorded before that count (an AppAgent's own steps are in
    its step list already); ``trajectories=False`` none (a text-only HostAgent reads the subtasks'
    outcomes in their own list).
    """
    parts: list[str] = []
    for memory, header in (
        (blackboard.questions, QUESTIONS_HEADER),
        (blackboard.requests, REQUESTS_HEADER),
        (blackboard.trajectories, TRAJECTORIES_HEADER),
    ):
        items = memory.to_list_of_dicts()
        if memory is blackboard.trajectories:
            if not trajectories:
                items = []
            elif upto is not None:
                items = items[:upto]
        items = items[-BLACKBOARD_ITEMS:]
        if items:
            body = "\n".join(json.dumps(i, ensure_ascii=False, default=str) for i in items)
            parts.append(f"{header}\n{body}")
    shots = [item.get_value("screenshot_path") for item in blackboard.screenshots]
    if shots:
        parts.append("[Saved screenshots:]\n" + "\n".join(str(s) for s in shots))
    text = "\n".join(parts)
    return text[-BLACKBOARD_CHARS:] if len(text) > BLACKBOARD_CHARS else text


def finished_work(blackboard: Blackboard, upto: int | None = None) -> str:
    """For a text-only model: the user's answers and the finished or failed subtasks, one line each."""
    lines = [
        f"- asked {q.get('question', '')!r}, the user answered {q.get('answer', '')!r}"
        for q in blackboard.questions.to_list_of_dicts()[-BLACKBOARD_ITEMS:]
    ]
    records = blackboard.trajectories.to_list_of_dicts()
    records = records[:upto] if upto is not None else records
    for record in records:
        if record.get("status") in ("FINISH", "FAIL") and "subtask" in record and "call" not in record:
            where = record.get("application") or record.get("agent_name") or ""
            lines.append(
                f"- {where}: {record.get('subtask')} -> {record.get('status')}: {record.get('result')}"
            )
    return "\n".join(lines[-BLACKBOARD_ITEMS:])


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


def text_tool_prompt(tool: dict[str, Any]) -> str:
    """One tool for the text-only model: its signature, the description's first sentence, and its
    required parameters other than ``id`` and ``name`` (explained once in the system prompt)."""
    schema: dict[str, Any] = tool.get("input_schema") or {}
    # The name before the id, as the answer's schema asks for them (response.control_arguments).
    properties: dict[str, Any] = schema.get("properties") or {}
    ordered: dict[str, Any] = {k: properties[k] for k in ("name", "id") if k in properties}
    ordered.update({k: v for k, v in properties.items() if k not in ordered})
    required: list[str] = [p for p in ("name", "id") if p in (schema.get("required") or [])]
    required += [p for p in schema.get("required") or [] if p not in required]
    first = compact_tool_prompt(
        {**tool, "input_schema": {**schema, "properties": ordered, "required": required}}
    )
    first = first.split("\n")[0]
    head, _, description = first.partition(": ")
    match = _SENTENCE_END.search(description)
    lines = [f"{head}: {description[: match.end()] if match else description}"]
    for pname in schema.get("required") or []:
        spec = (schema.get("properties") or {}).get(pname) or {}
        if pname not in CONTROL_PARAMETERS and spec.get("description"):
            lines.append(f"    {pname}: {spec['description']}")
    return "\n".join(lines)


def compact_json(value: Any) -> str:
    """JSON without spaces: what the examples show is what the model writes, and spaces cost tokens."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def step_answer(item: MemoryItem) -> str:
    """A step's answer as the model wrote it (the cached prefix matches only the exact text)."""
    raw = str(item.get_value("answer_text") or "")
    return raw or compact_json(item.get_value("response") or {})


def exchange_text(example: dict[str, Any]) -> str:
    """One example as the model will see a real exchange."""
    lines = [f"Request: {example.get('Request', '')}", compact_json(example.get("Response"))]
    for turn in example.get("Then") or []:
        if isinstance(turn, dict):
            lines.append(f"Outcome: {turn.get('Output', '')}")
            lines.append(compact_json(turn.get("Response")))
    return "\n".join(lines)


class AppAgentPrompter(BasicPrompter):
    """Builds the AppAgent's messages from ``app_agent.yaml`` and its examples."""

    def __init__(
        self, is_visual: bool, prompt_template: str | Path, example_prompt_template: str | Path
    ) -> None:
        super().__init__(is_visual, prompt_template, example_prompt_template)

    @property
    def text_only(self) -> bool:
        """True when the model reads the controls as text only (no screenshot)."""
        return not self.is_visual

    def _template(self, key: str) -> str:
        """``key``, or its text-only variant ``key_text`` when the model is text-only and it exists."""
        if self.text_only and f"{key}{TEXT_SUFFIX}" in self.prompt_template:
            return str(self.prompt_template[f"{key}{TEXT_SUFFIX}"])
        return str(self.prompt_template[key])

    def prompt_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tools the model is offered: a text-only model gets none that needs coordinates."""
        if not self.text_only:
            return tools
        return [t for t in tools if t.get("name") not in COORDINATE_TOOLS]

    def system_prompt_construction(
        self,
        tools: list[dict[str, Any]] | None = None,
        multi_action: bool = False,
        additional_examples: list[str] | None = None,
    ) -> str:
        """``system`` (one action) or ``system_as`` (a list of actions), with the tools listed;
        ``additional_examples`` (retrieved ones) follow the template's examples."""
        render = text_tool_prompt if self.text_only else compact_tool_prompt
        apis = "\n".join(render(t) for t in self.prompt_tools(tools or [])) or "(no tools available)"
        key = "system_as" if multi_action else "system"
        examples = self.examples_prompt_helper(additional_examples=additional_examples or [])
        return self._template(key).format(apis=apis, examples=examples)

    def examples_prompt_helper(
        self,
        header: str = "## Response Examples",
        separator: str = "Example",
        additional_examples: Any = (),
    ) -> str:
        """The examples; a text-only model gets the ``text_example*`` ones, when the file has them,
        rendered as a real exchange (request, compact answer, then each outcome and the next answer)."""
        template = self.example_prompt_template
        texts = [v for k, v in template.items() if str(k).startswith("text_example") and isinstance(v, dict)]
        if self.text_only and texts:
            return "\n\n".join([*(exchange_text(example) for example in texts), *additional_examples])
        plain = {k: v for k, v in template.items() if not str(k).startswith("text_example")}
        rendered = []
        for key, example in plain.items():
            if str(key).startswith("example") and isinstance(example, dict):
                response = json.dumps(example.get("Response"), ensure_ascii=False)
                rendered.append(f"\n[User Request]:\n{example.get('Request', '')}\n[Response]:\n{response}")
        rendered += [
            e if isinstance(e, str) else json.dumps(e, ensure_ascii=False) for e in additional_examples
        ]
        return self.retrieved_documents_prompt_helper(header, separator, rendered)

    def text_messages(
        self,
        system: str,
        first: dict[str, str],
        steps: list[MemoryItem],
        control_info: str,
        note: str = "",
    ) -> list[dict[str, Any]]:
        """A text-only model's messages: the system prompt, the subtask, then each earlier step as its
        answer (assistant) and its outcome (user), the last user turn ending with the controls now.

        ``first`` fills ``user_text`` (request, subtask, application, host message, Blackboard); its
        ``knowledge`` (retrieved passages) follows. Only the latest turn lists the controls: older
        lists are stale, and each costs ~300 tokens. ``note`` (what the last action changed, see
        effect.py) goes just before them.
        """
        host_message = first.get("host_message", "")
        blackboard = first.get("blackboard", "")
        head = self._template("user").format(
            user_request=first.get("user_request", ""),
            subtask=first.get("subtask") or first.get("user_request", ""),
            current_application=first.get("current_application", ""),
            host_message=f"\nAdvice from the HostAgent: {host_message}" if host_message else "",
            blackboard=f"\nDone before:\n{blackboard}" if blackboard else "",
        )
        head = with_block(head, first.get("knowledge", ""))
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": head},
        ]
        shown = steps[-MAX_STEPS_SHOWN:]
        if len(steps) > len(shown):
            messages[-1]["content"] += f"\n({len(steps) - len(shown)} earlier steps are not shown.)"
        for index, item in enumerate(shown):
            output = str(item.get_value("output") or "")
            if index < len(shown) - RECENT_STEPS:
                output = output[:200]
            messages.append({"role": "assistant", "content": step_answer(item)})
            messages.append({"role": "user", "content": self._template("step_result").format(output=output)})
        cue = str(self.prompt_template.get("cue_next_text" if steps else "cue_first_text") or "")
        tail = self._template("controls").format(
            note=f"{note}\n" if note else "", control_info=control_info, cue=cue
        )
        messages[-1]["content"] = f"{messages[-1]['content'].rstrip()}\n{tail}"
        return messages

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
        knowledge: str = "",
    ) -> str:
        """The user message text, followed by the retrieved ``knowledge`` when there is some."""
        user_request = plain_request(user_request)
        text = self._template("user").format(
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
        return with_block(text, knowledge)

    def user_content_construction(self, image_list: list[Image], **kwargs: Any) -> list[dict[str, Any]] | str:
        """The user message: the text alone, or for a visual model each screenshot and then the text."""
        text = self.user_prompt_construction(**kwargs)
        return visual_content(text, image_list) if self.is_visual and image_list else text
