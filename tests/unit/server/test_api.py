"""The /api routes: validation order, status codes, and the dispatch → task_result round trip."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from unit.server.server_kit import fake_factory, peer, running_server, settings

from starweave.aip.messages import ClientMessageType, ServerMessageType, TaskStatus
from starweave.server.app import create_app

BASE = "http://127.0.0.1:5000"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings(port=5000), fake_factory)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
        yield client


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ({}, 400, "Empty task content"),
        ({"client_id": ""}, 400, "Empty task content"),  # request checked before client id
        ({"request": "", "client_id": ""}, 400, "Empty task content"),
        ({"request": "do it"}, 400, "Empty client ID"),
        ({"request": "do it", "client_id": ""}, 400, "Empty client ID"),
        ({"request": "do it", "client_id": "ghost"}, 404, "Client not online"),
    ],
)
async def test_dispatch_validation_order(
    http: httpx.AsyncClient, body: dict, status: int, detail: str
) -> None:
    response = await http.post("/api/dispatch", json=body)
    assert response.status_code == status
    assert response.json() == {"detail": detail}


@pytest.mark.parametrize("name", ["../etc", ".hidden", "a/b", "sp ace", "x" * 201])
async def test_dispatch_rejects_unsafe_task_names(http: httpx.AsyncClient, name: str) -> None:
    response = await http.post("/api/dispatch", json={"request": "r", "client_id": "c", "task_name": name})
    assert response.status_code == 400 and "Invalid task_name" in response.json()["detail"]


async def test_dispatch_bad_json_is_422(http: httpx.AsyncClient) -> None:
    response = await http.post(
        "/api/dispatch", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422


async def test_health_clients_and_unknown_task(http: httpx.AsyncClient) -> None:
    health = (await http.get("/api/health")).json()
    assert health["status"] == "healthy" and health["online_clients"] == [] and health["uptime_seconds"] >= 0
    assert (await http.get("/api/clients")).json() == {"online_clients": []}
    # Issue 11: an unknown task is 404 (the reference answered "pending" forever).
    unknown = await http.get("/api/task_result/never-seen")
    assert unknown.status_code == 404 and "Unknown task 'never-seen'" in unknown.json()["detail"]


async def test_dispatch_round_trip_to_task_result() -> None:
    async with (
        running_server() as server,
        peer(server, "dev1") as dev,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http,
    ):
        clients = (await http.get("/api/clients")).json()
        assert clients == {"online_clients": ["dev1"]}
        details = (await http.get("/api/clients", params={"details": "true"})).json()
        assert details["total"] == 1 and details["clients"][0]["type"] == "device"
        assert details["clients"][0]["platform"] == "linux"
        assert details["clients"][0]["capabilities"] == {"supported_features": ["shell"]}

        body = (
            await http.post(
                "/api/dispatch", json={"client_id": "dev1", "request": "hi", "task_name": "job-1"}
            )
        ).json()
        assert body["status"] == "dispatched" and body["task_name"] == "job-1" and body["client_id"] == "dev1"
        task = await dev.recv_until(ServerMessageType.TASK)
        assert (
            task.user_request == "hi" and task.task_name == "job-1" and task.session_id == body["session_id"]
        )
        assert (await http.get("/api/task_result/job-1")).json() == {"status": "pending"}

        # The device echoes the TASK back, as the contract's step 4 says.
        await dev.send(
            ClientMessageType.TASK,
            request="hi",
            task_name="job-1",
            session_id=task.session_id,
            metadata={"platform": "linux"},
        )
        command = await dev.recv_until(ServerMessageType.COMMAND)
        # While the session waits on the device, polling answers at once.
        started = time.monotonic()
        assert (await http.get("/api/task_result/job-1")).json() == {"status": "pending"}
        assert time.monotonic() - started < 1.0
        await dev.answer_command(command)
        end = await dev.recv_until(ServerMessageType.TASK_END)
        assert end.status == TaskStatus.COMPLETED
        result = (await http.get("/api/task_result/job-1")).json()
        assert result["status"] == "done" and result["result"] == {"echo": "hi"}


async def test_dispatch_task_name_defaults_to_uuid() -> None:
    async with running_server() as server, peer(server, "dev1") as dev:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
            body = (await http.post("/api/dispatch", json={"client_id": "dev1", "request": "hi"})).json()
        assert len(body["task_name"]) == 36
        assert (await dev.recv_until(ServerMessageType.TASK)).task_name == body["task_name"]
        await asyncio.sleep(0)


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"])
@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1:5000"])
async def test_docs_and_openapi_are_not_served(http: httpx.AsyncClient, path: str, host: str) -> None:
    response = await http.get(path, headers={"Host": host})
    assert response.status_code == 404
    assert "openapi" not in response.text.lower() and "swagger" not in response.text.lower()


async def test_api_still_checks_host_and_key() -> None:
    app = create_app(settings(port=5000, api_key="secret"), fake_factory)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as client:
        assert (await client.get("/api/health", headers={"Host": "evil.example"})).status_code == 403
        assert (await client.get("/api/health")).status_code == 401
        assert (await client.get("/api/health", headers={"X-API-Key": "secret"})).status_code == 200
        assert (await client.get("/openapi.json", headers={"X-API-Key": "secret"})).status_code == 404
