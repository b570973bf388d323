"""Golden tests: the AIP message examples of the reference documents against the real models.

Every JSON example with a ``"type"`` in the reference's AIP docs is listed here verbatim with its
line in seed 004: ``galaxy/client/aip_integration.md`` (``aip/*.md`` shows messages only as Python
code) plus the two in ``infrastructure/agents/server_client_architecture.md``. Those that fit the
real model must parse and re-serialise to the same fields; the illustrative ones that cannot parse
are listed with the reason and must keep failing, rather than the model being bent to the docs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from starweave.aip.messages import ClientMessage, ServerMessage, parse_client_message, parse_server_message
from starweave.errors import AIPError


@dataclass(frozen=True)
class Example:
    """One documented message: its line, which way it travels, its JSON, and why it cannot parse."""

    line: int
    direction: str
    source: str
    message: dict[str, Any]
    reason: str = ""

    @property
    def id(self) -> str:
        return f"L{self.line}-{self.message.get('type')}"


PARSEABLE = [
    Example(
        18915,
        "server",
        "aip_integration.md, registration confirmation (HEARTBEAT ok)",
        {
            "type": "heartbeat",
            "status": "ok",
            "timestamp": "2025-11-06T10:30:01Z",
            "response_id": "reg_conf_abc123",
        },
    ),
    Example(
        18937,
        "server",
        "aip_integration.md, DEVICE_INFO_RESPONSE",
        {
            "type": "device_info_response",
            "status": "ok",
            "result": {
                "device_id": "windows_pc",
                "device_info": {
                    "os": "Windows 11",
                    "cpu_count": 8,
                    "memory_gb": 32,
                    "screen_resolution": "1920x1080",
                    "python_version": "3.11.5",
                    "installed_apps": ["Microsoft Office", "Chrome", "VSCode"],
                },
            },
            "timestamp": "2025-11-06T10:30:03Z",
            "response_id": "info_resp_xyz789",
        },
    ),
    Example(
        18977,
        "client",
        "aip_integration.md, HEARTBEAT client to server",
        {
            "type": "heartbeat",
            "client_type": "constellation",
            "client_id": "constellation_client_id",
            "status": "ok",
            "timestamp": "2025-11-06T10:35:00Z",
        },
    ),
    Example(
        18987,
        "server",
        "aip_integration.md, HEARTBEAT response server to client",
        {
            "type": "heartbeat",
            "status": "ok",
            "timestamp": "2025-11-06T10:35:00Z",
            "response_id": "hb_resp_123",
        },
    ),
    Example(
        19026,
        "server",
        "aip_integration.md, TASK server to client",
        {
            "type": "task",
            "status": "continue",
            "user_request": "Open Excel and create a chart",
            "task_name": "galaxy/production/excel_task",
            "session_id": "sess_task_abc123",
            "timestamp": "2025-11-06T10:40:00Z",
            "response_id": "task_req_001",
        },
    ),
    Example(
        19084,
        "client",
        "aip_integration.md, TASK_END client to server",
        {
            "type": "task_end",
            "client_type": "device",
            "client_id": "device_agent_id",
            "status": "completed",
            "result": {
                "success": True,
                "output": "Created bar chart showing quarterly sales",
                "artifacts": [{"type": "file", "path": "sales_report_with_chart.xlsx"}],
            },
            "session_id": "sess_task_abc123",
            "timestamp": "2025-11-06T10:40:15Z",
        },
    ),
    Example(
        19122,
        "server",
        "aip_integration.md, ERROR message format",
        {
            "type": "error",
            "status": "error",
            "error": "Task execution exceeded 300 second timeout",
            "session_id": "sess_task_abc123",
            "timestamp": "2025-11-06T10:45:00Z",
            "response_id": "err_001",
            "metadata": {"error_code": "TASK_TIMEOUT", "elapsed_time": 315.2, "last_command": "create_chart"},
        },
    ),
    Example(
        19383,
        "client",
        "aip_integration.md, constellation TASK (Layer 1); payload kept as an extra field",
        {
            "type": "task",
            "client_type": "constellation",
            "client_id": "constellation_abc123",
            "target_id": "windows_pc",
            "session_id": "sess_xyz789",
            "task_name": "open_excel_task",
            "request": "Open Excel and create a chart",
            "payload": {
                "task_id": "task_001",
                "description": "Open Excel and create a chart",
                "data": {"file_path": "sales_report.xlsx", "chart_type": "bar"},
            },
            "status": "ok",
            "timestamp": "2025-11-06T10:40:00Z",
        },
    ),
    Example(
        19501,
        "client",
        "aip_integration.md, device signals completion (TASK_END); payload kept as an extra field",
        {
            "type": "task_end",
            "client_type": "device",
            "client_id": "windows_pc",
            "session_id": "sess_xyz789",
            "status": "completed",
            "payload": {"result": {"success": True, "output": "Created bar chart in sales_report.xlsx"}},
        },
    ),
]

NOT_PARSEABLE = [
    Example(
        18898,
        "client",
        "aip_integration.md, REGISTER",
        {
            "type": "register",
            "client_type": "constellation",
            "payload": {
                "device_id": "windows_pc",
                "capabilities": ["office", "web", "email"],
                "metadata": {"location": "office", "user": "john"},
            },
            "status": "ok",
            "timestamp": "2025-11-06T10:30:00Z",
        },
        "client id inside a `payload` wrapper (payload.device_id); a real REGISTER has a top-level client_id",
    ),
    Example(
        18925,
        "client",
        "aip_integration.md, DEVICE_INFO_REQUEST",
        {
            "type": "device_info_request",
            "client_type": "constellation",
            "payload": {"request_id": "req_xyz789"},
            "status": "ok",
            "timestamp": "2025-11-06T10:30:02Z",
        },
        "request_id is inside a `payload` wrapper; the real message carries request_id at the top level",
    ),
    Example(
        19038,
        "server",
        "aip_integration.md, COMMAND",
        {
            "type": "command",
            "status": "continue",
            "actions": [
                {"action": "launch_app", "parameters": {"app_name": "Excel"}},
                {"action": "open_file", "parameters": {"file_path": "sales_report.xlsx"}},
            ],
            "session_id": "sess_task_abc123",
            "response_id": "cmd_001",
        },
        "actions use `action` instead of the required `tool_name`/`tool_type` of Command",
    ),
    Example(
        19061,
        "client",
        "aip_integration.md, COMMAND_RESULTS",
        {
            "type": "command_results",
            "client_type": "device",
            "client_id": "device_agent_id",
            "status": "continue",
            "action_results": [
                {"action": "launch_app", "status": "completed", "result": "Excel launched successfully"},
                {"action": "open_file", "status": "completed", "result": "File opened: sales_report.xlsx"},
            ],
            "session_id": "sess_task_abc123",
            "prev_response_id": "cmd_001",
        },
        "results carry `action` and status 'completed'; ResultStatus is success/failure/skipped/none",
    ),
    Example(
        19447,
        "server",
        "aip_integration.md, Layer 3 TASK to device",
        {
            "type": "task",
            "session_id": "sess_xyz789",
            "payload": {
                "request": "Open Excel and create a chart",
                "task_data": {"file_path": "sales_report.xlsx", "chart_type": "bar"},
            },
            "status": "ok",
            "timestamp": "2025-11-06T10:40:01Z",
        },
        "user_request/task_name are inside a `payload` wrapper; a real TASK carries them at the top level",
    ),
    Example(
        19466,
        "client",
        "aip_integration.md, command_request",
        {"type": "command_request", "session_id": "sess_xyz789", "round": 1},
        "'command_request' is not an AIP message type (illustrative device-to-server step)",
    ),
    Example(
        19474,
        "server",
        "aip_integration.md, COMMAND with payload",
        {
            "type": "command",
            "payload": {
                "commands": [
                    {"action": "launch_app", "parameters": {"app_name": "Excel"}},
                    {"action": "open_file", "parameters": {"file_path": "sales_report.xlsx"}},
                ]
            },
        },
        "actions/response_id are inside a `payload` wrapper",
    ),
    Example(
        19486,
        "client",
        "aip_integration.md, COMMAND_RESULTS with payload",
        {
            "type": "command_results",
            "client_type": "device",
            "client_id": "windows_pc",
            "session_id": "sess_xyz789",
            "payload": {
                "results": [
                    {"action": "launch_app", "status": "completed"},
                    {"action": "open_file", "status": "completed"},
                ]
            },
        },
        "action_results/prev_response_id are inside a `payload` wrapper",
    ),
    Example(
        45811,
        "server",
        "server_client_architecture.md, AIP message format (command)",
        {
            "type": "command",
            "request_id": "abc-123",
            "timestamp": "2025-11-06T10:30:00Z",
            "payload": {"function": "screenshot", "arguments": {"region": "active_window"}},
        },
        "a `payload` with `function`/`arguments` instead of actions; no session_id/response_id",
    ),
    Example(
        45824,
        "client",
        "server_client_architecture.md, AIP message format (result)",
        {
            "type": "result",
            "request_id": "abc-123",
            "timestamp": "2025-11-06T10:30:01Z",
            "payload": {
                "status": "success",
                "data": {"image": "base64_encoded_data", "dimensions": {"width": 1920, "height": 1080}},
            },
        },
        "'result' is not an AIP message type",
    ),
]


def parse(example: Example) -> ClientMessage | ServerMessage:
    frame = json.dumps(example.message)
    return parse_client_message(frame) if example.direction == "client" else parse_server_message(frame)


# Fields the model fills in when a document leaves them out.
DEFAULTED = {"status", "client_type", "timestamp"}


@pytest.mark.parametrize("example", PARSEABLE, ids=lambda e: e.id)
def test_documented_message_round_trips(example: Example) -> None:
    message = parse(example)
    again = json.loads(message.model_dump_json(exclude_none=True))
    for field, value in example.message.items():
        assert again[field] == value, f"{example.source}: {field} changed"
    assert set(again) - set(example.message) <= DEFAULTED
    # The re-serialised frame parses to the same message.
    assert parse(Example(example.line, example.direction, example.source, again)) == message


@pytest.mark.parametrize("example", NOT_PARSEABLE, ids=lambda e: e.id)
def test_illustrative_message_is_rejected_with_a_reason(example: Example) -> None:
    assert example.reason
    with pytest.raises(AIPError):
        parse(example)


def test_the_catalogue_is_complete() -> None:
    types = {e.message["type"] for e in PARSEABLE}
    assert {"heartbeat", "task", "task_end", "error", "device_info_response"} <= types
    assert len(PARSEABLE) + len(NOT_PARSEABLE) == 19
    assert all(e.direction in ("client", "server") for e in PARSEABLE + NOT_PARSEABLE)
