"""The agent server: FastAPI app serving the AIP WebSocket (/ws) and the HTTP API (/api)."""

from starweave.server.settings import ServerSettings

__all__ = ["ServerSettings"]
