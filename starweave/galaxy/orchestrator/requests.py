"""The text sent to a device for one task: its request string plus its predecessors' results.

The reference sends only ``task.to_request_string()`` and relies on the agent copying results
into successors' descriptions; we also append a short "Results of prerequisite tasks" block so a
successor has its inputs even when the agent did not (or could not) edit it in time.
"""

from __future__ import annotations

import json
from typing import Any

from starweave.agents.common import PREREQUISITE_RESULTS_HEADER
from starweave.agents.linux.world import evidence_text
from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStatus
from starweave.galaxy.types import ExecutionResult

MAX_RESULT_CHARS = 2000
"""Each predecessor's result is cut to this many characters (a device prompt must stay small)."""

RESULTS_HEADER = PREREQUISITE_RESULTS_HEADER


# Keys of a device session's outcome (``session_result``: task, request, status, result, error,
# steps, log_path...): only its ``result``, the device agent's answer, is meant for other tasks.
_SESSION_KEYS = frozenset({"task", "request", "status", "result"})


def result_payload(result: Any) -> Any:
    """The device's answer inside whatever a task stores as its result.

    A task's result is the ExecutionResult itself while it lives in the orchestrator, and the
    ExecutionResult's dictionary after a ``to_dict``/``from_dict`` round trip (agent edits).
    """
    if isinstance(result, ExecutionResult):
        return result.result
    if isinstance(result, dict) and "result" in result and "status" in result and "task_id" in result:
        return result["result"]
    return result


def device_answer(result: Any) -> Any:
    """The device agent's own answer: :func:`result_payload` without the session's bookkeeping
    (its log path, step count, model...), which would only crowd a small model's prompt."""
    payload = result_payload(result)
    if isinstance(payload, dict) and payload.keys() >= _SESSION_KEYS:
        return payload["result"]
    return payload


def result_text(result: Any, limit: int = MAX_RESULT_CHARS) -> str:
    """A one-block text form of a result (the device agent's answer), truncated to ``limit`` characters."""
    payload = device_answer(result)
    if payload is None or payload == "":
        text = "(no result)"
    elif isinstance(payload, str):
        text = payload
    else:
        try:
            text = json.dumps(payload, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(payload)
    text = text.strip()
    if len(text) > limit:
        text = f"{text[:limit]}... [truncated, {len(text) - limit} more characters]"
    return text


def workspace_text(result: Any) -> str:
    """What the device's workspace held after the task, read there after the run (its session's
    ``files`` and ``absent``; see ``world.evidence_text``), as one line; "" when the device reported
    none. This, not the device agent's own account, is what a reader can rely on."""
    text = evidence_text(result_payload(result))
    return f"[{text}]" if text else ""


def absent_claims(task: TaskStar, result: Any) -> list[str]:
    """The files the task's description names that the device's answer names too, but that its
    workspace never held (neither before the task nor after): a claim the world contradicts."""
    payload = result_payload(result)
    if not isinstance(payload, dict):
        return []
    absent = [str(n) for n in payload.get("absent") or []]
    description = task.to_request_string()
    return [n for n in absent if n in description]


def _predecessors(task: TaskStar, constellation: TaskConstellation) -> list[TaskStar]:
    seen: dict[str, TaskStar] = {}
    for line in constellation.get_task_dependencies(task.task_id):
        source = constellation.get_task(line.from_task_id)
        if source is not None:
            seen.setdefault(source.task_id, source)
    return list(seen.values())


def build_task_request(
    task: TaskStar, constellation: TaskConstellation, max_result_chars: int = MAX_RESULT_CHARS
) -> str:
    """``task.to_request_string()`` followed by each ended predecessor's (truncated) result.

    Cost is proportional to the task's in-degree, never to the size of the constellation.
    """
    request = task.to_request_string()
    if task.task_id not in constellation.dag:
        return request
    blocks: list[str] = []
    for source in _predecessors(task, constellation):
        if source.status is TaskStatus.COMPLETED:
            body = result_text(source.result, max_result_chars)
            seen = workspace_text(source.result)
            body = f"{body} {seen}" if seen else body
        elif source.status is TaskStatus.FAILED:
            body = f"(failed: {source.error})"
        else:
            continue
        blocks.append(f"- {source.name} ({source.task_id}): {body}")
    if not blocks:
        return request
    return "\n".join([request, "", RESULTS_HEADER, *blocks])
