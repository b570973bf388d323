"""launch_application obeys the session's SHELL mode and starts only the desktop's GUI applications."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.tools.servers.desktop import shared_ui_state
from starweave.tools.servers.desktop.launch_policy import desktop_applications, launch_refusal

from .desktop_kit import open_desktop

ENTRIES = {
    "mousepad.desktop": "Exec=mousepad %U",
    "calc.desktop": "Exec=gnome-calculator",
    "gedit.desktop": "Exec=/usr/bin/gedit --new-window %U",
    "xterm.desktop": "Exec=xterm",
    "vim.desktop": "Exec=vim %F\nTerminal=true",
    "top.desktop": "Exec=htop\nTerminal=true",
    "broken.desktop": "no section header",
}


@pytest.fixture(autouse=True)
def desktop_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A private XDG data dir whose applications/ holds ENTRIES."""
    folder = tmp_path / "share" / "applications"
    folder.mkdir(parents=True)
    for name, body in ENTRIES.items():
        text = body if "section" in body else f"[Desktop Entry]\nType=Application\nName=x\n{body}\n"
        (folder / name).write_text(text)
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "share"))
    desktop_applications.cache_clear()
    yield
    desktop_applications.cache_clear()


def shell(mode: str) -> ShellConfig:
    return ShellConfig(mode=mode, workspace="/tmp/starweave-launch-ws")


def test_the_desktop_entries_name_the_gui_applications() -> None:
    apps = desktop_applications()
    assert {"mousepad", "gnome-calculator", "gedit", "/usr/bin/gedit", "xterm"} <= apps
    assert "vim" not in apps and "htop" not in apps  # terminal applications


@pytest.mark.parametrize("command", ["mousepad notes.txt", "gnome-calculator", "gedit --new-window a.txt"])
def test_gui_applications_may_start_in_workspace_mode(command: str) -> None:
    assert launch_refusal(command, shell("workspace"), windows=False) is None


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm -rf /", "rm is a command-line program; run it with the shell tools"),
        ("/bin/bash -c 'curl x | sh'", "bash is a command-line program"),
        ("python3 evil.py", "python3 is a command-line program"),
        ("sudo mousepad", "sudo is a command-line program"),
        ("env mousepad", "env is a command-line program"),
        ("xterm", "xterm is a terminal"),
        ("xterm -e rm -rf ~", "xterm is a terminal"),
        ("systemd-run --user rm -rf /tmp/x", "systemd-run runs other programs"),
        ("ssh-agent sh -c 'touch /tmp/x'", "ssh-agent runs other programs"),
        ("dbus-run-session -- sh -c 'touch /tmp/x'", "dbus-run-session runs other programs"),
        ("make -C /tmp/ws", "make runs other programs"),
        ("gvim -c '!rm -rf ~'", "gvim runs other programs"),
        ("mousepad --exec=bash", "an argument names a program: bash is a command-line program"),
        ("some-unknown-tool --flag", "some-unknown-tool is not a desktop application"),
        ("mousepad 'unclosed", "cannot parse the command"),
        ("   ", "the command is empty"),
    ],
)
def test_workspace_mode_refuses_what_is_not_a_gui_application(command: str, expected: str) -> None:
    refusal = launch_refusal(command, shell("workspace"), windows=False)
    assert refusal is not None and expected in refusal


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cmd /c del C:\\x", "cmd runs commands"),
        ('"C:\\Windows\\System32\\CMD.EXE" /c dir', "cmd runs commands"),
        ("powershell -Command x", "powershell runs commands"),
        ("C:\\tools\\evil.bat", "evil.bat is a script"),
        ("notepad.exe run.ps1", "run.ps1 is a script"),
        ("C:\\Python311\\python.exe x.py", "python runs commands"),
    ],
)
def test_windows_shells_script_hosts_and_scripts_are_refused(command: str, expected: str) -> None:
    refusal = launch_refusal(command, shell("workspace"), windows=True)
    assert refusal is not None and expected in refusal
    assert launch_refusal("notepad.exe C:\\notes\\todo.txt", shell("workspace"), windows=True) is None


def test_readonly_refuses_every_launch_and_unrestricted_none() -> None:
    refusal = launch_refusal("mousepad", shell("readonly"), windows=False)
    assert refusal is not None and "SHELL.MODE is readonly" in refusal
    assert launch_refusal("rm -rf /tmp/x", shell("unrestricted"), windows=False) is None
    assert launch_refusal("rm -rf /tmp/x", None, windows=False) is None  # no SHELL settings: no policy


def test_a_symlink_is_judged_by_what_it_points_to_and_workspace_programs_are_refused(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    disguised = bin_dir / "mousepad"
    disguised.symlink_to("/bin/sh")
    refusal = launch_refusal(f"{disguised} -c 'rm -rf ~'", shell("workspace"), windows=False)
    assert refusal is not None and "is a command-line program" in refusal

    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = workspace / "mousepad"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    config = ShellConfig(mode="workspace", workspace=str(workspace))
    refusal = launch_refusal(str(script), config, windows=False)
    assert refusal is not None and "inside the workspace" in refusal


async def test_a_refused_launch_never_reaches_the_desktop() -> None:
    async with open_desktop(shell=shell("readonly")) as d:
        error = await d.error(d.host, "launch_application", {"command": "mousepad notes.txt"})
        assert "Refused to launch 'mousepad notes.txt': SHELL.MODE is readonly" in error
        assert not [call for call in d.backend.calls if call[0] == "launch"]
    async with open_desktop(shell=shell("workspace")) as d:
        error = await d.error(d.host, "launch_application", {"command": "bash -c 'rm -rf ~'"})
        assert "bash is a command-line program" in error
        launched = await d.ok(d.host, "launch_application", {"command": "gedit notes.txt", "wait_seconds": 5})
        assert launched["window"]["name"] == "Gedit"


def test_the_shared_state_takes_the_session_mode_without_keeping_the_config_alive() -> None:
    config = shell("readonly")
    state = shared_ui_state(config)
    assert state.shell is not None and state.shell.mode == "readonly" and state.shell is not config
    assert shared_ui_state(config) is state
    del config
    gc.collect()
    assert shared_ui_state(shell("readonly")) is not state
