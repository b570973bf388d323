"""AIP message models: every type round-trips, required fields are enforced, bad frames are refused."""

from __future__ import annotations

import json

import pytest

from starweave.aip.messages import (
    CLIENT_REQUIRES,
    SERVER_REQUIRES,
    ClientMessage,
    ClientMessageType,
    ClientType,
    MessageValidator,
    ServerMessage,
    ServerMessageType,
    TaskStatus,
    client_message,
    parse_client_message,
    parse_server_message,
    server_message,
)
from starweave.commands import Command, Result, ResultStatus
from starweave.errors import AIPError

CLIENT_EXAMPLES: dict[ClientMessageType, dict[str, object]] = {
    ClientMessageType.REGISTER: {"client_id": "d1", "metadata": {"platform": "linux"}},
    ClientMessageType.HEARTBEAT: {"client_id": "d1"},
    ClientMessageType.TASK: {"client_id": "d1", "request": "ls", "task_name": "t"},
    ClientMessageType.TASK_END: {"session_id": "s", "status": "completed"},
    ClientMessageType.COMMAND_RESULTS: {
        "action_results": [{"status": "success", "result": {"stdout": "x"}, "call_id": "c1"}],
        "prev_response_id": "r1",
        "session_id": "s",
        "status": "continue",
    },
    ClientMessageType.DEVICE_INFO_REQUEST: {"request_id": "q1", "target_id": "d1"},
    ClientMessageType.DEVICE_INFO_RESPONSE: {"request_id": "q1", "result": {"os": "linux"}},
    ClientMessageType.ERROR: {"error": "boom"},
}
SERVER_EXAMPLES: dict[ServerMessageType, dict[str, object]] = {
    ServerMessageType.TASK: {"user_request": "ls", "task_name": "t", "session_id": "s", "response_id": "r"},
    ServerMessageType.COMMAND: {
        "actions": [{"tool_name": "execute_command", "parameters": {"command": "ls"}, "tool_type": "action"}],
        "response_id": "r",
        "session_id": "s",
        "status": "continue",
    },
    ServerMessageType.TASK_END: {"session_id": "s", "status": "failed", "error": "device gone"},
    ServerMessageType.HEARTBEAT: {"response_id": "r"},
    ServerMessageType.DEVICE_INFO_REQUEST: {"request_id": "q"},
    ServerMessageType.DEVICE_INFO_RESPONSE: {"request_id": "q", "result": {"os": "linux"}},
    ServerMessageType.ERROR: {"error": "bad frame"},
}


def test_every_client_type_round_trips_with_lowercase_values() -> None:
    assert set(CLIENT_EXAMPLES) == set(ClientMessageType)
    for kind, fields in CLIENT_EXAMPLES.items():
        frame = json.dumps({"type": kind.value, **fields})
        message = parse_client_message(frame)
        again = json.loads(message.model_dump_json(exclude_none=True))
        assert again["type"] == kind.value
        for key, value in fields.items():
            assert again[key] == value, (kind, key)
        assert again["status"] == again["status"].lower()


def test_every_server_type_round_trips() -> None:
    assert set(SERVER_EXAMPLES) == set(ServerMessageType)
    for kind, fields in SERVER_EXAMPLES.items():
        message = parse_server_message(json.dumps({"type": kind.value, **fields}))
        again = json.loads(message.model_dump_json(exclude_none=True))
        for key, value in fields.items():
            if key == "actions":
                assert again[key][0]["tool_name"] == "execute_command"
            else:
                assert again[key] == value, (kind, key)


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        ("not json", "Invalid JSON"),
        ("[1, 2]", "invalid ClientMessage"),
        ('{"type": "teleport"}', "type"),
        ('{"client_id": "x"}', "type"),
        ('{"type": "register"}', "lacks client_id"),
        ('{"type": "task", "client_id": "x"}', "lacks request"),
        ('{"type": "command_results", "action_results": []}', "prev_response_id"),
        ('{"type": "task", "client_id": "x", "request": "r", "client_type": "constellation"}', "target_id"),
        ('{"type": "heartbeat", "client_id": "x", "status": "maybe"}', "status"),
        (
            '{"type": "command_results", "prev_response_id": "r", "action_results": [{"status": "weird"}]}',
            "status",
        ),
    ],
)
def test_bad_client_frames_are_refused_with_a_reason(frame: str, reason: str) -> None:
    with pytest.raises(AIPError, match=reason):
        parse_client_message(frame)


