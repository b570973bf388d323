"""The device's AIP core, driven synchronously: parsed messages in, messages to send and work out."""

from __future__ import annotations

import pytest

from starweave.aip import messages as aip
from starweave.aip.device_state import DeviceConnectionState, DevicePhase
from starweave.aip.messages import Result, ServerMessage, ServerMessageType, TaskStatus

ClientMessageType = aip.ClientMessageType


def _server(kind: ServerMessageType, **fields: object) -> ServerMessage:
    return ServerMessage(type=kind, **fields)  # type: ignore[arg-type]


def _task(session_id: str, request: str = "list files") -> ServerMessage:
    return _server(
        ServerMessageType.TASK, user_request=request, task_name=f"t-{session_id}", session_id=session_id
    )


def _command(
    session_id: str, status: TaskStatus = TaskStatus.CONTINUE, response_id: str = "r1"
) -> ServerMessage:
    action = aip.Command(
        tool_name="run_shell", parameters={"command": "ls"}, tool_type="action", call_id="c1"
    )
    return _server(
        ServerMessageType.COMMAND,
        actions=[action],
        response_id=response_id,
        session_id=session_id,
        status=status,
    )


def _registered(max_frame_bytes: int = 1024 * 1024) -> DeviceConnectionState:
    state = DeviceConnectionState("dev-1", "linux", max_frame_bytes)
    state.registration_sent()
    step = state.receive(_server(ServerMessageType.HEARTBEAT, response_id="ok"))
    assert step.registered is not None and state.phase == DevicePhase.IDLE
    return state


def test_a_new_connection_waits_for_its_registration_answer() -> None:
    state = DeviceConnectionState("dev-1", "linux")
    assert state.phase == DevicePhase.CONNECTING and not state.registered
    state.registration_sent()
    assert state.phase == DevicePhase.REGISTERING


def test_a_task_before_the_registration_answer_is_ignored_with_a_reason() -> None:
    state = DeviceConnectionState("dev-1", "linux")
    state.registration_sent()
    step = state.receive(_task("s1"))
    assert step.start is None and step.registered is None and step.refused is None
    assert step.problem == "Ignoring task message while waiting for the registration answer"
    assert state.phase == DevicePhase.REGISTERING and state.current_session_id is None


def test_a_heartbeat_that_is_not_ok_does_not_register() -> None:
    state = DeviceConnectionState("dev-1", "linux")
    state.registration_sent()
    step = state.receive(_server(ServerMessageType.HEARTBEAT, status=TaskStatus.ERROR, response_id="x"))
    assert step.registered is None and state.phase == DevicePhase.REGISTERING


def test_an_error_refuses_the_registration_with_the_servers_reason() -> None:
    state = DeviceConnectionState("dev-1", "linux")
    state.registration_sent()
    step = state.receive(_server(ServerMessageType.ERROR, error="client_id already exists"))
    assert step.refused == "client_id already exists"
    assert state.phase == DevicePhase.DISCONNECTED and not state.registered


def test_messages_before_registering_or_after_closing_are_refused_by_phase() -> None:
    state = DeviceConnectionState("dev-1", "linux")
    assert state.receive(_task("s1")).problem == "task message while connecting; ignored"
    registered = _registered()
    registered.closed()
    step = registered.receive(_command("s1"))
    assert step.run is None and step.problem == "command message while disconnected; ignored"


def test_a_task_starts_with_its_echo_and_the_device_is_executing() -> None:
    state = _registered()
    step = state.receive(_task("s1"))
    assert step.start is not None and step.send == []
    assert step.start.type == ClientMessageType.TASK and step.start.session_id == "s1"
    assert step.start.request == "list files" and step.start.client_id == "dev-1"
    assert step.start.task_name == "t-s1"
    assert step.start.metadata == {"platform": "linux"}
    assert state.phase == DevicePhase.EXECUTING and state.current_session_id == "s1"
    assert not state.start_confirmed


def test_a_second_task_while_one_runs_is_refused_with_an_error_to_the_server() -> None:
    state = _registered()
    state.receive(_task("s1"))
    step = state.receive(_task("s2"))
    assert step.start is None and len(step.send) == 1
    error = step.send[0]
    assert error.type == ClientMessageType.ERROR and error.session_id == "s2"
    assert error.error == "the device is busy with task s1; task s2 was not started"
    assert state.ignored_tasks == ["s2"] and state.current_session_id == "s1"


def test_a_task_whose_echo_exceeds_the_frame_limit_is_refused_at_once() -> None:
    state = _registered(max_frame_bytes=2048)
    step = state.receive(_task("s1", request="x" * 4096))
    assert step.start is None and step.send[0].type == ClientMessageType.ERROR
    assert "over the server's frame limit of 2048 bytes" in str(step.problem)
    assert state.phase == DevicePhase.IDLE and state.current_session_id is None


def test_a_heartbeat_or_command_for_the_running_session_confirms_its_start() -> None:
    state = _registered()
    state.receive(_task("s1"))
    step = state.receive(_server(ServerMessageType.HEARTBEAT, response_id="a", session_id="other"))
    assert step.send == [] and not state.start_confirmed and state.heartbeat_acks == 1
    state.receive(_server(ServerMessageType.HEARTBEAT, response_id="b", session_id="s1"))
    assert state.start_confirmed
    fresh = _registered()
    fresh.receive(_task("s2"))
    assert fresh.receive(_command("s2")).run is not None and fresh.start_confirmed


