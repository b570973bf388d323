"""The constellation MCP server through a real in-process MCP client."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client

from starweave.galaxy.constellation import ConstellationEditor
from starweave.galaxy.constellation.mcp_server import (
    HIDDEN_FROM_LLM,
    SERVER_NAME,
    create_constellation_server,
)


def _json(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def _error(result: Any) -> str:
    assert result.is_error
    return str(result.content[0].text)


async def test_tools_edit_and_return_whole_constellation() -> None:
    editor = ConstellationEditor()
    server = create_constellation_server(editor)
    assert server.name == SERVER_NAME == "Constellation Editor MCP Server"
    async with Client(server) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {
            "add_task",
            "remove_task",
            "update_task",
            "add_dependency",
            "remove_dependency",
            "update_dependency",
            "build_constellation",
        }
        assert {"build_constellation"} == HIDDEN_FROM_LLM
        data = _json(await client.call_tool("add_task", {"task_id": "a", "name": "A", "description": "do a"}))
        assert data["tasks"]["a"]["status"] == "pending" and data["tasks"]["a"]["priority"] == 2
        _json(
            await client.call_tool(
                "add_task", {"task_id": "b", "name": "B", "description": "do b", "tips": ["t"]}
            )
        )
        data = _json(
            await client.call_tool(
                "add_dependency", {"dependency_id": "d1", "from_task_id": "a", "to_task_id": "b"}
            )
        )
        assert data["dependencies"]["d1"]["dependency_type"] == "unconditional"
        data = _json(
            await client.call_tool("update_dependency", {"dependency_id": "d1", "condition_description": "c"})
        )
        assert data["dependencies"]["d1"]["condition_description"] == "c"
        data = _json(await client.call_tool("update_task", {"task_id": "b", "name": "B2"}))
        assert data["tasks"]["b"]["name"] == "B2" and data["tasks"]["b"]["tips"] == ["t"]
        assert "Duplicate task_id" in _error(
            await client.call_tool("add_task", {"task_id": "a", "name": "A", "description": "x"})
        )
        assert "Adding edge would create cycle" in _error(
            await client.call_tool(
                "add_dependency", {"dependency_id": "d2", "from_task_id": "b", "to_task_id": "a"}
            )
        )
        assert "At least one field required" in _error(
            await client.call_tool("update_task", {"task_id": "b"})
        )
        assert "Task not found" in _error(await client.call_tool("remove_task", {"task_id": "zz"}))
        data = _json(await client.call_tool("remove_dependency", {"dependency_id": "d1"}))
        assert data["dependencies"] == {}
        data = _json(await client.call_tool("remove_task", {"task_id": "a"}))
        assert list(data["tasks"]) == ["b"]
        editor.constellation.start_task("b")
        assert "Task not modifiable" in _error(
            await client.call_tool("update_task", {"task_id": "b", "name": "x"})
        )
    assert editor.get_history()[0] == "Add task: a"


async def test_build_constellation_tool() -> None:
    server = create_constellation_server()
    config = {
        "tasks": [{"task_id": "x", "description": "X", "priority": 3}, {"task_id": "y", "description": "Y"}],
        "dependencies": [{"from_task_id": "x", "to_task_id": "y", "dependency_type": "SUCCESS_ONLY"}],
    }
    async with Client(server) as client:
        data = _json(await client.call_tool("build_constellation", {"config": config}))
        assert set(data["tasks"]) == {"x", "y"} and data["tasks"]["x"]["priority"] == 3
        assert data["tasks"]["y"]["status"] == "waiting_dependency"
        more = {"tasks": [{"task_id": "z", "description": "Z"}], "dependencies": []}
        data = _json(await client.call_tool("build_constellation", {"config": more, "clear_existing": False}))
        assert set(data["tasks"]) == {"x", "y", "z"}
        bad = {"tasks": [], "dependencies": [{"from_task_id": "x", "to_task_id": "nope"}]}
        assert "Task not found" in _error(
            await client.call_tool("build_constellation", {"config": bad, "clear_existing": False})
        )


async def test_unknown_devices_are_refused_naming_the_known_ones() -> None:
    devices = {"linux_1"}
    editor = ConstellationEditor()
    server = create_constellation_server(editor, known_devices=lambda: devices)
    async with Client(server) as client:
        message = _error(
            await client.call_tool(
                "add_task", {"task_id": "a", "name": "A", "description": "x", "target_device_id": "ghost"}
            )
        )
        assert "Invalid device: ghost is not a registered device (known: linux_1)" in message
        assert editor.list_tasks() == []  # nothing was added
        _json(
            await client.call_tool(
                "add_task", {"task_id": "a", "name": "A", "description": "x", "target_device_id": "linux_1"}
            )
        )
        assert "Invalid device" in _error(
            await client.call_tool("update_task", {"task_id": "a", "target_device_id": "ghost"})
        )
        devices.add("ghost")  # registered later: accepted from now on
        data = _json(await client.call_tool("update_task", {"task_id": "a", "target_device_id": "ghost"}))
        assert data["tasks"]["a"]["target_device_id"] == "ghost"
        bad = {"tasks": [{"task_id": "b", "description": "y", "target_device_id": "nowhere"}]}
        assert "Invalid device: nowhere" in _error(
            await client.call_tool("build_constellation", {"config": bad, "clear_existing": False})
        )
        assert [t.task_id for t in editor.list_tasks()] == ["a"]


async def test_a_task_with_only_a_name_takes_it_as_its_description() -> None:
    editor = ConstellationEditor()
    server = create_constellation_server(editor)
    async with Client(server) as client:
        data = _json(
            await client.call_tool("add_task", {"task_id": "a", "name": "Create notes.txt on the laptop"})
        )
        assert data["tasks"]["a"]["description"] == "Create notes.txt on the laptop"
        message = _error(await client.call_tool("add_task", {"task_id": "b", "name": "  "}))
        assert "add_task needs a description" in message
        assert [t.task_id for t in editor.list_tasks()] == ["a"]
