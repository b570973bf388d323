"""A batch plan's object copied into the workspace: only what a sandboxed command could read, never
through a symlink, never over a different file."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.errors import ConfigError
from starweave.session.plan_objects import check_object, object_guard, place_in_workspace
from starweave.tools.confine.paths import PathGuard


def handed(source: Path, workspace: Path) -> PathGuard:
    """The rules of a batch whose plans (and objects) are in ``source``'s folder."""
    return object_guard(workspace, (), source.parent)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "plans" / "draft.txt"
    path.parent.mkdir()
    path.write_text("first line\n", encoding="utf-8")
    return path


def test_the_object_is_copied_and_no_temporary_file_is_left(tmp_path: Path, source: Path) -> None:
    workspace = tmp_path / "ws"
    placed = place_in_workspace(source, workspace, handed(source, workspace))
    assert placed == workspace / "draft.txt" and not placed.is_symlink()
    assert placed.read_text() == "first line\n"
    assert [p.name for p in workspace.iterdir()] == ["draft.txt"]
    # An equal regular file is kept; a different one is never overwritten.
    assert place_in_workspace(source, workspace, handed(source, workspace)) == placed
    placed.write_text("changed\n")
    with pytest.raises(ConfigError, match="differs"):
        place_in_workspace(source, workspace, handed(source, workspace))
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
        place_in_workspace(source, workspace, handed(source, workspace))
    assert not outside.exists()
    assert (workspace / "draft.txt").is_symlink()


def test_a_symlink_to_an_equal_file_is_not_handed_over(tmp_path: Path, source: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "draft.txt").symlink_to(source)
    with pytest.raises(ConfigError, match="symlink"):
        place_in_workspace(source, workspace, handed(source, workspace))


@pytest.mark.parametrize("object_path", ["/etc/shadow", "/root/.aws/credentials", "/proc/self/environ"])
def test_an_object_the_sandbox_hides_is_refused_and_nothing_is_made(tmp_path: Path, object_path: str) -> None:
    workspace = tmp_path / "ws"
    with pytest.raises(
        ConfigError,
        match=r"the plan's object .* is not used \(nothing copied or opened\): reading .* is refused",
    ):
        place_in_workspace(Path(object_path), workspace, object_guard(workspace))
    assert not workspace.exists()


def test_a_link_next_to_the_plan_is_judged_by_its_target(tmp_path: Path, source: Path) -> None:
    (source.parent / "innocent.txt").symlink_to("/etc/shadow")
    (source.parent / "fine.txt").symlink_to(source)
    workspace = tmp_path / "ws"
    with pytest.raises(ConfigError, match="/etc/shadow"):
        place_in_workspace(source.parent / "innocent.txt", workspace, handed(source, workspace))
    assert not workspace.exists()
    # A link to an ordinary file of the plan folder is copied as a file under the link's name.
    placed = place_in_workspace(source.parent / "fine.txt", workspace, handed(source, workspace))
    assert not placed.is_symlink() and placed.read_text() == "first line\n"


def test_an_object_its_permissions_keep_from_the_sandbox_is_refused(tmp_path: Path, source: Path) -> None:
    source.chmod(0)
    workspace = tmp_path / "ws"
    with pytest.raises(ConfigError, match=r"permission denied"):
        place_in_workspace(source, workspace, handed(source, workspace))
    assert not workspace.exists()


def test_an_object_the_sandbox_can_read_is_copied_without_set_id_bits(tmp_path: Path, source: Path) -> None:
    source.chmod(0o4755)
    workspace = tmp_path / "ws"
    placed = place_in_workspace(source, workspace, handed(source, workspace))
    assert placed.stat().st_mode & 0o7777 == 0o755
    assert placed.stat().st_mtime_ns == source.stat().st_mtime_ns
    # Outside the plan folder, anywhere the sandbox shows: copied too.
    system = place_in_workspace(Path("/usr/lib/os-release"), workspace, object_guard(workspace))
    assert system.read_bytes() == Path("/usr/lib/os-release").read_bytes()


def test_the_plan_folder_is_readable_unless_it_holds_secrets(tmp_path: Path, source: Path) -> None:
    workspace = tmp_path / "ws"
    assert str(source.parent) in object_guard(workspace, (), source.parent).read_roots
    for folder in ("/", "/root", "/etc", "/tmp", "/home", "/dev/shm", "/proc/self/fdinfo"):
        assert object_guard(workspace, (), Path(folder)).read_roots == [], folder
    # A plan folder inside a private tree (/tmp here) is readable; next to it, nothing is.
    stray = tmp_path / "stray.txt"
    stray.write_text("not handed over\n")
    with pytest.raises(ConfigError, match=r"/tmp, which sandboxed commands do not share"):
        place_in_workspace(stray, workspace, object_guard(workspace, (), source.parent))


def test_an_object_for_an_application_is_checked_the_same_way(tmp_path: Path, source: Path) -> None:
    workspace = tmp_path / "ws"
    (source.parent / "alias.txt").symlink_to(source.name)
    assert check_object(source.parent / "alias.txt", handed(source, workspace)) == source
    with pytest.raises(ConfigError, match=r"/etc/shadow is not used .*sensitive system path"):
        check_object(Path("/etc/shadow"), handed(source, workspace))
    with pytest.raises(ConfigError, match=r"nowhere\.txt: no such file"):
        check_object(source.parent / "nowhere.txt", handed(source, workspace))
