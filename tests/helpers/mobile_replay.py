"""Running the MobileAgent on recorded answers against the simulated phone (``android_sim``), through
the real MobileDataCollector / MobileExecutor servers of the shipped ``mcp.yaml``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from rich.console import Console

from helpers.android_sim import SimulatedPhone
from helpers.linux_replay import AnsweringView, replay_file
from starweave.session.mobile_runner import MobileOptions, run_mobile_task
from starweave.session.runner import RunOptions

SHIPPED_MCP = Path(__file__).resolve().parents[2] / "config" / "ufo" / "mcp.yaml"


def mobile_answer(
    function: str, arguments: dict[str, Any] | None = None, status: str = "CONTINUE", comment: str = ""
) -> dict[str, Any]:
    """One MobileAgent answer."""
    action = {"function": function, "arguments": arguments or {}, "status": status}
    return {"thought": f"do {function or 'nothing'}", "action": action, "comment": comment}


def note_answers(note: str) -> list[dict[str, Any]]:
    """The MobileAgent opens Notes, types ``note`` into the Note field (2), saves (3) and finishes."""
    return [
        mobile_answer("launch_app", {"package_name": "com.example.notes"}),
        mobile_answer("type_text", {"text": note, "control_id": "2"}),
        mobile_answer("click_control", {"control_id": "3"}),
        mobile_answer("", status="FINISH", comment=f"Saved the note '{note}'."),
    ]


def write_mcp_config(config_dir: Path) -> Path:
    """A config folder whose mcp.yaml is the shipped one (the MobileAgent's real servers)."""
    (config_dir / "ufo").mkdir(parents=True, exist_ok=True)
    shutil.copy(SHIPPED_MCP, config_dir / "ufo" / "mcp.yaml")
    return config_dir


def phone_options(phone: SimulatedPhone) -> MobileOptions:
    """The --serial / --adb-path of the simulated phone."""
    return MobileOptions(serial=phone.serial, adb_path=str(phone.adb_path))


async def run_mobile(
    tmp_path: Path,
    answers: list[Any] | None,
    mobile: MobileOptions,
    request: str = "do it",
    confirm: bool = False,
    view: AnsweringView | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run ``request`` on ``answers`` (None: on the embedded model) with the shipped mcp.yaml on the
    phone ``mobile`` names; logs go to ``tmp_path/logs/run1``. The user answers every confirmation with
    ``confirm`` (unless ``view`` is given). Returns the result plus ``asked``: the actions asked about."""
    options = RunOptions(
        request=request,
        workspace=tmp_path / "ws",
        provider="replay" if answers is not None else None,
        replay_file=replay_file(tmp_path, answers) if answers is not None else None,
        log_dir=tmp_path / "logs",
        task="run1",
        config_dir=write_mcp_config(tmp_path / "config"),
        **kwargs,
    )
    with (tmp_path / "console.txt").open("w") as console_file:
        view = view or AnsweringView(Console(file=console_file, width=120), confirm)
        result = await run_mobile_task(options, view=view, mobile=mobile)
    result["asked"] = view.asked
    return result
