"""GalaxyTrajectory: the markdown trajectory report (``output.md``) of a Galaxy log folder.

Built from files alone (spec B §8.5, E §13): ``response.log`` (one line per agent step, see
:class:`~starweave.galaxy.reports.types.ResponseLogLine`), and when present ``evaluation.log``,
``events.log`` (the Gantt chart), ``constellation.json`` (the final state) and ``result.json``
(status and metrics). Graphs are Mermaid blocks (``to_mermaid``) instead of the reference's PNGs.
A corrupt line or constellation is skipped and listed under "Warnings"; it never aborts the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starweave.errors import InvalidArgumentError
from starweave.galaxy.observers.changes import calculate_constellation_changes, format_change_summary
from starweave.galaxy.observers.session_log import EVENTS_LOG

from .gantt import gantt_chart, timings_from_constellation, timings_from_events
from .loading import ParsedConstellation, parse_constellation, read_json, read_jsonl
from .markdown import (
    cell,
    constellation_section,
    details,
    device_rows,
    device_table,
    fence,
    json_block,
    stats_table,
)
from .result import RESULT_FILE

RESPONSE_LOG = "response.log"
EVALUATION_LOG = "evaluation.log"
FINAL_CONSTELLATION_FILE = "constellation.json"
OUTPUT_FILE = "output.md"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class GalaxyTrajectory:
    """The steps of a Galaxy session read from its log folder.

    Raises ValueError when the folder has no ``response.log`` (as the reference does); every other
    problem becomes an entry of :attr:`warnings`.
    """

    def __init__(self, folder_path: str | Path) -> None:
        self._parse = parse_constellation
        self.folder = Path(folder_path)
        log = self.folder / RESPONSE_LOG
        if not log.exists():
            raise InvalidArgumentError(f"No {RESPONSE_LOG} in {self.folder}: nothing to report")
        loaded = read_jsonl(log)
        self.step_log: list[dict[str, Any]] = loaded.records
        self.warnings: list[str] = list(loaded.warnings)
        self.evaluation_log: dict[str, Any] | None = self._read_object(EVALUATION_LOG)
        self.result: dict[str, Any] | None = self._read_object(RESULT_FILE)
        events = read_jsonl(self.folder / EVENTS_LOG)
        self.events: list[dict[str, Any]] = events.records
        self.warnings += events.warnings

    def _read_object(self, name: str) -> dict[str, Any] | None:
        data, warning = read_json(self.folder / name)
        if warning:
            self.warnings.append(warning)
        return data

    # ------------------------------------------------------------------ summary properties
    @property
    def request(self) -> str:
        """The user request (first step's, else result.json's)."""
        for step in self.step_log:
            if step.get("request"):
                return str(step["request"])
        return str((self.result or {}).get("request") or "")

    @property
    def total_steps(self) -> int:
        """Number of steps read."""
        return len(self.step_log)

    @property
    def total_cost(self) -> float:
        """Sum of the steps' ``cost``."""
        return sum(_number(step.get("cost")) for step in self.step_log)

    @property
    def total_time(self) -> float:
        """Sum of the steps' ``total_time``."""
        return sum(_number(step.get("total_time")) for step in self.step_log)

    def parsed(self, value: Any, where: str) -> ParsedConstellation:
        """A logged constellation, its parse problem recorded as a warning."""
        parsed = self._parse(value)
        if parsed.error:
            self.warnings.append(f"{where}: {parsed.error}")
        return parsed

    def final_constellation(self) -> ParsedConstellation:
        """``constellation.json`` if present, else the last step's AFTER (else BEFORE) constellation."""
        data = self._read_object(FINAL_CONSTELLATION_FILE)
        if data is not None:
            return self.parsed(data, FINAL_CONSTELLATION_FILE)
        for step in reversed(self.step_log):
            for key in ("constellation_after", "constellation_before"):
                if step.get(key):
                    return self._parse(step[key])  # already warned about when its step was rendered
        return ParsedConstellation()

    # ------------------------------------------------------------------ markdown
    def to_markdown(
        self,
        output_path: str | Path | None = None,
        include_constellation_details: bool = True,
        include_task_details: bool = True,
        include_device_info: bool = True,
    ) -> str:
        """The report as markdown; also written to ``output_path`` when given."""
        out = ["# Galaxy Trajectory Report", "", f"**Log Directory**: `{self.folder}`", ""]
        out += self._summary()
        if self.evaluation_log:
            out += ["## Evaluation Results", ""]
            out += [
                f"- **{cell(k.replace('_', ' ').title())}**: {cell(v)}"
                for k, v in self.evaluation_log.items()
            ]
            out.append("")
        if not self.step_log:
            out += ["[WARN] No trajectory data found", ""]
        else:
            out += ["## Step-by-Step Execution", ""]
            for index, step in enumerate(self.step_log, start=1):
                out += self._step(
                    index, step, include_constellation_details, include_task_details, include_device_info
                )
        final = self.final_constellation()
        out += self._timeline(final)
        out += self._metrics()
        out += ["## Final Constellation State", ""]
        if final.data is not None:
            data = final.data
            out += [
                f"- Created: {cell(data.get('created_at'))}",
                f"- Updated: {cell(data.get('updated_at'))}",
                "",
            ]
        out += constellation_section(
            "Final Constellation", final, include_constellation_details, include_task_details, 3
        )
        if self.warnings:
            out += ["## Warnings", "", *(f"- {cell(w, 400)}" for w in self.warnings), ""]
        text = "\n".join(out).rstrip("\n") + "\n"
        if output_path is not None:
            Path(output_path).write_text(text, encoding="utf-8")
        return text

    def _summary(self) -> list[str]:
        result = self.result or {}
        out = [
            "## Executive Summary",
            "",
            f"- **User Request**: {cell(self.request)}",
            f"- **Total Steps**: {self.total_steps}",
            f"- **Total Time**: {self.total_time:.2f}s",
            f"- **Total Cost**: ${self.total_cost:.4f}",
        ]
        if result:
            session = _dict(result.get("session_results"))
            out += [
                f"- **Status**: {cell(result.get('status'))} (agent: {cell(session.get('status'))})",
                f"- **Session Time**: {_number(result.get('execution_time')):.2f}s",
            ]
        return [*out, ""]

    def _step(
        self, index: int, step: dict[str, Any], constellations: bool, tasks: bool, devices: bool
    ) -> list[str]:
        where = f"{RESPONSE_LOG} line {step.get('_line_number', '?')}"
        out = [
            f"### Step {index}",
            "",
            f"- **Agent**: {cell(step.get('agent_name'))} ({cell(step.get('agent_type'))})",
            f"- **Status**: {cell(step.get('status'))}",
            f"- **Round**: {cell(step.get('round_num'))} | **Round Step**: {cell(step.get('round_step'))}",
            f"- **Execution Time**: {_number(step.get('total_time')):.2f}s",
            f"- **Cost**: ${_number(step.get('cost')):.4f}",
        ]
        times = step.get("execution_times")
        if isinstance(times, dict):
            phases = [f"{k}: {_number(v):.2f}s" for k, v in times.items() if _number(v) > 0]
            if phases:
                out.append(f"- **Time Breakdown**: {', '.join(phases)}")
        if step.get("thought"):
            out.append(f"- **Thought**: {cell(step.get('thought'), 500)}")
        out += ["", "#### Actions Performed", ""]
        actions = step.get("action") or []
        if isinstance(actions, dict):
            actions = [actions]
        if not actions:
            out += ["_No actions._", ""]
        for action in actions if isinstance(actions, list) else []:
            if not isinstance(action, dict):
                continue
            name = action.get("function") or action.get("name") or "?"
            out += [f"- **Function**: `{cell(name)}`", ""]
            out += details("Arguments", json_block(action.get("arguments") or {}))
        before = self.parsed(step.get("constellation_before"), f"{where} constellation_before")
        after = self.parsed(step.get("constellation_after"), f"{where} constellation_after")
        if before.data is not None or after.data is not None or before.error or after.error:
            out += ["#### Constellation Evolution", ""]
            if after.data is not None and (
                before.data is not None or step.get("constellation_before") is None
            ):
                changes = calculate_constellation_changes(before.data, after.data)
                out += [f"**Changes**: {cell(format_change_summary(changes))}", ""]
            out += constellation_section("BEFORE", before, constellations, tasks)
            out += constellation_section("AFTER", after, constellations, tasks)
        if devices and step.get("device_info"):
            out += details("Connected Devices", device_table(device_rows(step.get("device_info"))))
        return out

    def _timeline(self, final: ParsedConstellation) -> list[str]:
        timings = timings_from_events(self.events)
        if not timings and final.data is not None:
            timings = timings_from_constellation(final.data)
        out = ["## Task Execution Timeline", ""]
        if not timings:
            return [*out, "_No task ran._", ""]
        return [*out, *fence(gantt_chart(timings), "mermaid"), ""]

    def _metrics(self) -> list[str]:
        metrics = _dict(_dict(self.result).get("session_results")).get("metrics")
        if not isinstance(metrics, dict) or not metrics:
            return []
        out = ["## Metrics", ""]
        for key, title in (
            ("task_statistics", "Task Statistics"),
            ("constellation_statistics", "Constellation Statistics"),
            ("modification_statistics", "Modification Statistics"),
        ):
            if isinstance(metrics.get(key), dict):
                out += stats_table(title, metrics[key])
        return out


def build_trajectory_markdown(folder: str | Path) -> str:
    """The report of ``folder``; a folder without ``response.log`` gives the reference's stub."""
    try:
        return GalaxyTrajectory(folder).to_markdown()
    except ValueError as exc:
        return f"# Galaxy Trajectory Report\n\n[WARN] No trajectory data found ({exc})\n"
