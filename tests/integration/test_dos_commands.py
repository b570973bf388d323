"""Denial-of-service commands end within their deadline while another device's task completes.

Two real device clients share this process's event loop with the server, so a device whose event
loop were blocked (a glob bomb or a policy check run on it) would stall the other device's task too.
Each DoS command is refused, or runs until its timeout; either way its task ends, and the other
device's task completes meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from integration.server_fault_kit import QUICK, WAIT, agent_server, device, dispatch, result_of, step

COMMAND_TIMEOUT = 5
# The deadline of a DoS task: its command's timeout, plus starting the session and a loaded machine.
DEADLINE = COMMAND_TIMEOUT + 40.0


def timed(command: str) -> dict[str, Any]:
    answer = step(command)
    answer["action"]["arguments"]["timeout"] = COMMAND_TIMEOUT
    return answer


DOS: dict[str, list[dict[str, Any]]] = {
    "sed -f /dev/zero": [timed("echo x | sed -f /dev/zero")],
    "sed -f /dev/stdin": [timed("yes | sed -f /dev/stdin")],
    "fifo to awk -f": [timed("mkfifo prog"), timed("awk -f prog")],
    "glob bomb": [timed("echo /*/*/*/*/*/*/*/*")],
    "endless loop": [timed("awk 'BEGIN { while (1) x++ }'")],
    "memory hog": [timed("awk 'BEGIN { while (1) s = s s \"xxxxxxxx\" }'")],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DOS))
async def test_dos_command_ends_within_its_deadline_while_another_device_works(
    tmp_path: Path, name: str
) -> None:
    # A FINISH right after a failed command is refused once (guards.py: after_error), so the model insists.
    answers = [*DOS[name], step(None, "FINISH", "done"), step(None, "FINISH", "done")]
    async with (
        agent_server(tmp_path, answers) as server,
        device(tmp_path, server, "victim"),
        device(tmp_path, server, "bystander"),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT) as http,
    ):
        started = time.monotonic()
        assert (await dispatch(http, "victim", "attack", "dos")).status_code == 200
        sessions = server.app.state.sessions
        deadline = time.monotonic() + WAIT
        while "dos" not in sessions.session_id_dict:  # its session (and its answers) exist now
            assert time.monotonic() < deadline, "the DoS task never started"
            await asyncio.sleep(0.02)
        (tmp_path / "answers.jsonl").write_text("\n".join(json.dumps(a) for a in QUICK) + "\n")
        assert (await dispatch(http, "bystander", "work", "ok")).status_code == 200
        other = await result_of(http, "ok", limit=DEADLINE)
        other_done = time.monotonic() - started
        assert other["task_status"] == "completed", other
        attacked = await result_of(http, "dos", limit=DEADLINE)
        dos_done = time.monotonic() - started
        assert dos_done <= DEADLINE
        health = await http.get("/api/health")
        assert health.status_code == 200 and {"victim", "bystander"} <= set(health.json()["online_clients"])
    steps = [
        json.loads(line)
        for line in (Path(attacked["result"]["log_path"]) / "response.log").read_text().splitlines()
    ]
    commands = [st for st in steps if st["action"]["function"] == "execute_command"]
    assert len(commands) == len(DOS[name])
    for st in commands:  # each command was refused or stopped, within its own deadline
        assert st["time_cost"]["ACTION_EXECUTION"] <= COMMAND_TIMEOUT + 15, st
    outcome = commands[-1]["output"].splitlines()[0][:100]
    print(f"\n{name}: ended after {dos_done:.1f}s ({outcome}); the other task after {other_done:.1f}s")
