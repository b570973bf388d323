"""A device's result checked against its workspace before the dependants start: real local devices,
agent server and shells; the planner and the device agents replay recorded answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from integration.test_galaxy_faults import D1, D2, edit, final_tasks, options, plan, run_client, task, write


def _answer(command: str | None, status: str, result: str = "") -> dict[str, Any]:
    action = (
        {"function": "execute_command", "arguments": {"command": command}, "status": status}
        if command
        else {"function": "", "arguments": {}, "status": status}
    )
    return {"observation": "o", "thought": "t", "action": action, "result": result}


TASKS = [task("t1", D1, "Write the number 42 into value.txt."), task("t2", D2, "Double the number of t1.")]


async def test_a_device_claiming_a_file_it_never_made_fails_and_its_dependant_never_runs(
    tmp_path: Path,
) -> None:
    claim = _answer(None, "FINISH", "Wrote 42 into value.txt.")
    planner = [plan(TASKS, [("t1", "t2")]), edit(), edit(status="FAIL")]
    opts = options(tmp_path, planner, "echo unused")
    # refused once on the device (the workspace holds no value.txt), the model insists
    opts.device_replay_file = write(tmp_path / "device.jsonl", [claim, claim])
    outcome, _ = await run_client(opts)
    assert outcome.status == "failed"
    final = final_tasks(tmp_path)
    assert final["t1"]["status"] == "failed"
    assert "names value.txt, which the task asks for, but its workspace never held it" in final["t1"]["error"]
    assert final["t2"]["status"] == "cancelled" and not final["t2"].get("execution_start_time")
    # the device agent was told first, from its workspace
    logs = list((tmp_path / "logs" / "devices").rglob("response.log"))
    notes = [json.loads(line).get("note") or "" for log in logs for line in log.read_text().splitlines()]
    assert any("your result names value.txt, which the workspace does not hold" in n for n in notes), notes


async def test_the_dependant_and_the_review_see_what_the_file_holds_not_the_claim(tmp_path: Path) -> None:
    device = [
        _answer("echo 42 > value.txt", "CONTINUE"),
        _answer(None, "FINISH", "Wrote the number into value.txt."),
    ]
    planner = [plan(TASKS, [("t1", "t2")]), edit(status="FINISH")]
    opts = options(tmp_path, planner, "echo unused")
    opts.device_replay_file = write(tmp_path / "device.jsonl", device)
    outcome, _ = await run_client(opts, review_mode="always")
    assert outcome.status == "completed"
    seen = '[the workspace after the run: value.txt (new, holds "42")]'
    d2_prompts = [
        json.loads(line)["prompt"]
        for log in (tmp_path / "logs" / "devices").rglob("request.log")
        if "-t2-" in log.parent.name
        for line in log.read_text().splitlines()
    ]
    assert d2_prompts and any(seen in m["content"] for m in d2_prompts[0] if isinstance(m["content"], str))
    final = final_tasks(tmp_path)
    assert final["t1"]["result"]["result"]["files"][0]["head"] == "42\n"
    review = [
        json.loads(x)["prompt"] for x in (tmp_path / "logs" / "run" / "request.log").read_text().splitlines()
    ]
    assert any(seen in str(p) for p in review)
