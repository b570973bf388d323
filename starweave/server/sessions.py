"""SessionManager: runs server-side sessions as background tasks and keeps their results (spec D §5).

Single event loop, and no method awaits while it changes the stores, so no lock is needed. Lookups
(``get_result_by_task`` etc.) are plain dict reads and never wait for a running session.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any, Protocol

from starweave.aip.builders import task_end
from starweave.aip.messages import ClientMessage, ServerMessage, TaskStatus
from starweave.errors import CapacityError, SessionError, StarweaveError, TaskNameInUse
from starweave.server.task_names import TaskNameBook

logger = logging.getLogger(__name__)

SendFn = Callable[[ServerMessage], Awaitable[None]]
# Delivers a session's TASK_END; raises ConnectionError when the requester is gone.
ResultCallback = Callable[[str, ServerMessage], Awaitable[None]]

DEVICE_DISCONNECTED = "device_disconnected"
CONSTELLATION_DISCONNECTED = "constellation_disconnected"
USER_REQUESTED = "user_requested"
SERVER_SHUTDOWN = "server_shutdown"
# Nobody is left to receive a TASK_END for these reasons.
_SILENT_REASONS = (CONSTELLATION_DISCONNECTED, SERVER_SHUTDOWN)
CANCEL_GRACE_SECONDS = 2.0
DEFAULT_RESULT_TTL = 3600.0


class ServiceSession(Protocol):
    """What the server needs from a session (implemented by starweave.session.service)."""

    id: str
    results: dict[str, Any]

    async def run(self) -> None: ...
    def is_error(self) -> bool: ...
    def is_finished(self) -> bool: ...
    async def set_result(self, response_id: str, message: ClientMessage) -> None: ...


# Called as factory(session_id=..., task_name=..., request=..., send=..., platform=...).
ServiceSessionFactory = Callable[..., ServiceSession]
SessionEndHook = Callable[[str], None]


@dataclass(frozen=True)
class SessionRoute:
    """Who asked for a session and which device executes its commands."""

    requester_id: str | None
    target_device_id: str | None


def _cancel_error(reason: str) -> str:
    if reason == DEVICE_DISCONNECTED:
        return "Device disconnected before the task finished"
    return f"Task cancelled ({reason})"


def failure_text(results: dict[str, Any]) -> str:
    """Why a session failed, from its results, for TASK_END's ``error``: the recorded error, else
    the agent's own last answer (a LinuxAgent that gives up says why there), else its status."""
    for key in ("error", "failure"):
        if str(results.get(key) or "").strip():
            return str(results[key]).strip()
    answer = str(results.get("result") or "").strip()
    status = str(results.get("status") or "FAIL")
    if answer:
        return f"the device agent ended with status {status}: {answer}"
    return f"the device agent ended with status {status} without giving a reason"


