"""The workspace folder: created when missing, never a system folder, a home or a home's dot-folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import ToolError
from starweave.tools.servers import resolve_workspace


def test_workspace_is_created_and_absolute(tmp_path: Path) -> None:
    folder = resolve_workspace(tmp_path / "a" / "b")
    assert folder.is_dir() and folder.is_absolute()


@pytest.mark.parametrize("folder", ["/", "/etc", "/usr", "/tmp", "~", "/usr/local", "~/.ssh", "~/.config/x"])
def test_system_folders_and_home_are_refused(folder: str) -> None:
    with pytest.raises(ToolError, match="refusing to use"):
        resolve_workspace(Path(folder))


def test_unrestricted_mode_may_use_them() -> None:
    assert resolve_workspace(Path("/tmp"), mode="unrestricted") == Path("/tmp").resolve()


def test_a_file_is_not_a_workspace(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(ToolError, match="not a folder"):
        resolve_workspace(tmp_path / "f")


def test_a_refused_folder_is_not_created(tmp_path: Path) -> None:
    target = Path.home() / ".starweave-test-never-created"
    with pytest.raises(ToolError, match="dot-folder"):
        resolve_workspace(target)
    assert not target.exists()
