"""Broadcaster: bus events and WebUI messages to every open page, never slowing the publisher.

Each event is serialized and JSON-encoded once, then appended to every page's bounded queue
(:class:`PageQueue`); a per-page task (:meth:`Broadcaster.serve_page`) sends what its queue holds.
``on_event`` therefore costs the same however slow a page is: a page that cannot keep up loses its
oldest messages and is then told ``{"type": "dropped", "count": N}`` so it can ask for a snapshot.
Task events go out with their constellation summarized (see ``on_event``). The last ``history``
events (summarized) are kept for the state snapshot a reconnecting page gets.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from starweave.galaxy.events import Event, TaskEvent
from starweave.galaxy.webui.serializer import event_json

__all__ = ["DEFAULT_HISTORY", "DEFAULT_QUEUE_SIZE", "Broadcaster", "PageQueue"]

log = logging.getLogger("starweave.galaxy.webui")

DEFAULT_QUEUE_SIZE = 1000
DEFAULT_HISTORY = 200
# The shortest gap between two frames to one page: under load, a page gets at most 20 frames/s.
COALESCE_SECONDS = 0.05
# Payload keys holding the constellation as it is now (old_constellation is the one before an edit).
CURRENT_KEYS = ("new_constellation", "constellation", "updated_constellation")


def encode(message: dict[str, Any]) -> str:
    """One JSON text frame."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


class PageQueue:
    """A page's outgoing messages: bounded, the oldest dropped first, drops counted."""

    def __init__(self, maxsize: int = DEFAULT_QUEUE_SIZE) -> None:
        if maxsize < 1:
            raise ValueError("a page queue holds at least one message")
        self._items: deque[str] = deque()
        self.maxsize = maxsize
        self.dropped = 0  # dropped since the page was last told
        self.closed = False
        self._ready = asyncio.Event()

    def __len__(self) -> int:
        return len(self._items)

    def put(self, text: str) -> None:
        """Queue ``text``; when full, the oldest message goes (counted in ``dropped``)."""
        if self.closed:
            return
        if len(self._items) >= self.maxsize:
            self._items.popleft()
            self.dropped += 1
        self._items.append(text)
        self._ready.set()

    async def wait(self) -> None:
        """Return once a message is waiting (or the page is closed)."""
        while not self._items and not self.closed:
            self._ready.clear()
            await self._ready.wait()

    def take(self) -> list[str]:
        """Every waiting message, preceded by a ``dropped`` notice when some were lost."""
        batch = list(self._items)
        self._items.clear()
        if self.dropped:
            batch.insert(0, encode({"type": "dropped", "count": self.dropped}))
            self.dropped = 0
        return batch

    def close(self) -> None:
        """Wake the sender so it can stop."""
        self.closed = True
        self._ready.set()


class Broadcaster:
    """An event-bus observer fanning serialized events out to the open pages."""

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE, history: int = DEFAULT_HISTORY) -> None:
        self.queue_size = queue_size
        self.pages: set[PageQueue] = set()
        # Kept as JSON text: encoded once, parsed again only for a state snapshot (rare).
        self.events: deque[str] = deque(maxlen=history)
        self.events_sent = 0
        self.constellation: Any = None  # the latest constellation object seen in an event

    async def on_event(self, event: Event) -> None:
        """Serialize ``event`` once, remember it, and queue it for every page."""
        for key in CURRENT_KEYS:
            if event.data.get(key) is not None:
                self.constellation = event.data[key]
                break
        summary = event_json(event, summarize=True)
        self.events.append(summary)
        if self.pages:
            # Task events carry the DAG as a summary: a full copy per task event would cost a
            # serialization of the whole constellation per task (milliseconds at 200 tasks); the
            # page updates the task from task_id/status/result/error, and gets the full DAG from
            # the constellation events and the state snapshot.
            self.publish_text(summary if isinstance(event, TaskEvent) else event_json(event))
        self.events_sent += 1

    def history(self) -> list[dict[str, Any]]:
        """The last events (summarized), oldest first, for a state snapshot."""
        return [json.loads(text) for text in self.events]

    def publish(self, message: dict[str, Any]) -> None:
        """Queue a WebUI message (chat, snapshot, error) for every page."""
        self.publish_text(encode(message))

    def publish_text(self, text: str) -> None:
        """Queue an encoded message for every page."""
        for page in self.pages:
            page.put(text)

    def clear(self) -> None:
        """Forget the events and the constellation (session reset)."""
        self.events.clear()
        self.constellation = None

    def open_page(self, first: list[dict[str, Any]] | None = None) -> PageQueue:
        """A queue for a new page holding ``first``; it receives every message published from now
        on (so a snapshot in ``first`` and the events after it fit together)."""
        page = PageQueue(self.queue_size)
        for message in first or []:
            page.put(encode(message))
        self.pages.add(page)
        return page

    def close_page(self, page: PageQueue) -> None:
        """Stop queueing for ``page``."""
        self.pages.discard(page)
        page.close()

    @staticmethod
    async def serve_page(
        page: PageQueue, send: Callable[[str], Awaitable[None]], coalesce: float = COALESCE_SECONDS
    ) -> None:
        """Send ``page``'s messages with ``send`` until the page is closed (or sending fails).

        One message goes out as itself; several waiting together go out as one frame holding a
        JSON array of them, in order. Frames to one page are at least ``coalesce`` seconds apart:
        a lone event after a quiet spell goes out at once, while a burst (a large DAG running on
        fast devices) becomes a few frames per page instead of one per event, so 20 open pages
        cost the orchestration a few sends per page, not one per event.
        """
        loop = asyncio.get_running_loop()
        last_sent = -coalesce
        while not page.closed:
            await page.wait()
            pause = last_sent + coalesce - loop.time()
            if pause > 0:
                await asyncio.sleep(pause)
            batch = page.take()
            if not batch:
                continue
            await send(batch[0] if len(batch) == 1 else "[" + ",".join(batch) + "]")
            last_sent = loop.time()
