"""Running the MobileAgent on recorded answers against the fake phone (``mobile_fake``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from helpers.linux_replay import AnsweringView, replay_file
from helpers.mobile_fake import FakePhone, registered, write_mcp_config
from starweave.session.mobile_runner import MobileOptions, run_mobile_task
from starweave.session.runner import RunOptions


def mobile_answer(
    function: str, arguments: dict[str, Any] | None = None, status: str = "CONTINUE", comment: str = ""
) -> dict[str, Any]:
    """One MobileAgent answer."""
    action = {"function": function, "arguments": arguments or {}, "status": status}
    return {"thought": f"do {function or 'nothing'}", "action": action, "comment": comment}


def note_answers(note: str) -> list[dict[str, Any]]:
    """The MobileAgent opens Notes, types ``note`` into the Note field (2), saves (3) and finishes
    (the simulated phone's and the fake phone's Notes screens number their controls alike)."""
    return [
        mobile_answer("launch_app", {"package_name": "com.example.notes"}),
        mobile_answer("type_text", {"text": note, "control_id": "2"}),
        mobile_answer("click_control", {"control_id": "3"}),
        mobile_answer("", status="FINISH", comment=f"Saved the note '{note}'."),
    ]


async def run_mobile(
    tmp_path: Path,
    answers: list[Any],
    phone: FakePhone,
    request: str = "do it",
    confirm: bool = False,
    mobile: MobileOptions | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run ``request`` on ``answers`` with the fake phone; logs go to ``tmp_path/logs/run1``.
    Returns the result plus ``asked``: the actions the user was asked to confirm."""
    options = RunOptions(
        request=request,
        workspace=tmp_path / "ws",
        provider="replay",
        replay_file=replay_file(tmp_path, answers),
        log_dir=tmp_path / "logs",
        task="run1",
        config_dir=write_mcp_config(tmp_path / "config"),
        **kwargs,
    )
    with registered(phone), (tmp_path / "console.txt").open("w") as console_file:
        view = AnsweringView(Console(file=console_file, width=120), confirm)
        result = await run_mobile_task(options, view=view, mobile=mobile)
    result["asked"] = view.asked
    return result
