"""A fake desktop (a calculator-like window and an editor) behind real in-process MCP servers with the
UICollector / HostUIExecutor / AppUIExecutor tool names of spec C §13, the local dispatcher and replay
answers."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError

from starweave.agent import Context, ContextNames
from starweave.commands.local import LocalCommandDispatcher
from starweave.config.models import McpServerConfig, McpServerSet, ShellConfig
from starweave.llm.providers.replay import ReplayClient
from starweave.tools import CommandRouter, ComputerManager, MCPRegistry, MCPServerManager

# A 1x1 PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
        "0000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


@dataclass
class Window:
    """One fake window: a title, a process and a list of (type, name) controls with state."""

    title: str
    process: str
    display: str = "0"
    text: str = ""
    scientific: bool = False
    saved: list[str] = field(default_factory=list)

    def controls(self) -> list[tuple[str, str]]:
        if self.process == "calc":
            extra = [("Button", "sin"), ("Button", "cos")] if self.scientific else []
            digits = [("Button", d) for d in "0123456789"]
            return [
                *extra,
                ("Text", self.display),
                *digits,
                ("Button", "+"),
                ("Button", "="),
                ("Button", "Mode"),
            ]
        return [("Edit", "Document"), ("Button", "Save"), ("Button", "Delete All")]

    def activate(self, name: str) -> None:
        if self.process == "calc":
            if name == "Mode":
                self.scientific = not self.scientific
            elif name == "=":
                self.display = str(eval(self.display))
            elif name in "0123456789+":
                self.display = name if self.display == "0" else self.display + name
        elif name == "Save":
            self.saved.append(self.text)
        elif name == "Delete All":
            self.text = ""


class FakeDesktop:
    """Two windows; the last control walk's labels address controls, as in the real servers."""

    def __init__(self) -> None:
        self.windows = {"1": Window("Calculator", "calc"), "2": Window("Notes - Editor", "editor")}
        self.selected: str | None = None
        self.walk: dict[str, tuple[str, str]] = {}
        self.calls: list[str] = []

    def window(self) -> Window:
        if self.selected is None or self.selected not in self.windows:
            raise McpToolError("No window selected")
        return self.windows[self.selected]

    def control(self, ident: str) -> tuple[str, str]:
        if ident not in self.walk:
            raise McpToolError(
                f"Control with id '{ident}' not found. Available control ids: {sorted(self.walk)}"
            )
        return self.walk[ident]


def collector(desk: FakeDesktop) -> MCPServer:
    srv = MCPServer("UICollector", log_level="WARNING")

    @srv.tool()
    async def get_desktop_app_info(
        remove_empty: bool = True, refresh_app_windows: bool = True
    ) -> list[dict[str, Any]]:
        """List the application windows."""
        return [
            {"id": i, "name": w.title, "type": w.process, "kind": "window"} for i, w in desk.windows.items()
        ]

    @srv.tool()
    async def capture_desktop_screenshot(all_screens: bool = True) -> str:
        """Desktop screenshot."""
        return PNG

    @srv.tool()
    async def capture_window_screenshot() -> str:
        """Window screenshot."""
        return PNG if desk.selected in desk.windows else "Error: No window selected"

    @srv.tool()
    async def get_app_window_info(field_list: list[str] | None = None) -> dict[str, Any]:
        """The selected window."""
        w = desk.window()
        return {"control_text": w.title, "control_type": "Window"}

    @srv.tool()
    async def get_app_window_controls_info(field_list: list[str] | None = None) -> list[dict[str, Any]]:
        """Walk the selected window's controls."""
        controls = desk.window().controls()
        desk.walk = {str(i): c for i, c in enumerate(controls, start=1)}
        desk.calls.append("walk")
        return [
            {"label": str(i), "control_text": name, "control_type": kind, "control_rect": [0, 0, 10, 10]}
            for i, (kind, name) in enumerate(controls, start=1)
        ]

    return srv


