"""Prompters of the ConstellationAgent: creation and editing prompts from the shipped YAML templates.

The creation prompt shows the request and the devices; the editing prompt also shows the constellation
in the reference's text layout (``to_prompt_text(c, "editing")``, results included) and the editing
tools without ``build_constellation`` (spec E §6.5, §7). Both are kept short enough for the embedded
model's 4,096-token window.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from starweave.agent import BasicPrompter
from starweave.agents.linux.prompter import compact_tool_prompt
from starweave.galaxy.agent.response import WeavingMode
from starweave.galaxy.constellation import TaskConstellation, to_prompt_text
from starweave.galaxy.constellation.mcp_server import HIDDEN_FROM_LLM

NO_DEVICES_TEXT = "No devices available."
DEFAULT_TEMPLATES: dict[WeavingMode, tuple[str, str]] = {
    WeavingMode.CREATION: ("constellation_creation.yaml", "constellation_creation_example.yaml"),
    WeavingMode.EDITING: ("constellation_editing.yaml", "constellation_editing_example.yaml"),
}


def _status_text(value: Any) -> str:
    return str(getattr(value, "value", value) or "unknown").lower()


ONLINE = frozenset({"connected", "idle", "busy"})


def online_devices(devices: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The devices a task may be given to: connected ones (idle or busy). Unlike the reference,
    FAILED and CONNECTING devices are left out too: a task planned onto them would only fail."""
    return [d for d in devices if _status_text(d.get("status")) in ONLINE]


def format_device_info(devices: Sequence[Mapping[str, Any]]) -> str:
    """One line per usable device: id, os, capabilities and status (AgentProfile.to_dict() entries)."""
    usable = online_devices(devices)
    if not usable:
        return NO_DEVICES_TEXT
    lines = []
    for device in usable:
        capabilities = ", ".join(str(c) for c in device.get("capabilities") or []) or "none"
        lines.append(
            f"- device_id: {device.get('device_id')} | os: {device.get('os') or 'unknown'} | "
            f"capabilities: {capabilities} | status: {_status_text(device.get('status'))}"
        )
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
        """Render the editing tools (hidden tools removed) compactly; stored for the system prompt."""
        visible = llm_tools(tools)
        self.api_prompt_template = "\n".join(compact_tool_prompt(t) for t in visible) or "(no tools)"
        return self.api_prompt_template

    def examples_prompt_helper(
        self, header: str = "## Response Examples", separator: str = "Example", additional_examples: Any = ()
    ) -> str:
        """Each ``example*`` entry as request, devices and the JSON response (compact JSON)."""
        rendered: list[str] = []
        for key, example in self.example_prompt_template.items():
            if not str(key).startswith("example") or not isinstance(example, Mapping):
                continue
            devices = json.dumps(example.get("Device-Info") or [], ensure_ascii=False)
            response = json.dumps(example.get("Response"), ensure_ascii=False)
            rendered.append(
                f"[User Request]: {example.get('Request', '')}\n[Devices]: {devices}\n[Response]: {response}"
            )
        return self.retrieved_documents_prompt_helper(header, separator, rendered)

    def system_prompt_construction(self) -> str:
        """The mode's system prompt with the examples (and, for editing, the tools)."""
        return str(self.prompt_template["system"]).format(
            examples=self.examples_prompt_helper(), apis=self.api_prompt_template or "(no tools)"
        )

    def user_prompt_construction(
        self,
        request: str,
        device_info: Sequence[Mapping[str, Any]],
        constellation: TaskConstellation | None = None,
        notes: str = "",
    ) -> str:
        """The user message: request, constellation (editing) and devices, plus optional notes."""
        text = str(self.prompt_template["user"]).format(
            request=request.strip(),
            device_info=format_device_info(device_info),
            constellation=to_prompt_text(constellation, "editing"),
        )
        return f"{text}\n[Notes]:\n{notes}" if notes else text

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
            raise ValueError(f"Unsupported mode: {mode!r}; supported: {supported}") from None
        return ConstellationPrompter(weaving, prompt_template, example_prompt_template)

    @staticmethod
    def get_supported_modes() -> list[str]:
        """The weaving modes that have a prompter."""
        return [m.value for m in WeavingMode]
