"""``starweave run --agent host`` as a user runs it: a real process on the test desktop, replay answers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.desktop_env import DesktopSession
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_script import (
    calculator_answers,
    calculator_display,
    control_labels,
    host,
    select,
    window_ids,
    write_answers,
)

from starweave.tools.desktop.linux.backend import LinuxDesktopBackend
from starweave.tools.desktop.settle import apoll_until

STARWEAVE = [sys.executable, "-m", "starweave.cli"]


async def starweave(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the command off the event loop (the test's own backend keeps working meanwhile)."""
    return await asyncio.to_thread(
        subprocess.run,
        [*STARWEAVE, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    env.update(extra)
    return env


@pytest.mark.desktop
async def test_run_agent_host_clicks_the_calculator(
    tmp_path: Path, desktop_session: DesktopSession, desktop_backend: LinuxDesktopBackend
) -> None:
    launched = desktop_session.launch("gnome-calculator", position=(600, 30))
    try:
        async with asyncio.timeout(150):
            entry = await apoll_until(lambda: _calculator_entry(desktop_backend), timeout=15)
            assert entry is not None, "the calculator never appeared on the AT-SPI desktop"
            window, name, xid = entry
            labels = await control_labels(desktop_backend, xid)
            answers = write_answers(
                tmp_path / "answers.jsonl",
                [
                    select(window, name, "compute 4 × 6"),
                    *calculator_answers(labels, ["4", "×", "6", "="], multi_action=False, result="24"),
                    host("FINISH", result="4 × 6 = 24"),
                ],
            )
            proc = await starweave(
                "run",
                "--agent",
                "host",
                "multiply 4 by 6 with the calculator",
                "--provider",
                "replay",
                "--replay-file",
                str(answers),
                "--workspace",
                str(tmp_path / "ws"),
                "--log-dir",
                str(tmp_path / "logs"),
                "--task",
                "calc",
                "--json",
                cwd=tmp_path,
                env=clean_env(),
            )
            assert proc.returncode == 0, proc.stderr
            result = json.loads(proc.stdout)
            assert result["status"] == "FINISH" and result["result"] == "4 × 6 = 24"
            assert result["llm_calls"] == 7  # host, four clicks one by one, the report, host
            assert await calculator_display(desktop_backend, xid) == "24"
            logs = tmp_path / "logs" / "calc"
            assert json.loads((logs / "result.json").read_text())["status"] == "FINISH"
            assert len(list(logs.glob("action_step*_annotated.png"))) == 5
            assert len(list(logs.glob("action_step*_selected_controls.png"))) == 4
            assert "Traceback" not in proc.stderr
    finally:
        desktop_session.stop(launched)


async def _calculator_entry(backend: LinuxDesktopBackend) -> tuple[str, str, str] | None:
    entry = (await window_ids(backend)).get("gnome-calculator")
    return (entry[0], entry[1].name, entry[1].id) if entry else None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the DISPLAY check is the Linux one")
async def test_run_agent_host_without_a_display_says_what_is_needed(tmp_path: Path) -> None:
    answers = write_answers(tmp_path / "answers.jsonl", [host("FINISH", result="-")])
    env = clean_env()
    env.pop("DISPLAY", None)
    proc = await starweave(
        "run",
        "--agent",
        "host",
        "open the calculator",
        "--provider",
        "replay",
        "--replay-file",
        str(answers),
        "--workspace",
        str(tmp_path / "ws"),
        "--log-dir",
        str(tmp_path / "logs"),
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 2
    assert "needs an X11 desktop (DISPLAY) with AT-SPI" in proc.stderr
    assert "Traceback" not in proc.stderr
