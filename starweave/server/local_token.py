"""The agent server's local token: loopback is not a user boundary.

Every user of this machine reaches a port on 127.0.0.1. So a ``starweave server`` started without
an API key, even on loopback, makes one up at start (as notebook servers do) and requires it like
any key. It writes the token to a file only its user can read (``<state dir>/server/local/
PORT.token``, mode 0600 in a 0700 folder), and the same user's CLI (``starweave client``, Galaxy's
devices on loopback) reads it from there: nothing changes for that user, while another user finds
neither the file nor a way in. The file is removed when the server stops.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from starweave.config.state import state_home, write_private
from starweave.server.settings import is_loopback

__all__ = ["local_token_path", "publish_local_token", "read_local_token", "withdraw_local_token"]

log = logging.getLogger(__name__)


def local_token_path(port: int, env: Mapping[str, str] | None = None) -> Path:
    """Where the server listening on loopback port ``port`` keeps its local token."""
    return state_home(env) / "server" / "local" / f"{port}.token"


def publish_local_token(port: int, token: str) -> Path:
    """Write ``token`` for the server on ``port`` (owner-only); returns the file's path."""
    path = local_token_path(port)
    write_private(path, token + "\n")
    return path


def withdraw_local_token(port: int, token: str) -> None:
    """Remove the file of the server on ``port`` if it still holds ``token`` (a newer server on the
    same port keeps its own)."""
    path = local_token_path(port)
    if _read(path) == token:
        path.unlink(missing_ok=True)


def read_local_token(ws_url: str) -> str | None:
    """The local token of the server ``ws_url`` names, when it is on loopback and this user's own
    server wrote one; else None. Synchronous (a small file): call it off the event loop."""
    try:
        parts = urlsplit(ws_url)
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or not is_loopback(parts.hostname):
        return None  # never sent off this machine
    if port is None:
        port = 443 if parts.scheme in ("wss", "https") else 80
    return _read(local_token_path(port))


def _read(path: Path) -> str | None:
    """The token in ``path`` if the file is this user's, private and not a link; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("Cannot read the local server token %s: %s", path, exc)
        return None
    with os.fdopen(fd, encoding="utf-8") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            # Not what this user's server writes (0600, this user's): someone else's file.
            log.warning("Ignoring the local server token %s: not a private file of this user", path)
            return None
        token = handle.read(4096).strip()
    return token or None
