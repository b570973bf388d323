"""A batch plan's object is used only when a command in the sandbox could read it.

The attacks of the review: plans whose object is ``/etc/shadow``, ``~/.aws/credentials`` or
``~/.config/gh/hosts.yml`` (in a HOME of the test's own), a file of a folder the sandboxes mask
though its name looks ordinary, and another user's private file. Each is refused with one line
naming the object and why, and nothing is copied; ordinary objects still are. The whole batch runs
(real plan files, the real LinuxAgent on recorded answers, real workspace and log folders).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.linux_replay import answer
from integration.test_batch_mode import run_plans, write_plan, write_replay

AS_ROOT = os.geteuid() == 0
CANARY = "swc-" + secrets.token_hex(8)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own with the two credentials files of the review."""
    folder = tmp_path / "home"
    for name in (".aws/credentials", ".config/gh/hosts.yml"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"token {CANARY}\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def masked() -> Iterator[Path | None]:
    """An ordinary-looking file in a folder of /run, which the sandboxes hide whole (root only)."""
    if not AS_ROOT or not os.access("/run", os.W_OK):
        yield None
        return
    folder = Path("/run") / f"starweave-test-{secrets.token_hex(4)}"
    folder.mkdir()
    (folder / "report.txt").write_text(f"masked {CANARY}\n")
    try:
        yield folder / "report.txt"
    finally:
        shutil.rmtree(folder)


async def test_objects_a_sandboxed_command_cannot_read_are_refused_and_nothing_is_copied(
    tmp_path: Path, home: Path, masked: Path | None
) -> None:
    plans = tmp_path / "plans"
    refused = {
        "shadow": "/etc/shadow",
        "aws": "~/.aws/credentials",
        "gh": "~/.config/gh/hosts.yml",
        "climb": "../../../../../../etc/shadow",
    }
    if masked is not None:
        refused["masked"] = str(masked)
    if AS_ROOT:
        theirs = plans / "theirs.txt"
        plans.mkdir()
        theirs.write_text(f"theirs {CANARY}\n")
        theirs.chmod(0o600)
        os.chown(theirs, 12345, 12345)
        refused["theirs"] = "theirs.txt"
    for name, target in refused.items():
        write_plan(plans, f"bad_{name}", {"task": "show me the file", "object": target})
    (plans / "draft.txt").write_text("first line\n")
    write_plan(plans, "ok_draft", {"task": "look at the draft", "object": "draft.txt"})
    write_plan(plans, "ok_system", {"task": "look at the release", "object": "/usr/lib/os-release"})
    for name in ("ok_draft", "ok_system"):
        write_replay(tmp_path / "replay", name, [answer(None, "FINISH", result="seen")])

    summary, console = await run_plans(tmp_path, plans)

    rows = {row["task"]: row for row in summary["plans"]}
    for name, target in refused.items():
        row = rows[f"bad_{name}"]
        assert row["status"] == "ERROR", (name, row)
        error = row["error"]
        assert "\n" not in error and "is not used" in error and "is refused" in error, (name, error)
        assert Path(target).name in error, (name, error)
    assert rows["ok_draft"]["status"] == "FINISH" and rows["ok_system"]["status"] == "FINISH"
    workspace = tmp_path / "ws"
    # Only the ordinary objects were copied, byte for byte; no secret reached a file, the console
    # or the summary.
    assert sorted(p.name for p in workspace.iterdir()) == ["draft.txt", "os-release"]
    assert (workspace / "draft.txt").read_text() == "first line\n"
    release = await asyncio.to_thread(Path("/usr/lib/os-release").read_bytes)
    assert (workspace / "os-release").read_bytes() == release
    assert CANARY not in console
    assert CANARY not in (tmp_path / "logs" / "nightly" / "summary.json").read_text()
    saved = json.loads((tmp_path / "logs" / "nightly" / "summary.json").read_text())
    assert {r["task"]: r["status"] for r in saved["plans"]} == {t: r["status"] for t, r in rows.items()}
