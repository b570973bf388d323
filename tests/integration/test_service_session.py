"""A LinuxServiceSession driving a device through AIP messages (the device is played in-process)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from starweave.aip.messages import ClientMessage, ClientMessageType, ServerMessage, parse_server_message
from starweave.config import load_config
from starweave.errors import SessionError
from starweave.session.service import SESSION_KINDS, LinuxServiceSessionFactory
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.servers import register_builtin_servers


def step(command: str | None, status: str = "CONTINUE", result: str = "") -> dict[str, Any]:
    action = (
        {"function": "execute_command", "arguments": {"command": command}, "status": status}
        if command
        else {"function": "", "arguments": {}, "status": status}
    )
    return {"observation": "o", "thought": "t", "action": action, "result": result}


async def test_service_session_runs_commands_on_the_device(tmp_path: Path) -> None:
    replay = tmp_path / "answers.jsonl"
    answers = [step("echo remote > made.txt"), step(None, "FINISH", "made.txt written")]
    replay.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    device_ws = tmp_path / "device"
    config = load_config(
        env={},
        overrides={
            "APP_AGENT": {"API_TYPE": "replay", "REPLAY_FILE": str(replay)},
            "system": {"LOG_DIR": str(tmp_path / "logs"), "SHELL": {"WORKSPACE": str(device_ws)}},
        },
    )
    register_builtin_servers()
    servers = MCPServerManager(config.system.shell)
    router = CommandRouter(ComputerManager(config.mcp, servers))
    sent: list[ServerMessage] = []
    holder: dict[str, Any] = {}

    async def device(message: ServerMessage) -> None:
        # The wire: serialise, parse as the device would, execute, answer COMMAND_RESULTS.
        received = parse_server_message(message.model_dump_json(exclude_none=True))
        sent.append(received)
        results = await router.execute(
            received.agent_name or "LinuxAgent", None, None, received.actions or []
        )
        answer = ClientMessage(
            type=ClientMessageType.COMMAND_RESULTS,
            action_results=results,
            prev_response_id=received.response_id,
            session_id=received.session_id,
            status=received.status,
            client_id="dev1",
        )
        asyncio.get_running_loop().call_soon(
            lambda: asyncio.ensure_future(holder["session"].set_result(received.response_id, answer))
        )

    factory = LinuxServiceSessionFactory(config)
    session = factory(session_id="s1", task_name="t1", request="make a file", send=device, platform="linux")
    holder["session"] = session
    try:
        await asyncio.wait_for(session.run(), 30)
    finally:
        await servers.aclose()
        await factory.aclose()
    assert session.is_finished() and not session.is_error()
    assert session.results["status"] == "FINISH"
    assert (device_ws / "made.txt").read_text() == "remote\n"
    assert sent[0].actions and sent[0].actions[0].tool_name == "list_tools"
    assert sent[1].actions and sent[1].actions[0].tool_name == "execute_command"
    assert (tmp_path / "logs" / "t1" / "result.json").exists()


async def test_unsupported_platform_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(env={})

    async def nowhere(message: ServerMessage) -> None:
        raise AssertionError("nothing may be sent")

    factory = LinuxServiceSessionFactory(config)
    # Desktops and phones are served since issue 16; an unknown platform still is not, and a known
    # kind without a session class (the phone's removed here) says which agent is missing.
    with pytest.raises(SessionError, match="'plan9' is not supported by this server yet; supported: linux"):
        factory(session_id="s", task_name="t", request="x", send=nowhere, platform="plan9")
    monkeypatch.delitem(SESSION_KINDS, "mobile")
    with pytest.raises(SessionError, match=r"'mobile' .* it needs the MobileAgent"):
        factory(session_id="s", task_name="t", request="x", send=nowhere, platform="mobile")
