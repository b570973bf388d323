"""Desktop devices over AIP: a ``linux-desktop`` device client on the test desktop (Xvfb + AT-SPI,
real mousepad) registered with a real agent server, whose HostAgent → AppAgent session (replay
provider) sends every UI command to the device. Then Galaxy drives a shell device and that desktop
device, the desktop task depending on the shell task's result.

Everything is real but the model: the server and the device client talk over WebSockets, the
desktop servers run in the device client, and the checks read mousepad's real text.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.desktop_env import LaunchedApp
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_env import mousepad as mousepad
from helpers.desktop_script import app, call, control_labels, host, launched_window, select, write_answers
from integration.server_fault_kit import agent_server, device, result_of, step
from rich.console import Console

from starweave.galaxy.client import GalaxyClient, GalaxyOptions
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

LIMIT = 150
# The desktop server's HostAgent and its AppAgents replay one answer stream.
DESKTOP_BLOCKS = ("HOST_AGENT", "APP_AGENT")
WORD = "starweave-42"


async def pad_text(backend: LinuxDesktopBackend, xid: str) -> str:
    edit = next(c for c in await backend.window_controls(xid) if c.control_type == "Edit")
    return str(await backend.get_text(edit.id))


async def typing_answers(backend: LinuxDesktopBackend, text: str, condition: str = "") -> list[Any]:
    """HostAgent selects mousepad, the AppAgent types ``text`` and reads it back, the host finishes.
    With ``condition``, the host selects mousepad only when its prompt contains that text (else it
    fails): the text must have reached the desktop task."""
    window, name, xid = await launched_window(backend, "mousepad")
    edit = (await control_labels(backend, xid))[("Edit", "")]
    first: Any = select(window, name, f"type {text} into the document")
    if condition:
        first = {"$if_prompt_contains": condition, "then": first, "else": host("FAIL", result="no input")}
    return [
        first,
        app("CONTINUE", call("set_edit_text", id=edit, name="", text=text)),
        app("FINISH", call("texts", id=edit, name=""), result=f"typed {text}"),
        host("FINISH", result=f"mousepad shows {text}"),
    ]


async def test_a_desktop_device_runs_a_host_agent_session_sent_over_aip(
    tmp_path: Path, mousepad: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(LIMIT):
        _, _, xid = await launched_window(desktop_backend, "mousepad")
        answers = await typing_answers(desktop_backend, "hello over AIP")
        async with (
            agent_server(tmp_path, answers, DESKTOP_BLOCKS) as server,
            device(tmp_path, server, "desk1", platform="linux-desktop"),
            httpx.AsyncClient(base_url=server.url) as http,
        ):
            listing = (await http.get("/api/clients", params={"details": True})).json()
            [desk] = [c for c in listing["clients"] if c["client_id"] == "desk1"]
            assert desk["platform"] == "linux-desktop"
            assert desk["capabilities"]["supported_features"][:3] == ["linux", "desktop", "gui"]
            sent = await http.post(
                "/api/dispatch", json={"client_id": "desk1", "request": "type hello", "task_name": "pad1"}
            )
            assert sent.status_code == 200, sent.text
            answer = await result_of(http, "pad1", limit=120)
        assert answer["task_status"] == "completed", answer
        result = answer["result"]
        assert result["agent"] == "HostAgent" and result["status"] == "FINISH"
        assert [(s["application"], s["status"]) for s in result["subtasks"]] == [("mousepad", "FINISH")]
        assert await pad_text(desktop_backend, xid) == "hello over AIP"


def planner_answers() -> list[Any]:
    # t1's description names no file: the HostAgent refuses FINISH while its request (which quotes
    # the prerequisite tasks) names a file that no subtask of its own handled.
    plan = {
        "thought": "Read the word on the shell box, then type it on the desktop.",
        "status": "CONTINUE",
        "constellation": {
            "tasks": [
                {"task_id": "t1", "target_device_id": "box", "description": "Print the secret word."},
                {
                    "task_id": "t2",
                    "target_device_id": "desk",
                    "description": "Type the word t1 found into mousepad.",
                    "device_type": "linux-desktop",
                },
            ],
            "dependencies": [{"from_task_id": "t1", "to_task_id": "t2"}],
        },
    }
    review = {"thought": "Nothing to change.", "status": "CONTINUE", "action": []}
    return [plan, *[review] * 8]


def shell_answers() -> list[Any]:
    return [step("cat word.txt"), step(None, "FINISH", f"the word is {WORD}")]


async def test_galaxy_hands_a_shell_result_to_a_desktop_device(
    tmp_path: Path, mousepad: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(LIMIT):
        _, _, xid = await launched_window(desktop_backend, "mousepad")
        # Two agent servers: each replays its own device agent's answers.
        desk_answers = await typing_answers(desktop_backend, WORD, condition=WORD)
        async with (
            agent_server(tmp_path, shell_answers(), name="shell") as shell_server,
            agent_server(tmp_path, desk_answers, DESKTOP_BLOCKS, name="desk") as desk_server,
            device(tmp_path, shell_server, "box") as box,
            device(tmp_path, desk_server, "desk", platform="linux-desktop"),
        ):
            assert box.device_client.platform == "linux"
            (tmp_path / "ws-box" / "word.txt").write_text(f"{WORD}\n")
            devices_file = tmp_path / "devices.yaml"
            devices_file.write_text(
                "devices:\n"
                f"  - {{device_id: box, server_url: 'ws://127.0.0.1:{shell_server.port}/ws', os: linux}}\n"
                f"  - {{device_id: desk, server_url: 'ws://127.0.0.1:{desk_server.port}/ws', "
                "os: linux-desktop}\n"
            )
            options = GalaxyOptions(
                requests=["read the word on the box and type it into mousepad on the desktop"],
                devices_file=devices_file,
                provider="replay",
                replay_file=write_answers(tmp_path / "planner.jsonl", planner_answers()),
                log_dir=tmp_path / "galaxy",
                workspace=tmp_path / "galaxy-ws",
                task_name="two_kinds",
                live=False,
                yes=True,
            )
            console = Console(record=True, width=150, color_system=None)
            client = GalaxyClient(options, console)
            try:
                await client.initialize()
                assert client.device_manager is not None
                desk = client.device_manager.get_device_info("desk")
                assert desk is not None and desk.os == "linux-desktop" and "gui" in desk.capabilities
                outcome = await client.process_request(options.requests[0])
            finally:
                await client.shutdown()
        assert outcome.status == "completed", (outcome.error, console.export_text())
        assert await pad_text(desktop_backend, xid) == WORD
        tasks = _final_tasks(tmp_path / "galaxy" / "two_kinds")
        assert {t["task_id"]: (t["target_device_id"], t["status"]) for t in tasks} == {
            "t1": ("box", "completed"),
            "t2": ("desk", "completed"),
        }
        t1, t2 = sorted(tasks, key=lambda t: t["task_id"])
        assert t2["execution_start_time"] >= t1["execution_end_time"]


def _final_tasks(folder: Path) -> list[dict[str, Any]]:
    import json

    final = json.loads((folder / "constellation.json").read_text())
    return list(final["tasks"].values())
