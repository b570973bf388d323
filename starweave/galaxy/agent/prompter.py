"""Prompters of the ConstellationAgent: creation and editing prompts from the shipped YAML templates.

Both are written for a small model on a slow CPU (spec: embedded-llm.md): short, stable first (the
system text, tools and examples, then what changes) so the model server reuses its cached prefix,
and with examples that do not invite copying. The creation prompt is the same for every request:
its examples are generic (how a value crosses devices, how results are left for the final answer),
never chosen by the request's wording; the editing prompt shows the example fitting the situation
(a task failed, or not) and the constellation as
one line per task with its state, result or error, and the next free task id
(:func:`plan_text`), instead of the reference's long layout (spec E §6.5, §7).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from starweave.agent import BasicPrompter
from starweave.errors import InvalidArgumentError
from starweave.galaxy.agent.response import WeavingMode
from starweave.galaxy.constellation import TaskConstellation
from starweave.galaxy.constellation.mcp_server import HIDDEN_FROM_LLM
from starweave.galaxy.orchestrator.requests import result_text, workspace_text

NO_DEVICES_TEXT = "No devices available."
NO_TASKS_TEXT = "(no tasks)"
DEFAULT_TEMPLATES: dict[WeavingMode, tuple[str, str]] = {
    WeavingMode.CREATION: ("constellation_creation.yaml", "constellation_creation_example.yaml"),
    WeavingMode.EDITING: ("constellation_editing.yaml", "constellation_editing_example.yaml"),
}
FINAL_ANSWER_TEXT = (
    'Every task completed. Answer with status "FINISH", "action": [] and, in "results", the answer '
    "to the request worked out from the task results (add or compare their numbers if it asks)."
)
PROMPT_RESULT_CHARS = 300
"""A task's result or error in the editing prompt is cut to this many characters."""


def _status_text(value: Any) -> str:
    return str(getattr(value, "value", value) or "unknown").lower()


ONLINE = frozenset({"connected", "idle", "busy"})


