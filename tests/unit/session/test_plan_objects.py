"""A batch plan's object copied into the workspace: never through a symlink, never over a different file."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import ConfigError
from starweave.session.plan_objects import place_in_workspace


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "plans" / "draft.txt"
    path.parent.mkdir()
    path.write_text("first line\n", encoding="utf-8")
    return path


def test_the_object_is_copied_and_no_temporary_file_is_left(tmp_path: Path, source: Path) -> None:
    workspace = tmp_path / "ws"
    placed = place_in_workspace(source, workspace)
    assert placed == workspace / "draft.txt" and not placed.is_symlink()
    assert placed.read_text() == "first line\n"
    assert [p.name for p in workspace.iterdir()] == ["draft.txt"]
    # An equal regular file is kept; a different one is never overwritten.
    assert place_in_workspace(source, workspace) == placed
    placed.write_text("changed\n")
    with pytest.raises(ConfigError, match="differs"):
        place_in_workspace(source, workspace)
    assert placed.read_text() == "changed\n"


def test_a_dangling_symlink_is_refused_and_nothing_is_written_through_it(
    tmp_path: Path, source: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside" / "planted.txt"
    outside.parent.mkdir()
    (workspace / "draft.txt").symlink_to(outside)
    with pytest.raises(ConfigError, match="symlink"):
        place_in_workspace(source, workspace)
    assert not outside.exists()
    assert (workspace / "draft.txt").is_symlink()


def test_a_symlink_to_an_equal_file_is_not_handed_over(tmp_path: Path, source: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "draft.txt").symlink_to(source)
    with pytest.raises(ConfigError, match="symlink"):
        place_in_workspace(source, workspace)
