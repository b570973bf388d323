"""`starweave server` and `starweave client` as real processes on loopback.

The server reasons with the replay provider (each session replays the file from the start); the
clients execute the commands in their own workspaces.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

STARWEAVE = [sys.executable, "-m", "starweave.cli"]
LISTENING = re.compile(r"listening on http://([\d.]+):(\d+)")


def answer(command: str | None, status: str = "CONTINUE", result: str = "") -> dict[str, Any]:
    action = (
        {"function": "execute_command", "arguments": {"command": command}, "status": status}
        if command
        else {"function": "", "arguments": {}, "status": status}
    )
    return {"observation": "o", "thought": "t", "action": action, "result": result}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Server:
    """A `starweave server` process."""

    def __init__(self, tmp: Path, answers: list[dict[str, Any]], port: int = 0, *extra: str) -> None:
        replay = tmp / "answers.jsonl"
        replay.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
        self.log = (tmp / f"server-{time.monotonic_ns()}.log").open("w")
        self.proc = subprocess.Popen(
            [
                *STARWEAVE,
                "server",
                "--port",
                str(port),
                "--provider",
                "replay",
                "--replay-file",
                str(replay),
                "--log-dir",
                str(tmp / "logs"),
                "--yes",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=_env(),
        )
        assert self.proc.stdout is not None
        self.port = 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not self.port:
            line = self.proc.stdout.readline()
            match = LISTENING.search(line)
            if match:
                self.port = int(match.group(2))
            elif not line and self.proc.poll() is not None:
                break
        if not self.port:
            self.log.flush()
            raise AssertionError(f"server did not start: {Path(self.log.name).read_text()}")
        self.url = f"http://127.0.0.1:{self.port}"
        # Started without --api-key: the local token, which this user's clients read from its file.
        self.token_file = Path(STATE_HOME) / "starweave" / "server" / "local" / f"{self.port}.token"
        keyless = "--api-key" not in extra
        self.headers = {"X-API-Key": self.token_file.read_text().strip()} if keyless else {}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def get(self, path: str, headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        headers = self.headers if headers is None else headers
        return httpx.get(self.url + path, timeout=10, headers=headers, **kwargs)

    def post(
        self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None, **kwargs: Any
    ) -> httpx.Response:
        headers = self.headers if headers is None else headers
        return httpx.post(self.url + path, json=body, timeout=10, headers=headers, **kwargs)

    def online(self, headers: dict[str, str] | None = None) -> list[str]:
        response = self.get("/api/clients", headers=headers)
        return list(response.json().get("online_clients", [])) if response.status_code == 200 else []

    def result(self, task: str, headers: dict[str, str] | None = None) -> dict[str, Any] | None:
        body = self.get(f"/api/task_result/{task}", headers=headers).json()
        return body if body.get("status") != "pending" else None


# Device tokens and server bindings go here, not under the real home (one folder per test run).
STATE_HOME = tempfile.mkdtemp(prefix="starweave-e2e-state-")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    env["XDG_STATE_HOME"] = STATE_HOME
    return env


def start_client(server: Server, client_id: str, workspace: Path, *extra: str) -> subprocess.Popen[str]:
    workspace.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [
            *STARWEAVE,
            "client",
            "--ws",
            "--ws-server",
            f"ws://127.0.0.1:{server.port}/ws",
            "--client-id",
            client_id,
            "--workspace",
            str(workspace),
            "--heartbeat-interval",
            "1",
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture
def procs() -> Iterator[list[Any]]:
    started: list[Any] = []
    yield started
    for item in started:
        item.stop() if isinstance(item, Server) else stop(item)


def test_dispatched_task_runs_on_the_device(tmp_path: Path, procs: list[Any]) -> None:
    server = Server(tmp_path, [answer("echo remote > made.txt"), answer(None, "FINISH", "made.txt written")])
    procs.append(server)
    procs.append(start_client(server, "dev1", tmp_path / "dev1"))
    wait_for(lambda: "dev1" in server.online(), what="dev1 registration")
    assert server.get("/api/health").json()["status"] == "healthy"
    response = server.post(
        "/api/dispatch", {"client_id": "dev1", "request": "write a file", "task_name": "job1"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "dispatched"
    result = wait_for(lambda: server.result("job1"), what="task result")
    assert result["status"] == "done"
    assert (tmp_path / "dev1" / "made.txt").read_text() == "remote\n"


def test_device_killed_mid_task_fails_the_task(tmp_path: Path, procs: list[Any]) -> None:
    server = Server(tmp_path, [answer("sleep 30"), answer(None, "FINISH", "slept")])
    procs.append(server)
    device = start_client(server, "dev1", tmp_path / "dev1")
    procs.append(device)
    wait_for(lambda: "dev1" in server.online(), what="registration")
    server.post("/api/dispatch", {"client_id": "dev1", "request": "sleep", "task_name": "slow"})
    time.sleep(3)  # the sleep command is running on the device
    stop(device)
    result = wait_for(lambda: server.result("slow"), timeout=30, what="FAILED result")
    assert "fail" in json.dumps(result).lower()
    wait_for(lambda: "dev1" not in server.online(), what="dev1 removed")


def test_client_reconnects_after_a_server_restart(tmp_path: Path, procs: list[Any]) -> None:
    port = free_port()
    server = Server(tmp_path, [answer(None, "FINISH", "ok")], port)
    procs.append(server)
    procs.append(start_client(server, "dev1", tmp_path / "dev1", "--max-retries", "20"))
    wait_for(lambda: "dev1" in server.online(), what="first registration")
    server.stop()
    again = Server(tmp_path, [answer(None, "FINISH", "ok")], port)
    procs.append(again)
    wait_for(lambda: "dev1" in again.online(), timeout=60, what="registration after the restart")


def test_two_clients_in_parallel_without_crosstalk(tmp_path: Path, procs: list[Any]) -> None:
    server = Server(tmp_path, [answer("echo mine > out.txt"), answer("ls"), answer(None, "FINISH", "done")])
    procs.append(server)
    for name in ("dev1", "dev2"):
        procs.append(start_client(server, name, tmp_path / name))
    wait_for(lambda: {"dev1", "dev2"} <= set(server.online()), what="both registrations")
    for name in ("dev1", "dev2"):
        server.post("/api/dispatch", {"client_id": name, "request": "work", "task_name": f"job-{name}"})
    results = [
        wait_for(lambda n=name: server.result(f"job-{n}"), what=f"{name} result") for name in ("dev1", "dev2")
    ]
    assert all(r["status"] == "done" for r in results)
    for name in ("dev1", "dev2"):
        assert (tmp_path / name / "out.txt").read_text() == "mine\n"
    logs = {r["result"].get("log_path") for r in results if isinstance(r.get("result"), dict)}
    assert len(logs) == 2


def test_api_key_and_host_checks(tmp_path: Path, procs: list[Any]) -> None:
    server = Server(tmp_path, [answer(None, "FINISH", "ok")], 0, "--api-key", "s3cret-key-123")
    procs.append(server)
    assert server.get("/api/clients").status_code == 401
    assert server.get("/api/clients", headers={"X-API-Key": "wrong"}).status_code == 401
    good = {"X-API-Key": "s3cret-key-123"}
    assert server.get("/api/clients", headers=good).status_code == 200
    foreign = server.get("/api/clients", headers={**good, "Host": "evil.example.com"})
    assert foreign.status_code in (400, 403)
    rejected = start_client(server, "intruder", tmp_path / "x", "--max-retries", "1")
    procs.append(rejected)
    assert rejected.wait(30) != 0
    assert rejected.stderr is not None and "key" in rejected.stderr.read().lower()
    allowed = start_client(server, "dev1", tmp_path / "dev1", "--api-key", "s3cret-key-123")
    procs.append(allowed)
    wait_for(lambda: "dev1" in server.online(good), what="authenticated registration")


# Another user of this machine: no access to the server's token file, only to the port.
OTHER_USER = """
import json, sys, urllib.error, urllib.request
try:
    open(sys.argv[2]).read()
    print("read the token file")
