from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from starweave.galaxy.events import AgentEvent, EventBus, EventType
from starweave.galaxy.observers import EVENTS_LOG, SessionLogObserver, event_to_dict

if TYPE_CHECKING:
    from conftest import Synth

E = EventType


async def test_every_event_becomes_one_json_line(tmp_path: Path, synth: type[Synth]) -> None:
    observer = SessionLogObserver(tmp_path)
    bus = EventBus()
    bus.subscribe(observer)
    c = synth.diamond()
    await bus.publish_event(synth.constellation_event(E.CONSTELLATION_STARTED, 1.0, constellation=c))
    await bus.publish_event(synth.task_event(E.TASK_STARTED, "t1", 2.0))
    done = synth.task_event(E.TASK_COMPLETED, "t1", 3.0, c, result=synth.result("t1", "dev_x"))
    await bus.publish_event(done)
    await bus.publish_event(synth.task_event(E.TASK_FAILED, "t2", 4.0, error=RuntimeError("lost device")))
    await bus.publish_event(synth.device_event("dev_a", "busy", 5.0))
    await bus.publish_event(
        AgentEvent(
            E.AGENT_RESPONSE, "a", 6.0, {}, agent_name="constellation_agent", output_data={"cost": 0.1}
        )
    )
    lines = [json.loads(line) for line in (tmp_path / EVENTS_LOG).read_text().splitlines()]
    assert [line["event_type"] for line in lines] == [
        "constellation_started",
        "task_started",
        "task_completed",
        "task_failed",
        "device_status_changed",
        "agent_response",
    ]
    started, begun, completed, failed, device, agent = lines
    # Constellations are summarised, not copied whole.
    assert started["data"]["constellation"] == {
        "constellation_id": "c1",
        "name": "diamond",
        "state": c.state.value,
        "task_count": 4,
        "dependency_count": 4,
    }
    # TASK_STARTED does not carry the device: it comes from the latest constellation seen.
    assert (begun["device_id"], begun["task_name"]) == ("dev_a", "step t1")
    assert completed["device_id"] == "dev_x"  # the result's device wins
    assert completed["result"]["status"] == "completed"
    assert failed["error"] == "RuntimeError: lost device"
    assert failed["device_id"] == "dev_b"
    assert device["all_devices"]["dev_a"]["status"] == "busy"
    assert agent["output_data"] == {"cost": 0.1} and agent["event_class"] == "AgentEvent"


async def test_full_constellations_and_file_path(tmp_path: Path, synth: type[Synth]) -> None:
    target = tmp_path / "sub" / "stream.jsonl"
    observer = SessionLogObserver(target, full_constellations=True)
    await observer.on_event(
        synth.constellation_event(E.CONSTELLATION_STARTED, 1.0, constellation=synth.diamond())
    )
    line = json.loads(target.read_text())
    assert sorted(line["data"]["constellation"]["tasks"]) == ["t1", "t2", "t3", "t4"]


def test_event_to_dict_keeps_subclass_fields(synth: type[Synth]) -> None:
    record = event_to_dict(synth.device_event("dev_q", "idle", 7.0))
    assert record["device_id"] == "dev_q" and record["device_status"] == "idle" and record["timestamp"] == 7.0
