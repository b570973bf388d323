"""The record of workspaces handed to agents, and the refusal of configuration inside one."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from starweave.config import find_config_dir, load_config
from starweave.config.known_workspaces import (
    WORKSPACES_FILE,
    config_dir_conflict,
    remember_workspace,
    remembered_workspaces,
)
from starweave.config.state import state_home
from starweave.errors import ConfigError


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "home")}


def test_state_home_follows_xdg_else_home(tmp_path: Path) -> None:
    assert state_home({"XDG_STATE_HOME": "/x"}) == Path("/x/starweave")
    assert state_home({"HOME": "/h"}) == Path("/h/.local/state/starweave")


def test_a_workspace_is_remembered_once(tmp_path: Path, env: dict[str, str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    remember_workspace(ws, env)
    remember_workspace(ws, env)
    assert remembered_workspaces(env) == [ws]
    assert (state_home(env) / WORKSPACES_FILE).read_text() == f"{ws}\n"


def test_folders_that_are_gone_are_dropped_at_the_next_write(tmp_path: Path, env: dict[str, str]) -> None:
    gone, kept, new = tmp_path / "gone", tmp_path / "kept", tmp_path / "new"
    for folder in (gone, kept, new):
        folder.mkdir()
    remember_workspace(gone, env)
    remember_workspace(kept, env)
    gone.rmdir()
    remember_workspace(new, env)
    assert remembered_workspaces(env) == [kept, new]


def test_an_unwritable_state_folder_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "file").write_text("")
    with caplog.at_level(logging.WARNING):
        remember_workspace(tmp_path, {"XDG_STATE_HOME": str(tmp_path / "file")})
    assert "cannot record the workspace" in caplog.text


@pytest.mark.parametrize(
    ("config_rel", "workspace_rel", "refused"),
    [
        ("proj/config", "proj", True),  # the configuration inside the workspace
        ("proj", "proj", True),  # the same folder
        ("proj/config", "proj/config/ufo", True),  # the workspace is where the files load from
        ("proj/config", "proj/config/galaxy/x", True),
        ("proj/config", "proj/config/work", False),  # a folder beside ufo/ loads nothing
        ("proj/config", "proj/ws", False),  # siblings
        ("proj/config", "elsewhere", False),
    ],
)
def test_which_configuration_folders_an_agent_could_write(
    tmp_path: Path, config_rel: str, workspace_rel: str, refused: bool
) -> None:
    config, workspace = tmp_path / config_rel, tmp_path / workspace_rel
    if refused:
        with pytest.raises(ConfigError, match="refusing this configuration folder"):
            config_dir_conflict(config, [workspace])
    else:
        config_dir_conflict(config, [workspace])


def test_configuration_in_a_remembered_workspace_is_not_loaded(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "config" / "ufo").mkdir(parents=True)
    (project / "config" / "ufo" / "system.yaml").write_text("SHELL:\n  MODE: unrestricted\n")
    assert load_config(project / "config", env).system.shell.mode == "unrestricted"
    remember_workspace(project, env)
    monkeypatch.chdir(project)
    for explicit in (None, project / "config"):
        with pytest.raises(ConfigError, match=f"the workspace {project}"):
            find_config_dir(explicit, env)
    with pytest.raises(ConfigError, match="refusing this configuration folder"):
        load_config(None, {**env, "STARWEAVE_CONFIG_DIR": str(project / "config")})


def test_a_workspace_override_holding_the_configuration_is_refused_whatever_the_mode(
    tmp_path: Path, env: dict[str, str]
) -> None:
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    (tmp_path / "config" / "ufo" / "system.yaml").write_text("SHELL:\n  MODE: unrestricted\n")
    overrides = {"system": {"SHELL": {"WORKSPACE": str(tmp_path)}}}
    with pytest.raises(ConfigError, match="refusing this configuration folder"):
        load_config(tmp_path / "config", env, overrides=overrides)
    elsewhere = {"system": {"SHELL": {"WORKSPACE": str(tmp_path / "ws")}}}
    assert load_config(tmp_path / "config", env, overrides=elsewhere).system.shell.mode == "unrestricted"