def online_devices(devices: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The devices a task may be given to: connected ones (idle or busy). Unlike the reference,
    FAILED and CONNECTING devices are left out too: a task planned onto them would only fail."""
    return [d for d in devices if _status_text(d.get("status")) in ONLINE]


def format_device_info(devices: Sequence[Mapping[str, Any]]) -> str:
    """One line per usable device: id, os and capabilities (AgentProfile.to_dict() entries).

    Idle or busy is left out: either may take a task, and a line that changes between calls
    would cost the model server its cached prompt prefix.
    """
    usable = online_devices(devices)
    if not usable:
        return NO_DEVICES_TEXT
    lines = []
    for device in usable:
        capabilities = ", ".join(str(c) for c in device.get("capabilities") or []) or "none"
        lines.append(f"- {device.get('device_id')} (os: {device.get('os') or 'unknown'}; {capabilities})")
    return "\n".join(lines)


def next_free_task_id(constellation: TaskConstellation | None) -> str:
    """``t<N>`` with N one more than the largest ``t<number>`` id (t1 for an empty constellation)."""
    numbers = [
        int(match.group(1))
        for task_id in (constellation.tasks if constellation is not None else {})
        if (match := re.fullmatch(r"t(\d+)", task_id))
    ]
    return f"t{max(numbers, default=0) + 1}"


def plan_text(constellation: TaskConstellation | None) -> str:
    """The constellation for the editing prompt: one line per task, then the next free task id.

    ``t3 on box_a PENDING (editable) after t1, t2: <description>``; ended tasks add
    ``| result: ...`` (the device agent's answer) or ``| error: ...``, cut to
    :data:`PROMPT_RESULT_CHARS`.
    """
    if constellation is None or not constellation.tasks:
        return NO_TASKS_TEXT
    lines = []
    for task in constellation.get_all_tasks():
        after = sorted({line.from_task_id for line in constellation.get_task_dependencies(task.task_id)})
        line = (
            f"{task.task_id} on {task.target_device_id or 'no device'} {task.status.value.upper()}"
            + (" (editable)" if task.is_modifiable else "")
            + (f" after {', '.join(after)}" if after else "")
            + f": {' '.join(task.description.split())}"
        )
        if task.status.value == "completed":
            line += f" | result: {' '.join(result_text(task.result, PROMPT_RESULT_CHARS).split())}"
            seen = workspace_text(task.result)
            line += f" {seen}" if seen else ""
        elif task.error is not None and str(task.error):
            error = " ".join(str(task.error).split())
            cut = error if len(error) <= PROMPT_RESULT_CHARS else error[:PROMPT_RESULT_CHARS] + "..."
            line += f" | error: {cut}"
        lines.append(line)
    lines.append(f"Next free task id: {next_free_task_id(constellation)}")
    return "\n".join(lines)


def llm_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The tools the model may call (``list_tools`` entries), without those hidden from the LLM."""
    out = []
    for tool in tools:
        name = str(tool.get("name") or tool.get("tool_name") or "")
        if not name or name in HIDDEN_FROM_LLM or name == "list_tools":
            continue
        out.append({"name": name, "description": tool.get("description") or "", **_schema_of(tool)})
    return out


def tool_line(tool: Mapping[str, Any]) -> str:
    """``- name(required, optional?): what it does`` (what every editing tool returns is left out)."""
    schema = tool.get("input_schema") or {}
    required = list(schema.get("required") or [])
    optional = [p for p in schema.get("properties") or {} if p not in required]
    params = ", ".join([*required, *(f"{p}?" for p in optional)])
    summary = re.split(r";|\s\(", str(tool.get("description") or "").strip(), maxsplit=1)[0]
    return f"- {tool.get('name')}({params}): {' '.join(summary.split())}"


def _schema_of(tool: Mapping[str, Any]) -> dict[str, Any]:
    return {"input_schema": dict(tool.get("input_schema") or tool.get("inputSchema") or {})}


class ConstellationPrompter(BasicPrompter):
    """Builds the messages of one weaving mode from its template and example files."""

    def __init__(
        self,
        mode: WeavingMode,
        prompt_template: str | Path | None = None,
        example_prompt_template: str | Path | None = None,
    ) -> None:
        default_main, default_examples = DEFAULT_TEMPLATES[mode]
        super().__init__(False, prompt_template or default_main, example_prompt_template or default_examples)
        self.mode = mode
        self.api_prompt_template = ""

    def create_api_prompt_template(self, tools: Sequence[Mapping[str, Any]]) -> str:
        """Render the editing tools (hidden tools removed) one line each; stored for the system prompt."""
        visible = llm_tools(tools)
        self.api_prompt_template = "\n".join(tool_line(t) for t in visible) or "(no tools)"
        return self.api_prompt_template

    def selected_examples(self, shape: str | None = None) -> list[Mapping[str, Any]]:
        """The ``example*`` entries to show: those whose ``Shape`` is ``shape`` (a situation of the
        plan, never of the request's wording) and every entry without a Shape (all of them when
        none has that shape)."""
        examples = [
            e
            for key, e in self.example_prompt_template.items()
            if str(key).startswith("example") and isinstance(e, Mapping)
        ]
        fitting = [e for e in examples if not e.get("Shape") or e.get("Shape") == shape]
        return fitting if any(e.get("Shape") for e in fitting) else examples

    def examples_prompt_helper(
        self,
        header: str = "",
        separator: str = "",
        additional_examples: Any = (),
        shape: str | None = None,
    ) -> str:
        """The selected examples (see :meth:`selected_examples`): each key as ``Key: value`` and the
        Response last, as compact JSON (the form the model should answer in)."""
        rendered: list[str] = []
        for example in self.selected_examples(shape):
            lines = []
            for key, value in example.items():
                if key in ("Shape", "Response"):
                    continue
                if isinstance(value, list):  # a device list
                    value = ", ".join(
                        str(d.get("device_id", d) if isinstance(d, Mapping) else d) for d in value
                    )
                text = str(value).strip()
                lines.append(f"{key}:\n{text}" if "\n" in text else f"{key}: {text}")
            response = json.dumps(example.get("Response"), ensure_ascii=False, separators=(",", ":"))
            lines.append(f"Answer: {response}")
            rendered.append("\n".join(lines))
        return "\n\n".join(rendered)

    def system_prompt_construction(
        self, request: str = "", final: bool = False, constellation: TaskConstellation | None = None
    ) -> str:
        """The mode's system prompt with the examples and, for editing, the tools. Creation shows
        every example, whatever ``request`` is (the prefix the model server caches); editing the one
        fitting the situation ("failure" when a task of ``constellation`` failed, else "review");
        ``final``: the short prompt that asks only for the final answer."""
        if final and self.prompt_template.get("answer_system"):
            return str(self.prompt_template["answer_system"]).format()
        shape = None
        if self.mode is WeavingMode.EDITING:
            shape = "failure" if constellation is not None and constellation.get_failed_tasks() else "review"
        return str(self.prompt_template["system"]).format(
            examples=self.examples_prompt_helper(shape=shape),
            apis=self.api_prompt_template or "(no tools)",
        )

    def user_prompt_construction(
        self,
        request: str,
        device_info: Sequence[Mapping[str, Any]],
        constellation: TaskConstellation | None = None,
        final: bool = False,
    ) -> str:
        """The user message: devices, request and (editing) the tasks; ``final`` when every task
        completed and only the request's answer is asked for."""
        text = str(self.prompt_template["user"]).format(
            request=" ".join(request.split()),
            device_info=format_device_info(device_info),
            constellation=plan_text(constellation),
        )
        return f"{text}\n{FINAL_ANSWER_TEXT}" if final else text

    def user_content_construction(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        """The user message as one text content part."""
        return [{"type": "text", "text": self.user_prompt_construction(*args, **kwargs)}]


class ConstellationPrompterFactory:
    """Creates the prompter of a weaving mode."""

    @staticmethod
    def create_prompter(
        mode: WeavingMode | str,
        prompt_template: str | Path | None = None,
        example_prompt_template: str | Path | None = None,
    ) -> ConstellationPrompter:
        """The prompter for ``mode`` (ValueError naming the supported modes otherwise)."""
        try:
            weaving = WeavingMode(str(getattr(mode, "value", mode)).upper())
        except ValueError:
            supported = ", ".join(ConstellationPrompterFactory.get_supported_modes())
            raise InvalidArgumentError(f"Unsupported mode: {mode!r}; supported: {supported}") from None
        return ConstellationPrompter(weaving, prompt_template, example_prompt_template)

    @staticmethod
    def get_supported_modes() -> list[str]:
        """The weaving modes that have a prompter."""
        return [m.value for m in WeavingMode]
