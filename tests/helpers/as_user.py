"""Run shell commands through a Landlock session as an unprivileged user, in a process of its own:
as root the tests drop to ``nobody`` (uid 65534) with setpriv, otherwise they already are one.

The child process prints one JSON object: ``{"probe": [ok, why], "results": [...]}`` where each
result is what ``run_command`` returned for one command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import pytest

NOBODY = 65534
REPO = Path(__file__).resolve().parents[2]
CHILD = r"""
import asyncio, json, sys
from starweave.config.models import ShellConfig
from starweave.tools.servers.shell.runner import run_command
from starweave.tools.sandbox.choice import probe_landlock_sync
from starweave.tools.servers.shell.session import ShellSession

workspace, commands = sys.argv[1], json.loads(sys.argv[2])
probe = probe_landlock_sync(False)
results = []
if probe[0]:
    session = ShellSession(ShellConfig(workspace=workspace, sandbox="landlock"), sandbox="landlock")
    for line in commands:
        results.append(asyncio.run(run_command(line, session=session, timeout=60)))
print(json.dumps({"probe": probe, "results": results}))
"""


def _interpreter() -> str | None:
    """A Python of this version that ``nobody`` can run (this one may live under /root)."""
    if os.geteuid() != 0:
        return sys.executable
    for candidate in (f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}", "/usr/bin/python3"):
        if os.path.exists(candidate):
            version = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
            )
            if version.stdout.strip() == str(tuple(sys.version_info[:2])):
                return candidate
    return None


def user_folder() -> Path:
    """A fresh folder the unprivileged user owns, in a place it can reach (not below /root)."""
    folder = Path(tempfile.mkdtemp(prefix="starweave-user-"))
    if os.geteuid() == 0:
        os.chown(folder, NOBODY, NOBODY)
    folder.chmod(0o755)
    return folder


def give_to_user(*paths: Path) -> None:
    """Make ``paths`` (and what is below them) the unprivileged user's."""
    if os.geteuid() != 0:
        return
    for path in paths:
        for item in [path, *path.rglob("*")]:
            os.lchown(item, NOBODY, NOBODY)


def run_as_user(workspace: Path, commands: list[str], timeout: float = 300) -> list[dict[str, Any]]:
    """Run ``commands`` one after the other in a Landlock session of ``workspace`` as an unprivileged
    user; skips the test where that cannot be done here."""
    python = _interpreter()
    if python is None:
        pytest.skip("no Python of this version that an unprivileged user can run")
    site = sysconfig.get_paths()["purelib"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(workspace.parent), "PYTHONPATH": f"{REPO}:{site}"}
    argv = [python, "-c", CHILD, str(workspace), json.dumps(commands)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv is not installed")
        argv = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, cwd="/")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if not report["probe"][0]:
        pytest.skip(f"Landlock does not work here for a normal user: {report['probe'][1]}")
    results: list[dict[str, Any]] = report["results"]
    return results
