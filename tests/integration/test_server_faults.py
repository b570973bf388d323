"""Fault and load tests of issue 11: no single input wedges a device or the server.

Real uvicorn on loopback, real device clients running real shell commands, real sockets.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from pathlib import Path

import httpx
import pytest
from integration.server_fault_kit import WAIT, agent_server, device, dispatch, result_of, step, until
from unit.server.server_kit import Peer
from websockets.asyncio.client import connect

from starweave.aip.messages import ClientMessageType, ClientType, ServerMessageType
from starweave.server.log_limits import SERVER_LOGGERS

HALF_OPEN = 20_000
PER_HELPER = 10_000

# Opens N connections that never finish a request (every other one sends half a request head),
# says how many, and holds them until its stdin closes.
FLOOD_HELPER = """
import resource, socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held, failed = [], 0
for i in range(count):
    sock = socket.socket()
    sock.settimeout(30)
    try:
        sock.connect(("127.0.0.1", port))
        if i % 2:
            sock.send(b"GET /api/health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")
        held.append(sock)
    except OSError:
        failed += 1
        sock.close()
print(f"open {len(held)} failed {failed}", flush=True)
sys.stdin.read()
"""


class CountingHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records = 0
        self.chars = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.records += 1
        self.chars += len(record.getMessage())


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.slow
async def test_twenty_thousand_half_open_connections_leave_health_and_registration_working(
    tmp_path: Path,
) -> None:
    counter = CountingHandler()
    loggers = [logging.getLogger(name) for name in SERVER_LOGGERS]
    for logger in loggers:
        logger.addHandler(counter)
    helpers: list[asyncio.subprocess.Process] = []
    try:
        async with agent_server(tmp_path) as server:
            started = time.monotonic()
            for _ in range(HALF_OPEN // PER_HELPER):
                helpers.append(
                    await asyncio.create_subprocess_exec(
                        sys.executable,
                        "-c",
                        FLOOD_HELPER,
                        str(server.port),
                        str(PER_HELPER),
                        stdin=asyncio.subprocess.PIPE,
                        stdout=asyncio.subprocess.PIPE,
                    )
                )
            opened = 0
            for helper in helpers:
                assert helper.stdout is not None
                line = (await asyncio.wait_for(helper.stdout.readline(), 120)).decode()
                assert line.startswith("open "), line
                opened += int(line.split()[1])
            flood_time = time.monotonic() - started
            assert opened == HALF_OPEN, f"only {opened} connections opened"
            # While the flood holds: health answers, a NEW device registers and runs a task.
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT) as http:
                began = time.monotonic()
                health = await http.get("/api/health")
                health_latency = time.monotonic() - began
                assert health.status_code == 200 and health.json()["status"] == "healthy"
                async with device(tmp_path, server, "newcomer") as newcomer:
                    answer = await dispatch(http, "newcomer", "write", "t")
                    assert answer.status_code == 200
                    body = await result_of(http, "t")
                    assert body["task_status"] == "completed", body
                    assert newcomer.registrations == 1
            assert server.guard is not None and len(server.guard) <= server.guard.limit
            fds = _open_fds()
            assert fds < 2 * server.guard.limit + 500, f"{fds} descriptors open"
        print(
            f"\n20k flood: opened in {flood_time:.1f}s, health answered in {health_latency * 1000:.0f} ms, "
            f"{fds} fds in the server process, {counter.records} log records ({counter.chars} chars)"
        )
        assert counter.records < 500 and counter.chars < 200_000  # the log does not explode
    finally:
        for logger in loggers:
            logger.removeHandler(counter)
        for helper in helpers:
            if helper.returncode is None:
                helper.kill()
            await helper.wait()


async def test_a_2_mib_dispatch_gets_413_and_the_device_stays_usable(tmp_path: Path) -> None:
    async with (
        agent_server(tmp_path) as server,
        device(tmp_path, server, "dev1"),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT) as http,
    ):
        for size in (2 * 1024 * 1024, 1024 * 1024 + 100, 70_000):
            big = await http.post("/api/dispatch", json={"client_id": "dev1", "request": "x" * size})
            assert big.status_code == 413, size
            assert "too large" in big.json()["detail"]
        ok = await dispatch(http, "dev1", "w", "after")
        assert ok.status_code == 200
        assert (await result_of(http, "after"))["task_status"] == "completed"


async def test_an_oversize_frame_from_a_peer_gets_an_error_and_hurts_no_one(tmp_path: Path) -> None:
    async with (
        agent_server(tmp_path) as server,
        device(tmp_path, server, "dev1"),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT) as http,
    ):
        url = f"ws://127.0.0.1:{server.port}/ws"
        async with connect(url, max_size=None, open_timeout=WAIT) as conn:
            constellation = Peer(conn, "c1", ClientType.CONSTELLATION)
            await constellation.send(ClientMessageType.REGISTER, target_id="dev1")
            assert (await constellation.recv(WAIT)).type == ServerMessageType.HEARTBEAT
            await constellation.send(
                ClientMessageType.TASK, request="y" * (1024 * 1024 + 10), target_id="dev1"
            )
            error = await constellation.recv_until(ServerMessageType.ERROR, WAIT)
            assert "exceeds the limit" in (error.error or "")
        ok = await dispatch(http, "dev1", "w", "ok")
        assert ok.status_code == 200
        assert (await result_of(http, "ok"))["task_status"] == "completed"


@pytest.mark.slow
async def test_two_hundred_concurrent_dispatches_all_end_in_a_result_or_a_refusal(tmp_path: Path) -> None:
    answers = [step("echo run >> out.txt"), step(None, "FINISH", "done")]
    async with (
        agent_server(tmp_path, answers) as server,
        device(tmp_path, server, "dev1"),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT) as http,
    ):
        started = time.monotonic()
        replies = await asyncio.gather(*(dispatch(http, "dev1", f"r{i}", f"c{i}") for i in range(200)))
        accepted = [f"c{i}" for i, r in enumerate(replies) if r.status_code == 200]
        refused = [r for r in replies if r.status_code != 200]
        limit = server.app.state.settings.max_queued_tasks
        assert len(accepted) == limit + 1  # one running, the queue full
        assert all(r.status_code == 429 and "busy" in r.json()["detail"] for r in refused)
        results = [await result_of(http, name, limit=300) for name in accepted]
        assert [r["task_status"] for r in results] == ["completed"] * len(accepted)
        log = (tmp_path / "ws-dev1" / "out.txt").read_text()
        assert log == "run\n" * len(accepted)  # each ran once, one after another
        took = time.monotonic() - started
        print(f"\n200 dispatches: {len(accepted)} ran, {len(refused)} refused, {took:.1f}s")


async def test_impersonating_a_bound_device_is_refused(tmp_path: Path) -> None:
    key = "shared-key-for-the-fleet"
    async with (
        agent_server(tmp_path, api_key=key, require_key_on_loopback=True) as server,
        httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT, headers={"X-API-Key": key}
        ) as http,
    ):
        url = f"ws://127.0.0.1:{server.port}/ws?token={key}"

        async def impersonate() -> str:
            async with connect(url, open_timeout=WAIT) as conn:
                thief = Peer(conn, "victim", ClientType.DEVICE)
                await thief.send(ClientMessageType.REGISTER, metadata={"platform": "linux"})
                answer = await thief.recv(WAIT)
                assert answer.type == ServerMessageType.ERROR, answer
                return answer.error or ""

        async with device(tmp_path, server, "victim", api_key=key):
            assert "bound to its own device credential" in await impersonate()  # while connected
        await until(lambda: not server.app.state.registry.is_online("victim"), "victim offline")
        assert "bound to its own device credential" in await impersonate()  # while offline
        assert (await http.get("/api/clients")).json() == {"online_clients": []}
        async with device(tmp_path, server, "victim", api_key=key):  # the real one, with its token
            ok = await dispatch(http, "victim", "w", "v")
            assert ok.status_code == 200
            assert (await result_of(http, "v"))["task_status"] == "completed"
