"""ServerConnectionState: the server's per-connection protocol rules, driven without sockets."""

from __future__ import annotations

import json
from typing import Any

from starweave.aip.messages import ClientMessageType, ClientType, ServerMessageType, TaskStatus
from starweave.aip.server_state import POLICY_VIOLATION, Phase, ServerConnectionState


def frame(type_: str, **fields: Any) -> str:
    return json.dumps({"type": type_, **fields})


def registered(max_bad_frames: int = 3) -> ServerConnectionState:
    state = ServerConnectionState(max_message_bytes=10_000, max_bad_frames=max_bad_frames)
    step = state.receive_frame(frame("register", client_id="dev1", client_type="device"))
    assert step.registration is not None and not step.send
    state.accept(step.registration)
    return state


def test_a_register_is_handed_over_for_vetting_then_confirmed() -> None:
    state = ServerConnectionState(max_message_bytes=10_000, max_bad_frames=3)
    step = state.receive_frame(
        frame("register", client_id="c@dev1", client_type="constellation", target_id="dev1")
    )
    assert step.registration is not None and step.close is None and state.phase == Phase.AWAITING_REGISTRATION
    state.accept(step.registration)
    assert state.registered and state.client_id == "c@dev1"
    assert state.client_type == ClientType.CONSTELLATION and state.target_id == "dev1"
    (ack,) = state.confirm(device_token="t0k").send
    assert ack.type == ServerMessageType.HEARTBEAT and ack.status == TaskStatus.OK
    assert (ack.model_extra or {}).get("device_token") == "t0k"


def test_anything_but_a_register_first_is_refused_and_closed() -> None:
    state = ServerConnectionState(max_message_bytes=10_000, max_bad_frames=3)
    step = state.receive_frame(frame("heartbeat", client_id="dev1", status="ok"))
    assert step.registration is None and state.phase == Phase.CLOSED
    assert step.close is not None and step.close.code == POLICY_VIOLATION
    (error,) = step.send
    assert (
        error.type == ServerMessageType.ERROR
        and error.error == "First message must be a registration message"
    )


def test_an_invalid_or_oversize_registration_is_refused_with_the_reason() -> None:
    state = ServerConnectionState(max_message_bytes=50, max_bad_frames=3)
    step = state.receive_frame(frame("register", client_id="x" * 100))
    assert (
        step.close is not None
        and "Invalid registration message: Message exceeds the limit of 50 bytes" in (step.problem or "")
    )
    binary = ServerConnectionState(max_message_bytes=50, max_bad_frames=3).receive_frame(b"\xff\xfe")
    assert binary.close is not None and "not UTF-8" in (binary.problem or "")
    late = ServerConnectionState(10_000, 3).registration_timed_out()
    assert late.close is not None and late.send[0].error == "No registration message received in time"


def test_heartbeats_are_answered_at_once_and_other_messages_dispatched() -> None:
    state = registered()
    beat = state.receive_frame(frame("heartbeat", client_id="dev1", status="ok"))
    assert [m.type for m in beat.send] == [ServerMessageType.HEARTBEAT] and beat.dispatch is None
    task = state.receive_frame(frame("task", client_id="dev1", request="do it"))
    assert task.dispatch is not None and task.dispatch.type == ClientMessageType.TASK and not task.send


def test_a_registered_client_may_not_change_identity_or_register_again() -> None:
    state = registered(max_bad_frames=10)
    for bad, reason in [
        (frame("heartbeat", client_id="dev2", status="ok"), "does not match this connection ('dev1')"),
        (
            frame("heartbeat", client_id="dev1", client_type="constellation", status="ok"),
            "client_type 'constellation'",
        ),
        (frame("register", client_id="dev1"), "already registered on this connection"),
    ]:
        step = state.receive_frame(bad)
        assert step.dispatch is None and step.close is None and reason in (step.problem or "")
        assert step.send[0].type == ServerMessageType.ERROR
    assert state.registered


def test_too_many_invalid_frames_in_a_row_close_but_a_good_one_resets_the_count() -> None:
    state = registered(max_bad_frames=2)
    assert state.receive_frame("not json").close is None
    assert state.receive_frame(frame("heartbeat", client_id="dev1", status="ok")).close is None  # resets
    assert state.receive_frame("{").close is None
    step = state.receive_frame("[]")
    assert step.close is not None and step.close.reason == "Too many invalid messages (2 in a row)"
    # Still registered until the connection has ended, so the cleanup sees the client.
    assert state.closed() is True and state.closed() is False
