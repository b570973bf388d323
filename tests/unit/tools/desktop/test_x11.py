"""xdotool wrapper: a search that trips over a vanishing window is repeated; other failures are errors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from starweave.errors import DesktopError
from starweave.tools.desktop.linux import x11

# A stand-in xdotool: fails with BadWindow as many times as $FAILS says, then prints a window id.
SCRIPT = """#!/bin/sh
count_file="$COUNT_FILE"
n=$(cat "$count_file" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$count_file"
if [ "$n" -le "$FAILS" ]; then
  echo "X Error of failed request:  BadWindow (invalid Window parameter)" >&2
  exit 1
fi
echo 4194305
"""


@pytest.fixture
def fake_xdotool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    exe = tmp_path / "bin" / "xdotool"
    exe.parent.mkdir()
    exe.write_text(SCRIPT)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("COUNT_FILE", str(tmp_path / "count"))
    return tmp_path / "count"


def test_a_search_hit_by_a_vanishing_window_is_repeated(
    fake_xdotool: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAILS", str(x11.SEARCH_ATTEMPTS - 1))
    assert x11.xdotool("search", "--onlyvisible", "--pid", "1").split() == ["4194305"]
    assert fake_xdotool.read_text().strip() == str(x11.SEARCH_ATTEMPTS)


def test_a_search_that_keeps_failing_is_an_error(fake_xdotool: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAILS", "99")
    with pytest.raises(DesktopError, match="BadWindow"):
        x11.xdotool("search", "--onlyvisible", "--pid", "1")
    assert fake_xdotool.read_text().strip() == str(x11.SEARCH_ATTEMPTS)


def test_other_commands_are_not_repeated(fake_xdotool: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAILS", "1")
    with pytest.raises(DesktopError, match="xdotool windowfocus 7 failed: X Error"):
        x11.xdotool("windowfocus", "7")
    assert fake_xdotool.read_text().strip() == "1"
