"""Dispatch tables: one per receiving side, each naming the handler of every type it may receive."""

from __future__ import annotations

from starweave.aip.device_state import DEVICE_HANDLERS
from starweave.aip.dispatch import DispatchTable
from starweave.aip.endpoints import CONSTELLATION_HANDLERS
from starweave.aip.messages import ClientMessageType, ServerMessageType


def test_a_table_names_its_handlers_and_what_it_lacks() -> None:
    table: DispatchTable[ClientMessageType, str] = DispatchTable({ClientMessageType.TASK: "on_task"})
    assert table.handler_for(ClientMessageType.TASK) == "on_task"
    assert table.handler_for(ClientMessageType.TASK_END) is None
    assert table.handled() == {ClientMessageType.TASK}
    assert table.missing([ClientMessageType.TASK_END, ClientMessageType.TASK]) == [ClientMessageType.TASK_END]


def test_the_device_side_handles_everything_the_server_sends_a_device() -> None:
    # DEVICE_INFO_RESPONSE answers a constellation client's request; a device never gets one.
    sent_to_devices = [t for t in ServerMessageType if t != ServerMessageType.DEVICE_INFO_RESPONSE]
    assert DEVICE_HANDLERS.missing(sent_to_devices) == []


def test_the_constellation_side_handles_the_answers_to_its_requests() -> None:
    answers = [
        ServerMessageType.TASK_END,
        ServerMessageType.DEVICE_INFO_RESPONSE,
        ServerMessageType.ERROR,
        ServerMessageType.HEARTBEAT,
    ]
    assert CONSTELLATION_HANDLERS.missing(answers) == []
