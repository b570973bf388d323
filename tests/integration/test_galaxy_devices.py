"""ConstellationDeviceManager against a real agent server and real device clients over WebSockets.

The server runs the LinuxAgent with the replay provider (every session replays the answers file
from the start; rewriting the file changes what later sessions do). Device clients are the real
DeviceWebSocketClient with its MCP tool stack, in-process, each in its own workspace.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

from starweave.aip.resilience import ReconnectionStrategy
from starweave.client.credentials import TokenStore
from starweave.client.runner import ClientOptions, build_device_client
from starweave.client.websocket import DeviceWebSocketClient
from starweave.config import load_config
from starweave.galaxy.devices import ConstellationDeviceManager, DeviceStatus
from starweave.galaxy.events import DeviceEvent, Event, EventBus, EventType
from starweave.server.app import RunningServer, start_server
from starweave.server.sessions import ServiceSessionFactory
from starweave.server.settings import ServerSettings
from starweave.session.service import LinuxServiceSessionFactory

HB = 1.0  # heartbeat interval of the manager under test (heartbeat timeout: 2 s)
SLACK = 8.0  # scheduling delay a loaded machine may add to any detection time
DEVICE_HB = 10.0  # the device clients' own heartbeat (not under test here)
LIMIT = 60.0  # upper bound of every test


def step(command: str | None, status: str = "CONTINUE", result: str = "") -> dict[str, Any]:
    action = (
        {"function": "execute_command", "arguments": {"command": command}, "status": status}
        if command
        else {"function": "", "arguments": {}, "status": status}
    )
    return {"observation": "o", "thought": "t", "action": action, "result": result}


QUICK = [step("echo hello >> out.txt"), step(None, "FINISH", "wrote out.txt")]
SLOW = [step("sleep 20"), step(None, "FINISH", "slept")]


def write_answers(path: Path, answers: list[dict[str, Any]]) -> None:
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n")


@asynccontextmanager
async def agent_server(
    tmp: Path, answers: list[dict[str, Any]], **settings: Any
) -> AsyncIterator[tuple[RunningServer, Path]]:
    replay = tmp / "answers.jsonl"
    write_answers(replay, answers)
    config = load_config(
        env={},
        overrides={
            "APP_AGENT": {"API_TYPE": "replay", "REPLAY_FILE": str(replay)},
            "system": {"LOG_DIR": str(tmp / "logs")},
        },
    )
    factory = LinuxServiceSessionFactory(config)
    server_settings = ServerSettings(host="127.0.0.1", port=0, log_level="warning", **settings)
    session_factory: ServiceSessionFactory = factory
    server = await start_server(server_settings, session_factory)
    try:
        yield server, replay
    finally:
        await server.stop()
        await factory.aclose()


def ws_url(port: int) -> str:
    return f"ws://127.0.0.1:{port}/ws"


class Device:
    """A real device client (DeviceWebSocketClient + DeviceClient) running in this process.

    Devices of one test share a state folder, as one machine's restarts do, so a replacement keeps
    the device token the server bound its id to.
    """

    def __init__(self, tmp: Path, port: int, client_id: str, heartbeat: float = DEVICE_HB) -> None:
        config_dir = tmp / "config"
        config_dir.mkdir(exist_ok=True)
        self.workspace = tmp / f"ws-{client_id}"
        options = ClientOptions(
            client_id=client_id, platform="linux", workspace=self.workspace, config_dir=config_dir
        )
        self.device = build_device_client(options)
        self.client = DeviceWebSocketClient(
            ws_url(port),
            self.device,
            heartbeat_interval=heartbeat,
            reconnection_strategy=ReconnectionStrategy(max_retries=1),
            token_store=TokenStore(tmp / "device-state"),
        )
        self.task = asyncio.create_task(self.client.connect_and_listen())

    async def kill(self) -> None:
        """Drop the device without a goodbye: its listening task is cancelled mid-whatever."""
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.device.aclose()

    async def stop(self) -> None:
        if not self.task.done():
            await self.client.stop()
            await asyncio.wait({self.task}, timeout=10)
        await self.device.aclose()


@asynccontextmanager
async def devices(
    tmp: Path, server: RunningServer, *ids: str, heartbeat: float = DEVICE_HB
) -> AsyncIterator[list[Device]]:
    started = [Device(tmp, server.port, i, heartbeat) for i in ids]
    try:
        registry = server.app.state.registry
        for i in ids:
            await wait_for(partial(registry.is_device_connected, i), f"{i} online")
        yield started
    finally:
        for device in started:
            await device.stop()


async def wait_for(check: Callable[[], Any], what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


class Recorder:
    """Collects device events."""

    def __init__(self) -> None:
        self.events: list[DeviceEvent] = []

    async def on_event(self, event: Event) -> None:
        assert isinstance(event, DeviceEvent)
        self.events.append(event)

    def of(self, kind: EventType, device_id: str | None = None) -> list[DeviceEvent]:
        return [e for e in self.events if e.event_type == kind and device_id in (None, e.device_id)]


def manager(**kwargs: Any) -> tuple[ConstellationDeviceManager, Recorder]:
    bus = EventBus()
    recorder = Recorder()
    bus.subscribe(recorder)
    options: dict[str, Any] = {"heartbeat_interval": HB, "reconnect_delay": 0.1, "max_backoff": 0.5}
    options.update(kwargs)
    return ConstellationDeviceManager("test", event_bus=bus, **options), recorder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---- tests ------------------------------------------------------------------------------------
async def test_devices_connect_register_and_report_their_info(tmp_path: Path) -> None:
    async with (
        asyncio.timeout(LIMIT),
        agent_server(tmp_path, QUICK) as (server, _),
        devices(tmp_path, server, "dev1", "dev2"),
    ):
        mgr, rec = manager()
        try:
            url = ws_url(server.port)
            assert await mgr.register_device("dev1", url, "linux", ["shell"], {"location": "lab"})
            assert await mgr.register_device("dev2", url, capabilities=["files"])
            assert sorted(mgr.get_connected_devices()) == ["dev1", "dev2"]
            profile = mgr.get_device_info("dev2")
            assert profile is not None and profile.status == DeviceStatus.IDLE
            assert profile.os == "linux"  # not configured: taken from what the device reported
            assert isinstance(profile.system_info.get("cpu_count"), int)
            assert profile.last_heartbeat is not None and profile.connection_attempts == 0
            registry = server.app.state.registry
            assert registry.get_client_info(f"{mgr.constellation_id}@dev1").target_id == "dev1"
            connected = rec.of(EventType.DEVICE_CONNECTED)
            assert sorted(e.device_id for e in connected) == ["dev1", "dev2"]
            last = connected[-1]
            assert last.device_status == "idle" and set(last.all_devices) == {"dev1", "dev2"}
            statuses = [e.device_status for e in rec.of(EventType.DEVICE_STATUS_CHANGED, "dev1")]
            assert statuses == ["connecting", "connected", "idle"]
            assert not await mgr.register_device("dev1", url)  # duplicate id
            # Heartbeats and info checks keep the devices healthy: three more checks pass for each
            # (every one moves last_heartbeat), and neither device is ever lost meanwhile.
            checks = {d: [mgr.get_device_info(d).last_heartbeat] for d in ("dev1", "dev2")}  # type: ignore[union-attr]
            deadline = time.monotonic() + LIMIT / 2
            while any(len(seen) < 4 for seen in checks.values()):
                assert sorted(mgr.get_connected_devices()) == ["dev1", "dev2"]
                assert time.monotonic() < deadline, f"health checks seen: {checks}"
                for device_id, seen in checks.items():
                    latest = mgr.get_device_info(device_id).last_heartbeat  # type: ignore[union-attr]
                    if latest != seen[-1]:
                        seen.append(latest)
                await asyncio.sleep(0.02)
            assert sorted(mgr.get_connected_devices()) == ["dev1", "dev2"]
        finally:
            await mgr.shutdown()
        assert mgr.get_connected_devices() == []
        assert [e.device_id for e in rec.of(EventType.DEVICE_DISCONNECTED)] != []


async def test_task_runs_and_returns_what_the_device_reported(tmp_path: Path) -> None:
    async with (
        asyncio.timeout(LIMIT),
        agent_server(tmp_path, QUICK) as (server, _),
        devices(tmp_path, server, "dev1") as (device,),
    ):
        mgr, rec = manager()
        try:
            assert await mgr.register_device("dev1", ws_url(server.port), "linux")
            result = await mgr.assign_task_to_device("t1", "dev1", "write a file", {"k": 1}, timeout=20)
            assert result.status == "completed" and result.is_successful, result
            assert result.device_id == "dev1" and result.task_id == "t1"
            assert result.result["status"] == "FINISH" and result.result["result"] == "wrote out.txt"
            assert result.metadata["task_data"] == {"k": 1}
            assert result.execution_time is not None and result.execution_time > 0
            assert (device.workspace / "out.txt").read_text() == "hello\n"
            assert mgr.get_device_info("dev1").status == DeviceStatus.IDLE  # type: ignore[union-attr]
            changes = rec.of(EventType.DEVICE_STATUS_CHANGED, "dev1")
            busy = [e for e in changes if e.device_status == "busy"]
            assert len(busy) == 1 and busy[0].device_info["current_task_id"] == "t1"
            assert changes[-1].device_status == "idle"
        finally:
            await mgr.shutdown()


async def test_tasks_for_a_busy_device_queue_and_run_in_order(tmp_path: Path) -> None:
    answers = [step("sleep 0.3; echo run >> out.txt"), step(None, "FINISH", "done")]
    async with (
        asyncio.timeout(LIMIT),
        agent_server(tmp_path, answers) as (server, _),
        devices(tmp_path, server, "dev1") as (device,),
    ):
        mgr, rec = manager()
        try:
            assert await mgr.register_device("dev1", ws_url(server.port))
            runs = [
                asyncio.create_task(mgr.assign_task_to_device(t, "dev1", f"task {t}", timeout=20))
                for t in ("t1", "t2", "t3")
            ]
            await wait_for(
                lambda: mgr.get_task_queue_status("dev1")["queued_task_ids"] == ["t2", "t3"], "queue"
            )
            assert mgr.get_task_queue_status("dev1")["current_task_id"] == "t1"
            results = await asyncio.gather(*runs)
            assert [r.status for r in results] == ["completed"] * 3
            for earlier, later in itertools.pairwise(results):
                assert earlier.end_time is not None and later.start_time is not None
                assert later.start_time >= earlier.end_time  # one task at a time, FIFO
            busy = [
                e.device_info["current_task_id"]
                for e in rec.of(EventType.DEVICE_STATUS_CHANGED, "dev1")
                if e.device_status == "busy"
            ]
            assert busy == ["t1", "t2", "t3"]
            assert (device.workspace / "out.txt").read_text() == "run\n" * 3
        finally:
            await mgr.shutdown()


async def test_a_device_that_never_connects_fails_clearly_and_quickly(tmp_path: Path) -> None:
    async with asyncio.timeout(LIMIT):
        mgr, rec = manager()
        try:
            started = time.monotonic()
            ok = await mgr.register_device("ghost", ws_url(free_port()), "linux", max_retries=2)
            assert ok is False
            profile = mgr.get_device_info("ghost")
            assert profile is not None and profile.status == DeviceStatus.FAILED
            assert "cannot connect to device 'ghost'" in (mgr.last_error("ghost") or "")
            result = await mgr.assign_task_to_device("t1", "ghost", "anything")
            assert time.monotonic() - started < 4.5  # no 5 s registration timeout was waited out
            assert result.status == "failed" and result.device_id == "ghost"
            assert "not connected (status: failed)" in (result.error or "")
            assert "cannot connect" in (result.error or "")
            # The background retries (0.1 s, 0.2 s) give up after max_retries.
            await wait_for(lambda: "could not be reconnected" in (mgr.last_error("ghost") or ""), "give-up")
            assert mgr.get_device_info("ghost").status == DeviceStatus.FAILED  # type: ignore[union-attr]
            assert mgr.get_connected_devices() == []
        finally:
            await mgr.shutdown()
        assert rec.of(EventType.DEVICE_CONNECTED) == []


async def test_unknown_device_gets_a_failed_result_naming_the_known_ones(tmp_path: Path) -> None:
    async with asyncio.timeout(LIMIT):
        mgr, _ = manager()
        try:
            assert await mgr.register_device("dev1", "ws://127.0.0.1:9/ws", auto_connect=False)
            assert await mgr.register_device("dev2", "ws://127.0.0.1:9/ws", auto_connect=False)
            result = await mgr.assign_task_to_device("t1", "nope", "anything")
            assert result.status == "failed" and not result.is_successful
            assert result.error == "unknown device 'nope' (known devices: dev1, dev2)"
            offline = await mgr.assign_task_to_device("t2", "dev1", "anything")
            assert offline.status == "failed" and "not connected (status: disconnected)" in str(offline.error)
        finally:
            await mgr.shutdown()


async def test_device_killed_mid_task_fails_it_and_queued_tasks_survive_the_reconnect(
    tmp_path: Path,
) -> None:
    async with asyncio.timeout(LIMIT), agent_server(tmp_path, SLOW) as (server, replay):
        device = Device(tmp_path, server.port, "dev1")
        replacement: Device | None = None
        mgr, rec = manager(max_backoff=0.3)
        try:
            await wait_for(lambda: server.app.state.registry.is_device_connected("dev1"), "dev1 online")
            assert await mgr.register_device("dev1", ws_url(server.port), max_retries=50)
            first = asyncio.create_task(mgr.assign_task_to_device("t1", "dev1", "sleep", timeout=25))
            second = asyncio.create_task(mgr.assign_task_to_device("t2", "dev1", "quick", timeout=25))
            await wait_for(
                lambda: mgr.get_task_queue_status("dev1")["queued_task_ids"] == ["t2"], "t2 queued"
            )
            # t1 reached the device (its server session runs: `sleep 20` next, for 20 s).
            await wait_for(lambda: server.app.state.registry.get_device_sessions("dev1"), "t1 running")
            killed = time.monotonic()
            await device.kill()
            result = await asyncio.wait_for(asyncio.shield(first), 2 * HB + SLACK)
            assert time.monotonic() - killed < 2 * HB + SLACK
            # Whichever notices first (the server's TASK_END or our health check) names the loss.
            assert result.status == "failed" and "disconnected" in str(result.error).lower(), result.error
            await wait_for(lambda: mgr.get_device_info("dev1").status != DeviceStatus.IDLE, "lost")  # type: ignore[union-attr]
            assert not second.done()  # still queued while the device is away
            assert rec.of(EventType.DEVICE_DISCONNECTED, "dev1")
            write_answers(replay, QUICK)
            replacement = Device(tmp_path, server.port, "dev1")
            done = await asyncio.wait_for(second, 30)
            assert done.status == "completed" and done.result["result"] == "wrote out.txt"
            assert mgr.get_device_info("dev1").status == DeviceStatus.IDLE  # type: ignore[union-attr]
            assert len(rec.of(EventType.DEVICE_CONNECTED, "dev1")) == 2
        finally:
            await mgr.shutdown()
            if replacement is not None:
                await replacement.stop()


class FreezableProxy:
    """A TCP relay that can stop forwarding without closing (a half-open, silent link)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pipe(src, dst))
            self._tasks.add(task)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await src.read(65536):
                await self.flowing.wait()
                dst.write(data)
                await dst.drain()
        dst.close()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            self._server.close()