def host_executor(desk: FakeDesktop) -> MCPServer:
    srv = MCPServer("HostUIExecutor", log_level="WARNING")

    @srv.tool()
    async def select_application_window(id: str, name: str = "") -> dict[str, Any]:
        """Select (focus) a window of the last listing."""
        if id not in desk.windows:
            raise McpToolError(
                f"Control with id '{id}' not found. Available control ids: {sorted(desk.windows)}"
            )
        desk.selected = id
        w = desk.windows[id]
        return {"root_name": w.process, "window_info": {"name": w.title, "process_name": w.process}}

    @srv.tool()
    async def close_application(id: str) -> str:
        """Close an application window."""
        desk.windows.pop(id, None)
        return "closed"

    return srv


def app_executor(desk: FakeDesktop) -> MCPServer:
    srv = MCPServer("AppUIExecutor", log_level="WARNING")

    @srv.tool()
    async def click_input(id: str, name: str = "", button: str = "left", double: bool = False) -> str:
        """Click a control of the last walk."""
        _kind, label = desk.control(id)
        desk.window().activate(label)
        desk.calls.append(f"click {label}")
        return f"clicked {label}"

    @srv.tool()
    async def set_edit_text(id: str, name: str = "", text: str = "", clear_current_text: bool = False) -> str:
        """Type into an edit control."""
        desk.control(id)
        w = desk.window()
        w.text = text if clear_current_text else w.text + text
        return "ok"

    @srv.tool()
    async def texts(id: str, name: str = "") -> str:
        """Read a control's text."""
        kind, label = desk.control(id)
        return desk.window().text if kind == "Edit" else label

    @srv.tool()
    async def summary(text: str) -> str:
        """Echo an observation."""
        return text

    return srv


def linux_tools(desk: FakeDesktop) -> MCPServer:
    srv = MCPServer("Shell", log_level="WARNING")

    @srv.tool()
    async def execute_command(command: str) -> dict[str, Any]:
        """Pretend to run a shell command."""
        desk.calls.append(f"shell {command}")
        return {"success": True, "stdout": f"ran {command}", "stderr": "", "exit_code": 0}

    return srv


def local(namespace: str) -> McpServerConfig:
    return McpServerConfig(namespace=namespace, type="local")


@pytest.fixture
def desk() -> FakeDesktop:
    return FakeDesktop()


@pytest.fixture
async def context(desk: FakeDesktop, tmp_path: Path) -> AsyncIterator[Context]:
    registry = MCPRegistry()
    registry.register_factory("UICollector", lambda _s: collector(desk))
    registry.register_factory("HostUIExecutor", lambda _s: host_executor(desk))
    registry.register_factory("AppUIExecutor", lambda _s: app_executor(desk))
    registry.register_factory("Shell", lambda _s: linux_tools(desk))
    config = {
        "HostAgent": {
            "default": McpServerSet(data_collection=[local("UICollector")], action=[local("HostUIExecutor")])
        },
        "AppAgent": {
            "default": McpServerSet(data_collection=[local("UICollector")], action=[local("AppUIExecutor")])
        },
        "LinuxAgent": {"default": McpServerSet(action=[local("Shell")])},
    }
    servers = MCPServerManager(
        ShellConfig.model_validate({"workspace": str(tmp_path)}), registry=registry, startup_timeout=10
    )
    computers = ComputerManager(config, servers, tool_timeout=10)
    ctx = Context()
    ctx.set(ContextNames.LOG_PATH, str(tmp_path / "logs"))
    ctx.attach_command_dispatcher(LocalCommandDispatcher(CommandRouter(computers), agent_name="HostAgent"))
    yield ctx
    await computers.aclose()


@pytest.fixture
def replay(tmp_path: Path) -> Callable[[list[Any]], ReplayClient]:
    """A replay client over the given answers (dicts, or strings for raw text)."""

    def make(answers: list[Any]) -> ReplayClient:
        path = tmp_path / f"answers_{len(list(tmp_path.glob('answers_*')))}.jsonl"
        path.write_text("\n".join(json.dumps(a) for a in answers) + "\n", encoding="utf-8")
        return ReplayClient(path, json_retries=2)

    return make
