"""The MobileAgent on the simulated Android phone (tests/helpers/android_sim) through the shipped
``mcp.yaml`` entry: the real MobileDataCollector / MobileExecutor servers, the real adb layer, the
device picked by --serial and --adb-path; only the model is replayed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from helpers.linux_replay import AnsweringView, read_jsonl, replay_file
from helpers.mobile_replay import mobile_answer, note_answers, run_mobile
from rich.console import Console

from starweave.errors import ConfigError
from starweave.session.mobile_runner import MobileOptions, run_mobile_task
from starweave.session.runner import RunOptions

pytestmark = pytest.mark.slow


async def run_on_phone(
    tmp_path: Path,
    request: str,
    answers: list[dict[str, Any]] | None,
    mobile: MobileOptions,
    view: AnsweringView | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run ``request`` on ``answers`` (None: on the embedded model); logs in ``tmp_path/logs/run1``."""
    return await run_mobile(tmp_path, answers, mobile, request, view=view, **kwargs)


async def test_a_wrong_serial_stops_the_run_before_the_first_step(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    answers = [mobile_answer("launch_app", {"package_name": "notes"})]
    mobile = MobileOptions(serial="emulator-9999", adb_path=str(android_phone.adb_path))
    with pytest.raises(ConfigError, match=r"^--agent mobile: adb does not see the phone emulator-9999 "):
        await run_on_phone(tmp_path, "open notes", answers, mobile, max_steps=1)
    assert android_phone.state()["screen"] == "launcher"  # nothing reached the phone
    assert not (tmp_path / "logs" / "run1").exists()  # no step ran, no model was asked


def poll_phone(phone: SimulatedPhone, seen: Callable[[dict[str, Any]], bool], limit: float = 90) -> None:
    """Return once the phone's state satisfies ``seen`` (polled, with a generous deadline)."""
    deadline = time.monotonic() + limit
    while not seen(phone.state()):
        assert time.monotonic() < deadline, "the phone never reached the state waited for"
        time.sleep(0.02)


async def watch_phone(phone: SimulatedPhone, seen: Callable[[dict[str, Any]], bool]) -> None:
    """:func:`poll_phone` in a thread, while the run goes on in the event loop."""
    await asyncio.to_thread(poll_phone, phone, seen)


def dumped(state: dict[str, Any]) -> bool:
    return any("uiautomator dump" in line for line in state["history"])


async def test_a_phone_unplugged_mid_run_fails_the_task_in_data_collection(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    answers = [mobile_answer("launch_app", {"package_name": "com.example.notes"})]
    answers += [mobile_answer("wait", {"seconds": 0})] * 6
    mobile = MobileOptions(serial=android_phone.serial, adb_path=str(android_phone.adb_path))

    async def unplug_once_notes_opened() -> None:
        await watch_phone(android_phone, lambda state: state["screen"] == "notes")
        android_phone.set_online(False)

    async with asyncio.timeout(120):
        unplug = asyncio.create_task(unplug_once_notes_opened())
        result = await run_on_phone(tmp_path, "open notes", answers, mobile, max_steps=7)
        await unplug
    assert result["status"] == "FAIL", result
    assert "the phone is no longer reachable" in result["error"], result
    assert f"device '{android_phone.serial}' not found" in result["error"]
    # The model was not asked to act blind on the unplugged phone until the step limit.
    assert len(read_jsonl(tmp_path / "logs" / "run1" / "llm.log")) < len(answers)


async def test_each_step_sees_the_controls_of_the_screen_it_shows(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    """The screen changes on its own during a ``wait`` (an app that opens late): the next step's
    control list and annotation are the new screen's, not the 5 s cache's old launcher."""
    answers = [mobile_answer("wait", {"seconds": 2}), mobile_answer("", status="FINISH", comment="done")]
    mobile = MobileOptions(serial=android_phone.serial, adb_path=str(android_phone.adb_path))

    async def open_notes_after_the_first_look() -> None:
        await watch_phone(android_phone, dumped)
        android_phone.update(screen="notes")

    async with asyncio.timeout(120):
        change = asyncio.create_task(open_notes_after_the_first_look())
        result = await run_on_phone(tmp_path, "wait for notes", answers, mobile)
        await change
    assert result["status"] == "FINISH", result
    prompts = [
        call["prompt"][-1]["content"] for call in read_jsonl(tmp_path / "logs" / "run1" / "request.log")
    ]
    assert "EditText 'Note'" not in prompts[0]
    assert "[2] EditText 'Note'" in prompts[1] and "[4] Button 'Delete'" in prompts[1]


async def test_servers_without_the_executor_tools_fail_at_once(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    """A MobileAgent entry whose action server is a shell: one line, and no tool of it offered."""
    answers = [mobile_answer("execute_command", {"command": "touch gotcha"})]
    config = tmp_path / "config" / "ufo"
    config.mkdir(parents=True)
    (config / "mcp.yaml").write_text(
        "MobileAgent:\n  default:\n"
        "    data_collection:\n      - {namespace: MobileDataCollector, type: local}\n"
        "    action:\n      - {namespace: BashExecutor, type: local}\n"
    )
    options = RunOptions(
        request="do it",
        workspace=tmp_path / "ws",
        provider="replay",
        replay_file=replay_file(tmp_path, answers),
        log_dir=tmp_path / "logs",
        task="run1",
        config_dir=tmp_path / "config",
    )
    mobile = MobileOptions(adb_path=str(android_phone.adb_path))
    with (tmp_path / "console.txt").open("w") as console_file:
        view = AnsweringView(Console(file=console_file, width=120), answer=False)
        result = await run_mobile_task(options, view=view, mobile=mobile)
    assert result["status"] == "FAIL"
    assert "offer none of the MobileExecutor tools" in result["error"]
    assert "execute_command" in result["error"]  # what they do list, to fix mcp.yaml
    assert not (tmp_path / "ws" / "gotcha").exists()
    assert not (tmp_path / "logs" / "run1" / "llm.log").exists() or not read_jsonl(
        tmp_path / "logs" / "run1" / "llm.log"
    )


@pytest.mark.model
async def test_the_embedded_model_on_the_notes_task(tmp_path: Path, android_phone: SimulatedPhone) -> None:
    """The packaged 1.5B model on the notes task: every answer fits the schema and the run ends within
    its steps; it saved the note in each of the phrasings tried by hand (not asserted: a model's luck)."""
    mobile = MobileOptions(adb_path=str(android_phone.adb_path))
    request = "open the notes app, write the note 'call mom' and save it"
    result = await run_on_phone(tmp_path, request, None, mobile, max_steps=8)
    assert result["status"] in ("FINISH", "FAIL")
    calls = read_jsonl(tmp_path / "logs" / "run1" / "llm.log")
    assert calls and all(not c["error"] for c in calls)
    if result["status"] == "FINISH":
        assert android_phone.state()["notes"] == ["call mom"]


class ChangingView(AnsweringView):
    """A user who approves, while the phone's screen changes to ``screen`` before the answer."""

    def __init__(self, phone: SimulatedPhone, screen: str | None) -> None:
        super().__init__(Console(file=None, width=120, quiet=True), answer=True)
        self.phone, self.screen = phone, screen

    def confirm(self, command: str, reason: str) -> bool:
        if self.screen:
            self.phone.update(screen=self.screen)
        return super().confirm(command, reason)


async def test_a_benign_note_with_danger_words_runs_without_yes(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    """Typing "buy milk, pay rent" is reversible: nothing asks, so the run needs no --yes."""
    mobile = MobileOptions(adb_path=str(android_phone.adb_path))
    view = AnsweringView(Console(file=None, width=120, quiet=True), answer=False)
    note = "buy milk, pay rent"
    result = await run_on_phone(tmp_path, f"save the note '{note}'", note_answers(note), mobile, view)
    assert result["status"] == "FINISH", result
    assert view.asked == [] and android_phone.state()["notes"] == [note]


async def test_launching_an_installer_by_a_harmless_name_asks(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    """ "package" names no danger, but the server resolves it to the system's package installer:
    the check runs on that package."""
    mobile = MobileOptions(adb_path=str(android_phone.adb_path))
    view = AnsweringView(Console(file=None, width=120, quiet=True), answer=False)
    answers = [mobile_answer("launch_app", {"package_name": "package"})]
    result = await run_on_phone(tmp_path, "open package", answers, mobile, view)
    assert result["status"] == "FAIL" and len(view.asked) == 1
    steps = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    assert "com.google.android.packageinstaller" in steps[0]["note"]


@pytest.mark.parametrize(("changed_to", "notes_after"), [(None, []), ("calculator", ["keep me"])])
async def test_a_held_action_runs_only_on_the_screen_approved(
    tmp_path: Path, android_phone: SimulatedPhone, changed_to: str | None, notes_after: list[str]
) -> None:
    android_phone.update(screen="notes", notes=["keep me"])
    mobile = MobileOptions(adb_path=str(android_phone.adb_path))
    answers = [
        mobile_answer("click_control", {"control_id": "4"}),
        mobile_answer("", status="FINISH", comment="done"),
    ]
    view = ChangingView(android_phone, changed_to)
    result = await run_on_phone(tmp_path, "delete my notes", answers, mobile, view)
    assert result["status"] == "FINISH" and len(view.asked) == 1
    assert android_phone.state()["notes"] == notes_after
    notes = [str(s.get("note")) for s in read_jsonl(tmp_path / "logs" / "run1" / "response.log")]
    moved = "screen changed while waiting (control 4 is no longer 'Delete' at [560, 500, 1020, 640])"
    assert any(moved in n for n in notes) is bool(changed_to), notes
