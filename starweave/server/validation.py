"""Checks shared by the HTTP API and the WebSocket handler."""

from __future__ import annotations

import re

_TASK_NAME = re.compile(r"[A-Za-z0-9._-]{1,200}")
# Device ids name token files and log folders, and must match between devices.yaml and a client.
_DEVICE_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
DEVICE_ID_RULE = "1-128 characters from A-Z a-z 0-9 . _ -"


def device_id_problem(device_id: object) -> str | None:
    """Why ``device_id`` is not a valid device (client) id, or None."""
    if isinstance(device_id, str) and _DEVICE_ID.fullmatch(device_id):
        return None
    return f"{device_id!r} is not a valid id ({DEVICE_ID_RULE})"


def task_name_problem(task_name: str) -> str | None:
    """Why ``task_name`` is refused, or None. Names become log paths: no separators, no leading dot."""
    if not _TASK_NAME.fullmatch(task_name):
        # ascii(): the name is quoted back, and a lone surrogate in it could not be sent.
        return f"Invalid task_name {task_name[:80]!a}: use 1-200 characters from A-Z a-z 0-9 . _ -"
    if task_name.startswith("."):
        return f"Invalid task_name '{task_name[:80]}': it must not start with '.'"
    return None
