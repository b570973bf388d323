"""``UIABackend.launch``: real child processes, a fake desktop that shows their window late."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from starweave.errors import DesktopError
from starweave.tools.desktop.windows.toplevel import split_command
from starweave.tools.desktop.windows.uia import UIABackend

# The child writes its pid to the file named by argv[1], then idles until killed.
CHILD = "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(30)\n"


@dataclass
class FakeWindow:
    ProcessId: int
    Name: str = "New app"
    ControlTypeName: str = "WindowControl"
    NativeWindowHandle: int = 4242
    ClassName: str = "App"
    IsOffscreen: bool = False

    @property
    def BoundingRectangle(self) -> Any:
        return SimpleNamespace(left=0, top=0, right=100, bottom=100)

    def GetWindowPattern(self) -> Any:
        return SimpleNamespace(WindowVisualState=0, IsModal=False)


class LateDesktop:
    """A desktop whose only window, of the process that wrote ``pid_file``, shows from the
    ``shows_at``-th look on (never when ``shows_at`` is 0)."""

    def __init__(self, pid_file: Path, shows_at: int) -> None:
        self.pid_file = pid_file
        self.shows_at = shows_at
        self.looks = 0

    def GetChildren(self) -> list[FakeWindow]:
        self.looks += 1
        if not self.shows_at or self.looks < self.shows_at or not self.pid_file.exists():
            return []
        text = self.pid_file.read_text()
        return [FakeWindow(ProcessId=int(text))] if text else []


class FakeAuto:
    def __init__(self, desktop: LateDesktop) -> None:
        self.desktop = desktop

    def GetRootControl(self) -> LateDesktop:
        return self.desktop


@pytest.fixture
def child(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The command line of an idle child process and its pid file; the child is killed afterwards."""
    script, pid_file = tmp_path / "child.py", tmp_path / "child.pid"
    script.write_text(CHILD)
    yield f'"{sys.executable}" -S "{script}" "{pid_file}"', pid_file
    deadline = time.monotonic() + 5
    while not pid_file.exists() or not pid_file.read_text():  # a cancelled launch may still be starting
        if time.monotonic() > deadline:
            return
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):
        os.kill(int(pid_file.read_text()), signal.SIGKILL)


def backend(desktop: LateDesktop) -> UIABackend:
    b = UIABackend(auto=FakeAuto(desktop), observe=lambda: b"")
    b.launch_poll = 0.01
    return b


async def test_launch_waits_until_the_new_process_shows_a_window(child: tuple[str, Path]) -> None:
    command, pid_file = child
    desktop = LateDesktop(pid_file, shows_at=3)
    b = backend(desktop)
    pid = await b.launch(command, wait=10.0)
    assert pid == int(pid_file.read_text())
    assert desktop.looks >= 3  # it polled until the window was there ...
    assert [w.process_id for w in await b.list_windows()] == [pid]  # ... and listed it
    await b.aclose()


async def test_launch_returns_the_pid_when_no_window_shows_in_time(child: tuple[str, Path]) -> None:
    command, pid_file = child
    desktop = LateDesktop(pid_file, shows_at=0)
    b = backend(desktop)
    started = time.monotonic()
    pid = await b.launch(command, wait=0.3)
    assert time.monotonic() - started >= 0.3 and desktop.looks >= 3
    assert pid == int(pid_file.read_text())
    await b.aclose()


async def test_a_launcher_that_hands_over_and_exits_is_not_waited_for(tmp_path: Path) -> None:
    b = backend(LateDesktop(tmp_path / "none", shows_at=0))
    started = time.monotonic()
    pid = await b.launch(f'"{sys.executable}" -S -c pass', wait=20.0)
    assert pid > 0 and time.monotonic() - started < 10.0
    with pytest.raises(DesktopError, match=r"Failed to launch application .* it exited with 3\."):
        await b.launch(f'"{sys.executable}" -S -c "raise SystemExit(3)"', wait=20.0)
    with pytest.raises(DesktopError, match="The command to launch is empty"):
        await b.launch("  ", wait=1.0)
    with pytest.raises(DesktopError, match="Failed to launch application"):
        await b.launch(str(tmp_path / "no-such-program"), wait=1.0)
    await b.aclose()


async def test_a_cancelled_launch_stops_waiting(child: tuple[str, Path]) -> None:
    command, pid_file = child
    desktop = LateDesktop(pid_file, shows_at=0)
    b = backend(desktop)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(b.launch(command, wait=30.0), 0.3)
    # The worker thread is free again at once, not after the 30 s wait.
    await asyncio.wait_for(b.list_windows(), 2.0)
    await b.aclose()


def test_command_words_keep_windows_paths() -> None:
    assert split_command(r'"C:\Program Files\App\app.exe" /n C:\notes\a.txt') == [
        r"C:\Program Files\App\app.exe",
        "/n",
        r"C:\notes\a.txt",
    ]
    assert split_command("notepad.exe") == ["notepad.exe"]
