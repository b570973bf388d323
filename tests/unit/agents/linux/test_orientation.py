"""The LinuxAgent's view of its folder: a bounded listing read from find's output, and what ~ is."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from starweave.agents.linux.orientation import (
    MAX_SHOWN,
    folder_view,
    listing_command,
    parse_listing,
    without_log_parents,
)
from starweave.errors import PolicyViolation
from starweave.tools.confine.paths import PathGuard


def _listing(folder: Path, depth: int = 3, skip: str = "") -> str:
    line = listing_command(depth, skip)
    out = subprocess.run(["bash", "-c", line], cwd=folder, capture_output=True, text=True, check=True)
    return folder_view(without_log_parents(parse_listing(out.stdout), skip), "you are in", depth)


def test_the_view_shows_folders_files_and_sizes_a_few_levels_deep(tmp_path: Path) -> None:
    (tmp_path / "Desktop" / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "Desktop" / "todo.txt").write_text("milk\n")
    (tmp_path / "big.bin").write_bytes(b"x" * 3000)
    os.symlink("big.bin", tmp_path / "link")
    view = _listing(tmp_path)
    assert view.splitlines()[0] == "The folder you are in holds (6 entries, 3 levels deep):"
    assert "Desktop/" in view and "Desktop/todo.txt  5 B" in view and "big.bin  2.9 KB" in view
    assert "Desktop/a/b/" in view and "Desktop/a/b/c" not in view  # three levels, not four
    assert "link  (symlink)" in view


def test_the_runs_own_log_folder_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "logs [1]" / "task").mkdir(parents=True)
    (tmp_path / "logs [1]" / "task" / "request.log").write_text("{}")
    (tmp_path / "notes.txt").write_text("n")
    view = _listing(tmp_path, skip=str(tmp_path / "logs [1]" / "task"))
    assert "request.log" not in view and "task" not in view and "notes.txt  1 B" in view
    # the folder made only to hold it is not the user's either (the model would write there)
    assert "logs [1]/" not in view and view.startswith("The folder you are in holds (1 entry")
    (tmp_path / "logs [1]" / "earlier").mkdir()
    view = _listing(tmp_path, skip=str(tmp_path / "logs [1]" / "task"))
    assert "logs [1]/" in view and "logs [1]/earlier/" in view
    (tmp_path / "notes.txt").unlink()
    (tmp_path / "logs [1]" / "earlier").rmdir()
    assert _listing(tmp_path, skip=str(tmp_path / "logs [1]" / "task")) == "The folder you are in is empty."


def test_a_big_tree_shows_the_shallowest_entries_and_says_how_many_more(tmp_path: Path) -> None:
    (tmp_path / "deep").mkdir()
    for i in range(MAX_SHOWN + 10):
        (tmp_path / "deep" / f"f{i:03d}").write_text("")
    (tmp_path / "top.txt").write_text("")
    view = _listing(tmp_path)
    lines = view.splitlines()
    assert "top.txt  0 B" in lines and "deep/" in lines
    assert len(lines) == 1 + MAX_SHOWN + 1 and lines[-1] == "… and 12 more"


def test_an_empty_folder_and_one_level_after_a_failure(tmp_path: Path) -> None:
    assert _listing(tmp_path) == "The folder you are in is empty."
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x").write_text("")
    assert _listing(tmp_path, depth=1) == "The folder you are in holds (1 entry):\nsub/"


@pytest.mark.parametrize("path", ["~", "~/Desktop/todo.txt"])
def test_file_tools_say_what_tilde_is_here(tmp_path: Path, path: str) -> None:
    policy = PathGuard(str(tmp_path))
    for check in (policy.check_read, policy.check_write):
        with pytest.raises(PolicyViolation, match=r"~ is not the user's home here .* the workspace"):
            check(path)
    assert policy.check_read("~notes") == str(tmp_path / "~notes")  # a name that starts with ~
