"""serialize_event / serialize_value: bus events as the page reads them (spec B §9)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel

from starweave.galaxy.constellation import TaskConstellation, TaskStar, TaskStarLine
from starweave.galaxy.events import DeviceEvent, EventType, TaskEvent
from starweave.galaxy.types import ExecutionResult
from starweave.galaxy.webui.serializer import serialize_event, serialize_value, summarize_event


def constellation() -> TaskConstellation:
    c = TaskConstellation(constellation_id="c1", name="demo")
    c.add_tasks([TaskStar(task_id="a", description="first"), TaskStar(task_id="b", description="second")])
    c.add_dependencies([TaskStarLine("a", "b", line_id="l1")])
    return c


def test_values_follow_the_reference_chain() -> None:
    @dataclass
    class Point:
        x: int
        when: datetime

    class Model(BaseModel):
        name: str

    class HasToDict:
        def to_dict(self) -> dict[str, int]:
            return {"k": 1}

    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    value = {
        "n": 1,
        "s": "x",
        "none": None,
        "when": when,
        "items": (1, [2, 3]),
        "point": Point(1, when),
        "model": Model(name="m"),
        "custom": HasToDict(),
        "error": ValueError("bad"),
        "other": object,
    }
    out = serialize_value(value)
    assert out["when"] == "2026-01-02T03:04:05+00:00"
    assert out["items"] == [1, [2, 3]]
    assert out["point"] == {"x": 1, "when": "2026-01-02T03:04:05+00:00"}
    assert out["model"] == {"name": "m"}
    assert out["custom"] == {"k": 1}
    assert out["error"] == "ValueError: bad"
    assert out["other"] == str(object)
    json.dumps(out)  # all of it is JSON


def test_a_task_event_is_flat_with_its_constellation_in_full() -> None:
    result = ExecutionResult("a", "completed", result="done", device_id="d1")
    event = TaskEvent(
        EventType.TASK_COMPLETED,
        "orchestrator_1",
        123.0,
        {"constellation_id": "c1", "constellation": constellation()},
        task_id="a",
        status="completed",
        result=result,
    )
    out = serialize_event(event)
    assert out["event_type"] == "task_completed" and out["source_id"] == "orchestrator_1"
    assert out["timestamp"] == 123.0 and out["task_id"] == "a" and out["status"] == "completed"
    assert out["result"]["result"] == "done" and out["error"] is None
    dag = out["data"]["constellation"]
    assert set(dag["tasks"]) == {"a", "b"} and dag["tasks"]["a"]["description"] == "first"
    (line,) = dag["dependencies"].values()
    assert (line["from_task_id"], line["to_task_id"]) == ("a", "b")
    json.dumps(out)


def test_the_snapshot_form_keeps_a_summary_of_the_constellation() -> None:
    event = TaskEvent(EventType.TASK_STARTED, "o", data={"constellation": constellation()}, task_id="a")
    out = summarize_event(event)
    assert out["data"]["constellation"] == {
        "constellation_id": "c1",
        "name": "demo",
        "state": "ready",
        "task_count": 2,
        "dependency_count": 1,
    }
    assert out["task_id"] == "a"


def test_a_device_event_carries_every_device() -> None:
    info = {"device_id": "d1", "status": "idle", "last_heartbeat": datetime(2026, 1, 1, tzinfo=UTC)}
    event = DeviceEvent(
        EventType.DEVICE_STATUS_CHANGED,
        "device_manager.d1",
        data={"event_name": "device_status_changed", "device_count": 1},
        device_id="d1",
        device_status="idle",
        device_info=info,
        all_devices={"d1": info},
    )
    out = serialize_event(event)
    assert out["device_status"] == "idle"
    assert out["all_devices"]["d1"]["last_heartbeat"] == "2026-01-01T00:00:00+00:00"