except OSError:
    pass
body = json.dumps({"client_id": "dev1", "request": "id", "task_name": "stolen"}).encode()
request = urllib.request.Request(
    sys.argv[1] + "/api/dispatch", data=body, headers={"Content-Type": "application/json"}
)
try:
    print(urllib.request.urlopen(request, timeout=10).status)
except urllib.error.HTTPError as exc:
    print(exc.code)
"""


def test_loopback_is_not_a_user_boundary(tmp_path: Path, procs: list[Any]) -> None:
    """Issue 26: another local user dispatched a task to a keyless server on 127.0.0.1. Started
    without --api-key, the server makes up a token and requires it; its user's clients read it."""
    server = Server(tmp_path, [answer("echo mine > out.txt"), answer(None, "FINISH", "done")])
    procs.append(server)
    assert stat.S_IMODE(server.token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(server.token_file.parent.stat().st_mode) == 0o700
    device = start_client(server, "dev1", tmp_path / "dev1")  # no --api-key: reads the file
    procs.append(device)
    wait_for(lambda: "dev1" in server.online(), what="dev1 registration with the local token")
    # Without the token: nothing, over HTTP or WebSocket.
    assert server.get("/api/clients", headers={}).status_code == 401
    stolen = {"client_id": "dev1", "request": "id", "task_name": "stolen"}
    assert server.post("/api/dispatch", stolen, headers={}).status_code == 401
    if os.geteuid() == 0:
        nobody = 65534
        as_other = subprocess.run(
            ["/usr/bin/python3", "-c", OTHER_USER, server.url, str(server.token_file)],  # stdlib only
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=lambda: (os.setgroups([]), os.setgid(nobody), os.setuid(nobody)),
            env={"PATH": os.environ.get("PATH", "")},
        )
        assert as_other.stdout.split() == ["401"], as_other
    assert server.get("/api/task_result/stolen").status_code == 404  # never ran
    # This user, with the token: as before.
    assert (
        server.post("/api/dispatch", {"client_id": "dev1", "request": "work", "task_name": "job"}).status_code
        == 200
    )
    assert wait_for(lambda: server.result("job"), what="the task result")["status"] == "done"
    server.stop()
    assert not server.token_file.exists()  # withdrawn when the server stops


def test_duplicate_client_id_is_refused(tmp_path: Path, procs: list[Any]) -> None:
    server = Server(tmp_path, [answer(None, "FINISH", "ok")])
    procs.append(server)
    first = start_client(server, "dev1", tmp_path / "a")
    procs.append(first)
    wait_for(lambda: "dev1" in server.online(), what="first registration")
    second = start_client(server, "dev1", tmp_path / "b", "--max-retries", "1", "--duplicate-wait", "2")
    procs.append(second)
    assert second.wait(30) != 0
    assert second.stderr is not None and "already" in second.stderr.read().lower()
    assert first.poll() is None and "dev1" in server.online()