async def test_silent_link_fails_the_running_task_within_the_heartbeat_timeout(tmp_path: Path) -> None:
    async with (
        asyncio.timeout(LIMIT),
        agent_server(tmp_path, SLOW, heartbeat_timeout=4.0) as (server, _),
        devices(tmp_path, server, "dev1", heartbeat=1.0),
    ):
        proxy = FreezableProxy(server.port)
        await proxy.start()
        mgr, _ = manager(max_backoff=0.3)
        try:
            assert await mgr.register_device("dev1", ws_url(proxy.port), max_retries=50)
            running = asyncio.create_task(mgr.assign_task_to_device("t1", "dev1", "sleep", timeout=25))
            # t1 got through the proxy to the server (its session runs) before the link goes silent.
            await wait_for(lambda: server.app.state.registry.get_device_sessions("dev1"), "t1 running")
            frozen = time.monotonic()
            proxy.flowing.clear()
            result = await asyncio.wait_for(running, 3 * HB + 2 * HB + SLACK)
            assert time.monotonic() - frozen <= 3 * HB + SLACK  # interval + 2·interval, plus slack
            assert result.status == "failed" and result.metadata.get("disconnected") is True
            assert "heartbeat check failed" in str(result.error)
            assert mgr.get_device_info("dev1").status != DeviceStatus.IDLE  # type: ignore[union-attr]
            proxy.flowing.set()
            # Back once the server dropped the silent old connection (its 4 s heartbeat timeout).
            await wait_for(lambda: "dev1" in mgr.get_connected_devices(), "reconnected")
        finally:
            await mgr.shutdown()
            await proxy.stop()


