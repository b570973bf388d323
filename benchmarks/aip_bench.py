"""AIP server benchmarks: many device clients with heartbeats, latencies, memory per client.

Run: ``make bench`` (or ``.venv/bin/python benchmarks/aip_bench.py [--clients N]``).

A real ``starweave server`` process (replay provider) is started on loopback; this process opens
N WebSocket device connections that register and send heartbeats like device clients do, then
measures:
- registration time for all clients, and the server's resident memory per connected client;
- heartbeat round trip (send HEARTBEAT → server's HEARTBEAT ack): back to back on one connection
  (both processes awake), and p50 / p99 with every client beating at ``--interval`` with a random
  phase (this includes the wake-up latency of two mostly idle processes);
- command round trip: one lightweight device answers a dispatched task's COMMANDs at once; the
  server's own step log gives the time from sending each COMMAND to receiving its results.

Targets (issue #3): 5,000 clients on one 2-core machine; the reference holds 16,000 clients at
0.14 MiB each with a 0.4 ms heartbeat round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
from websockets.asyncio.client import ClientConnection, connect

from starweave.aip.messages import (
    ClientMessage,
    ClientMessageType,
    ServerMessageType,
    TaskStatus,
    parse_server_message,
)
from starweave.commands import Result, ResultStatus

LISTENING = re.compile(r"listening on http://([\d.]+):(\d+)")


def percentile(samples: list[float], p: float) -> float:
    """The p-th percentile (0-100) of ``samples``."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


def start_server(tmp: Path, steps: int) -> tuple[subprocess.Popen[str], int]:
    """A replaying server whose sessions run ``steps`` cheap commands, then finish."""
    answers = [
        {
            "observation": "o",
            "thought": "t",
            "action": {
                "function": "execute_command",
                "arguments": {"command": f"echo {i}"},
                "status": "CONTINUE",
            },
            "result": "",
        }
        for i in range(steps)
    ]
    answers.append(
        {
            "observation": "o",
            "thought": "t",
            "action": {"function": "", "arguments": {}, "status": "FINISH"},
            "result": "ok",
        }
    )
    replay = tmp / "answers.jsonl"
    replay.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "starweave.cli",
            "server",
            "--port",
            "0",
            "--provider",
            "replay",
            "--replay-file",
            str(replay),
            "--log-dir",
            str(tmp / "logs"),
            "--log-level",
            "ERROR",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        match = LISTENING.search(proc.stdout.readline())
        if match:
            return proc, int(match.group(2))
    proc.kill()
    raise SystemExit("the server did not start")


async def register(port: int, client_id: str) -> ClientConnection:
    """Open one device connection and register it."""
    ws = await connect(f"ws://127.0.0.1:{port}/ws", max_size=2**20, ping_interval=None, open_timeout=60)
    hello = ClientMessage(
        type=ClientMessageType.REGISTER, client_id=client_id, metadata={"platform": "linux"}
    )
    await ws.send(hello.model_dump_json(exclude_none=True))
    ack = parse_server_message(await ws.recv())
    if ack.type != ServerMessageType.HEARTBEAT:
        raise SystemExit(f"registration of {client_id} refused: {ack.error}")
    return ws


async def heartbeat_rtts(connections: list[ClientConnection], rounds: int, interval: float) -> list[float]:
    """Each connection sends ``rounds`` heartbeats, ``interval`` seconds apart with a random phase
    (as independent clients do); the round trips in seconds."""
    samples: list[float] = []

    async def beat(index: int, ws: ClientConnection) -> None:
        await asyncio.sleep(random.uniform(0, interval))
        for _ in range(rounds):
            message = ClientMessage(type=ClientMessageType.HEARTBEAT, client_id=f"c{index}")
            start = time.perf_counter()
            await ws.send(message.model_dump_json(exclude_none=True))
            await ws.recv()
            samples.append(time.perf_counter() - start)
            await asyncio.sleep(max(0.0, interval - (time.perf_counter() - start)))

    await asyncio.gather(*(beat(i, ws) for i, ws in enumerate(connections)))
    return samples


async def back_to_back_rtts(ws: ClientConnection, count: int) -> list[float]:
    """Heartbeats sent one after another on one connection (both processes stay awake)."""
    frame = ClientMessage(type=ClientMessageType.HEARTBEAT, client_id="c0").model_dump_json(exclude_none=True)
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await ws.send(frame)
        await ws.recv()
        samples.append(time.perf_counter() - start)
    return samples


