"""The ConstellationAgent's prompt shows each device's kind and capabilities, and says what they are for."""

from __future__ import annotations

from starweave.galaxy.agent import ConstellationPrompterFactory, format_device_info
from starweave.galaxy.devices.profile import AgentProfile, DeviceStatus


def profiles() -> list[dict[str, object]]:
    box = AgentProfile("box", "ws://h:1/ws", os="linux", capabilities=["linux", "shell", "files"])
    desk = AgentProfile(
        "desk", "ws://h:1/ws", os="linux-desktop", capabilities=["linux", "desktop", "gui", "mousepad"]
    )
    pc = AgentProfile("pc", "ws://h:1/ws", os="windows", capabilities=["windows", "desktop", "gui"])
    for profile in (box, desk, pc):
        profile.status = DeviceStatus.IDLE
    return [box.to_dict(), desk.to_dict(), pc.to_dict()]


def test_each_device_line_names_its_kind_and_capabilities() -> None:
    assert format_device_info(profiles()).splitlines() == [
        "- box (os: linux; linux, shell, files)",
        "- desk (os: linux-desktop; linux, desktop, gui, mousepad)",
        "- pc (os: windows; windows, desktop, gui)",
    ]


def test_the_creation_prompt_sends_gui_tasks_to_gui_devices() -> None:
    prompter = ConstellationPrompterFactory.create_prompter("creation")
    system = prompter.system_prompt_construction("type the disk usage into mousepad")
    user = prompter.user_prompt_construction("type the disk usage into mousepad", profiles())
    assert "a task in a window or app (gui) goes to a device with gui" in system
    assert "- desk (os: linux-desktop; linux, desktop, gui, mousepad)" in user