def test_bad_server_frames_are_refused() -> None:
    with pytest.raises(AIPError, match="lacks actions"):
        parse_server_message('{"type": "command", "response_id": "r", "session_id": "s"}')
    with pytest.raises(AIPError, match="tool_type"):
        parse_server_message(
            '{"type": "command", "response_id": "r", "session_id": "s", "actions": [{"tool_name": "x"}]}'
        )


def test_unknown_fields_survive_a_round_trip() -> None:
    message = parse_client_message('{"type": "heartbeat", "client_id": "d", "vendor_extension": {"a": 1}}')
    assert json.loads(message.model_dump_json())["vendor_extension"] == {"a": 1}


def test_validator_helpers() -> None:
    assert MessageValidator.validate_registration(
        ClientMessage(type=ClientMessageType.REGISTER, client_id="a")
    )
    assert not MessageValidator.validate_registration(
        ClientMessage(type=ClientMessageType.HEARTBEAT, client_id="a")
    )
    assert MessageValidator.validate_task_request(
        ClientMessage(type=ClientMessageType.TASK, client_id="a", request="r")
    )
    assert MessageValidator.validate_command_results(
        ClientMessage(type=ClientMessageType.COMMAND_RESULTS, prev_response_id="r", action_results=[])
    )
    assert MessageValidator.validate_server_message(ServerMessage(type=ServerMessageType.HEARTBEAT))


def test_commands_and_results_keep_their_ids() -> None:
    command = Command(tool_name="ls", tool_type="action", call_id="c1")
    out = ServerMessage(type=ServerMessageType.COMMAND, actions=[command], response_id="r", session_id="s")
    back = parse_server_message(out.model_dump_json())
    assert back.actions is not None and back.actions[0].call_id == "c1"
    result = Result(status=ResultStatus.SKIPPED, call_id="c1")
    reply = ClientMessage(
        type=ClientMessageType.COMMAND_RESULTS,
        action_results=[result],
        prev_response_id="r",
        status=TaskStatus.CONTINUE,
        client_type=ClientType.DEVICE,
    )
    parsed = parse_client_message(reply.model_dump_json())
    assert parsed.action_results is not None and parsed.action_results[0].status == ResultStatus.SKIPPED


def test_each_message_type_is_one_enum_member_and_one_row_of_its_table() -> None:
    # A new type needs nothing more in messages.py: parsing, the per-type model and the required
    # fields all come from the row (and the receiving side's dispatch table names its handler).
    assert set(CLIENT_REQUIRES) == set(ClientMessageType)
    assert set(SERVER_REQUIRES) == set(ServerMessageType)


def _filled(annotation: object) -> object:
    return "x" if annotation is str else []


@pytest.mark.parametrize("kind", list(ServerMessageType))
def test_a_server_type_is_parsed_and_checked_by_its_row_alone(kind: ServerMessageType) -> None:
    required = SERVER_REQUIRES[kind]
    fields = {name: _filled(annotation) for name, annotation in required.items()}
    parsed = parse_server_message(json.dumps({"type": kind.value, **fields}))
    assert parsed.type == kind and all(getattr(parsed, name) == value for name, value in fields.items())
    built = server_message(kind, **fields)
    assert built.response_id  # every server message gets one
    fresh = {"timestamp", "response_id"}
    assert built.model_dump(exclude=fresh) == parsed.model_dump(exclude=fresh)
    for name in required:
        partial = {key: value for key, value in fields.items() if key != name}
        with pytest.raises(AIPError, match=f"lacks {name}"):
            parse_server_message(json.dumps({"type": kind.value, **partial}))


@pytest.mark.parametrize("kind", list(ClientMessageType))
def test_a_client_type_is_parsed_and_checked_by_its_row_alone(kind: ClientMessageType) -> None:
    required = CLIENT_REQUIRES[kind]
    fields = {name: _filled(annotation) for name, annotation in required.items()}
    parsed = parse_client_message(json.dumps({"type": kind.value, **fields}))
    assert parsed.type == kind and isinstance(client_message(kind, **fields), ClientMessage)
    for name in required:
        partial = {key: value for key, value in fields.items() if key != name}
        with pytest.raises(AIPError, match=f"lacks {name}"):
            parse_client_message(json.dumps({"type": kind.value, **partial}))