async def fake_device(port: int, steps: int) -> None:
    """A device that answers every COMMAND at once and stops at TASK_END."""
    ws = await register(port, "bench-device")
    tools = [
        {
            "tool_name": "execute_command",
            "tool_type": "action",
            "description": "run",
            "input_schema": {"properties": {"command": {"type": "string"}}, "required": ["command"]},
        }
    ]
    async with httpx.AsyncClient() as http:
        await http.post(
            f"http://127.0.0.1:{port}/api/dispatch",
            json={"client_id": "bench-device", "request": "bench", "task_name": "bench"},
        )
    while True:
        message = parse_server_message(await ws.recv())
        if message.type == ServerMessageType.TASK:
            reply = ClientMessage(
                type=ClientMessageType.TASK,
                client_id="bench-device",
                request=message.user_request,
                task_name=message.task_name,
                session_id=message.session_id,
                metadata={"platform": "linux"},
            )
        elif message.type == ServerMessageType.COMMAND:
            actions = message.actions or []
            value: Any = (
                tools
                if actions[0].tool_name == "list_tools"
                else {"success": True, "exit_code": 0, "stdout": "x\n", "stderr": ""}
            )
            results = [Result(status=ResultStatus.SUCCESS, result=value, call_id=a.call_id) for a in actions]
            reply = ClientMessage(
                type=ClientMessageType.COMMAND_RESULTS,
                client_id="bench-device",
                action_results=results,
                prev_response_id=message.response_id,
                session_id=message.session_id,
                status=message.status or TaskStatus.CONTINUE,
            )
        elif message.type == ServerMessageType.TASK_END:
            await ws.close()
            return
        else:
            continue
        await ws.send(reply.model_dump_json(exclude_none=True))


async def run(clients: int, rounds: int, steps: int, interval: float) -> dict[str, float]:
    """Everything, against one server process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, clients * 2 + 512)), hard))
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_server(Path(tmp), steps)
        server = psutil.Process(proc.pid)
        try:
            await asyncio.sleep(1.0)
            base_rss = server.memory_info().rss
            start = time.perf_counter()
            connections: list[ClientConnection] = []
            for batch in range(0, clients, 200):
                connections += await asyncio.gather(
                    *(register(port, f"c{i}") for i in range(batch, min(clients, batch + 200)))
                )
            registration = time.perf_counter() - start
            await asyncio.sleep(1.0)
            rss = server.memory_info().rss
            hot = await back_to_back_rtts(connections[0], 2000)
            rtts = await heartbeat_rtts(connections, rounds, interval)
            await asyncio.wait_for(fake_device(port, steps), 120)
            step_log = Path(tmp) / "logs" / "bench" / "response.log"
            records = [json.loads(line) for line in step_log.read_text().splitlines()]
            command_rtts = [r["time_cost"]["ACTION_EXECUTION"] for r in records if r.get("results")]
            for ws in connections:
                await ws.close()
        finally:
            proc.terminate()
            proc.wait(10)
    return {
        "clients": clients,
        "registration_s": registration,
        "server_mib_per_client": (rss - base_rss) / clients / 2**20,
        "heartbeat_back_to_back_p50_ms": percentile(hot, 50) * 1000,
        "heartbeat_back_to_back_p99_ms": percentile(hot, 99) * 1000,
        "heartbeat_p50_ms": percentile(rtts, 50) * 1000,
        "heartbeat_p99_ms": percentile(rtts, 99) * 1000,
        "heartbeats": len(rtts),
        "heartbeats_per_s": clients / interval,
        "command_rtt_p50_ms": statistics.median(command_rtts) * 1000,
        "command_rtt_p99_ms": percentile(command_rtts, 99) * 1000,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3, help="heartbeats per client")
    parser.add_argument("--interval", type=float, default=10.0, help="seconds between a client's heartbeats")
    parser.add_argument("--steps", type=int, default=50, help="commands in the command round-trip session")
    args = parser.parse_args()
    figures = asyncio.run(run(args.clients, args.rounds, args.steps, args.interval))
    print(json.dumps(figures, indent=2))
