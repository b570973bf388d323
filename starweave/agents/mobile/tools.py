"""The MobileAgent's tools: every name the agent sends through the command dispatcher, in one place.

The tools belong to two MCP servers (spec C §13.9): ``MobileDataCollector`` (the observation) and
``MobileExecutor`` (the actions). The agent calls them by tool name through the session's command
dispatcher (``Command(tool_name, parameters, tool_type)``), as the AppAgent calls its UI tools, so
wiring other servers means editing the names here and the ``mcp.yaml`` entry only.

The result shapes read here are the spec's: ``capture_screenshot`` gives a ``data:image/png;base64``
string; the two ``*_target_info`` tools give lists of TargetInfo dicts (``id``, ``name``, ``type``,
``rect`` ``[l, t, r, b]``); each action gives ``{"success", "action", "output"|"message", "error"}``.
"""

from __future__ import annotations

from typing import Any

from starweave.agents.app.controls import Control
from starweave.agents.app.dispatch import run_one
from starweave.commands import Result

#: The ``mcp.yaml`` agent key, and the namespaces of the reference's two servers.
AGENT_NAME = "MobileAgent"
DATA_COLLECTOR = "MobileDataCollector"
EXECUTOR = "MobileExecutor"

# Data collection tools.
CAPTURE_SCREENSHOT = "capture_screenshot"
INSTALLED_APPS = "get_mobile_app_target_info"
SCREEN_CONTROLS = "get_app_window_controls_target_info"
#: Whether adb reaches the phone (``{"success", "state"}``, the state ``adb devices`` lists).
DEVICE_STATE = "get_device_state"
#: The device states of a phone adb cannot use: not listed, offline, unauthorized, or no adb at all.
#: ("several": no serial given and more than one attached, which is no unplugged phone.)
USABLE_STATES = frozenset({"device", "several"})

#: The action tools the model may choose (MobileExecutor).
ACTION_TOOLS = ("tap", "swipe", "type_text", "launch_app", "press_key", "click_control", "wait")
#: Actions aimed at a control of the screen (``control_id``, ``control_name``).
CONTROL_ACTIONS = frozenset({"click_control", "type_text"})


def model_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """``tool`` as the model is offered it: a control action's ``control_name`` is optional, because
    the action phase fills it in from the control list (a small model need not copy it)."""
    if tool.get("name") not in CONTROL_ACTIONS:
        return tool
    schema = dict(tool.get("input_schema") or {})
    schema["required"] = [name for name in schema.get("required") or [] if name != "control_name"]
    return {**tool, "input_schema": schema}


async def collect(dispatcher: Any, tool_name: str, parameters: dict[str, Any] | None = None) -> Result:
    """Call one data-collection tool."""
    return await run_one(dispatcher, tool_name, parameters or {}, "data_collection")


def target_list(result: Result) -> list[dict[str, Any]]:
    """The TargetInfo dicts of a ``*_target_info`` result ([] when the tool failed)."""
    value = result.result if result.ok else None
    if isinstance(value, dict):
        value = value.get("result")
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def controls_of(result: Result) -> list[Control]:
    """The screen's controls from ``get_app_window_controls_target_info``."""
    return [c for c in (Control.from_dict(item) for item in target_list(result)) if c.id]


def apps_of(result: Result) -> list[str]:
    """The installed apps' package names from ``get_mobile_app_target_info``."""
    return [str(item.get("name") or item.get("type") or "") for item in target_list(result) if item]


def device_state(result: Result) -> str:
    """The phone's state from ``get_device_state`` ("" when the tool failed or is not offered:
    unknown, which is not taken for a phone that is gone)."""
    value = result.result if result.ok else None
    if isinstance(value, dict) and value.get("success"):
        return str(value.get("state") or "")
    return ""


def phone_gone(state: str) -> bool:
    """Whether a ``device_state`` says adb cannot use the phone at all."""
    return bool(state) and state not in USABLE_STATES


def action_failure(result: Result) -> str:
    """Why an action failed ("" when it succeeded): a transport error, or ``success: false``."""
    if not result.ok:
        return result.error or "the tool failed"
    value = result.result
    if isinstance(value, dict) and value.get("success") is False:
        return str(value.get("error") or value.get("message") or "the action failed")
    return ""


def action_output(result: Result) -> str:
    """The readable outcome of an action: its message or output, else its action text."""
    value = result.result
    if not isinstance(value, dict):
        return "" if value is None else str(value)
    parts = [value.get("message") or value.get("output") or value.get("action") or ""]
    if value.get("warning"):
        parts.append(f"warning: {value['warning']}")
    return " | ".join(str(p) for p in parts if p)
