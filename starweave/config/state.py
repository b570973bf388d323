"""Starweave's own state on this machine (device tokens, the workspaces handed to agents): where it
lives and how it is written."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path


def state_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/starweave`` (default ``~/.local/state/starweave``)."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / "starweave"


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text``, readable by the owner only (its folder is made
    owner-only when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
