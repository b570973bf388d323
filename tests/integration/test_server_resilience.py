"""The agent server under abuse, on a real uvicorn with `websockets` clients, plus the serve() entry point."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import httpx
from unit.server.server_kit import peer, running_server

from starweave.aip.messages import ClientMessageType, ServerMessageType, TaskStatus

BAD_FRAMES = 1000
TESTS_DIR = Path(__file__).resolve().parents[1]


async def test_flood_of_malformed_frames_does_not_disturb_another_clients_task() -> None:
    async with running_server() as server, peer(server, "noisy") as noisy, peer(server, "worker") as worker:
        errors = 0

        async def read_noisy() -> None:
            nonlocal errors
            while errors < BAD_FRAMES:
                message = await noisy.recv(wait=20)
                if message.type == ServerMessageType.ERROR:
                    errors += 1

        async def flood() -> None:
            for i in range(BAD_FRAMES):
                await noisy.send_raw('{"type": "bogus", ' if i % 2 else b"\x00\x01not json")
                if i % 50 == 49:  # a valid frame now and then resets the bad-frame run (limit 100)
                    await noisy.send(ClientMessageType.HEARTBEAT)

        async def work() -> TaskStatus:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
                await http.post(
                    "/api/dispatch", json={"client_id": "worker", "request": "w", "task_name": "w1"}
                )
                task = await worker.recv_until(ServerMessageType.TASK)
                await worker.send(
                    ClientMessageType.TASK, request="w", task_name="w1", session_id=task.session_id
                )
                await worker.answer_command(await worker.recv_until(ServerMessageType.COMMAND))
                end = await worker.recv_until(ServerMessageType.TASK_END)
                assert (await http.get("/api/task_result/w1")).json()["result"] == {"echo": "w"}
                return end.status

        reader = asyncio.create_task(read_noisy())
        status, _ = await asyncio.wait_for(asyncio.gather(work(), flood()), 30)
        await asyncio.wait_for(reader, 30)
        assert status == TaskStatus.COMPLETED
        assert errors == BAD_FRAMES
        await noisy.send(ClientMessageType.HEARTBEAT)  # still connected and served
        assert (await noisy.recv_until(ServerMessageType.HEARTBEAT)).status == TaskStatus.OK


SERVE_SCRIPT = """
import asyncio
from starweave.server.app import serve
from starweave.server.settings import ServerSettings
from unit.server.server_kit import fake_factory
asyncio.run(serve(ServerSettings(port=0, log_level="warning"), fake_factory))
"""


async def test_serve_prints_the_bound_port_and_answers() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")])}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SERVE_SCRIPT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().strip()
        assert line.startswith("Starweave server listening on http://127.0.0.1:"), line
        url = line.rsplit(" ", 1)[1]
        assert not url.endswith(":0")
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{url}/api/health")).json()["status"] == "healthy"
    finally:
        proc.send_signal(signal.SIGINT)
        code = await asyncio.wait_for(proc.wait(), 10)
    # uvicorn re-raises the captured SIGINT after its graceful shutdown; the CLI turns it into exit 0.
    assert code in (0, -signal.SIGINT)
