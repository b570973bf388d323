"""LinuxAgentPrompter: the system prompt with the device's tools, and the history as chat turns.

The embedded 1.5B model only finishes reliably when earlier steps come back as chat turns (its
own JSON as the assistant, the tool's output as the user, with an explicit "reply FINISH if
done" cue): spec/embedded-llm.md §3.4, prompt v3. Old steps are shortened so the history fits
the context window.

Every prompt token costs the embedded model ~25 ms unless the server has it cached from the
previous call, and the cache only covers a matching prefix. So the prompt is ordered stable-first
(system text with tools and examples, the request, then the growing history), tools and examples
are rendered tersely, and an earlier answer comes back as the exact text the model wrote (a
re-serialised copy would differ in spacing and end the cached prefix there).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from starweave.agent import BasicPrompter, MemoryItem
from starweave.agents.common import plain_request
from starweave.agents.linux.feedback import clip

# Steps older than FULL_HISTORY_STEPS keep only their call and a short output; steps older than
# MAX_HISTORY_STEPS are left out (the embedded model's window is 4,096 tokens).
FULL_HISTORY_STEPS = 4
MAX_HISTORY_STEPS = 12
OLD_OUTPUT_LIMIT = 300
MIN_RESULT_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]])[.!?](?=\s|$)")
# Only from the start of a blank run: one starting inside it would rescan the run (quadratic).
_PARENTHESES = re.compile(r"(?<!\s)\s*\([^()]*\)")


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


def terse_tool_prompt(tool: dict[str, Any]) -> str:
    """One tool in one line: its name, its required parameters and the description's first sentence.

    Optional parameters are left out (the model does well without timeouts and working folders, and
    each token of the system prompt costs time; the response schema still accepts them), except
    flags (``append=false``: a switch that changes what the call does) and the parameters of a tool
    that has only optional ones (``list_directory(path=".")``), or the model would never know it
    can pass one.
    """
    schema: dict[str, Any] = tool.get("input_schema") or {}
    signature = _signature(str(tool.get("name")), schema)
    if schema.get("required"):
        properties: dict[str, Any] = schema.get("properties") or {}
        flags = [
            f"{name}={json.dumps(spec['default'])}"
            for name, spec in properties.items()
            if isinstance(spec, dict) and isinstance(spec.get("default"), bool)
        ]
        signature = f"{tool.get('name')}({', '.join([*(str(p) for p in schema['required']), *flags])})"
    # Details in parentheses ("(uname -a)", "(or append)") are left out too.
    text = " ".join(_PARENTHESES.sub("", str(tool.get("description") or "")).split())
    match = _SENTENCE_END.search(text)
    return f"- {signature}: {text[: match.end()] if match else text}"


def compact_json(value: Any) -> str:
    """JSON without spaces: what the examples show is what the model writes, and spaces cost tokens."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def answer_text(item: MemoryItem) -> str:
    """A step's answer as the model wrote it (its raw text when that parses to the recorded answer)."""
    response = item.get_value("response") or {}
    raw = str(item.get_value("answer_text") or "")
    if raw:
        try:
            if json.loads(raw) == response:
                return raw
        except ValueError:
            pass
    return compact_json(response)


class LinuxAgentPrompter(BasicPrompter):
    """Builds the LinuxAgent's messages from ``linux_agent.yaml`` and its examples."""

    def __init__(self, prompt_template: str | Path, example_prompt_template: str | Path) -> None:
        super().__init__(False, prompt_template, example_prompt_template)
        self.api_prompt_template = None

    def system_prompt_construction(
        self, tools: list[dict[str, Any]] | None = None, additional_examples: Iterable[str] = ()
    ) -> str:
        """The system prompt listing the action tools; ``additional_examples`` (retrieved ones) follow
        the template's examples."""
        apis = "\n".join(terse_tool_prompt(t) for t in tools or []) or "(no tools available)"
        examples = self.examples_prompt_helper(additional_examples=additional_examples)
        return str(self.prompt_template["system"]).format(apis=apis, examples=examples)

    def examples_prompt_helper(
        self,
        header: str = "",
        separator: str = "",
        additional_examples: Iterable[str | dict[str, Any]] = (),
    ) -> str:
        """The examples as the model will see a real exchange: the request, then each answer as
        compact JSON, with the output it got (``Output``) before the next answer (``Next``)."""
        rendered: list[str] = []
        for key, example in self.example_prompt_template.items():
            if not str(key).startswith("example") or not isinstance(example, Mapping):
                continue
            lines = [f"Request: {example.get('Request', '')}", compact_json(example.get("Response"))]
            if example.get("Output") is not None:
                lines.append(f"Output: {' '.join(str(example['Output']).split())}")
            if example.get("Next") is not None:
                lines.append(compact_json(example["Next"]))
            rendered.append("\n".join(lines))
        rendered.extend(e if isinstance(e, str) else compact_json(e) for e in additional_examples)
        return "\n\n".join(rendered)

    def user_prompt_construction(self, user_request: str) -> str:
        """The first user message: the request."""
        return str(self.prompt_template["user"]).format(user_request=plain_request(user_request))

    def user_content_construction(self, user_request: str) -> list[dict[str, Any]]:
        """The request as a text content part."""
        return [{"type": "text", "text": self.user_prompt_construction(user_request)}]

    def step_result_message(self, item: MemoryItem, recent: bool) -> str:
        """The user turn that reports one step's outcome (``step_failed`` after a failed call, when
        the template has it)."""
        output = str(item.get_value("output") or "")
        if not recent:
            output = clip(output, OLD_OUTPUT_LIMIT)
        key = (
            "step_failed"
            if item.get_value("failed") and "step_failed" in self.prompt_template
            else "step_result"
        )
        return str(self.prompt_template[key]).format(call=item.get_value("call"), output=output)

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
            (answer_text(item), self.step_result_message(item, index >= first_recent))
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
