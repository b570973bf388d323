"""The bubblewrap mounts follow the hidden paths as they are now, not as the cached search saw them."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from starweave.tools.confine.hidden import HiddenPath
from starweave.tools.sandbox.bwrap import BwrapLayout, filesystem_args


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder outside /tmp (bubblewrap's private /tmp needs no masks, so those are skipped)."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="sw-bwrap-"))
    yield folder
    shutil.rmtree(folder)


def _layout(tmp_path: Path, hidden: list[HiddenPath]) -> BwrapLayout:
    ws = tmp_path / "ws"
    ws.mkdir()
    return BwrapLayout(workspace=str(ws), cwd=str(ws), home="/tmp/home", hidden=hidden)


def test_a_hidden_path_removed_since_the_search_is_not_mounted_over(place: Path) -> None:
    gone = place / "secrets" / ".ssh"  # listed by the search, removed before the command
    kept = place / "kept.env"
    kept.write_text("K=1")
    args = filesystem_args(_layout(place, [HiddenPath(str(gone), True), HiddenPath(str(kept), False)]))
    assert str(gone) not in args
    assert args[args.index(str(kept)) - 2 : args.index(str(kept))] == ["--ro-bind", "/dev/null"]


def test_a_hidden_file_replaced_by_a_folder_gets_the_folder_mask(place: Path) -> None:
    changed = place / "token"
    changed.mkdir()  # the search saw a file here
    args = filesystem_args(_layout(place, [HiddenPath(str(changed), False)]))
    at = args.index(str(changed))
    assert args[at - 1] == "--tmpfs" and ["--remount-ro", str(changed)] == args[-2:]