class SessionManager:
    """Creates sessions through the injected factory, runs them, stores their TASK_END results."""

    def __init__(
        self,
        factory: ServiceSessionFactory,
        *,
        platform: str,
        max_sessions: int = 100,
        cancel_grace: float = CANCEL_GRACE_SECONDS,
        result_ttl: float = DEFAULT_RESULT_TTL,
        on_end: SessionEndHook | None = None,
        after_end: SessionEndHook | None = None,
    ) -> None:
        self._factory = factory
        self.platform = platform
        self.max_sessions = max_sessions
        self.cancel_grace = cancel_grace
        self.result_ttl = result_ttl
        self._on_end = on_end
        # Called once the session is gone and its TASK_END was sent (the dispatch queue starts the
        # device's next task then: sent earlier, it would reach the device before that TASK_END).
        self._after_end = after_end
        self.names = TaskNameBook()
        # Tasks refused before a session existed, by task name (their session id may belong to
        # another session, so they cannot share the per-session stores).
        self.refused: dict[str, ServerMessage] = {}
        self._refused_at: dict[str, float] = {}
        self._ended_at: dict[str, float] = {}
        self.sessions: dict[str, ServiceSession] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.task_ends: dict[str, ServerMessage] = {}
        self.session_id_dict: dict[str, str] = {}
        self.routes: dict[str, SessionRoute] = {}
        self._running_tasks: dict[str, asyncio.Task[None]] = {}
        self._cancellation_reasons: dict[str, str] = {}

    @property
    def active_count(self) -> int:
        """Sessions whose background task has not finished."""
        return sum(1 for task in self._running_tasks.values() if not task.done())

    def get_session(self, session_id: str) -> ServiceSession | None:
        """The live session, or None (finished sessions are removed; their results stay)."""
        return self.sessions.get(session_id)

    def get_route(self, session_id: str) -> SessionRoute | None:
        """Requester and target device of a live session."""
        return self.routes.get(session_id)

    def session_known(self, session_id: str) -> bool:
        """True when the id belongs to a live session or a stored (finished) one."""
        return session_id in self.sessions or session_id in self.task_ends or self.is_running(session_id)

    def is_running(self, session_id: str) -> bool:
        """True while the session's background task runs."""
        task = self._running_tasks.get(session_id)
        return task is not None and not task.done()

    def get_or_create_session(
        self, session_id: str, task_name: str, request: str, send: SendFn, platform: str | None = None
    ) -> ServiceSession:
        """The existing session with that id, or a new one from the factory."""
        session = self.sessions.get(session_id)
        if session is not None:
            return session
        chosen = platform or self.platform
        try:
            session = self._factory(
                session_id=session_id, task_name=task_name, request=request, send=send, platform=chosen
            )
        except StarweaveError:
            raise
        except (OSError, ValueError) as exc:  # e.g. the session's model client cannot be built
            logger.exception("Session factory failed for task '%s'", task_name)
            raise SessionError(f"Could not create a session for task '{task_name}': {exc}") from exc
        self.sessions[session_id] = session
        self.session_id_dict[task_name] = session_id
        self.names.release(task_name)
        logger.info("Created %s session: %s", chosen, session_id)
        return session

    async def execute_task_async(
        self,
        session_id: str,
        task_name: str,
        request: str,
        send: SendFn,
        platform_override: str | None = None,
        callback: ResultCallback | None = None,
        route: SessionRoute | None = None,
        claimant: str | None = None,
    ) -> str:
        """Start the session in the background and return its id at once.

        Raises TaskNameInUse when ``claimant`` may not use ``task_name`` (reserved for another
        client, or it belongs to another session), SessionError when ``session_id`` is taken or the
        factory refuses the task, CapacityError when ``max_sessions`` sessions already run.
        """
        self.check_task_name(task_name, claimant)
        if self.session_known(session_id):
            raise SessionError(f"Session '{session_id}' is already in use; use a new session_id")
        if self.active_count >= self.max_sessions:
            raise CapacityError(
                f"Server at capacity ({self.active_count} active sessions); wait for a task to "
                "finish or raise max_sessions"
            )
        session = self.get_or_create_session(session_id, task_name, request, send, platform_override)
        self.routes[session_id] = route or SessionRoute(None, None)
        task = asyncio.create_task(self._run_session_background(session_id, session, callback))
        self._running_tasks[session_id] = task
        logger.info("🚀 Started background task %s", session_id)
        return session_id

    def task_name_in_use(self, task_name: str) -> bool:
        """True when the name is reserved, belongs to a session, or has a stored refusal."""
        return task_name in self.names or task_name in self.session_id_dict or task_name in self.refused

    def reserve_task_name(self, task_name: str, client_id: str) -> None:
        """Book ``task_name`` for ``client_id`` (dispatch); raises TaskNameInUse when taken."""
        if self.task_name_in_use(task_name):
            raise TaskNameInUse(f"Task name '{task_name}' is already in use")
        self.names.reserve(task_name, client_id)

    def check_task_name(self, task_name: str, claimant: str | None) -> None:
        """Raise TaskNameInUse unless ``claimant`` may start a session named ``task_name``.

        A reserved name is for its holder only (``claimant`` None: trusted in-process caller);
        an unreserved name must be fresh.
        """
        holder = self.names.holder(task_name)
        if holder is not None:
            if claimant is not None and claimant != holder:
                raise TaskNameInUse(f"Task name '{task_name}' was dispatched to another client")
            return
        if task_name in self.session_id_dict or task_name in self.refused:
            raise TaskNameInUse(f"Task name '{task_name}' is already in use")

    def record_refusal(self, task_name: str, session_id: str, reason: str) -> ServerMessage:
        """Store a FAILED TASK_END for a task refused before its session ran; returns the message."""
        message = task_end(session_id, TaskStatus.FAILED, result={}, error=reason)
        self.names.release(task_name)
        if task_name not in self.session_id_dict:
            self.refused[task_name] = message
            self._refused_at[task_name] = time.monotonic()
        return message

    async def _run_session_background(
        self, session_id: str, session: ServiceSession, callback: ResultCallback | None
    ) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        cancelled = False
        try:
            await session.run()
        except asyncio.CancelledError:
            cancelled = True
        except Exception as exc:  # a session bug must still produce a FAILED result
            logger.exception("Session %s raised", session_id)
            await self._finish(
                session_id, session, TaskStatus.FAILED, str(exc) or type(exc).__name__, callback
            )
            return
        logger.info("⏱️ Session %s execution took %.2fs", session_id, loop.time() - started)
        # A session may swallow the CancelledError itself; the recorded reason still wins.
        if cancelled or session_id in self._cancellation_reasons:
            reason = self._cancellation_reasons.get(session_id, "unknown")
            logger.info("🛑 Session %s was cancelled (reason: %s)", session_id, reason)
            await self._finish(
                session_id,
                session,
                TaskStatus.FAILED,
                _cancel_error(reason),
                None if reason in _SILENT_REASONS else callback,
            )
            if cancelled:
                raise asyncio.CancelledError
            return
        status, error = self._status_after_run(session)
        await self._finish(session_id, session, status, error, callback)

    @staticmethod
    def _status_after_run(session: ServiceSession) -> tuple[TaskStatus, str | None]:
        if session.is_error():
            if not session.results:
                session.results = {"failure": "session ended with an error"}
            return TaskStatus.FAILED, failure_text(session.results)
        if session.is_finished():
            return TaskStatus.COMPLETED, None
        logger.warning("Session %s ended in an unknown state", session.id)
        return TaskStatus.FAILED, "Session ended in unknown state"

    async def _finish(
        self,
        session_id: str,
        session: ServiceSession,
        status: TaskStatus,
        error: str | None,
        callback: ResultCallback | None,
    ) -> None:
        message = task_end(session_id, status, result=dict(session.results or {}), error=error)
        # Persist first: HTTP polling must see the result even if the callback's send fails.
        self.results[session_id] = dict(session.results or {})
        self.task_ends[session_id] = message
        self._ended_at[session_id] = time.monotonic()
        self._notify_end(session_id)
        logger.info("Session %s completed with status %s", session_id, status.value)
        if callback is not None:
            try:
                await callback(session_id, message)
            except ConnectionError as exc:  # the requester is gone; the results are stored already
                logger.info("Result of session %s not delivered: %s", session_id, exc)
        self.sessions.pop(session_id, None)
        self.routes.pop(session_id, None)
        self._running_tasks.pop(session_id, None)
        self._notify_after_end(session_id)

    async def cancel_task(self, session_id: str, reason: str = CONSTELLATION_DISCONNECTED) -> bool:
        """Cancel a running session (waits at most ``cancel_grace`` s); False if not running.

        Idempotent: a second call (the other side disconnecting too) returns False.
        """
        task = self._running_tasks.get(session_id)
        if task is None or task.done() or session_id in self._cancellation_reasons:
            return False
        self._cancellation_reasons[session_id] = reason
        task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(task), self.cancel_grace)
        except (asyncio.CancelledError, TimeoutError):
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # we were cancelled ourselves, not just the session
            # else: cancelled as asked, or it overran the grace period and keeps unwinding alone
        self._running_tasks.pop(session_id, None)
        self._cancellation_reasons.pop(session_id, None)
        self.remove_session(session_id)
        self._notify_end(session_id)
        self._notify_after_end(session_id)
        return True

    def _notify_end(self, session_id: str) -> None:
        if self._on_end is not None:
            self._on_end(session_id)

    def _notify_after_end(self, session_id: str) -> None:
        if self._after_end is not None:
            self._after_end(session_id)

    def get_result(self, session_id: str) -> dict[str, Any] | None:
        """The stored results of a finished session."""
        return self.results.get(session_id)

    def get_result_by_task(self, task_name: str) -> dict[str, Any] | None:
        """The stored results of the session that ran ``task_name``; never waits."""
        session_id = self.session_id_dict.get(task_name)
        return self.results.get(session_id) if session_id else None

    def get_task_end_by_task(self, task_name: str) -> ServerMessage | None:
        """The TASK_END message of ``task_name`` (status, error and result), or None while pending."""
        session_id = self.session_id_dict.get(task_name)
        if session_id is None:
            return self.refused.get(task_name)
        return self.task_ends.get(session_id)

    def remove_session(self, session_id: str) -> None:
        """Forget the live session object (its results stay)."""
        self.sessions.pop(session_id, None)
        self.routes.pop(session_id, None)

    def prune(self, now: float | None = None, keep: Collection[str] = ()) -> int:
        """Forget results, refusals and reservations older than ``result_ttl`` s; returns how many.

        Reservations named in ``keep`` (tasks still queued) stay.
        """
        now = time.monotonic() if now is None else now
        expired = {sid for sid, ended in self._ended_at.items() if now - ended > self.result_ttl}
        for sid in expired:
            self.results.pop(sid, None)
            self.task_ends.pop(sid, None)
            del self._ended_at[sid]
        for name in [name for name, sid in self.session_id_dict.items() if sid in expired]:
            del self.session_id_dict[name]
        stale = [name for name, at in self._refused_at.items() if now - at > self.result_ttl]
        for name in stale:
            self.refused.pop(name, None)
            del self._refused_at[name]
        count = len(expired) + len(stale) + self.names.prune(self.result_ttl, now, keep)
        if count:
            logger.info("Pruned %d stored task records older than %gs", count, self.result_ttl)
        return count

    async def run_cleanup(self, interval: float, keep: Callable[[], Collection[str]] | None = None) -> None:
        """Prune every ``interval`` s until cancelled (started and stopped by the app's lifespan).

        ``keep()`` names the reservations to spare (tasks still queued for a busy device).
        """
        while True:
            await asyncio.sleep(interval)
            self.prune(keep=keep() if keep is not None else ())

    async def shutdown(self) -> None:
        """Cancel every running session at once (no callbacks: the server is going away)."""
        await asyncio.gather(
            *(self.cancel_task(session_id, SERVER_SHUTDOWN) for session_id in list(self._running_tasks))
        )
