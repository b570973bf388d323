from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from starweave.galaxy.reports import write_reports

if TYPE_CHECKING:
    from conftest import LogFolder


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starweave.galaxy.reports", *args], capture_output=True, text=True, timeout=60
    )


async def test_cli_writes_the_report(log_folder: LogFolder, tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    done = run(str(log_folder.path), "-o", str(target), "--no-tasks")
    assert done.returncode == 0, done.stderr
    assert "Steps: 2  Cost: $0.0040  Time: 2.50s" in done.stdout
    text = target.read_text()
    assert "### Step 2" in text and "Detailed Task Information" not in text


def test_cli_fails_without_response_log(tmp_path: Path) -> None:
    done = run(str(tmp_path))
    assert done.returncode == 1 and "No response.log" in done.stderr


async def test_secrets_are_masked(log_folder: LogFolder) -> None:
    summary = log_folder.summary()
    summary.request = "use token hunter2-secret-value please"
    paths = write_reports(log_folder.path, summary, secrets=["hunter2-secret-value"])
    assert paths.result_json is not None
    assert "hunter2-secret-value" not in paths.result_json.read_text()
    assert "****" in paths.result_json.read_text()
