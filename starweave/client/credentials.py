"""The device tokens this client was issued, one per (server, client id), kept across restarts.

A server binds a device id to a token it issues at the first registration (server/credentials.py);
the client presents it on every later connection (``X-Starweave-Device-Token``), so nobody else
holding the shared key can take the id. Tokens live in ``<state dir>/device_tokens.json`` (mode
0600, folder 0700), keyed by the server's ``host:port`` and the client id. Without a state folder
(Galaxy's in-process fleet, tests) they are kept in memory only.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
from pathlib import Path
from urllib.parse import urlsplit

from starweave.config.state import write_private

__all__ = ["TOKEN_FILE", "TokenStore", "server_key"]

log = logging.getLogger("starweave.client")

TOKEN_FILE = "device_tokens.json"


def server_key(ws_url: str) -> str:
    """``host:port`` of a ws:// or wss:// URL (the port defaulted by the scheme), lowercased."""
    parts = urlsplit(ws_url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = 443 if parts.scheme in ("wss", "https") else 80
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class TokenStore:
    """Tokens by ``server_key`` and client id; persisted under ``state_dir`` when one is given.

    Several clients on one machine may share the file (one per device id): every change re-reads it
    under an exclusive lock, so no client overwrites another's token.
    """

    def __init__(self, state_dir: Path | None = None) -> None:
        self.path = state_dir / TOKEN_FILE if state_dir is not None else None
        self._tokens: dict[str, dict[str, str]] = {}

    async def get(self, server: str, client_id: str) -> str | None:
        """The stored token, or None (an unreadable file counts as empty, with a warning)."""
        if self.path is not None:
            try:
                self._tokens = await asyncio.to_thread(self._read)
            except OSError as exc:
                log.warning("[WS] Cannot read the device token file %s (%s)", self.path, exc)
        return self._tokens.get(server, {}).get(client_id)

    async def put(self, server: str, client_id: str, token: str) -> None:
        """Remember ``token`` (and write the file, owner-only; on failure it is kept in memory)."""
        self._tokens.setdefault(server, {})[client_id] = token
        if self.path is None:
            return
        try:
            await asyncio.to_thread(self._update, server, client_id, token)
        except OSError as exc:
            log.error(
                "[WS] Cannot save the device token in %s (%s); it is kept in memory only, so after a "
                "restart this device will need to be unbound on the server",
                self.path,
                exc,
            )

    def _read(self) -> dict[str, dict[str, str]]:
        assert self.path is not None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            # The server re-issues a token to an unbound id; a bound id needs the operator anyway.
            log.warning("[WS] The device token file %s is damaged (%s); ignoring it", self.path, exc)
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            return {}
        return {
            str(server): {str(cid): tok for cid, tok in ids.items() if isinstance(tok, str)}
            for server, ids in servers.items()
            if isinstance(ids, dict)
        }

    def _update(self, server: str, client_id: str, token: str) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_fd = os.open(self.path.with_name(TOKEN_FILE + ".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            tokens = self._read()
            tokens.setdefault(server, {})[client_id] = token
            text = json.dumps({"version": 1, "servers": tokens}, indent=1, sort_keys=True)
            write_private(self.path, text)
            self._tokens = tokens
        finally:
            os.close(lock_fd)  # releases the lock
