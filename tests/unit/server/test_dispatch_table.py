"""The server's dispatch table: every message a registered client may send has one handler."""

from __future__ import annotations

from starweave.aip.messages import ClientMessageType
from starweave.server.ws_handler import SERVER_HANDLERS

# Answered by ServerConnectionState itself, never dispatched.
ANSWERED_BY_THE_PROTOCOL_STATE = {ClientMessageType.REGISTER, ClientMessageType.HEARTBEAT}


def test_every_client_message_type_has_a_server_handler() -> None:
    dispatched = [t for t in ClientMessageType if t not in ANSWERED_BY_THE_PROTOCOL_STATE]
    assert SERVER_HANDLERS.missing(dispatched) == []
    assert SERVER_HANDLERS.handled().isdisjoint(ANSWERED_BY_THE_PROTOCOL_STATE)
