"""Write every report of a Galaxy run into its log folder."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic_core import to_jsonable_python

from starweave.redaction import redact

from .result import write_result_json
from .trajectory import FINAL_CONSTELLATION_FILE, OUTPUT_FILE, build_trajectory_markdown
from .types import SessionSummary


@dataclass
class ReportPaths:
    """Where the reports were written (None: not written, for lack of input)."""

    output_md: Path
    result_json: Path | None = None
    constellation_json: Path | None = None


def _write_constellation(folder: Path, summary: SessionSummary, secrets: Iterable[str] = ()) -> Path | None:
    constellation = summary.final_constellation
    if constellation is None:
        return None
    target = folder / FINAL_CONSTELLATION_FILE
    if isinstance(constellation, dict):
        text = json.dumps(to_jsonable_python(constellation, fallback=str), indent=2, ensure_ascii=False)
    else:
        text = constellation.to_json()
    # Task results are device output: they may hold anything a command printed.
    target.write_text(redact(text, secrets), encoding="utf-8")
    return target


def write_reports(
    folder: str | Path, summary: SessionSummary | None = None, secrets: Iterable[str] = ()
) -> ReportPaths:
    """Write ``constellation.json`` and ``result.json`` (when a summary is given), then
    ``output.md`` (trajectory, Gantt chart, metrics) from whatever the folder holds. ``secrets``
    (and anything shaped like an API key) are masked in what is written.

    Blocking file work: from async code call :func:`write_reports_async`.
    """
    secrets = list(secrets)  # used three times below
    base = Path(folder)
    base.mkdir(parents=True, exist_ok=True)
    paths = ReportPaths(output_md=base / OUTPUT_FILE)
    if summary is not None:
        paths.constellation_json = _write_constellation(base, summary, secrets)
        paths.result_json = write_result_json(base, summary, secrets)
    paths.output_md.write_text(redact(build_trajectory_markdown(base), secrets), encoding="utf-8")
    return paths


async def write_reports_async(
    folder: str | Path, summary: SessionSummary | None = None, secrets: Iterable[str] = ()
) -> ReportPaths:
    """:func:`write_reports` on a worker thread, so the event loop keeps running."""
    return await asyncio.to_thread(write_reports, folder, summary, list(secrets))