def test_command_results_answer_the_command_and_a_terminal_status_ends_the_task() -> None:
    state = _registered()
    state.receive(_task("s1"))
    command = _command("s1", response_id="r1")
    state.receive(command)
    assert state.pending_commands == {"r1"}
    step = state.results_ready(command, [Result(status=aip.ResultStatus.SUCCESS, result="a b", call_id="c1")])
    [results] = step.send
    assert results.type == ClientMessageType.COMMAND_RESULTS and results.prev_response_id == "r1"
    assert results.status == TaskStatus.CONTINUE and results.action_results is not None
    assert step.ended is None and state.phase == DevicePhase.EXECUTING and state.pending_commands == set()
    last = _command("s1", TaskStatus.COMPLETED, response_id="r2")
    state.receive(last)
    done = [Result(status=aip.ResultStatus.SUCCESS, result="ok", call_id="c1")]
    step = state.results_ready(last, done)
    [answer] = step.send
    assert answer.prev_response_id == "r2" and answer.status == TaskStatus.COMPLETED
    assert answer.action_results == done and answer.client_id == "dev-1"
    assert step.ended is last and state.phase == DevicePhase.IDLE and state.current_session_id is None


def test_results_over_the_frame_limit_become_failures() -> None:
    state = _registered(max_frame_bytes=4096)
    command = _command("s1")
    step = state.results_ready(
        command, [Result(status=aip.ResultStatus.SUCCESS, result="y" * 10_000, call_id="c1")]
    )
    [result] = step.send[0].action_results or []
    assert result.status == aip.ResultStatus.FAILURE and result.call_id == "c1"
    assert "too large to send" in str(result.error)


def test_task_end_ends_the_running_task_and_cancels_its_commands() -> None:
    state = _registered()
    state.receive(_task("s1"))
    end = _server(ServerMessageType.TASK_END, session_id="s1", status=TaskStatus.COMPLETED, result="done")
    step = state.receive(end)
    assert step.ended is end and step.cancel == "s1"
    assert state.phase == DevicePhase.IDLE and state.current_session_id is None


def test_task_end_for_another_session_leaves_the_running_task_alone() -> None:
    state = _registered()
    state.receive(_task("s1"))
    step = state.receive(_server(ServerMessageType.TASK_END, session_id="old", status=TaskStatus.FAILED))
    assert step.cancel == "old" and state.current_session_id == "s1"


def test_an_error_about_the_running_session_frees_the_device() -> None:
    state = _registered()
    state.receive(_task("s1"))
    step = state.receive(_server(ServerMessageType.ERROR, error="echo refused", session_id="s1"))
    assert step.cancel == "s1" and step.problem == "Server error: echo refused"
    assert state.current_session_id is None and state.server_errors == ["echo refused"]


def test_an_error_about_nothing_running_is_only_recorded() -> None:
    state = _registered()
    step = state.receive(_server(ServerMessageType.ERROR, error="you were rude"))
    assert step.cancel is None and step.send == [] and state.server_errors == ["you were rude"]
    assert state.phase == DevicePhase.IDLE


def test_an_unconfirmed_task_is_dropped_when_its_start_times_out() -> None:
    state = _registered()
    state.receive(_task("s1"))
    step = state.start_timed_out("s1", "not confirmed in time")
    assert step.cancel == "s1" and step.send[0].error == "not confirmed in time"
    assert state.current_session_id is None and state.phase == DevicePhase.IDLE


@pytest.mark.parametrize("settle", ["confirmed", "replaced"])
def test_a_late_start_timeout_changes_nothing(settle: str) -> None:
    state = _registered()
    state.receive(_task("s1"))
    if settle == "confirmed":
        state.receive(_command("s1"))
    else:
        state.receive(_server(ServerMessageType.TASK_END, session_id="s1", status=TaskStatus.COMPLETED))
        state.receive(_task("s2"))
    step = state.start_timed_out("s1", "late")
    assert step.send == [] and step.cancel is None and state.phase == DevicePhase.EXECUTING


def test_a_failed_start_tells_the_server_and_frees_the_device() -> None:
    state = _registered()
    state.receive(_task("s1"))
    step = state.start_failed("s1", "could not start task t-s1: disk full")
    assert step.send[0].type == ClientMessageType.ERROR and step.send[0].session_id == "s1"
    assert state.current_session_id is None


def test_a_device_info_request_is_handed_to_the_io_side() -> None:
    state = _registered()
    request = _server(ServerMessageType.DEVICE_INFO_REQUEST, request_id="q1")
    assert state.receive(request).info_request is request


def test_a_type_a_device_never_receives_is_ignored_with_a_reason() -> None:
    state = _registered()
    step = state.receive(_server(ServerMessageType.DEVICE_INFO_RESPONSE, result={}))
    assert step.problem == "Ignoring unexpected device_info_response message" and step.send == []


def test_a_malformed_frame_is_dropped_and_the_connection_goes_on() -> None:
    state = _registered()
    assert state.malformed("invalid ServerMessage: type: missing").problem == (
        "Dropping a malformed message: invalid ServerMessage: type: missing"
    )
    assert state.phase == DevicePhase.IDLE


def test_closing_drops_the_running_task() -> None:
    state = _registered()
    state.receive(_task("s1"))
    state.closed()
    assert state.phase == DevicePhase.DISCONNECTED and state.current_session_id is None
