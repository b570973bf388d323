"""A private X11 desktop for tests: Xvfb + a D-Bus session bus (AT-SPI starts on demand) + real apps.

Use from a test module or conftest::

    from helpers.desktop_env import desktop_session, desktop_backend  # noqa: F401  (fixtures)

    @pytest.mark.desktop
    async def test_x(desktop_session, desktop_backend):
        app = desktop_session.launch("gnome-calculator", position=(700, 20))

``desktop_session`` (session scope) sets DISPLAY and DBUS_SESSION_BUS_ADDRESS for the test process and,
at the end, kills every process it started plus any process still running on its display (apps that
code under test launched itself), so nothing is left behind. Tests SKIP only when not on Linux; on
Linux a missing system package is a failure naming ``make system-deps``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers.xdisplay import (
    kill_tree,
    launch_app,
    processes_on_display,
    start_bus,
    start_xvfb,
    stop_xvfb,
)

_NEEDED = ("Xvfb", "dbus-daemon", "xdotool")


@dataclass
class LaunchedApp:
    """An application started by the session, with its first visible X window."""

    pid: int
    window_id: str
    proc: subprocess.Popen[bytes]


@dataclass
class DesktopSession:
    """The running Xvfb display and session bus, and the apps started on them."""

    display: str
    bus_address: str
    home: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def app_env(self) -> dict[str, str]:
        """Environment for apps: our display and bus, and private XDG dirs (no user config is touched)."""
        env = dict(os.environ)
        for name in ("config", "data", "cache", "state"):
            path = self.home / name
            path.mkdir(exist_ok=True)
            env[f"XDG_{name.upper()}_HOME"] = str(path)
        env.pop("NO_AT_BRIDGE", None)
        return env

    def launch(
        self, *argv: str, position: tuple[int, int] | None = None, timeout: float = 15.0
    ) -> LaunchedApp:
        """Start ``argv`` and wait until it has a visible X window (moved to ``position`` when given)."""
        proc, window = launch_app(list(argv), self.app_env(), self.procs, position, timeout)
        return LaunchedApp(pid=proc.pid, window_id=window, proc=proc)

    def stop(self, app: LaunchedApp) -> None:
        """Kill one launched app (and its process group) now."""
        kill_tree(app.proc.pid)
        if app.proc in self.procs:
            self.procs.remove(app.proc)
        app.proc.wait(timeout=5)


# One desktop per test process. Each test module that imports the fixture gets its own fixture
# definition, but AT-SPI connects once per process (to the accessibility bus of the first display),
# so a second Xvfb + bus would be invisible to the code under test: every module shares the first
# one, which its owner (set up first, so torn down last) stops at the end of the session.
_shared: DesktopSession | None = None


@pytest.fixture(scope="session")
def desktop_session() -> Iterator[DesktopSession]:
    """Xvfb + session bus for the whole test session; everything started on them is killed at the end."""
    global _shared
    if _shared is not None:
        yield _shared
        return
    with _desktop_session() as session:
        _shared = session
        try:
            yield session
        finally:
            _shared = None


@contextmanager
def _desktop_session() -> Iterator[DesktopSession]:
    if not sys.platform.startswith("linux"):
        pytest.skip("the Linux desktop tests need Linux (X11 + AT-SPI)")
    missing = [tool for tool in _NEEDED if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run `make system-deps` as root (apt packages of issue 6)")
    saved = {k: os.environ.get(k) for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "GSETTINGS_BACKEND")}
    xvfb, display = start_xvfb()
    bus = None
    home = Path(tempfile.mkdtemp(prefix="starweave-desktop-"))
    try:
        env = dict(os.environ, DISPLAY=display, GSETTINGS_BACKEND="memory")
        bus, address = start_bus(env)
        os.environ.update(DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=address, GSETTINGS_BACKEND="memory")
        session = DesktopSession(display=display, bus_address=address, home=home)
        yield session
        for proc in session.procs:
            kill_tree(proc.pid)
    finally:
        strays = processes_on_display(display)
        if bus is not None:
            kill_tree(bus.pid)  # the a11y bus launcher, registryd and dconf are its children
            bus.wait(timeout=5)
        for stray in strays:
            kill_tree(stray.pid)
        stop_xvfb(xvfb)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
async def desktop_backend(desktop_session: DesktopSession) -> AsyncIterator[object]:
    """A fresh Linux backend on the session's display (typed loosely: this module imports anywhere)."""
    from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

    backend = LinuxDesktopBackend()
    yield backend
    await backend.aclose()


@pytest.fixture
def calculator(desktop_session: DesktopSession) -> Iterator[LaunchedApp]:
    """gnome-calculator on the test desktop, top right, for one test."""
    launched = desktop_session.launch("gnome-calculator", position=(600, 30))
    yield launched
    desktop_session.stop(launched)


@pytest.fixture
def mousepad(desktop_session: DesktopSession) -> Iterator[LaunchedApp]:
    """mousepad on the test desktop, bottom left, for one test."""
    launched = desktop_session.launch("mousepad", position=(20, 420))
    yield launched
    desktop_session.stop(launched)
