"""Desktop devices over AIP: a ``linux-desktop`` device client on the test desktop (Xvfb + AT-SPI,
real mousepad) registered with a real agent server, whose HostAgent → AppAgent session (replay
provider) sends every UI command to the device. Then Galaxy drives a shell device and that desktop
device, the desktop task depending on the shell task's result; and a shell device, that desktop and
a (simulated) phone together.

Everything is real but the model: the server and the device client talk over WebSockets, the
desktop servers run in the device client, and the checks read mousepad's real text.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from helpers.desktop_env import LaunchedApp
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_env import mousepad as mousepad
from helpers.desktop_script import app, call, control_labels, host, launched_window, select, write_answers
from helpers.mobile_replay import note_answers
from integration.server_fault_kit import agent_server, device, result_of, step
from rich.console import Console

from starweave.galaxy.client import GalaxyClient, GalaxyOptions
from starweave.galaxy.devices.profile import AgentProfile
from starweave.galaxy.session import GalaxyOutcome
from starweave.server.app import RunningServer
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

LIMIT = 150
# The desktop server's HostAgent and its AppAgents replay one answer stream.
DESKTOP_BLOCKS = ("HOST_AGENT", "APP_AGENT")
WORD = "starweave-42"
NOTE = "call mom"
TASK_NAME = "kinds"


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


def plan(*tasks: dict[str, Any]) -> list[Any]:
    """The ConstellationAgent's plan of ``tasks`` (t2 depends on t1), then reviews changing nothing;
    a plan that ends in more than t2 (t3 runs meanwhile) first gets the answer that puts the
    results together (review mode "fast" asks for it once every task completed)."""
    constellation = {
        "tasks": list(tasks),
        "dependencies": [{"from_task_id": "t1", "to_task_id": "t2"}],
    }
    plan = {"thought": "One task per device.", "status": "CONTINUE", "constellation": constellation}
    review = {"thought": "Nothing to change.", "status": "CONTINUE", "action": []}
    final = {"thought": "All done.", "status": "FINISH", "action": [], "results": "every task completed"}
    return [plan, *([final] if len(tasks) > 2 else []), *[review] * 8]


# t2's description names no file: the HostAgent refuses FINISH while its request (which quotes the
# prerequisite tasks) names a file that no subtask of its own handled.
SHELL_TASK = {"task_id": "t1", "target_device_id": "box", "description": "Print the secret word."}
DESK_TASK = {
    "task_id": "t2",
    "target_device_id": "desk",
    "description": "Type the word t1 found into mousepad.",
    "device_type": "linux-desktop",
}
PHONE_TASK = {
    "task_id": "t3",
    "target_device_id": "phone",
    "description": f"Save the note '{NOTE}' in the phone's notes app.",
    "device_type": "mobile",
}


def shell_answers() -> list[Any]:
    return [step("cat word.txt"), step(None, "FINISH", f"the word is {WORD}")]


async def run_galaxy(
    tmp_path: Path, servers: dict[str, tuple[RunningServer, str]], request: str, planner: list[Any]
) -> tuple[GalaxyOutcome, dict[str, AgentProfile], str]:
    """Galaxy on ``servers`` (device id: its agent server and os in devices.yaml): the outcome, the
    devices as Galaxy registered them, and the console's text."""
    devices_file = tmp_path / "devices.yaml"
    devices_file.write_text(
        "devices:\n"
        + "".join(
            f"  - {{device_id: {name}, server_url: 'ws://127.0.0.1:{server.port}/ws', os: {os}}}\n"
            for name, (server, os) in servers.items()
        )
    )
    options = GalaxyOptions(
        requests=[request],
        devices_file=devices_file,
        provider="replay",
        replay_file=write_answers(tmp_path / "planner.jsonl", planner),
        log_dir=tmp_path / "galaxy",
        workspace=tmp_path / "galaxy-ws",
        task_name=TASK_NAME,
        live=False,
        yes=True,
    )
    console = Console(record=True, width=150, color_system=None)
    client = GalaxyClient(options, console)
    try:
        await client.initialize()
        assert client.device_manager is not None
        infos = {name: client.device_manager.get_device_info(name) for name in servers}
        outcome = await client.process_request(request)
    finally:
        await client.shutdown()
    registered = {name: info for name, info in infos.items() if info is not None}
    return outcome, registered, console.export_text()


