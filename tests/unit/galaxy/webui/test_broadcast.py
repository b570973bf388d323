"""Per-page queues: bounded, oldest dropped first, the page told how many it lost."""

from __future__ import annotations

import asyncio
import json

from starweave.galaxy.events import Event, EventType
from starweave.galaxy.webui.broadcast import Broadcaster, PageQueue


async def test_a_full_queue_drops_the_oldest_and_then_says_how_many() -> None:
    page = PageQueue(maxsize=3)
    for i in range(5):
        page.put(str(i))
    await page.wait()
    batch = page.take()
    assert json.loads(batch[0]) == {"type": "dropped", "count": 2}
    assert batch[1:] == ["2", "3", "4"]
    page.put("5")
    await page.wait()
    assert page.take() == ["5"]  # the count starts again


async def test_publishing_never_waits_for_a_page_that_does_not_read() -> None:
    broadcaster = Broadcaster(queue_size=10, history=5)
    stuck = broadcaster.open_page()
    for i in range(100):
        await asyncio.wait_for(broadcaster.on_event(Event(EventType.AGENT_ACTION, f"s{i}")), 0.5)
    assert len(stuck) == 10 and stuck.dropped == 90
    assert [e["source_id"] for e in broadcaster.history()] == [f"s{i}" for i in range(95, 100)]
    assert broadcaster.events_sent == 100


async def test_a_page_gets_its_first_messages_then_every_event_in_order() -> None:
    broadcaster = Broadcaster()
    page = broadcaster.open_page([{"type": "welcome"}])
    sent: list[dict[str, object]] = []
    three = asyncio.Event()

    async def send(text: str) -> None:
        frame = json.loads(text)  # one message, or several in a JSON array
        sent.extend(frame if isinstance(frame, list) else [frame])
        if len(sent) >= 3:
            three.set()

    sender = asyncio.create_task(Broadcaster.serve_page(page, send))
    await broadcaster.on_event(Event(EventType.AGENT_ACTION, "a"))
    broadcaster.publish({"type": "chat", "text": "hi"})
    await asyncio.wait_for(three.wait(), 1)
    broadcaster.close_page(page)
    await asyncio.wait_for(sender, 1)
    assert [m.get("type") or m.get("event_type") for m in sent] == ["welcome", "agent_action", "chat"]
    assert not broadcaster.pages
