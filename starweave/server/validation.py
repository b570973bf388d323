"""Checks shared by the HTTP API and the WebSocket handler."""

from __future__ import annotations

import re

_TASK_NAME = re.compile(r"[A-Za-z0-9._-]{1,200}")


def task_name_problem(task_name: str) -> str | None:
    """Why ``task_name`` is refused, or None. Names become log paths: no separators, no leading dot."""
    if not _TASK_NAME.fullmatch(task_name):
        # ascii(): the name is quoted back, and a lone surrogate in it could not be sent.
        return f"Invalid task_name {task_name[:80]!a}: use 1-200 characters from A-Z a-z 0-9 . _ -"
    if task_name.startswith("."):
        return f"Invalid task_name '{task_name[:80]}': it must not start with '.'"
    return None
