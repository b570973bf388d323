"""The program a command really runs decides its rule (PATH lookup and every symlink followed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from starweave.errors import PolicyViolation
from starweave.tools.servers.shell.paths import PathGuard
from starweave.tools.servers.shell.targets import resolve_target


def _installed(name: str) -> str:
    found = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
    if found is None:
        pytest.skip(f"{name} is not installed here")
    return os.path.realpath(found)


def test_a_link_is_judged_by_what_it_points_to(workspace: Path) -> None:
    guard = PathGuard(str(workspace))
    bash = _installed("bash")
    (workspace / "b").mkdir()
    os.symlink(bash, workspace / "b" / "cat")
    target = resolve_target("b/cat", str(workspace), guard)
    assert target.name == "bash" and target.real == bash and not target.in_workspace


def test_names_a_program_answers_to_keep_their_rule(workspace: Path) -> None:
    guard = PathGuard(str(workspace))
    awk = resolve_target("awk", str(workspace), guard)
    assert awk.name == "awk" and os.path.basename(awk.real) in ("mawk", "gawk", "original-awk")
    assert resolve_target("/usr/bin/awk", str(workspace), guard).name == "awk"
    python = resolve_target("python3", str(workspace), guard)
    assert python.name == "python3" and os.path.basename(python.real).startswith("python3")
    if os.path.exists("/etc/alternatives/awk"):
        assert resolve_target("/etc/alternatives/awk", str(workspace), guard).name == "awk"


def test_workspace_programs_and_foreign_folders(workspace: Path, tmp_path: Path) -> None:
    guard = PathGuard(str(workspace))
    assert resolve_target("./run.sh", str(workspace), guard).in_workspace
    with pytest.raises(PolicyViolation, match="only programs from"):
        resolve_target(str(tmp_path / "outside" / "target.txt"), str(workspace), guard)
    missing = resolve_target("no-such-tool-here", str(workspace), guard)
    assert missing.real == "" and missing.name == "no-such-tool-here"
