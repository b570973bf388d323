"""A fake phone behind fake MobileDataCollector / MobileExecutor MCP servers, for MobileAgent tests.

It implements the tool names and result shapes of spec C §13.9 over a tiny state machine: a launcher,
and a notes app with a text field and a Save button (saving stores the note), plus a shop screen
whose Buy button is a sensitive action. Every call is recorded in ``FakePhone.calls``. The real
servers (starweave/tools/mobile) replace it once merged; the namespaces here are the fake's own, so
the real servers' registration cannot shadow it.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from PIL import Image

from starweave.tools.mcp_manager import default_registry

DATA_NAMESPACE = "FakeMobileDataCollector"
ACTION_NAMESPACE = "FakeMobileExecutor"
NOTES = "com.example.notes"
SHOP = "com.example.shop"
APPS = [NOTES, SHOP, "com.android.settings"]
WIDTH, HEIGHT = 360, 640


@dataclass
class FakePhone:
    """What the fake device shows and what it was asked to do."""

    app: str = "launcher"
    text: str = ""
    saved: list[str] = field(default_factory=list)
    bought: int = 0
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def controls(self) -> list[dict[str, Any]]:
        """The screen's controls as TargetInfo dicts."""
        if self.app == NOTES:
            rows = [
                ("TextView", "Notes", [0, 0, 360, 60]),
                ("EditText", self.text or "Note", [20, 80, 340, 300]),
            ]
            rows.append(("Button", "Save", [20, 320, 170, 380]))
        elif self.app == SHOP:
            rows = [("TextView", "Shop", [0, 0, 360, 60]), ("Button", "Buy now", [20, 320, 340, 380])]
        else:
            rows = [
                ("TextView", name.rsplit(".", 1)[-1].title(), [20, 80 + 90 * i, 120, 160 + 90 * i])
                for i, name in enumerate(APPS)
            ]
        return [
            {"kind": "control", "id": str(i), "name": name, "type": kind, "rect": rect}
            for i, (kind, name, rect) in enumerate(rows, start=1)
        ]

    def control(self, control_id: str) -> dict[str, Any] | None:
        return next((c for c in self.controls() if c["id"] == str(control_id)), None)

    def screenshot(self) -> str:
        colors = {NOTES: "lightyellow", SHOP: "lightblue"}
        image = Image.new("RGB", (WIDTH, HEIGHT), colors.get(self.app, "white"))
        out = io.BytesIO()
        image.save(out, format="PNG")
        return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")

    def press(self, control_id: str) -> None:
        control = self.control(control_id)
        if control is None:
            return
        if control["name"] == "Save":
            self.saved.append(self.text)
        if control["name"] == "Buy now":
            self.bought += 1


def data_server(phone: FakePhone) -> MCPServer:
    """The fake MobileDataCollector."""
    srv = MCPServer(DATA_NAMESPACE, log_level="WARNING")

    @srv.tool()
    async def capture_screenshot() -> str:
        """The screen as a PNG data URL."""
        phone.calls.append(("capture_screenshot", {}))
        return phone.screenshot()

    @srv.tool()
    async def get_mobile_app_target_info(
        filter: str = "", include_system_apps: bool = False, force_refresh: bool = False
    ) -> list[dict[str, Any]]:
        """The installed apps."""
        phone.calls.append(("get_mobile_app_target_info", {}))
        return [
            {"kind": "third_party_agent", "id": str(i), "name": a, "type": a} for i, a in enumerate(APPS, 1)
        ]

    @srv.tool()
    async def get_app_window_controls_target_info(force_refresh: bool = False) -> list[dict[str, Any]]:
        """The screen's controls."""
        phone.calls.append(("get_app_window_controls_target_info", {}))
        return phone.controls()

    return srv


def action_server(phone: FakePhone) -> MCPServer:
    """The fake MobileExecutor."""
    srv = MCPServer(ACTION_NAMESPACE, log_level="WARNING")

    def done(action: str, **extra: Any) -> dict[str, Any]:
        return {"success": True, "action": action, **extra}

    @srv.tool()
    async def tap(x: int, y: int) -> dict[str, Any]:
        """Tap the screen at (x, y)."""
        phone.calls.append(("tap", {"x": x, "y": y}))
        return done(f"tap {x} {y}")

    @srv.tool()
    async def swipe(
        start_x: int, start_y: int, end_x: int, end_y: int, duration: int = 300
    ) -> dict[str, Any]:
        """Swipe from one point to another."""
        phone.calls.append(("swipe", {"start_x": start_x, "start_y": start_y}))
        return done("swipe")

    @srv.tool()
    async def type_text(
        text: str, control_id: str, control_name: str, clear_current_text: bool = False
    ) -> dict[str, Any]:
        """Type text into a control of the screen."""
        phone.calls.append(
            ("type_text", {"text": text, "control_id": control_id, "control_name": control_name})
        )
        control = phone.control(control_id)
        if control is None:
            return {"success": False, "action": "type_text", "error": f"control {control_id} not found"}
        phone.text = text if clear_current_text else phone.text + text
        return done("type_text", message=f"Clicked control {control_name} | Typed text: {text}")

    @srv.tool()
    async def launch_app(package_name: str, id: str | None = None) -> dict[str, Any]:
        """Launch an app by its package name."""
        phone.calls.append(("launch_app", {"package_name": package_name}))
        if package_name not in APPS:
            return {"success": False, "action": "launch_app", "error": f"no app {package_name}"}
        phone.app = package_name
        return done("launch_app", package_name=package_name, output="Events injected: 1")

    @srv.tool()
    async def press_key(key_code: str) -> dict[str, Any]:
        """Press a key (KEYCODE_HOME, KEYCODE_BACK, ...)."""
        phone.calls.append(("press_key", {"key_code": key_code}))
        if key_code in ("KEYCODE_HOME", "KEYCODE_BACK"):
            phone.app = "launcher"
        return done(f"press {key_code}")

    @srv.tool()
    async def click_control(control_id: str, control_name: str) -> dict[str, Any]:
        """Click a control of the screen by its id."""
        phone.calls.append(("click_control", {"control_id": control_id, "control_name": control_name}))
        if phone.control(control_id) is None:
            return {"success": False, "action": "click_control", "error": f"control {control_id} not found"}
        phone.press(control_id)
        return done("click_control", message=f"Clicked {control_name}")

    @srv.tool()
    async def wait(seconds: float = 1.0) -> dict[str, Any]:
        """Wait a moment."""
        phone.calls.append(("wait", {"seconds": seconds}))
        return done("wait")

    return srv


def write_mcp_config(config_dir: Path) -> Path:
    """A config folder whose mcp.yaml gives the MobileAgent the fake servers."""
    (config_dir / "ufo").mkdir(parents=True, exist_ok=True)
    (config_dir / "ufo" / "mcp.yaml").write_text(
        "MobileAgent:\n  default:\n"
        f"    data_collection:\n      - namespace: {DATA_NAMESPACE}\n        type: local\n"
        f"    action:\n      - namespace: {ACTION_NAMESPACE}\n        type: local\n",
        encoding="utf-8",
    )
    return config_dir


@contextmanager
def registered(phone: FakePhone) -> Iterator[FakePhone]:
    """The fake servers registered as local servers for the duration."""
    default_registry.register_factory(DATA_NAMESPACE, lambda _s: data_server(phone), replace=True)
    default_registry.register_factory(ACTION_NAMESPACE, lambda _s: action_server(phone), replace=True)
    try:
        yield phone
    finally:
        default_registry.unregister(DATA_NAMESPACE)
        default_registry.unregister(ACTION_NAMESPACE)
