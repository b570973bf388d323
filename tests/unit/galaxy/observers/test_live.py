from __future__ import annotations

import asyncio
import io
from typing import TYPE_CHECKING

from rich.console import Console

from starweave.galaxy.constellation import TaskConstellation, TaskStar
from starweave.galaxy.events import AgentEvent, EventBus, EventType
from starweave.galaxy.observers import LiveViewObserver

if TYPE_CHECKING:
    from conftest import Synth

E = EventType


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def response(prompt: object, completion: object, cost: object) -> AgentEvent:
    return AgentEvent(
        E.AGENT_RESPONSE,
        "constellation_agent",
        0.0,
        {},
        agent_name="constellation_agent",
        agent_type="constellation",
        output_type="response",
        output_data={
            "status": "CONTINUE",
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost": cost,
        },
    )


async def drive(view: LiveViewObserver, clock: FakeClock, synth: type[Synth]) -> TaskConstellation:
    bus = EventBus()
    bus.subscribe(view)
    c = synth.diamond()
    await bus.publish_event(synth.device_event("dev_a", "idle"))
    await bus.publish_event(synth.device_event("dev_b", "busy"))
    await bus.publish_event(response(100, 50, 0.0123))
    await bus.publish_event(
        synth.constellation_event(E.CONSTELLATION_STARTED, 0.0, constellation=c, total_tasks=4)
    )
    clock.now += 1.5
    c.start_task("t1")
    await bus.publish_event(synth.task_event(E.TASK_STARTED, "t1", 0.0))
    clock.now += 2.0
    c.mark_task_completed("t1", True, "ok")
    await bus.publish_event(
        synth.task_event(E.TASK_COMPLETED, "t1", 0.0, c, result=synth.result("t1", "dev_a"))
    )
    await bus.publish_event(synth.task_event(E.TASK_FAILED, "t2", 0.0, c, error="device dropped"))
    return c


async def test_plain_lines_when_not_a_terminal(synth: type[Synth]) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=120)
    clock = FakeClock()
    view = LiveViewObserver(console, clock=clock)
    async with view:
        assert not view.interactive
        await drive(view, clock, synth)
    text = out.getvalue()
    assert "\x1b[" not in text  # no cursor movement or colour codes in a pipe
    lines = text.splitlines()
    assert "[    1.5s] task t1 started on dev_a" in lines
    assert "[    3.5s] task t1 completed on dev_a (0 newly ready)" in lines
    assert "[    3.5s] task t2 failed on dev_b: device dropped" in lines
    assert "[    0.0s] device dev_b: busy" in lines
    assert any(line.endswith("constellation c1 started: 4 tasks") for line in lines)


async def test_live_view_in_a_recording_console(synth: type[Synth]) -> None:
    console = Console(file=io.StringIO(), force_terminal=True, record=True, width=150)
    clock = FakeClock()
    view = LiveViewObserver(console, title="demo run", clock=clock)
    async with view:
        assert view.interactive
        await drive(view, clock, synth)
    text = console.export_text()
    assert "demo run" in text
    assert "⏱ 3.5s" in text
    assert "tokens 150 (100 in / 50 out)" in text and "cost $0.0123" in text
    assert "tasks 1/4" in text  # t2's failure is in the event stream only, not in this constellation
    assert "[t1] step t1 · dev_a (completed)" in text
    assert "[t2] step t2 · dev_b (failed)" in text  # event status wins over the stale pending
    assert "[t4] step t4 · dev_a (waiting_dependency)" in text
    assert "Layer 2" in text
    assert "dev_a" in text and "idle" in text and "busy" in text


async def test_usage_sums_numbers_only() -> None:
    view = LiveViewObserver(Console(file=io.StringIO(), force_terminal=False))
    await view.on_event(response(10, 5, 0.5))
    await view.on_event(response(1, 2, 0.25))
    await view.on_event(response("many", None, True))
    assert view.usage == {"prompt_tokens": 11.0, "completion_tokens": 7.0, "cost": 0.75}


async def test_large_dag_is_summarised(synth: type[Synth]) -> None:
    c = TaskConstellation("big", name="big")
    for i in range(30):
        c.add_task(TaskStar(task_id=f"x{i}", target_device_id="dev_z"))
    c.start_task("x7")
    view = LiveViewObserver(Console(file=io.StringIO(), force_terminal=False), max_tasks=5)
    await view.on_event(synth.constellation_event(E.CONSTELLATION_STARTED, 0.0, constellation=c))
    console = Console(file=io.StringIO(), record=True, width=120)
    console.print(view.render())
    text = console.export_text()
    assert "Layer" not in text
    assert "Running" in text and "[x7]" in text and "[x8]" not in text
    assert "pending: 29" in text and "running: 1" in text


async def test_ticker_refreshes_and_stops() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, record=True, width=100)
    view = LiveViewObserver(console, refresh_interval=0.01)
    view.start()
    assert view._ticker is not None
    ticker = view._ticker
    await asyncio.sleep(0.05)
    view.stop()
    await asyncio.wait({ticker}, timeout=30)  # it ends once it gets its turn, however late
    assert ticker.cancelled() or ticker.done()
    assert "No constellation yet" in console.export_text()
    view.stop()  # a second stop is harmless
