"""The batch summary: verdicts read from evaluation.log, summary.json written as the run logs are."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from starweave.session.batch import SUMMARY_FILE, BatchRequest, _finish, _verdict
from starweave.session.console import ConsoleView
from starweave.session.plans import RunMode

KEY = "azure-key-0123456789abcdef"


def test_a_malformed_evaluation_line_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "evaluation.log").write_text(
        '{"complete": "yes"}\nnot json at all\n["a list"]\n"a string"\n\n', encoding="utf-8"
    )
    assert _verdict(tmp_path) == "yes"
    (tmp_path / "evaluation.log").write_text("{broken\n", encoding="utf-8")
    assert _verdict(tmp_path) == "-"
    assert _verdict(tmp_path / "missing") == "-"


def test_summary_json_replaces_a_planted_symlink_and_holds_no_secret(tmp_path: Path) -> None:
    folder = tmp_path / "logs" / "nightly"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside.json"
    outside.write_text("untouched", encoding="utf-8")
    (folder / SUMMARY_FILE).symlink_to(outside)
    row = {"task": "a", "status": "FINISH", "steps": 1, "time": 0.1, "cost": 0.0, "evaluation": "-"}
    rows = [{**row, "request": f"use the key {KEY}", "error": ""}]
    view = ConsoleView(console=Console(file=(tmp_path / "console.txt").open("w"), width=140))
    summary = _finish(view, folder, "nightly", BatchRequest(RunMode.BATCH, tmp_path / "plans"), rows, [KEY])
    assert outside.read_text() == "untouched"
    written = folder / SUMMARY_FILE
    assert not written.is_symlink()
    assert KEY not in written.read_text() and KEY not in json.dumps(summary)
    assert json.loads(written.read_text())["plans"][0]["task"] == "a"
