"""VISUAL_MODE on the real desktop: an OpenAI-compatible vision model (a real local HTTP server that
records every request) is shown the desktop and the calculator's screenshots, and the logs keep the
PNG files rather than megabytes of base64."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.desktop_env import LaunchedApp
from helpers.desktop_env import calculator as calculator
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from helpers.desktop_script import (
    app,
    calculator_display,
    click,
    control_labels,
    host,
    launched_window,
    select,
)
from helpers.fake_openai_server import chat_answer, scripted_server
from PIL import Image
from rich.console import Console

from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import DesktopOptions, run_host_task
from starweave.session.runner import RunOptions
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

pytestmark = pytest.mark.desktop
KEY = "sk-test-key-0123456789abcdef"


def images_of(request: dict[str, Any]) -> list[Image.Image]:
    """The images of the user message of one chat request, decoded."""
    content = request["messages"][-1]["content"]
    assert isinstance(content, list), "a visual prompt is a list of parts"
    labels = [p["text"] for p in content if p["type"] == "text"][:-1]
    urls = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
    assert [label.split(" (")[0] for label in labels] == [f"Screenshot {i}" for i in range(1, len(urls) + 1)]
    assert content[-1]["type"] == "text" and "type 99 in the calculator" in content[-1]["text"]
    return [Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))) for u in urls]


async def test_a_visual_model_sees_the_desktop_and_the_annotated_window(
    tmp_path: Path, calculator: LaunchedApp, desktop_backend: LinuxDesktopBackend
) -> None:
    async with asyncio.timeout(120):
        window, name, xid = await launched_window(desktop_backend, "gnome-calculator")
        labels = await control_labels(desktop_backend, xid)
        answers = [
            select(window, name, "type 9"),
            app("CONTINUE", click(labels[("Button", "9")], "9")),
            app("FINISH", click(labels[("Button", "9")], "9"), result="99"),
            host("FINISH", result="99"),
        ]
        config = tmp_path / "config"
        (config / "ufo").mkdir(parents=True)
        with scripted_server() as server:
            server.queue = [chat_answer(json.dumps(a)) for a in answers]
            for block in ("HOST_AGENT", "APP_AGENT"):
                settings = [f"{block}:", "  API_TYPE: openai", f"  API_BASE: {server.base_url}"]
                settings += [f"  API_KEY: {KEY}", "  API_MODEL: gpt-4o", ""]
                with (config / "ufo" / "agents.yaml").open("a") as out:
                    out.write("\n".join(settings))
            options = RunOptions(
                request="type 99 in the calculator",
                workspace=tmp_path / "ws",
                log_dir=tmp_path / "logs",
                task="visual",
                config_dir=config,
            )
            with (tmp_path / "console.txt").open("w") as out:
                view = ConsoleView(console=Console(file=out, width=120))
                result = await run_host_task(options, view, DesktopOptions(visual=True))
            requests = list(server.requests)

        assert result["status"] == "FINISH", result
        assert await calculator_display(desktop_backend, xid) == "99"
        assert len(requests) == 4
        # The HostAgent sees the whole desktop.
        [desktop] = images_of(requests[0])
        assert desktop.size == (1280, 1024)
        # The AppAgent's first step: the clean and the annotated window (same size, different pixels).
        assert "(the same window with each control's label in a numbered box)" in json.dumps(requests[1])
        clean, annotated = images_of(requests[1])
        assert clean.size == annotated.size and clean.tobytes() != annotated.tobytes()
        # Its second step also gets the first step's selected-control screenshot, first.
        selected, clean2, _ = images_of(requests[2])
        assert selected.size == clean2.size
        logs = tmp_path / "logs" / "visual"
        request_log = (logs / "request.log").read_text(encoding="utf-8")
        assert "characters left out>" in request_log and "iVBORw0KGgo" not in request_log
        assert KEY not in request_log
        assert (logs / "action_step3_selected_controls.png").is_file()
