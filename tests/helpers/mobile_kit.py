"""The mobile tools tests' device: ``fake_adb_min.py`` as the adb binary, and its record of calls."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from starweave.tools.mobile import Adb

FAKE_ADB = Path(__file__).with_name("fake_adb_min.py")


@dataclass
class FakeDevice:
    """An :class:`Adb` on the stand-in program plus the calls it recorded."""

    adb: Adb
    log: Path

    def calls(self) -> list[dict[str, Any]]:
        """Every recorded call: ``{"argv": [...], "remote": [...] | None}`` in order."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def remote(self) -> list[list[str]]:
        """The remote command lines of the ``adb shell`` calls, as the device's shell splits them."""
        return [c["remote"] for c in self.calls() if c["remote"] is not None]


def fake_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, serial: str | None = "emulator-5554"
) -> FakeDevice:
    """A FakeDevice recording into ``tmp_path`` (the stand-in reads its settings from the environment)."""
    log = tmp_path / "adb_calls.jsonl"
    monkeypatch.setenv("FAKE_ADB_LOG", str(log))
    wrapper = tmp_path / "adb"
    # A wrapper runs the stand-in with this interpreter, whatever python3 is on PATH.
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_ADB}" "$@"\n')
    wrapper.chmod(0o755)
    return FakeDevice(Adb(str(wrapper), serial, timeout=20.0), log)
