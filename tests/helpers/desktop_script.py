"""Recorded HostAgent / AppAgent answers for runs on the test desktop (replay provider).

The answers follow the agents' response schemas. Window ids and control labels are read from the
live desktop first (the same walk the UICollector does), the way a recorded session's answers refer
to what the model saw.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from starweave.tools.desktop.backend import DesktopBackend
from starweave.tools.desktop.model import WindowInfo
from starweave.tools.desktop.settle import apoll_until


def host(
    status: str,
    function: str = "",
    arguments: dict[str, Any] | None = None,
    subtask: str = "",
    result: str = "",
) -> dict[str, Any]:
    """One HostAgent answer."""
    return {
        "observation": "the desktop",
        "thought": "next subtask",
        "current_subtask": subtask,
        "message": "",
        "plan": [],
        "status": status,
        "questions": [],
        "function": function,
        "arguments": arguments or {},
        "result": result,
    }


def select(window_id: str, name: str, subtask: str) -> dict[str, Any]:
    """A HostAgent answer selecting a window and assigning ``subtask`` to it."""
    return host("ASSIGN", "select_application_window", {"id": window_id, "name": name}, subtask)


def app(status: str, actions: Any, result: str = "") -> dict[str, Any]:
    """One AppAgent answer: ``actions`` is one action dict or a list of them (speculative)."""
    return {
        "observation": "the window",
        "thought": "act",
        "action": actions,
        "status": status,
        "comment": "",
        "result": result,
    }


def call(function: str, **arguments: Any) -> dict[str, Any]:
    """One action."""
    return {"function": function, "arguments": arguments}


def click(label: str, name: str) -> dict[str, Any]:
    """``click_input`` on a control."""
    return call("click_input", id=label, name=name)


def write_answers(path: Path, answers: list[dict[str, Any]]) -> Path:
    """The replay file."""
    path.write_text("\n".join(json.dumps(a, ensure_ascii=False) for a in answers) + "\n", encoding="utf-8")
    return path


async def window_ids(backend: DesktopBackend) -> dict[str, tuple[str, WindowInfo]]:
    """``{process app name: (annotation id, window)}`` as ``get_desktop_app_info`` numbers them."""
    windows = [w for w in await backend.list_windows() if (w.name or w.title).strip()]
    return {(getattr(w, "app_name", "") or w.name): (str(i), w) for i, w in enumerate(windows, start=1)}


async def launched_window(backend: DesktopBackend, app_name: str) -> tuple[str, str, str]:
    """(annotation id, name, backend window id) of the application's window once AT-SPI lists it."""

    async def find() -> tuple[str, str, str] | None:
        entry = (await window_ids(backend)).get(app_name)
        return (entry[0], entry[1].name, entry[1].id) if entry else None

    found = await apoll_until(find, timeout=15)
    assert found is not None, f"{app_name} never appeared on the AT-SPI desktop"
    return found


async def control_labels(
    backend: DesktopBackend, window_id: str, settle: float = 30.0
) -> dict[tuple[str, str], str]:
    """``{(control type, name): label}`` of a walk of the window (the first of equal ones wins),
    once two walks in a row agree: GTK keeps building a new window's controls after it appears,
    and a loaded machine can take seconds (polled up to ``settle`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settle
    previous: dict[tuple[str, str], str] | None = None
    while True:
        labels: dict[tuple[str, str], str] = {}
        for control in await backend.window_controls(window_id):
            labels.setdefault((control.control_type, control.name), control.id)
        if (labels and labels == previous) or loop.time() >= deadline:
            return labels
        previous = labels
        await asyncio.sleep(0.2)


async def calculator_display(backend: DesktopBackend, window_id: str) -> str:
    """The calculator's display text, read through the accessibility tree."""
    controls = await backend.window_controls(window_id)
    display = next(c for c in controls if c.control_type == "Edit")
    return await backend.get_text(display.id)


def calculator_answers(
    labels: dict[tuple[str, str], str], keys: list[str], multi_action: bool, result: str
) -> list[dict[str, Any]]:
    """The AppAgent's answers clicking ``keys`` on the calculator, then reporting the display.

    With ``multi_action`` one answer carries every click; without it one click per answer. The
    report is a ``summary`` (the calculation adds a history row, which renumbers the display).
    """
    clicks = [click(labels[("Button", k)], k) for k in keys]
    report = call("summary", text=result)
    if multi_action:
        # With speculative multi-action on, the schema's ``action`` is always a list.
        return [app("CONTINUE", clicks), app("FINISH", [report], result=result)]
    return [*(app("CONTINUE", c) for c in clicks), app("FINISH", report, result=result)]
