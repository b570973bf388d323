from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from starweave.galaxy.reports import (
    GalaxyTrajectory,
    build_trajectory_markdown,
    write_reports,
    write_reports_async,
)

if TYPE_CHECKING:
    from conftest import LogFolder


def mermaid_blocks(text: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)\n```", text, flags=re.S)


def section(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


async def test_steps_have_before_and_after_graphs(log_folder: LogFolder) -> None:
    text = GalaxyTrajectory(log_folder.path).to_markdown()
    assert text.startswith("# Galaxy Trajectory Report")
    assert "- **User Request**: collect logs from three machines and summarise" in text
    assert "- **Total Steps**: 2" in text and "- **Total Cost**: $0.0040" in text
    step2 = section(text, "### Step 2", "## Task Execution Timeline")
    before = section(step2, "##### BEFORE", "##### AFTER")
    after = step2.split("##### AFTER", 1)[1]
    (before_graph,) = mermaid_blocks(before)
    (after_graph,) = mermaid_blocks(after)
    assert before_graph.startswith("flowchart TD") and after_graph.startswith("flowchart TD")
    assert "t5 (pending)" in after_graph and "t5" not in before_graph
    assert "t3 (failed)" in before_graph
    assert "**Changes**: tasks_added: +1 task" in step2
    assert "- **Function**: `add_task`" in step2
    assert "| t5 | retry t3 on dev_b | pending | dev_b | - |" in after
    assert "| t1_t2 | t1 | t2 | unconditional | [OK] | - |" in before
    assert "| dev_c | linux | idle | shell | - |" in step2
    step1 = section(text, "### Step 1", "### Step 2")
    assert "_No constellation._" in section(step1, "##### BEFORE", "##### AFTER")
    assert "constellation_created: +4 tasks, +4 dependencies" in step1


async def test_gantt_has_one_section_per_device(log_folder: LogFolder) -> None:
    text = GalaxyTrajectory(log_folder.path).to_markdown()
    timeline = section(text, "## Task Execution Timeline", "## Final Constellation State")
    (gantt,) = mermaid_blocks(timeline)
    assert gantt.startswith("gantt")
    sections = re.findall(r"^    section (\S+)$", gantt, flags=re.M)
    assert sections == ["dev_a", "dev_b", "dev_c"]
    assert "step t3 (t3) :crit, bar2, 1700000002000, 1700000004000" in gantt
    assert "step t2 (t2) :done, bar1, 1700000002000, 1700000005000" in gantt


async def test_write_reports_writes_every_file(log_folder: LogFolder) -> None:
    paths = await write_reports_async(log_folder.path, log_folder.summary())
    assert paths.result_json is not None and paths.constellation_json is not None
    result = json.loads(paths.result_json.read_text())
    assert result["constellation"] == {
        "id": "c1",
        "name": "diamond",
        "task_count": 5,
        "dependency_count": 4,
        "state": "executing",
    }
    saved = json.loads(paths.constellation_json.read_text())
    assert sorted(saved["tasks"]) == ["t1", "t2", "t3", "t4", "t5"]
    text = paths.output_md.read_text()
    assert "- **Status**: completed (agent: FINISH)" in text
    assert "| success_rate | 0.667 |" in section(text, "### Task Statistics", "###")
    final = text.split("## Final Constellation State", 1)[1]
    assert "retry t3 on dev_b" in mermaid_blocks(final)[0]
    assert "## Warnings" not in text


async def test_corrupt_lines_are_skipped_with_warnings(log_folder: LogFolder) -> None:
    response = log_folder.path / "response.log"
    lines = response.read_text().splitlines()
    response.write_text("\n".join([lines[0], '{"request": "half a li', "", "[1, 2]", lines[1]]) + "\n")
    with (log_folder.path / "events.log").open("a") as handle:
        handle.write("\x00garbage\n")
    (log_folder.path / "result.json").write_text("{not json")
    trajectory = GalaxyTrajectory(log_folder.path)
    assert trajectory.total_steps == 2
    text = trajectory.to_markdown(log_folder.path / "output.md")
    assert (log_folder.path / "output.md").read_text() == text
    warnings = text.split("## Warnings", 1)[1]
    assert "response.log line 2: not valid JSON" in warnings
    assert "response.log line 4: not a JSON object" in warnings
    assert re.search(r"events.log line \d+: not valid JSON", warnings)
    assert "result.json: not valid JSON" in warnings
    assert len(mermaid_blocks(text)) >= 4  # both steps still rendered, plus Gantt and final state


async def test_bad_constellations_render_a_parse_error(log_folder: LogFolder) -> None:
    legacy = {
        "constellation_id": "old",
        "state": "executing",
        "tasks": "{'t1': <TaskStar>}",
        "dependencies": "[]",
    }
    lines = [
        {
            "request": "r",
            "status": "CONTINUE",
            "constellation_before": "{broken",
            "constellation_after": json.dumps(legacy),
        },
        {
            "request": "r",
            "status": "FINISH",
            "constellation_after": {
                "tasks": {},
                "dependencies": {"l1": {"from_task_id": "a", "to_task_id": "b"}},
            },
        },
    ]
    (log_folder.path / "response.log").write_text("".join(json.dumps(x) + "\n" for x in lines))
    text = GalaxyTrajectory(log_folder.path).to_markdown()
    assert "###### ⚠️ Parse Error" in text
    assert "legacy_serialization_bug" in text and "json_decode_error" in text
    assert "unexpected_error: cannot rebuild the constellation" in text
    assert "_Dependency graph unavailable" in text
    assert "response.log line 1 constellation_before: json_decode_error" in text


def test_missing_and_empty_logs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"No response\.log"):
        GalaxyTrajectory(tmp_path)
    assert "[WARN] No trajectory data found" in build_trajectory_markdown(tmp_path)
    (tmp_path / "response.log").write_text("\n\n")
    text = GalaxyTrajectory(tmp_path).to_markdown()
    assert "[WARN] No trajectory data found" in text and "## Final Constellation State" in text
    paths = write_reports(tmp_path / "nothing_here")
    assert paths.result_json is None and "[WARN] No trajectory data found" in paths.output_md.read_text()


async def test_options_leave_out_details(log_folder: LogFolder) -> None:
    full = GalaxyTrajectory(log_folder.path).to_markdown()
    lean = GalaxyTrajectory(log_folder.path).to_markdown(
        include_constellation_details=False, include_task_details=False, include_device_info=False
    )
    assert "Detailed Task Information" in full and "Detailed Task Information" not in lean
    assert "Dependency Details" not in lean and "Connected Devices" not in lean
    assert len(lean) < len(full)


async def test_gantt_falls_back_to_the_final_constellation(log_folder: LogFolder) -> None:
    (log_folder.path / "events.log").unlink()
    write_reports(log_folder.path, log_folder.summary())
    text = (log_folder.path / "output.md").read_text()
    (gantt,) = mermaid_blocks(section(text, "## Task Execution Timeline", "## Final Constellation State"))
    assert re.findall(r"^    section (\S+)$", gantt, flags=re.M) == ["dev_a", "dev_b", "dev_c"]


ODD_VALUES: list[object] = [None, "", "x", 1, 2.5, True, [], {}, [1, "a"], {"a": 1}, {"a": {"b": None}}]
STEP_KEYS = [
    "request",
    "agent_name",
    "agent_type",
    "status",
    "round_num",
    "round_step",
    "total_time",
    "cost",
    "execution_times",
    "action",
    "thought",
    "constellation_before",
    "constellation_after",
    "device_info",
]


def test_odd_field_types_never_crash(tmp_path: Path) -> None:
    lines = [{key: value} for key in STEP_KEYS for value in ODD_VALUES]
    lines.append({key: ODD_VALUES[-1] for key in STEP_KEYS})
    (tmp_path / "response.log").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "events.log").write_text(
        "".join(
            json.dumps({"event_type": "task_started", "task_id": v, "timestamp": v}) + "\n"
            for v in ODD_VALUES
        )
    )
    (tmp_path / "result.json").write_text(
        json.dumps({"session_results": {"metrics": {"task_statistics": [1]}}})
    )
    text = GalaxyTrajectory(tmp_path).to_markdown()
    assert f"### Step {len(lines)}" in text


@pytest.mark.parametrize("value", ODD_VALUES)
def test_odd_result_json_never_crashes(tmp_path: Path, value: object) -> None:
    (tmp_path / "response.log").write_text(json.dumps({"request": "r"}) + "\n")
    for shape in (
        {"status": value, "session_results": value},
        {"session_results": {"metrics": value, "status": value}},
    ):
        (tmp_path / "result.json").write_text(json.dumps(shape))
        (tmp_path / "constellation.json").write_text(json.dumps({"tasks": value, "dependencies": value}))
        assert "### Step 1" in GalaxyTrajectory(tmp_path).to_markdown()
