"""Which Landlock holds for whom: a normal user's commands get no PID namespace, so Landlock without
signal scoping (ABI < 6) is refused for them, and doctor says which case holds on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.config.models import ShellConfig
from starweave.doctor import sandbox_status
from starweave.errors import SandboxUnavailable
from starweave.tools.sandbox import choice as sandbox
from starweave.tools.sandbox import landlock


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Fresh probe caches; bubblewrap reported missing, so that Landlock is what auto would take."""
    monkeypatch.setattr(sandbox, "_landlock_cache", {})
    monkeypatch.setattr(sandbox, "_chosen", {})
    monkeypatch.setattr(sandbox, "probe_bwrap_sync", lambda allow_network: (False, "not installed"))
    return monkeypatch


def _as(monkeypatch: pytest.MonkeyPatch, uid: int, abi: int) -> None:
    monkeypatch.setattr(landlock, "landlock_abi", lambda: abi)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: uid)


def test_a_normal_user_without_signal_scoping_is_refused(machine: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _as(machine, 1000, 5)
    ok, why = sandbox.probe_landlock_sync(False)
    assert not ok and "ABI 5" in why and "signal" in why
    for setting in ("auto", "landlock"):
        with pytest.raises(SandboxUnavailable, match="signal"):
            sandbox.choose_sandbox(ShellConfig(workspace=str(tmp_path), sandbox=setting))


def test_doctor_says_which_landlock_case_holds(machine: pytest.MonkeyPatch, tmp_path: Path) -> None:
    shell = ShellConfig(workspace=str(tmp_path))
    machine.setattr(sandbox, "probe_landlock_sync", lambda allow_network: (True, ""))
    _as(machine, 0, 4)
    assert "own PID, IPC and mount namespaces" in sandbox_status(shell)["Landlock as root"]
    _as(machine, 1000, 7)
    assert "made by the supervisor" in sandbox_status(shell)["Landlock as this user"]
    _as(machine, 1000, 5)
    assert sandbox_status(shell)["Landlock as this user"].startswith("refused: Landlock ABI 5")
