"""Fixtures for the shell/file server unit tests: a real workspace with hostile furniture."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a few files, a symlink pointing out of it and a hard link to an outside file."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "target.txt").write_text("outside\n")
    (ws / "notes.txt").write_text("alpha 1\nbeta 200\ngamma 3\n")
    (ws / "script.py").write_text("print('hi from script')\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(ws / "run.sh", 0o755)
    (ws / ".env").write_text("OPENAI_API_KEY=sk-test\n")
    (ws / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (ws / "demo").mkdir()
    os.symlink(outside, ws / "link_out")
    os.symlink(outside / "target.txt", ws / "outlink.txt")
    os.link(outside / "target.txt", ws / "hard.txt")
    return ws
