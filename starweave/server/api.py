"""The HTTP API under /api (spec D §3): health, clients, dispatch, task results."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import APIRouter, Body, Depends, HTTPException

from starweave.aip.messages import new_id
from starweave.errors import QueueFull, TaskNameInUse
from starweave.server.dispatch_queue import DispatchQueue, PendingTask
from starweave.server.registry import ClientConnectionManager
from starweave.server.security import SecurityPolicy, http_guard
from starweave.server.sessions import SessionManager
from starweave.server.settings import ServerSettings
from starweave.server.validation import task_name_problem
from starweave.text import unencodable_problem

logger = logging.getLogger(__name__)


def build_api_router(
    registry: ClientConnectionManager,
    sessions: SessionManager,
    policy: SecurityPolicy,
    queue: DispatchQueue,
    settings: ServerSettings,
    started_at: float,
) -> APIRouter:
    """The /api routes, every one behind the Host/Origin/API-key guard.

    A dispatch to a busy device waits in that device's queue (``queue_position`` > 0 in the answer);
    a full queue answers 429. A request over ``max_request_bytes`` answers 413. An unknown task
    name answers 404 on /api/task_result.
    """
    router = APIRouter(prefix="/api", dependencies=[Depends(http_guard(policy))])

    @router.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "status": "healthy",
            "online_clients": registry.list_clients(),
            "uptime_seconds": round(time.monotonic() - started_at, 3),
        }

    @router.get("/clients")
    async def clients(details: bool = False) -> dict[str, Any]:
        if not details:
            return {"online_clients": registry.list_clients()}
        entries = [info.summary() for info in registry.online_clients.values()]
        return {"clients": entries, "total": len(entries)}

    @router.post("/dispatch")
    async def dispatch(data: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008 - FastAPI idiom
        client_id = data.get("client_id")
        user_request = data.get("request", "")
        task_name = data.get("task_name") or new_id()
        # The reference's order: the request is checked before the client id.
        if not user_request or not isinstance(user_request, str):
            raise HTTPException(status_code=400, detail="Empty task content")
        if not client_id or not isinstance(client_id, str):
            raise HTTPException(status_code=400, detail="Empty client ID")
        # All before anything is queued: a value that fails later (a lone surrogate in a log line
        # or a frame, a number as a name) would stall the device's queue and never have a result.
        problem = unencodable_problem(user_request, "The task request") or unencodable_problem(
            client_id, "client_id"
        )
        if problem:
            raise HTTPException(status_code=400, detail=problem)
        if not isinstance(task_name, str):
            raise HTTPException(
                status_code=400,
                detail=f"Invalid task_name: it must be a string, not {type(task_name).__name__}",
            )
        size = len(user_request.encode("utf-8"))
        if size > settings.max_request_bytes:
            raise HTTPException(
                status_code=413,
                detail=(
                    f"Task request too large ({size} bytes): the limit is {settings.max_request_bytes} bytes"
                ),
            )
        problem = task_name_problem(task_name)
        if problem:
            raise HTTPException(status_code=400, detail=problem)
        logger.info("[API] dispatching task '%s' to %s", task_name, client_id)
        info = registry.get_client_info(client_id)
        if info is None:
            raise HTTPException(status_code=404, detail="Client not online")
        if not registry.is_device_connected(client_id):
            raise HTTPException(status_code=400, detail=f"Client '{client_id}' is not a device")
        try:
            # Booked before sending: the device may echo the TASK before this request returns.
            sessions.reserve_task_name(task_name, client_id)
        except TaskNameInUse as exc:
            raise HTTPException(status_code=409, detail=str(exc)) from exc
        session_id = new_id()
        try:
            position = await queue.submit(client_id, PendingTask(task_name, session_id, user_request))
        except QueueFull as exc:
            sessions.names.release(task_name)
            raise HTTPException(status_code=429, detail=str(exc)) from exc
        except ConnectionError as exc:
            sessions.names.release(task_name)
            raise HTTPException(status_code=404, detail="Client not online") from exc
        return {
            "status": "dispatched",
            "task_name": task_name,
            "client_id": client_id,
            "session_id": session_id,
            "queue_position": position,
        }

    @router.get("/task_result/{task_name}")
    async def task_result(task_name: str) -> dict[str, Any]:
        end = sessions.get_task_end_by_task(task_name)
        if end is None:
            if sessions.task_name_in_use(task_name):  # reserved, queued or running
                return {"status": "pending"}
            raise HTTPException(
                status_code=404,
                detail=(
                    f"Unknown task '{task_name[:200]}': it was never dispatched here, or its result "
                    f"expired (results are kept {settings.result_ttl:g}s)"
                ),
            )
        return {
            "status": "done",
            "result": sessions.get_result_by_task(task_name) or {},
            "task_status": end.status.value,
            "error": end.error,
            "session_id": end.session_id,
        }

    return router
