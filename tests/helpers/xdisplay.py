"""A private X display and session bus, and the process bookkeeping around them.

Shared by the test fixtures (``desktop_env.py``) and the benchmarks that drive real applications
(``benchmarks/desktop_bench.py``, ``benchmarks/embedded_tasks_desktop.py``). Nothing here imports
pytest: a benchmark runs it as a plain module.
"""

from __future__ import annotations

import os
import subprocess
import time

import psutil

#: The virtual screen's size: large enough for the calculator and mousepad side by side.
SCREEN = (1280, 1024)


class DisplayError(RuntimeError):
    """Xvfb or the session bus did not come up."""


def start_xvfb(screen: tuple[int, int] = SCREEN) -> tuple[subprocess.Popen[bytes], str]:
    """Start Xvfb on a free display number (``-displayfd``); the process and ``":N"``."""
    read_fd, write_fd = os.pipe()
    size = f"{screen[0]}x{screen[1]}x24"
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", size, "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    if not number.isdigit():
        xvfb.kill()
        raise DisplayError("Xvfb did not report a display number")
    return xvfb, f":{number}"


def start_bus(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """Start a D-Bus session bus with ``env`` (its DISPLAY is the accessibility bus's); the process
    and its address."""
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().decode().strip()
    if not address:
        bus.kill()
        raise DisplayError("dbus-daemon did not print its address")
    return bus, address


def xdotool(display: str | None, *args: str) -> str:
    """``xdotool args`` on ``display`` (None: the current DISPLAY); its standard output."""
    env = dict(os.environ, DISPLAY=display) if display else None
    argv = ["xdotool", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=10, check=False).stdout


def visible_windows(pid: int, display: str | None = None) -> list[str]:
    """The visible X windows of ``pid``, but the 1-pixel helper windows GTK maps."""
    found = []
    for xid in xdotool(display, "search", "--onlyvisible", "--pid", str(pid)).split():
        if "WIDTH=1\n" not in xdotool(display, "getwindowgeometry", "--shell", xid):
            found.append(xid)
    return found


def process_tree(pid: int) -> set[int]:
    """``pid`` and its descendants (empty when it is gone)."""
    try:
        root = psutil.Process(pid)
        return {pid, *(p.pid for p in root.children(recursive=True))}
    except psutil.NoSuchProcess:
        return set()


def kill_tree(pid: int) -> None:
    """Kill ``pid`` and its descendants and wait for them."""
    try:
        root = psutil.Process(pid)
        procs = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for proc in procs:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(procs, timeout=5)


def processes_on_display(display: str) -> list[psutil.Process]:
    """Processes (other than this one) whose environment names ``display``: applications that code
    under test, or an agent, launched itself."""
    mine = os.getpid()
    found = []
    for proc in psutil.process_iter(["pid"]):
        if proc.pid == mine:
            continue
        try:
            if proc.environ().get("DISPLAY") == display:
                found.append(proc)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def stop_xvfb(xvfb: subprocess.Popen[bytes]) -> None:
    """Terminate Xvfb, killing it when it does not stop within 5 s."""
    xvfb.terminate()
    try:
        xvfb.wait(timeout=5)
    except subprocess.TimeoutExpired:
        xvfb.kill()
        xvfb.wait(timeout=5)


def launch_app(
    argv: list[str],
    env: dict[str, str],
    started: list[subprocess.Popen[bytes]],
    position: tuple[int, int] | None = None,
    timeout: float = 15.0,
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``argv`` with ``env`` (whose DISPLAY it shows on), add the process to ``started`` (the
    caller kills what it started, even when this fails), and wait until it has a visible window,
    moved to ``position`` when given; the process and the window's id. DisplayError on a failure."""
    proc = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    started.append(proc)
    display = env.get("DISPLAY")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise DisplayError(f"{argv[0]} exited with {proc.returncode} before showing a window")
        found = visible_windows(proc.pid, display)
        if found:
            if position is not None:
                xdotool(display, "windowmove", "--sync", found[0], str(position[0]), str(position[1]))
            return proc, found[0]
        time.sleep(0.1)  # polling X for a new window; the deadline is what bounds the wait
    raise DisplayError(f"{argv[0]} showed no window within {timeout:g} s")
