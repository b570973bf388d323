"""BasicPrompter: template loading, examples, documents and MCP tool descriptions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, ClassVar

import mcp.types
import pytest
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from starweave.agent import BasicPrompter, tool_to_llm_prompt, tools_to_llm_prompt
from starweave.errors import ConfigError

EXAMPLES = """\
example1:
  Request: Open the report
  Response:
    Observation: desktop
    Status: CONTINUE
example2:
  Request: Close it
  Response: {Status: FINISH}
system: not an example
"""


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    (tmp_path / "main.yaml").write_text("system: You are {name}.\nuser: '{request}'\n")
    (tmp_path / "ex_visual.yaml").write_text(EXAMPLES)
    (tmp_path / "ex_nonvisual.yaml").write_text("example1: {Request: nv, Response: {a: 1}}\n")
    return tmp_path


def test_loads_templates_and_resolves_mode(templates: Path) -> None:
    p = BasicPrompter(True, templates / "main.yaml", str(templates / "ex_{mode}.yaml"))
    assert p.prompt_template["system"] == "You are {name}."
    assert set(p.example_prompt_template) == {"example1", "example2", "system"}
    nv = BasicPrompter(False, templates / "main.yaml", str(templates / "ex_{mode}.yaml"))
    assert nv.example_prompt_template == {"example1": {"Request": "nv", "Response": {"a": 1}}}


def test_missing_template_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        BasicPrompter(True, tmp_path / "nope.yaml", None)
    assert str(tmp_path / "nope.yaml") in str(info.value)
    with pytest.raises(ConfigError, match=r"bare\.yaml.*starweave/prompts|bare\.yaml.*prompts"):
        BasicPrompter(True, "bare.yaml", None)


def test_bare_names_are_found_in_template_dirs(templates: Path) -> None:
    class Local(BasicPrompter):
        template_dirs: ClassVar[tuple[Path, ...]] = (templates,)

    p = Local(True, "main.yaml", "ex_{mode}.yaml")
    assert p.prompt_template["user"] == "{request}"
    assert "example1" in p.example_prompt_template


def test_invalid_yaml_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("a: [unclosed\n")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        BasicPrompter(True, tmp_path / "bad.yaml", None)
    with pytest.raises(ConfigError, match="mapping"):
        BasicPrompter(True, tmp_path / "list.yaml", None)


def test_examples_prompt_helper(templates: Path) -> None:
    p = BasicPrompter(True, None, templates / "ex_visual.yaml")
    text = p.examples_prompt_helper(additional_examples=["extra one", {"k": "v"}])
    response1 = json.dumps({"Observation": "desktop", "Status": "CONTINUE"})
    expected = (
        "\n<## Response Examples:>\n"
        f"[Example 1:]\n\n[User Request]:\nOpen the report\n[Response]:\n{response1}\n\n"
        f"[Example 2:]\n\n[User Request]:\nClose it\n[Response]:\n{json.dumps({'Status': 'FINISH'})}\n\n"
        "[Example 3:]\nextra one\n\n"
        '[Example 4:]\n{"k": "v"}\n\n'
    )
    assert text == expected


def test_retrieved_documents_helper() -> None:
    assert BasicPrompter.retrieved_documents_prompt_helper("Help", "Doc", ["a", "b"]) == (
        "\n<Help:>\n[Doc 1:]\na\n\n[Doc 2:]\nb\n\n"
    )
    assert BasicPrompter.retrieved_documents_prompt_helper("", "", ["a"]) == "a\n\n"


def test_prompt_construction_and_abstract_parts() -> None:
    assert BasicPrompter.prompt_construction("sys", [{"type": "text", "text": "u"}]) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "u"}]},
    ]
    with pytest.raises(NotImplementedError, match="system_prompt_construction"):
        BasicPrompter(False, None, None).system_prompt_construction()


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The shell command to run."},
        "timeout": {"type": "integer", "description": "Seconds before giving up", "default": 30},
        "cwd": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "required": ["command"],
}


def test_tool_rendering_from_dict() -> None:
    text = tool_to_llm_prompt(
        {"name": "execute_command", "description": "Run a command.", "input_schema": SCHEMA}
    )
    assert text == (
        "Tool name: execute_command\n"
        "Description: Run a command.\n"
        "Parameters:\n"
        "- command (string, required): The shell command to run\n"
        "- timeout (integer, optional): Seconds before giving up. Default: 30\n"
        "- cwd (string | null, optional). Default: null\n"
        "Example usage:\n"
        "execute_command(command=...)"
    )


def test_tool_rendering_from_mcp_tool_and_list() -> None:
    tool = mcp.types.Tool(
        name="get_system_info", description="System facts.", input_schema={"type": "object"}
    )
    text = tools_to_llm_prompt([tool, {"name": "wait", "inputSchema": {"properties": {}}}])
    first, second = text.split("\n\n")
    assert first == (
        "Tool name: get_system_info\nDescription: System facts.\nParameters:\n- (none)\n"
        "Example usage:\nget_system_info()"
    )
    assert second.startswith("Tool name: wait\nDescription: No description.")


async def test_tool_rendering_from_mcp_server_annotated_tool() -> None:
    server = MCPServer("t")

    @server.tool()
    def click_input(
        id: Annotated[str, Field(description="Control id to click")],
        button: Annotated[str, Field(description="Mouse button")] = "left",
    ) -> str:
        """Click a control."""
        return id + button

    [tool] = await server.list_tools()
    text = tool_to_llm_prompt(tool)
    assert "- id (string, required): Control id to click" in text
    assert '- button (string, optional): Mouse button. Default: "left"' in text
    assert text.endswith("Example usage:\nclick_input(id=...)")
    assert "Description: Click a control." in text
