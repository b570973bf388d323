"""A Galaxy request end to end in one process: real agent server, real device clients over
WebSockets, the ConstellationAgent and device agents on the replay provider."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from starweave.galaxy.client import GalaxyClient, GalaxyOptions

DEV = ["local_linux_1", "local_linux_2", "local_linux_3"]


def task(task_id: str, device: str, description: str) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "name": f"step {task_id}",
        "description": description,
        "target_device_id": device,
        "tips": [],
    }


def line(line_id: str, src: str, dst: str) -> dict[str, Any]:
    return {
        "line_id": line_id,
        "from_task_id": src,
        "to_task_id": dst,
        "condition_description": f"{src} done",
    }


PLAN = {
    "thought": "Two measurements in parallel, combine them, then report.",
    "status": "CONTINUE",
    "constellation": {
        "tasks": [
            task("t1", DEV[0], "Write the word alpha to out.txt."),
            task("t2", DEV[1], "Write the word beta to out.txt."),
            task("t3", DEV[2], "Combine the results of t1 and t2."),
            task("t4", DEV[0], "Report the combined result."),
        ],
        "dependencies": [line("l1", "t1", "t3"), line("l2", "t2", "t3"), line("l3", "t3", "t4")],
    },
}
EDIT = {
    "thought": "A first result arrived; add a check after t3.",
    "status": "CONTINUE",
    "action": [
        {
            "function": "add_task",
            "arguments": {
                "task_id": "t5",
                "name": "check",
                "description": "Check the combination.",
                "target_device_id": DEV[1],
            },
        },
        {
            "function": "add_dependency",
            "arguments": {"dependency_id": "l4", "from_task_id": "t3", "to_task_id": "t5"},
        },
    ],
}
NO_EDIT = {"thought": "Nothing to change.", "status": "CONTINUE", "action": []}
FINAL_ANSWER = {"thought": "Both ran.", "status": "FINISH", "action": [], "results": "first and second ran"}


def device_step(command: str | None, status: str = "CONTINUE", result: str = "") -> dict[str, Any]:
    action = (
        {"function": "execute_command", "arguments": {"command": command}, "status": status}
        if command
        else {
            "function": "",
            "arguments": {},
            "status": status,
        }
    )
    return {"observation": "o", "thought": "t", "action": action, "result": result}


def write(path: Path, answers: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n", encoding="utf-8")
    return path


async def test_request_becomes_a_dag_over_three_devices_and_completes(tmp_path: Path) -> None:
    planner = write(tmp_path / "planner.jsonl", [PLAN, EDIT, *[NO_EDIT] * 10])
    devices = write(
        tmp_path / "devices.jsonl",
        [device_step("echo done >> out.txt"), device_step(None, "FINISH", "wrote out.txt")],
    )
    options = GalaxyOptions(
        requests=["measure, combine, report"],
        local=3,
        provider="replay",
        replay_file=planner,
        device_replay_file=devices,
        log_dir=tmp_path / "logs",
        workspace=tmp_path / "ws",
        task_name="galaxy_it",
        live=False,
        yes=True,
    )
    console = Console(record=True, width=150, color_system=None)
    client = GalaxyClient(options, console)
    # The editing path itself is under test: the model reviews every batch (REVIEW_MODE: always).
    client.galaxy.constellation.review_mode = "always"
    try:
        async with asyncio.timeout(90):
            await client.initialize()
            outcome = await client.process_request(options.requests[0])
    finally:
        await client.shutdown()
    assert outcome.status == "completed", (outcome.error, console.export_text())
    assert outcome.task_count == 5
    folder = tmp_path / "logs" / "galaxy_it"
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "completed" and result["constellation"]["task_count"] == 5
    assert result["session_results"]["metrics"]["completed_tasks"] == 5
    # The orchestration wrapped up (CONSTELLATION_COMPLETED) before the session ended.
    assert result["session_results"]["metrics"]["completed_constellations"] == 1
    final = json.loads((folder / "constellation.json").read_text())
    assert {t["task_id"]: t["status"] for t in final["tasks"].values()} == dict.fromkeys(
        ["t1", "t2", "t3", "t4", "t5"], "completed"
    )
    assert {t["target_device_id"] for t in final["tasks"].values()} == set(DEV)
    # t1 and t2 ran in parallel on two devices.
    t1, t2 = final["tasks"]["t1"], final["tasks"]["t2"]
    assert (
        t1["execution_start_time"] < t2["execution_end_time"]
        and t2["execution_start_time"] < t1["execution_end_time"]
    )
    report = (folder / "output.md").read_text()
    assert "```mermaid" in report and "gantt" in report
    for name in ("response.log", "request.log", "events.log"):
        assert (folder / name).stat().st_size > 0, name
    steps = [json.loads(x) for x in (folder / "response.log").read_text().splitlines()]
    assert any(a.get("function") == "add_task" for s in steps for a in s.get("action") or [])
    # Predecessors' results travel into the successor's request.
    requests = "".join(p.read_text() for p in (tmp_path / "logs" / "devices").rglob("request.log"))
    assert "Results of prerequisite tasks" in requests
    for device in DEV:
        assert (tmp_path / "ws" / device / "out.txt").read_text().count("done") >= 1
    assert "COMPLETED" in console.export_text()
    # The agent's answers carry their token counts and cost (the live view sums them).
    responses = [
        json.loads(x) for x in (folder / "events.log").read_text().splitlines() if "agent_response" in x
    ]
    assert responses and all(
        "prompt_tokens" in r["output_data"] and "cost" in r["output_data"] for r in responses
    )


async def test_tasks_queued_on_one_device_start_when_the_device_takes_them(tmp_path: Path) -> None:
    both = {
        "thought": "two independent tasks on the same device",
        "status": "CONTINUE",
        "constellation": {
            "tasks": [task("a", DEV[0], "first"), task("b", DEV[0], "second")],
            "dependencies": [],
        },
    }
    options = GalaxyOptions(
        requests=["two things on one device"],
        local=1,
        provider="replay",
        # The plan ends in both tasks: one answer-only call at the end puts their results together.
        replay_file=write(tmp_path / "planner.jsonl", [both, FINAL_ANSWER, *[NO_EDIT] * 6]),
        device_replay_file=write(
            tmp_path / "devices.jsonl", [device_step("sleep 0.5"), device_step(None, "FINISH", "slept")]
        ),
        log_dir=tmp_path / "logs",
        workspace=tmp_path / "ws",
        task_name="queued",
        live=False,
        yes=True,
    )
    client = GalaxyClient(options, Console(record=True, width=150, color_system=None))
    try:
        async with asyncio.timeout(60):
            await client.initialize()
            outcome = await client.process_request(options.requests[0])
    finally:
        await client.shutdown()
    assert outcome.status == "completed", outcome.error
    tasks = json.loads((tmp_path / "logs" / "queued" / "constellation.json").read_text())["tasks"]
    first, second = sorted(tasks.values(), key=lambda t: t["execution_start_time"])
    assert second["execution_start_time"] >= first["execution_end_time"]  # never two at once on one device
    events = [json.loads(x) for x in (tmp_path / "logs" / "queued" / "events.log").read_text().splitlines()]
    kinds = [
        (e["event_type"], e.get("task_id"))
        for e in events
        if e["event_type"] in ("task_started", "task_completed")
    ]
    assert kinds[0][0] == "task_started" and kinds[1][0] == "task_completed"  # start, end, start, end
    assert [k for k, _ in kinds] == ["task_started", "task_completed", "task_started", "task_completed"]
