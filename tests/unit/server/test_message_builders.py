"""Every server message is made by starweave.aip.builders (one wire format for all senders)."""

from __future__ import annotations

from pathlib import Path

SERVER_SOURCES = [
    *sorted((Path(__file__).parents[3] / "starweave" / "server").glob("*.py")),
    Path(__file__).parents[3] / "starweave" / "aip" / "protocols.py",
]


def test_no_hand_built_server_messages_in_the_server() -> None:
    offenders = [p.name for p in SERVER_SOURCES if "ServerMessage(" in p.read_text(encoding="utf-8")]
    assert offenders == []
