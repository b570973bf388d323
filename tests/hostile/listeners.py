"""Canary listeners: every way a command might reach a service outside its sandbox counts here.

A TCP and a UDP port on 127.0.0.1, an abstract unix socket, and unix sockets at filesystem paths
where host services keep theirs (a daemon's socket under /run, the user's ssh-agent under /tmp, a
database socket in the project folder). Any connection or datagram is a failure of the case that
was running.
"""

from __future__ import annotations

import asyncio
import os

ABSTRACT = "\0swh-canary"
SOCKET_PATHS = ("/run/swh-svc/api.sock", "/tmp/ssh-swh/agent.sock")


class Listeners:
    """Starts the listeners; ``hits`` counts every connection and datagram so far."""

    def __init__(self, base: str) -> None:
        self.paths = [*SOCKET_PATHS, os.path.join(base, "run", "db.sock")]
        self.hits = 0
        self.port = 0
        self._servers: list[asyncio.AbstractServer] = []
        self._udp: asyncio.DatagramTransport | None = None

    async def start(self) -> None:
        """Bind everything (the folders of the socket paths must exist and be writable)."""

        async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.hits += 1
            writer.close()

        tcp = await asyncio.start_server(count, "127.0.0.1", 0)
        self.port = tcp.sockets[0].getsockname()[1]
        self._servers = [tcp, await asyncio.start_unix_server(count, ABSTRACT)]
        for path in self.paths:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._servers.append(await asyncio.start_unix_server(count, path))
        listeners = self

        class Datagrams(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: object) -> None:
                listeners.hits += 1

        loop = asyncio.get_running_loop()
        self._udp, _ = await loop.create_datagram_endpoint(Datagrams, local_addr=("127.0.0.1", self.port))

    def stop(self) -> None:
        """Close everything."""
        for srv in self._servers:
            srv.close()
        if self._udp is not None:
            self._udp.close()
