"""A long server outage: `starweave client` keeps retrying and is back within one backoff period.

Real processes and real time. The outage (OUTAGE s) is long compared with the client's backoff cap
(--max-backoff CAP s): the client reaches the cap after a few attempts and then retries every
CAP s, many times over. The schedule over a full 5-minute outage is checked on simulated time in
tests/unit/client/test_reconnect_forever.py.
"""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from e2e.test_server_client import Server, answer, free_port, start_client, stop, wait_for

OUTAGE = 30.0  # fifteen backoff periods: the cap is reached after a few attempts and held
CAP = 2.0
# Registration after the server is back: the TCP connect, the device's system-info probe and the
# REGISTER round trip; on a loaded 2-core machine a few seconds.
REGISTRATION_SLACK = 10.0


@pytest.mark.slow
def test_client_survives_a_long_outage_and_is_back_within_one_backoff(tmp_path: Path) -> None:
    port = free_port()
    answers = [answer("echo done >> out.txt"), answer(None, "FINISH", "written")]
    server_state = ["--state-dir", str(tmp_path / "server-state")]
    procs: list[Any] = []
    server = Server(tmp_path, answers, port, *server_state)
    procs.append(server)
    client = start_client(
        server,
        "outage-dev",
        tmp_path / "ws",
        "--max-backoff",
        str(CAP),
        "--state-dir",
        str(tmp_path / "client-state"),
    )
    procs.append(client)
    try:
        wait_for(lambda: "outage-dev" in server.online(), what="first registration")
        server.post("/api/dispatch", {"client_id": "outage-dev", "request": "work", "task_name": "before"})
        assert wait_for(lambda: server.result("before"), what="first task")["task_status"] == "completed"

        server.stop()
        went_down = time.monotonic()
        while time.monotonic() - went_down < OUTAGE:
            assert client.poll() is None, "the client gave up during the outage"
            time.sleep(1.0)

        again = Server(tmp_path, answers, port, *server_state)
        procs.append(again)
        back_at = time.monotonic()
        wait_for(
            lambda: "outage-dev" in again.online(), timeout=CAP + 60, what="registration after the outage"
        )
        back_after = time.monotonic() - back_at
        print(f"\noutage {OUTAGE:g}s, backoff cap {CAP:g}s: client back {back_after:.1f}s after the server")
        assert back_after <= CAP + REGISTRATION_SLACK
        # Same device, same binding: it presented its token and runs tasks again.
        again.post("/api/dispatch", {"client_id": "outage-dev", "request": "work", "task_name": "after"})
        assert (
            wait_for(lambda: again.result("after"), what="task after the outage")["task_status"]
            == "completed"
        )
        assert (tmp_path / "ws" / "out.txt").read_text() == "done\ndone\n"
    finally:
        if client.poll() is None:
            client.send_signal(signal.SIGINT)
            try:
                client.wait(15)
            except Exception:
                stop(client)
        for proc in procs:
            if isinstance(proc, Server):
                proc.stop()
    assert client.stderr is not None
    log = client.stderr.read()
    attempts = [
        int(n) for n in re.findall(r"Server unreachable \(.*?\); retrying in [\d.]+s \(attempt (\d+)\)", log)
    ]
    assert len(attempts) >= OUTAGE / CAP * 0.6, log[-2000:]  # one line per attempt, many attempts
    assert attempts == sorted(attempts)
    assert "Connected to ws://127.0.0.1" in log and "again" in log
