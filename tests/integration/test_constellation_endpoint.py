"""ConstellationEndpoint against the real agent server (uvicorn on port 0, fake service sessions)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from unit.server.server_kit import FakeSession, peer, running_server

from starweave.aip.endpoints import ConstellationEndpoint
from starweave.aip.messages import ServerMessage, ServerMessageType, TaskStatus
from starweave.aip.resilience import ReconnectionStrategy
from starweave.client.device_info import DeviceInfoProvider
from starweave.client.runner import ClientOptions, build_device_client
from starweave.client.websocket import DeviceWebSocketClient
from starweave.errors import TaskRejected
from starweave.galaxy.devices import ConstellationDeviceManager
from starweave.server.app import RunningServer

WAIT = 30.0


def ws_url(server: RunningServer) -> str:
    return f"ws://127.0.0.1:{server.port}/ws"


async def wait_until_online(server: RunningServer, client_id: str) -> None:
    registry = server.app.state.registry
    deadline = time.monotonic() + WAIT
    while not registry.is_device_connected(client_id):
        assert time.monotonic() < deadline, f"{client_id} never registered"
        await asyncio.sleep(0.02)


class AckCounter:
    """Counts the server's answers to plain heartbeats (acks of a TASK carry its session id)."""

    def __init__(self) -> None:
        self.acks = 0

    async def process_message(self, message: ServerMessage) -> None:
        if message.type == ServerMessageType.HEARTBEAT and message.session_id is None:
            self.acks += 1


async def test_task_runs_on_the_device_and_both_sides_get_task_end() -> None:
    async with running_server() as server, peer(server, "dev1") as device:
        acks = AckCounter()
        endpoint = ConstellationEndpoint("galaxy", heartbeat_interval=0.2, message_processor=acks)
        try:
            assert await endpoint.connect_to_device("dev1", ws_url(server))
            assert server.app.state.registry.get_client_info("galaxy@dev1").target_id == "dev1"
            sending = asyncio.create_task(
                endpoint.send_task_to_device("dev1", {"request": "hello", "task_name": "ct1"}, timeout=WAIT)
            )
            command = await device.recv_until(ServerMessageType.COMMAND)
            await device.answer_command(command)
            end = await asyncio.wait_for(sending, WAIT)
            assert end.type == ServerMessageType.TASK_END and end.status == TaskStatus.COMPLETED
            assert end.result == {"echo": "hello"} and end.session_id == command.session_id
            device_end = await device.recv_until(ServerMessageType.TASK_END)  # dual delivery
            assert device_end.session_id == end.session_id
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
                stored = (await http.get("/api/task_result/ct1")).json()
            assert stored["status"] == "done" and stored["result"] == {"echo": "hello"}
            assert stored["session_id"] == end.session_id
            # Heartbeats keep flowing as the constellation client without being refused: the server
            # acks them (a refused one would get an ERROR instead), however long they take to come.
            seen = acks.acks
            deadline = time.monotonic() + WAIT
            while acks.acks < seen + 3:
                assert endpoint.last_error("dev1") is None, endpoint.last_error("dev1")
                assert time.monotonic() < deadline, f"only {acks.acks - seen} heartbeat acks came"
                await asyncio.sleep(0.02)
            assert endpoint.is_device_connected("dev1") and endpoint.last_error("dev1") is None
        finally:
            await endpoint.stop()


async def test_connecting_for_an_unknown_device_is_refused() -> None:
    async with running_server() as server:
        endpoint = ConstellationEndpoint("galaxy")
        assert await endpoint.connect_to_device("ghost", ws_url(server)) is False
        assert "Target device 'ghost' is not connected" in (endpoint.last_error("ghost") or "")
        assert not endpoint.is_device_connected("ghost")
        assert server.app.state.registry.get_client_info("galaxy@ghost") is None


async def test_unreachable_server_and_wrong_api_key_are_reported() -> None:
    endpoint = ConstellationEndpoint("galaxy", api_key="wrong")
    async with running_server(api_key="s3cret") as server, peer(server, "dev1", token="s3cret"):
        assert await endpoint.connect_to_device("dev1", ws_url(server)) is False
        assert "1008" in (endpoint.last_error("dev1") or "")
        good = ConstellationEndpoint("galaxy", api_key="s3cret")
        assert await good.connect_to_device("dev1", ws_url(server))
        await good.stop()
        url = ws_url(server)
    assert await endpoint.connect_to_device("dev1", url) is False
    assert "cannot connect" in (endpoint.last_error("dev1") or "")


