"""Galaxy under faults, with real servers and device clients: a device dies mid-task, a device never
connects, the agent proposes a cycle, the model answers garbage. Every run is time-bounded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from starweave.config.loader import load_config
from starweave.galaxy.client import GalaxyClient, GalaxyOptions
from starweave.galaxy.events import Event, EventType, TaskEvent
from starweave.galaxy.fleet import start_local_fleet

D1, D2 = "local_linux_1", "local_linux_2"


def task(task_id: str, device: str, description: str = "do it") -> dict[str, Any]:
    return {
        "task_id": task_id,
        "name": task_id,
        "description": description,
        "target_device_id": device,
        "tips": [],
    }


def plan(tasks: list[dict[str, Any]], deps: list[tuple[str, str]]) -> dict[str, Any]:
    lines = [{"line_id": f"{a}-{b}", "from_task_id": a, "to_task_id": b} for a, b in deps]
    return {"thought": "plan", "status": "CONTINUE", "constellation": {"tasks": tasks, "dependencies": lines}}


def edit(*actions: tuple[str, dict[str, Any]], status: str = "CONTINUE") -> dict[str, Any]:
    return {
        "thought": "edit",
        "status": status,
        "action": [{"function": f, "arguments": a} for f, a in actions],
    }


def device_answers(command: str) -> list[dict[str, Any]]:
    run = {"function": "execute_command", "arguments": {"command": command}, "status": "CONTINUE"}
    done = {"function": "", "arguments": {}, "status": "FINISH"}
    return [
        {"observation": "o", "thought": "t", "action": run, "result": ""},
        {"observation": "o", "thought": "t", "action": done, "result": "finished"},
    ]


def write(path: Path, answers: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n", encoding="utf-8")
    return path


def options(tmp_path: Path, planner: list[Any], command: str, **extra: Any) -> GalaxyOptions:
    fields: dict[str, Any] = {
        "requests": ["do the work"],
        "local": 2,
        "provider": "replay",
        "replay_file": write(tmp_path / "planner.jsonl", planner),
        "device_replay_file": write(tmp_path / "device.jsonl", device_answers(command)),
        "log_dir": tmp_path / "logs",
        "workspace": tmp_path / "ws",
        "task_name": "run",
        "live": False,
        "yes": True,
    }
    fields.update(extra)
    return GalaxyOptions(**fields)


async def run_client(
    opts: GalaxyOptions, during: Any = None, seconds: float = 60, review_mode: Any = "fast"
) -> tuple[Any, GalaxyClient]:
    client = GalaxyClient(opts, Console(record=True, width=150, color_system=None))
    client.galaxy.constellation.review_mode = review_mode
    try:
        async with asyncio.timeout(seconds):
            await client.initialize()
            work = asyncio.create_task(client.process_request(opts.requests[0]))
            if during is not None:
                await during(client)
            outcome = await work
    finally:
        await client.shutdown()
    return outcome, client


def final_tasks(tmp_path: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((tmp_path / "logs" / "run" / "constellation.json").read_text())
    return dict(data["tasks"])


async def test_device_killed_mid_task_fails_fast_and_the_agent_reassigns(tmp_path: Path) -> None:
    planner = [
        plan([task("t1", D1), task("t2", D2)], []),
        edit(
            (
                "add_task",
                {"task_id": "t1b", "name": "t1 again", "description": "redo t1", "target_device_id": D2},
            )
        ),
        *[edit(status="FINISH")] * 4,
    ]
    opts = options(tmp_path, planner, "sleep 2 && echo done >> out.txt")

    t1_started = asyncio.Event()

    class T1Started:
        async def on_event(self, event: Event) -> None:
            if isinstance(event, TaskEvent) and event.task_id == "t1":
                t1_started.set()

    async def kill_first_device(client: GalaxyClient) -> None:
        client.bus.subscribe(T1Started(), [EventType.TASK_STARTED])  # before the request runs
        await t1_started.wait()  # the device has t1 (`sleep 2`, so 2 s at least) when it dies
        assert client.fleet is not None
        # Stop the device client: its connection closes as if the machine died.
        (device,) = [d for d in client.fleet.devices if d.device_id == D1]
        device.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await device.task

    loop = asyncio.get_running_loop()
    start = loop.time()
    outcome, _ = await run_client(opts, kill_first_device)
    tasks = final_tasks(tmp_path)
    assert tasks["t1"]["status"] == "failed"
    t1_failed_after = tasks["t1"]["execution_end_time"]
    assert t1_failed_after is not None
    assert {tasks["t2"]["status"], tasks["t1b"]["status"]} == {"completed"}
    assert tasks["t1b"]["target_device_id"] == D2
    assert outcome.status == "completed", outcome.error
    assert loop.time() - start < 30
    assert (tmp_path / "ws" / D2 / "out.txt").read_text().count("done") == 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_device_that_never_connects_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    config = load_config(
        None,
        overrides={
            "APP_AGENT": {
                "API_TYPE": "replay",
                "REPLAY_FILE": str(write(tmp_path / "d.jsonl", device_answers("echo ok"))),
            }
        },
    )
    fleet = await start_local_fleet(1, tmp_path / "ws", config, heartbeat_interval=2.0)
    try:
        devices = {
            "devices": [
                {"device_id": D1, "server_url": fleet.ws_url, "os": "linux"},
                {
                    "device_id": "ghost",
                    "server_url": f"ws://127.0.0.1:{free_port()}/ws",
                    "os": "linux",
                    "max_retries": 1,
                },
            ]
        }
        (tmp_path / "devices.yaml").write_text(yaml.safe_dump(devices))
        planner = [plan([task("t1", D1)], []), *[edit(status="FINISH")] * 3]
        opts = options(tmp_path, planner, "echo ok", local=0, devices_file=tmp_path / "devices.yaml")
        outcome, client = await run_client(opts, seconds=60)
    finally:
        await fleet.stop()
    text = client.console.export_text()  # type: ignore[attr-defined]
    assert "Device ghost is not connected" in text and "Devices online: local_linux_1" in text
    assert outcome.status == "completed", outcome.error


async def test_cycle_edit_is_rejected_and_the_run_continues(tmp_path: Path) -> None:
    planner = [
        plan(
            [task("t1", D1, "first"), task("t2", D2, "second"), task("t3", D1, "third")],
            [("t1", "t3"), ("t2", "t3")],
        ),
        edit(("add_dependency", {"dependency_id": "bad", "from_task_id": "t3", "to_task_id": "t1"})),
        *[edit()] * 6,
    ]
    # The editing path is under test: the model reviews every batch (REVIEW_MODE: always).
    outcome, _ = await run_client(options(tmp_path, planner, "echo ok"), review_mode="always")
    assert outcome.status == "completed", outcome.error
    tasks = final_tasks(tmp_path)
    assert all(t["status"] == "completed" for t in tasks.values())
    data = json.loads((tmp_path / "logs" / "run" / "constellation.json").read_text())
    assert "bad" not in data["dependencies"]
    events = [json.loads(x) for x in (tmp_path / "logs" / "run" / "events.log").read_text().splitlines()]
    refusals = [
        e for ev in events if ev["event_type"] == "constellation_modified" for e in ev["data"]["edit_errors"]
    ]
    assert len(refusals) == 1 and "would create a cycle" in refusals[0], refusals


async def test_model_answering_garbage_fails_clearly_without_hanging(tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    outcome, _ = await run_client(
        options(tmp_path, ["not json", "still not", "{broken"], "echo ok"), seconds=30
    )
    assert outcome.status == "failed" and outcome.task_count == 0
    assert "no valid JSON answer after 3 attempts" in outcome.error
    assert loop.time() - start < 20
    result = json.loads((tmp_path / "logs" / "run" / "result.json").read_text())
    assert result["status"] == "failed"


async def test_a_device_agents_failure_reason_reaches_the_agent_and_the_reports(
    tmp_path: Path, caplog: Any
) -> None:
    reason = "hello.txt is not in this workspace"
    give_up = {
        "observation": "no hello.txt here",
        "thought": "I cannot do this",
        "action": {"function": "", "arguments": {}, "status": "FAIL"},
        "result": reason,
    }
    planner = [plan([task("t1", D1, "Show the content of hello.txt.")], []), edit(status="FAIL")]
    opts = options(tmp_path, planner, "echo unused")
    opts.device_replay_file = write(tmp_path / "device.jsonl", [give_up])
    caplog.set_level("WARNING", logger="starweave.client")
    outcome, _ = await run_client(opts)
    assert outcome.status == "failed"
    expected = f"the device agent ended with status FAIL: {reason}"
    assert final_tasks(tmp_path)["t1"]["error"] == expected
    folder = tmp_path / "logs" / "run"
    result = json.loads((folder / "result.json").read_text())
    assert result["session_results"]["final_results"][0]["result"]["t1"]["error"] == expected
    assert expected in (folder / "output.md").read_text()
    # The review prompt showed the model why t1 failed.
    prompts = [json.loads(x)["prompt"] for x in (folder / "request.log").read_text().splitlines()]
    assert (
        f"t1 on {D1} FAILED: Show the content of hello.txt. | error: {expected}" in prompts[-1][1]["content"]
    )
    # The device's own log names the reason instead of "error: None".
    ended = [r.getMessage() for r in caplog.records if "failed, with error" in r.getMessage()]
    assert ended and all(reason in m for m in ended), ended


async def test_a_task_whose_predecessor_failed_is_cancelled_not_run(tmp_path: Path) -> None:
    # The short plan's line: t2 receives t1's result, so after t1 fails there is nothing to run on.
    give_up = {
        "observation": "no data.txt here",
        "thought": "I cannot do this",
        "action": {"function": "", "arguments": {}, "status": "FAIL"},
        "result": "data.txt is not in this workspace",
    }
    tasks = [task("t1", D1, "Report the number in data.txt."), task("t2", D2, "Double t1's number.")]
    # The review after t1's failure changes nothing (CONTINUE): the constellation decides about t2.
    planner = [plan(tasks, [("t1", "t2")]), edit(), edit(status="FAIL")]
    opts = options(tmp_path, planner, "echo unused")
    opts.device_replay_file = write(tmp_path / "device.jsonl", [give_up, give_up])
    outcome, _ = await run_client(opts)
    assert outcome.status == "failed"
    final = final_tasks(tmp_path)
    assert final["t1"]["status"] == "failed"
    assert final["t2"]["status"] == "cancelled", final["t2"]
    assert final["t2"]["result"] is None and not final["t2"].get("execution_start_time")
    assert not (tmp_path / "logs" / "run" / "devices" / D2).exists() or not any(
        (tmp_path / "logs" / "run" / "devices" / D2).rglob("response.log")
    )