async def test_cancelling_a_caller_withdraws_its_queued_task(tmp_path: Path) -> None:
    answers = [step("sleep 0.5"), step(None, "FINISH", "done")]
    async with (
        asyncio.timeout(LIMIT),
        agent_server(tmp_path, answers) as (server, _),
        devices(tmp_path, server, "dev1"),
    ):
        mgr, rec = manager()
        try:
            assert await mgr.register_device("dev1", ws_url(server.port))
            first = asyncio.create_task(mgr.assign_task_to_device("t1", "dev1", "a", timeout=20))
            second = asyncio.create_task(mgr.assign_task_to_device("t2", "dev1", "b", timeout=20))
            third = asyncio.create_task(mgr.assign_task_to_device("t3", "dev1", "c", timeout=20))
            await wait_for(
                lambda: mgr.get_task_queue_status("dev1")["queued_task_ids"] == ["t2", "t3"], "queue"
            )
            second.cancel()
            await asyncio.gather(second, return_exceptions=True)
            assert mgr.get_task_queue_status("dev1")["queued_task_ids"] == ["t3"]
            assert (await first).status == "completed" and (await third).status == "completed"
            busy = [
                e.device_info["current_task_id"]
                for e in rec.of(EventType.DEVICE_STATUS_CHANGED, "dev1")
                if e.device_status == "busy"
            ]
            assert busy == ["t1", "t3"]
        finally:
            await mgr.shutdown()