@asynccontextmanager
async def box_and_desk(
    tmp_path: Path, desktop_backend: LinuxDesktopBackend
) -> AsyncIterator[tuple[RunningServer, RunningServer]]:
    """A shell device ``box`` (word.txt holding WORD) and the desktop ``desk`` typing the word it is
    given, each registered with an agent server of its own replaying its agent's answers."""
    desk_answers = await typing_answers(desktop_backend, WORD, condition=WORD)
    async with (
        agent_server(tmp_path, shell_answers(), name="shell") as shell_server,
        agent_server(tmp_path, desk_answers, DESKTOP_BLOCKS, name="desk") as desk_server,
        device(tmp_path, shell_server, "box") as box,
        device(tmp_path, desk_server, "desk", platform="linux-desktop"),
    ):
        assert box.device_client.platform == "linux"
        (tmp_path / "ws-box" / "word.txt").write_text(f"{WORD}\n")
        yield shell_server, desk_server


async def test_galaxy_hands_a_shell_result_to_a_desktop_device(
    tmp_path: Path, mousepad: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(LIMIT):
        _, _, xid = await launched_window(desktop_backend, "mousepad")
        async with box_and_desk(tmp_path, desktop_backend) as (shell_server, desk_server):
            servers = {"box": (shell_server, "linux"), "desk": (desk_server, "linux-desktop")}
            request = "read the word on the box and type it into mousepad on the desktop"
            outcome, devices, console = await run_galaxy(
                tmp_path, servers, request, plan(SHELL_TASK, DESK_TASK)
            )
        assert devices["desk"].os == "linux-desktop" and "gui" in devices["desk"].capabilities
        assert outcome.status == "completed", (outcome.error, console)
        assert await pad_text(desktop_backend, xid) == WORD
        tasks = _final_tasks(tmp_path / "galaxy" / TASK_NAME)
        assert {t["task_id"]: (t["target_device_id"], t["status"]) for t in tasks} == {
            "t1": ("box", "completed"),
            "t2": ("desk", "completed"),
        }
        t1, t2 = sorted(tasks, key=lambda t: t["task_id"])
        assert t2["execution_start_time"] >= t1["execution_end_time"]


async def test_galaxy_runs_a_shell_box_a_desktop_and_a_phone(
    tmp_path: Path,
    mousepad: LaunchedApp,
    desktop_backend: LinuxDesktopBackend,
    android_phone: SimulatedPhone,
) -> None:
    """The issue's three-device run: the box prints a word, the desktop types it into mousepad
    (depending on the box's result), the phone saves a note meanwhile; the report shows all three."""
    async with asyncio.timeout(LIMIT):
        _, _, xid = await launched_window(desktop_backend, "mousepad")
        async with (
            box_and_desk(tmp_path, desktop_backend) as (shell_server, desk_server),
            agent_server(tmp_path, note_answers(NOTE), name="phone") as phone_server,
            device(tmp_path, phone_server, "phone", platform="mobile", **android_phone.client_options),
        ):
            servers = {
                "box": (shell_server, "linux"),
                "desk": (desk_server, "linux-desktop"),
                "phone": (phone_server, "mobile"),
            }
            request = "type the box's word into mousepad on the desktop, and save a note on the phone"
            outcome, devices, console = await run_galaxy(
                tmp_path, servers, request, plan(SHELL_TASK, DESK_TASK, PHONE_TASK)
            )
        assert devices["phone"].os == "mobile"
        assert {"mobile", "android", "touch", "notes"} <= set(devices["phone"].capabilities)
        assert outcome.status == "completed", (outcome.error, console)
        assert await pad_text(desktop_backend, xid) == WORD
        assert android_phone.state()["notes"] == [NOTE]
        folder = tmp_path / "galaxy" / TASK_NAME
        tasks = sorted(_final_tasks(folder), key=lambda t: t["task_id"])
        assert [(t["task_id"], t["target_device_id"], t["status"]) for t in tasks] == [
            ("t1", "box", "completed"),
            ("t2", "desk", "completed"),
            ("t3", "phone", "completed"),
        ]
        assert tasks[1]["execution_start_time"] >= tasks[0]["execution_end_time"]
        # The report: result.json's per-task results and output.md name every device.
        [final] = json.loads((folder / "result.json").read_text())["session_results"]["final_results"]
        assert {task: (r["device"], r["status"]) for task, r in final["result"].items()} == {
            "t1": ("box", "completed"),
            "t2": ("desk", "completed"),
            "t3": ("phone", "completed"),
        }
        assert "Saved the note" in final["result"]["t3"]["result"]
        report = (folder / "output.md").read_text()
        for name in ("box", "desk", "phone"):
            assert f"- Target Device: {name}" in report


def _final_tasks(folder: Path) -> list[dict[str, Any]]:
    final = json.loads((folder / "constellation.json").read_text())
    return list(final["tasks"].values())
