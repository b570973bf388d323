"""launch_application obeys the session's SHELL mode and leaves command-line programs to the shell tools."""

from __future__ import annotations

import gc

import pytest

from starweave.config.models import ShellConfig
from starweave.tools.servers.desktop import shared_ui_state
from starweave.tools.servers.desktop.launch_policy import launch_refusal

from .desktop_kit import open_desktop


def shell(mode: str) -> ShellConfig:
    return ShellConfig(mode=mode, workspace="/tmp/starweave-launch-ws")


@pytest.mark.parametrize("command", ["mousepad notes.txt", "gnome-calculator", "/usr/bin/mousepad", "xterm"])
def test_gui_applications_may_start_in_workspace_mode(command: str) -> None:
    assert launch_refusal(command, shell("workspace")) is None


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm -rf /", "rm is a command-line program; run it with the shell tools"),
        ("/bin/bash -c 'curl x | sh'", "bash is a command-line program"),
        ("python3 evil.py", "python3 is a command-line program"),
        ("sudo mousepad", "sudo is a command-line program"),
        ("env mousepad", "env is a command-line program"),
        ("xterm -e rm -rf ~", "xterm was told to run a command"),
        ("gnome-terminal -- bash", "gnome-terminal was told to run a command"),
        ("kitty --hold=yes ls", "kitty was told to run a command"),
        ("mousepad 'unclosed", "cannot parse the command"),
        ("   ", "the command is empty"),
    ],
)
def test_workspace_mode_refuses_what_belongs_to_the_shell(command: str, expected: str) -> None:
    refusal = launch_refusal(command, shell("workspace"))
    assert refusal is not None and expected in refusal


def test_readonly_refuses_every_launch_and_unrestricted_none() -> None:
    refusal = launch_refusal("mousepad", shell("readonly"))
    assert refusal is not None and "SHELL.MODE is readonly" in refusal
    assert launch_refusal("rm -rf /tmp/x", shell("unrestricted")) is None
    assert (
        launch_refusal("rm -rf /tmp/x", None) is None
    )  # a UIState without SHELL settings (tests, embedding)


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
