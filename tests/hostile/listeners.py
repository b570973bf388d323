"""Canary listeners: every way a command might reach a service outside its sandbox counts here.

A TCP and a UDP port on 127.0.0.1, an abstract unix socket, unix sockets at filesystem paths
where host services keep theirs (a daemon's socket under /run, the user's ssh-agent under /tmp, a
database socket in the project folder), and datagram unix sockets as a system logger keeps them (a
path under /run, one in the project folder and an abstract name: an unconnected datagram socket can
send to them without connect). Any connection or datagram is a failure of the case that was running.
"""

from __future__ import annotations

import asyncio
import os
import socket

ABSTRACT = "\0swh-canary"
ABSTRACT_DGRAM = "\0swh-canary-dg"
SOCKET_PATHS = ("/run/swh-svc/api.sock", "/tmp/ssh-swh/agent.sock")
DGRAM_PATH = "/run/swh-svc/log.sock"


class Listeners:
    """Starts the listeners; ``hits`` counts every connection and datagram so far."""

    def __init__(self, base: str) -> None:
        self.paths = [*SOCKET_PATHS, os.path.join(base, "run", "db.sock")]
        self.dgram_paths = [DGRAM_PATH, os.path.join(base, "run", "log.sock")]
        self.hits = 0
        self.port = 0
        self._servers: list[asyncio.AbstractServer] = []
        self._datagrams: list[asyncio.DatagramTransport] = []

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
        udp, _ = await loop.create_datagram_endpoint(Datagrams, local_addr=("127.0.0.1", self.port))
        self._datagrams = [udp]
        for address in (*self.dgram_paths, ABSTRACT_DGRAM):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.bind(address)
            if not address.startswith("\0"):
                os.chmod(address, 0o666)  # as a system logger's socket is: anyone may send
            unix, _ = await loop.create_datagram_endpoint(Datagrams, sock=sock)
            self._datagrams.append(unix)

    def stop(self) -> None:
        """Close everything."""
        for srv in self._servers:
            srv.close()
        for transport in self._datagrams:
            transport.close()
        self._datagrams = []
        for path in self.dgram_paths:
            if os.path.exists(path):
                os.unlink(path)
