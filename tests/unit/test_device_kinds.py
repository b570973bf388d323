"""The device kinds table: names, aliases, capabilities, and that client and server agree on it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from starweave.client.runner import CLIENT_PLATFORMS
from starweave.device_kinds import DEVICE_KINDS, device_capabilities, device_kind
from starweave.errors import ConfigError
from starweave.session.service import SESSION_KINDS


def test_kinds_by_name_and_alias_in_any_case() -> None:
    assert device_kind("Linux-Desktop").agent == "HostAgent"
    assert device_kind("windows").needs_display
    assert device_kind("android").name == "mobile"
    assert device_kind(" linux ").capabilities == ("linux", "shell", "files")


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(
        ConfigError, match="unknown device platform 'beos'; use one of linux, darwin, linux-desktop"
    ):
        device_kind("beos")


def test_a_desktop_announces_the_apps_it_finds_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tmp_path / "mousepad"
    app.write_text("#!/bin/sh\n")
    app.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert device_capabilities(device_kind("linux-desktop")) == [
        "linux",
        "desktop",
        "gui",
        "shell",
        "files",
        "mousepad",
    ]
    # A shell device does not look for applications, even when they are installed.
    assert device_capabilities(device_kind("linux")) == ["linux", "shell", "files"]
    assert os.environ["PATH"] == str(tmp_path)


def test_client_and_server_serve_the_same_kinds_all_of_them_known() -> None:
    assert set(CLIENT_PLATFORMS) == set(SESSION_KINDS)
    assert set(SESSION_KINDS) <= set(DEVICE_KINDS)
    # Every known kind is served: the phone's MobileAgent sessions too.
    assert set(SESSION_KINDS) == set(DEVICE_KINDS)
    assert SESSION_KINDS["mobile"].agent_name == DEVICE_KINDS["mobile"].agent == "MobileAgent"
