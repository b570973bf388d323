"""Prompt construction shared by every agent: YAML templates, examples and tool descriptions."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import yaml

from starweave.errors import ConfigError

#: Folder of the templates shipped with Starweave (``starweave/prompts``).
PACKAGE_PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


def resolve_template_path(
    path: str | Path, is_visual: bool | None = None, search_dirs: Sequence[Path] = (PACKAGE_PROMPTS_DIR,)
) -> Path:
    """Find a template file.

    ``{mode}`` in the path becomes ``visual`` or ``nonvisual``. A relative path that does not
    exist as given is looked up in each of ``search_dirs`` (by default ``starweave/prompts``).
    Raises ConfigError naming every place looked at.
    """
    text = str(path)
    if "{mode}" in text:
        text = text.format(mode="nonvisual" if is_visual is False else "visual")
    given = Path(text).expanduser()
    if given.is_file():
        return given
    if not given.is_absolute():
        for folder in search_dirs:
            if (folder / given).is_file():
                return folder / given
    looked = ", ".join(str(d) for d in search_dirs) if not given.is_absolute() else "nowhere else"
    raise ConfigError(
        f"Prompt template not found: {text} (also looked in {looked}); "
        f"give an existing YAML file or the name of one shipped in starweave/prompts"
    )


def load_prompt_template(
    path: str | Path | None,
    is_visual: bool | None = None,
    search_dirs: Sequence[Path] = (PACKAGE_PROMPTS_DIR,),
) -> dict[str, Any]:
    """Load a YAML template into a dict; an empty path gives an empty dict."""
    if not path:
        return {}
    resolved = resolve_template_path(path, is_visual, search_dirs)
    try:
        data = yaml.safe_load(resolved.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{resolved}: not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{resolved}: a prompt template must be a mapping of keys to text")
    return data


def _field(tool: Any, *names: str) -> Any:
    for name in names:
        if isinstance(tool, Mapping):
            if name in tool:
                return tool[name]
        elif getattr(tool, name, None) is not None:
            return getattr(tool, name)
    return None


def _type_of(schema: Mapping[str, Any]) -> str:
    if "type" in schema:
        kind = schema["type"]
        if isinstance(kind, list):
            return " | ".join(str(k) for k in kind)
        if kind == "array" and isinstance(schema.get("items"), Mapping):
            return f"array of {_type_of(schema['items'])}"
        return str(kind)
    for combo in ("anyOf", "oneOf"):
        if isinstance(schema.get(combo), list):
            return " | ".join(_type_of(s) for s in schema[combo] if isinstance(s, Mapping))
    if "enum" in schema:
        return "enum"
    return "any"


def tool_to_llm_prompt(tool: Any) -> str:
    """Describe one MCP tool for the model.

    ``tool`` is a dict or an object (e.g. ``mcp.types.Tool``) with ``name``, ``description`` and
    ``input_schema`` (a JSON schema; ``inputSchema`` is accepted too).
    """
    name = _field(tool, "name") or "unnamed_tool"
    description = (_field(tool, "description") or "").strip() or "No description."
    schema = _field(tool, "input_schema", "inputSchema") or {}
    properties: Mapping[str, Any] = schema.get("properties", {}) or {}
    required = set(schema.get("required", []) or [])
    lines = [f"Tool name: {name}", f"Description: {description}", "Parameters:"]
    if not properties:
        lines.append("- (none)")
    example_args: list[str] = []
    for pname, pschema in properties.items():
        pschema = pschema if isinstance(pschema, Mapping) else {}
        is_required = pname in required
        desc = str(pschema.get("description") or pschema.get("title") or "").strip().rstrip(".")
        line = f"- {pname} ({_type_of(pschema)}, {'required' if is_required else 'optional'})"
        if desc:
            line += f": {desc}"
        if "enum" in pschema:
            line += ". Allowed: " + ", ".join(json.dumps(v) for v in pschema["enum"])
        if "default" in pschema:
            line += f". Default: {json.dumps(pschema['default'], default=str)}"
        lines.append(line)
        if is_required:
            examples = pschema.get("examples")
            value = json.dumps(examples[0], default=str) if isinstance(examples, list) and examples else "..."
            example_args.append(f"{pname}={value}")
    output_schema = _field(tool, "output_schema", "outputSchema")
    if isinstance(output_schema, Mapping) and output_schema:
        returns = str(output_schema.get("description") or _type_of(output_schema))
        lines.append(f"Returns: {returns}")
    lines.append("Example usage:")
    lines.append(f"{name}({', '.join(example_args)})")
    return "\n".join(lines)


def tools_to_llm_prompt(tools: Iterable[Any]) -> str:
    """Describe several tools, separated by blank lines."""
    return "\n\n".join(tool_to_llm_prompt(t) for t in tools)


class BasicPrompter:
    """Builds an agent's prompts from a main template and an example template (both YAML).

    Subclasses implement :meth:`system_prompt_construction`, :meth:`user_prompt_construction`
    and :meth:`user_content_construction` for their agent. Template paths may be bare names
    found in :attr:`template_dirs`.
    """

    #: Folders searched for relative template paths that do not exist as given.
    template_dirs: ClassVar[tuple[Path, ...]] = (PACKAGE_PROMPTS_DIR,)

    def __init__(
        self,
        is_visual: bool,
        prompt_template: str | Path | None,
        example_prompt_template: str | Path | None,
    ) -> None:
        self.is_visual = is_visual
        self.prompt_template = self.load_prompt_template(prompt_template, is_visual)
        self.example_prompt_template = self.load_prompt_template(example_prompt_template, is_visual)

    @classmethod
    def load_prompt_template(cls, path: str | Path | None, is_visual: bool | None = None) -> dict[str, Any]:
        """Load a YAML template, searching :attr:`template_dirs` (see :func:`load_prompt_template`)."""
        return load_prompt_template(path, is_visual, cls.template_dirs)

    def system_prompt_construction(self, *args: Any, **kwargs: Any) -> str:
        """The system prompt; agents override this."""
        raise NotImplementedError(f"{type(self).__name__} must implement system_prompt_construction()")

    def user_prompt_construction(self, *args: Any, **kwargs: Any) -> str:
        """The user prompt text; agents override this."""
        raise NotImplementedError(f"{type(self).__name__} must implement user_prompt_construction()")

    def user_content_construction(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]] | str:
        """The user message content (text, or text and image parts); agents override this."""
        raise NotImplementedError(f"{type(self).__name__} must implement user_content_construction()")

    @staticmethod
    def prompt_construction(
        system_prompt: str, user_content: list[dict[str, Any]] | str
    ) -> list[dict[str, Any]]:
        """The chat messages: one system and one user message."""
        return [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_content}]

    def examples_prompt_helper(
        self,
        header: str = "## Response Examples",
        separator: str = "Example",
        additional_examples: Iterable[str | dict[str, Any]] = (),
    ) -> str:
        """Render every example template key starting with ``example``, then the extra examples."""
        rendered: list[str] = []
        for key, example in self.example_prompt_template.items():
            if not str(key).startswith("example") or not isinstance(example, Mapping):
                continue
            response = json.dumps(example.get("Response"), ensure_ascii=False)
            rendered.append(f"\n[User Request]:\n{example.get('Request', '')}\n[Response]:\n{response}")
        for extra in additional_examples:
            rendered.append(extra if isinstance(extra, str) else json.dumps(extra, ensure_ascii=False))
        return self.retrieved_documents_prompt_helper(header, separator, rendered)

    @staticmethod
    def retrieved_documents_prompt_helper(header: str, separator: str, documents: Iterable[str]) -> str:
        """``<header:>`` then each document as ``[separator i:]`` followed by the text."""
        prompt = f"\n<{header}:>\n" if header else ""
        for i, document in enumerate(documents):
            if separator:
                prompt += f"[{separator} {i + 1}:]\n"
            prompt += f"{document}\n\n"
        return prompt

    @staticmethod
    def tool_to_llm_prompt(tool: Any) -> str:
        """See :func:`tool_to_llm_prompt`."""
        return tool_to_llm_prompt(tool)

    @staticmethod
    def tools_to_llm_prompt(tools: Iterable[Any]) -> str:
        """See :func:`tools_to_llm_prompt`."""
        return tools_to_llm_prompt(tools)
