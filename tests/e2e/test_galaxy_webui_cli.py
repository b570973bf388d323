"""`starweave galaxy --webui` as a user runs it: the URL printed, the page served, Ctrl+C stops it."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
from e2e.test_galaxy_cli import DEVICE, planner_answers, write

STARWEAVE = [sys.executable, "-m", "starweave.cli"]


def webui_command(tmp_path: Path, *options: str) -> list[str]:
    """``starweave galaxy --webui --no-browser`` on the replay provider, with ``options``."""
    planner = write(tmp_path / "planner.jsonl", planner_answers(0))
    device = write(tmp_path / "device.jsonl", DEVICE)
    replay = ["--provider", "replay", "--replay-file", str(planner), "--device-replay-file", str(device)]
    return [*STARWEAVE, "galaxy", "--webui", "--no-browser", *replay, *options]


def test_webui_prints_its_url_serves_health_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    # The asked-for port is taken: the next free one is used and printed.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy_port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        proc = subprocess.Popen(
            webui_command(tmp_path, "--local", "2", "--port", str(busy_port), "--yes"),
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            url = None
            lines: list[str] = []
            assert proc.stdout is not None
            for line in proc.stdout:  # the fleet starts first, then the URL is printed
                lines.append(line)
                match = re.match(r"Galaxy WebUI: (http://127\.0\.0\.1:(\d+)/)$", line.strip())
                if match:
                    url = match.group(1)
                    assert int(match.group(2)) != busy_port
                    break
            assert url is not None, "".join(lines)
            health = httpx.get(url + "health", timeout=10).json()
            assert health == {"status": "healthy", "connections": 0, "events_sent": health["events_sent"]}
            assert httpx.get(url, timeout=10).status_code == 200
            devices = httpx.get(url + "api/devices", timeout=10).json()["devices"]
            assert set(devices) == {"local_linux_1", "local_linux_2"}
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0, out + err
    assert "Stopping the Galaxy WebUI" in out
    assert "Traceback" not in err, err
    assert json.dumps(health)  # the health answer was JSON


def test_webui_refuses_a_foreign_bind_address(tmp_path: Path) -> None:
    proc = subprocess.run(
        webui_command(tmp_path, "--local", "1", "--host", "192.0.2.1", "--port", "0"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "192.0.2.1" in proc.stderr and "Traceback" not in proc.stderr
