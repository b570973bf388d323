"""``starweave galaxy --webui``: connect the fleet, serve the WebUI, open the browser, stop on Ctrl+C.

The port asked for is used when free, else the next free one (up to PORT_TRIES ports); port 0
lets the OS pick. The browser opens only when there is a display to show it on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import webbrowser
from collections.abc import Callable, Generator, Mapping

import uvicorn

from starweave.cli_support import bind_problem
from starweave.errors import ConfigError
from starweave.galaxy.client import GalaxyClient, GalaxyOptions
from starweave.galaxy.webui.app import create_app
from starweave.galaxy.webui.service import WebUIService
from starweave.interrupts import stop_signals
from starweave.server.app import serve_in_task
from starweave.server.settings import ServerSettings

__all__ = ["PORT_TRIES", "has_display", "pick_port", "run_webui", "webui_url"]

PORT_TRIES = 10


def pick_port(host: str, port: int, tries: int = PORT_TRIES) -> int:
    """``port`` when it is free on ``host``, else the next free one; ConfigError when none is."""
    if port == 0:
        problem = bind_problem(host, 0)
        if problem:
            raise ConfigError(problem)
        return 0
    last = min(port + tries - 1, 65535)
    problem = None
    for candidate in range(port, last + 1):
        problem = bind_problem(host, candidate)
        if problem is None:
            return candidate
        if "already in use" not in problem:
            break
    if problem and "already in use" not in problem:
        raise ConfigError(problem)
    raise ConfigError(f"Could not find an available port (tried {port}-{last}); pass --port with another one")


def has_display(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> bool:
    """True when a browser window can be shown: any non-Linux desktop, or X11/Wayland on Linux."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def webui_url(host: str, port: int) -> str:
    """The address to open (a wildcard bind is reached through loopback from this machine)."""
    name = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"
    return f"http://{name}:{port}/"


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: the WebUI stops its session first, then the server."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


async def run_webui(
    options: GalaxyOptions,
    host: str = "127.0.0.1",
    port: int = 8000,
    api_key: str | None = None,
    open_browser: bool = True,
    say: Callable[[str], None] = print,
) -> int:
    """Serve the WebUI until SIGINT/SIGTERM; 0 after a clean stop."""
    settings = ServerSettings(host=host, port=port, api_key=api_key, require_key_on_loopback=bool(api_key))
    settings.validate_security()
    chosen = pick_port(host, port)
    client = GalaxyClient(options)
    service = WebUIService(client)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = stop_signals()  # an inherited ignored SIGINT stays ignored
    for sig in handled:
        loop.add_signal_handler(sig, stop.set)
    server: uvicorn.Server | None = None
    task: asyncio.Task[None] | None = None
    waiter = asyncio.create_task(stop.wait())
    try:
        await service.start()
        app = create_app(service, settings.model_copy(update={"port": chosen}))
        config = uvicorn.Config(
            app,
            host=host,
            port=chosen,
            log_level="warning",
            access_log=False,
            lifespan="off",
            # uvicorn's default is 16 MiB a frame: the agent server's bound instead.
            ws_max_size=settings.ws_max_size,
        )
        server = _QuietServer(config)
        task, bound = await serve_in_task(server)
        url = webui_url(host, bound)
        say(f"Galaxy WebUI: {url}")
        if open_browser and has_display():
            webbrowser.open(url)
        for request in options.requests[:1]:
            service.submit(request)
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        say("Stopping the Galaxy WebUI ...")
    finally:
        waiter.cancel()
        if server is not None:
            server.should_exit = True
        await service.aclose()
        if task is not None:
            await task
        for sig in handled:
            loop.remove_signal_handler(sig)
    return 0