async def test_device_killed_mid_task_fails_the_task_quickly() -> None:
    async with running_server() as server:
        endpoint = ConstellationEndpoint("galaxy")
        try:
            async with peer(server, "dev1") as device:
                assert await endpoint.connect_to_device("dev1", ws_url(server))
                sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "hello"}))
                await device.recv_until(ServerMessageType.COMMAND)
                started = time.monotonic()
                await device.conn.close()
            end = await asyncio.wait_for(sending, WAIT)
            # Quickly: the server's heartbeat timeout (the only other way to notice) is 90 s.
            assert time.monotonic() - started < 20.0
            assert end.status == TaskStatus.FAILED and "Device disconnected" in str(end.error)
            # The device is gone: the server now refuses new tasks for it.
            with pytest.raises(TaskRejected, match="not connected"):
                await endpoint.send_task_to_device("dev1", {"request": "again"}, timeout=WAIT)
        finally:
            await endpoint.stop()


async def test_constellation_stopping_mid_task_cancels_the_server_session() -> None:
    async with running_server() as server, peer(server, "dev1") as device:
        endpoint = ConstellationEndpoint("galaxy")
        assert await endpoint.connect_to_device("dev1", ws_url(server))
        sending = asyncio.create_task(endpoint.send_task_to_device("dev1", {"request": "hello"}))
        await device.recv_until(ServerMessageType.COMMAND)
        session = FakeSession.created[-1]
        await endpoint.stop()
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(sending, WAIT)
        deadline = time.monotonic() + WAIT
        while not session.cancelled:
            assert time.monotonic() < deadline, "the orphaned session kept running"
            await asyncio.sleep(0.02)


async def test_real_device_client_runs_a_task_and_reports_its_system_info(tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    options = ClientOptions(
        client_id="real-dev", platform="linux", workspace=tmp_path / "ws", config_dir=config_dir
    )
    async with running_server() as server:
        device_client = build_device_client(options)
        client = DeviceWebSocketClient(
            ws_url(server),
            device_client,
            heartbeat_interval=30.0,  # not under test; short ones let a loaded machine look dead
            reconnection_strategy=ReconnectionStrategy(max_retries=1),
        )
        running = asyncio.create_task(client.connect_and_listen())
        endpoint = ConstellationEndpoint("galaxy")
        try:
            await wait_until_online(server, "real-dev")
            assert await endpoint.connect_to_device("real-dev", ws_url(server))
            info = await endpoint.request_device_info("real-dev")
            expected = DeviceInfoProvider().collect_system_info("real-dev").to_dict()
            assert info is not None and info["device_id"] == "real-dev" and info["platform"] == "linux"
            assert info["cpu_count"] == expected["cpu_count"] and info["os_version"] == expected["os_version"]
            # The fake session asks for an "echo" tool the device lacks: the device answers with a
            # failure result, the session still finishes, and the TASK_END comes back.
            end = await endpoint.send_task_to_device("real-dev", {"request": "hi"}, timeout=WAIT)
            assert end.status == TaskStatus.COMPLETED and end.result == {"echo": None}
        finally:
            await endpoint.stop()
            await client.stop()
            await asyncio.wait_for(running, WAIT)
            await device_client.aclose()


async def test_device_manager_reconnects_after_the_server_restarts_on_the_same_port() -> None:
    # The endpoint reports the lost connection; the device manager (the one reconnection loop)
    # wins the device back once the restarted server has it again, and runs tasks on it.
    manager = ConstellationDeviceManager("galaxy", reconnect_delay=0.05, max_backoff=0.2)
    try:
        async with running_server() as server, peer(server, "dev1"):
            port = server.port
            assert await manager.register_device("dev1", ws_url(server), max_retries=100)
        async with running_server(port=port) as server, peer(server, "dev1") as device:
            deadline = time.monotonic() + WAIT
            while manager.get_connected_devices() != ["dev1"]:
                profile = manager.get_device_info("dev1")
                assert time.monotonic() < deadline, profile and profile.status
                await asyncio.sleep(0.05)
            sending = asyncio.create_task(manager.assign_task_to_device("t1", "dev1", "back", timeout=WAIT))
            await device.answer_command(await device.recv_until(ServerMessageType.COMMAND))
            result = await asyncio.wait_for(sending, WAIT)
            assert result.status == "completed" and result.result == {"echo": "back"}, result
    finally:
        await manager.shutdown()
