from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from starweave.galaxy.constellation import DependencyType, TaskStar
from starweave.galaxy.events import AgentEvent, EventBus, EventType
from starweave.galaxy.observers import SessionMetricsObserver

if TYPE_CHECKING:
    from conftest import Synth

E = EventType


async def run_known_sequence(synth: type[Synth]) -> SessionMetricsObserver:
    bus = EventBus()
    metrics = SessionMetricsObserver("galaxy_session_s_task")
    bus.subscribe(metrics)
    c = synth.diamond()
    added = synth.diamond()
    added.add_task(TaskStar(task_id="t5"))
    retyped = synth.diamond()
    retyped.add_task(TaskStar(task_id="t5"))
    retyped.update_dependency("t2_t4", dependency_type=DependencyType.COMPLETION_ONLY)
    events = [
        synth.constellation_event(
            E.CONSTELLATION_STARTED,
            100.0,
            constellation=c,
            total_tasks=4,
            processing_start_time=98.0,
            processing_end_time=99.5,
            processing_duration=1.5,
        ),
        synth.task_event(E.TASK_STARTED, "t1", 100.0),
        synth.task_event(E.TASK_COMPLETED, "t1", 103.0, c),
        synth.task_event(E.TASK_STARTED, "t2", 103.0),
        synth.task_event(E.TASK_STARTED, "t3", 103.5),
        synth.task_event(E.TASK_COMPLETED, "t3", 104.5, c),
        synth.task_event(E.TASK_FAILED, "t2", 107.0, c, error="device dropped"),
        synth.constellation_event(
            E.CONSTELLATION_MODIFIED,
            108.0,
            old_constellation=synth.diamond(),
            new_constellation=added,
            on_task_id=["t2", "t3"],
            modification_type="Edited by constellation_agent",
            processing_duration=0.5,
        ),
        synth.constellation_event(
            E.CONSTELLATION_MODIFIED,
            109.0,
            old_constellation=added,
            new_constellation=retyped,
            on_task_id=["t2"],
        ),
        synth.task_event(E.TASK_STARTED, "t4", 110.0),
        synth.task_event(E.TASK_COMPLETED, "t4", 112.0, c),
        synth.constellation_event(E.CONSTELLATION_COMPLETED, 115.0, constellation=c, total_tasks=4),
        AgentEvent(E.AGENT_RESPONSE, "agent", 116.0, {}, agent_name="constellation_agent"),
    ]
    for event in events:
        await bus.publish_event(event)
    return metrics


async def test_raw_counters_and_timings(synth: type[Synth]) -> None:
    m = (await run_known_sequence(synth)).get_metrics()
    assert m["session_id"] == "galaxy_session_s_task"
    assert (m["task_count"], m["completed_tasks"], m["failed_tasks"]) == (4, 3, 1)
    assert m["total_execution_time"] == pytest.approx(10.0)
    assert m["task_timings"]["t2"] == {"start": 103.0, "end": 107.0, "duration": 4.0}
    timing = m["constellation_timings"]["c1"]
    assert timing["start_time"] == 100.0 and timing["end_time"] == 115.0 and timing["duration"] == 15.0
    assert timing["processing_duration"] == 1.5
    assert timing["initial_statistics"]["total_tasks"] == 4
    assert timing["final_statistics"]["constellation_id"] == "c1"
    assert m["total_constellation_time"] == pytest.approx(15.0)
    mods = m["constellation_modifications"]["c1"]
    assert [r["timestamp"] for r in mods] == [108.0, 109.0]
    assert mods[0]["on_task_id"] == ["t2", "t3"]
    assert mods[0]["modification_type"] == "Edited by constellation_agent"
    assert mods[1]["modification_type"] == "unknown"
    assert mods[0]["changes"]["added_tasks"] == ["t5"]
    assert mods[1]["changes"]["modified_dependencies"] == ["t2->t4"]
    assert mods[0]["new_statistics"]["total_tasks"] == 5


async def test_computed_statistics(synth: type[Synth]) -> None:
    m = (await run_known_sequence(synth)).get_metrics()
    assert m["task_statistics"] == {
        "total_tasks": 4,
        "completed_tasks": 3,
        "failed_tasks": 1,
        "success_rate": 0.75,
        "failure_rate": 0.25,
        "average_task_duration": pytest.approx(2.5),
        "min_task_duration": pytest.approx(1.0),
        "max_task_duration": pytest.approx(4.0),
        "total_task_execution_time": pytest.approx(10.0),
    }
    assert m["constellation_statistics"] == {
        "total_constellations": 1,
        "completed_constellations": 1,
        "failed_constellations": 0,
        "success_rate": 1.0,
        "average_constellation_duration": 15.0,
        "min_constellation_duration": 15.0,
        "max_constellation_duration": 15.0,
        "total_constellation_time": 15.0,
        "average_tasks_per_constellation": 4.0,
    }
    assert m["modification_statistics"] == {
        "total_modifications": 2,
        "constellations_modified": 1,
        "average_modifications_per_constellation": 2.0,
        "max_modifications_for_single_constellation": 2,
        "most_modified_constellation": "c1",
        "modifications_per_constellation": {"c1": 2},
        "modification_types_breakdown": {"tasks_added": 1, "dependency_properties_updated": 1},
    }


async def test_empty_session_has_zero_statistics() -> None:
    m = SessionMetricsObserver("s").get_metrics()
    assert m["task_statistics"]["success_rate"] == 0.0
    assert m["constellation_statistics"]["average_tasks_per_constellation"] == 0.0
    assert m["modification_statistics"]["most_modified_constellation"] is None


async def test_failed_constellation_and_task_without_start(synth: type[Synth]) -> None:
    metrics = SessionMetricsObserver("s")
    c = synth.diamond()
    await metrics.on_event(synth.constellation_event(E.CONSTELLATION_STARTED, 10.0, constellation=c))
    await metrics.on_event(synth.task_event(E.TASK_FAILED, "t1", 11.0, error="unknown device"))
    await metrics.on_event(
        synth.constellation_event(E.CONSTELLATION_FAILED, 14.0, constellation=c, error="no devices")
    )
    m = metrics.get_metrics()
    assert m["failed_tasks"] == 1 and m["task_timings"]["t1"] == {"end": 11.0}
    assert m["task_statistics"]["average_task_duration"] == 0.0
    assert m["failed_constellations"] == 1 and m["completed_constellations"] == 0
    assert m["constellation_timings"]["c1"]["duration"] == 4.0
    assert m["constellation_timings"]["c1"]["error"] == "no devices"
    assert m["constellation_statistics"]["success_rate"] == 0.0


async def test_get_metrics_returns_a_copy(synth: type[Synth]) -> None:
    metrics = await run_known_sequence(synth)
    first = metrics.get_metrics()
    first["task_timings"]["t1"]["duration"] = 999.0
    assert metrics.get_metrics()["task_timings"]["t1"]["duration"] == 3.0


async def test_modification_without_old_constellation_has_no_changes(synth: type[Synth]) -> None:
    metrics = SessionMetricsObserver("s")
    await metrics.on_event(
        synth.constellation_event(E.CONSTELLATION_MODIFIED, 1.0, new_constellation=synth.diamond())
    )
    m = metrics.get_metrics()
    assert m["constellation_modifications"]["c1"][0]["changes"] is None
    assert m["modification_statistics"]["modification_types_breakdown"] == {"unknown": 1}
