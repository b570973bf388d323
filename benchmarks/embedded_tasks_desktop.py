"""Desktop tasks for the embedded-model benchmark: the HostAgent and its AppAgents on real applications.

Each task is run as a user runs it, ``starweave run --agent host "<request>" --json``, on a private
X11 desktop (Xvfb + a D-Bus session bus; AT-SPI starts on demand) where the task's applications
(gnome-calculator, mousepad) were started first. The check reads the real outcome: the calculator's
display through AT-SPI, or the file the run saved in its workspace.

How ``embedded_bench.py`` calls it::

    from embedded_tasks_desktop import run_desktop_suite
    outcomes = run_desktop_suite(timeout=600.0, names=None, report=print)   # list[Outcome], TASKS order

``run_desktop_suite(timeout, names=None, env=None, keep=None, extra_args=(), report=None)`` starts
one desktop for the whole suite and, for each task (only those in ``names`` when given; an unknown
name raises ValueError listing the known ones): a fresh work folder (the run's workspace and its
logs), the task's applications (``APPS[task.name]``), ``starweave run --agent host "<request>"
--workspace W --log-dir W/logs --task NAME --json --yes [extra_args]`` with at most ``timeout``
seconds, the desktop's state read into the result under ``STATE_KEY`` (``{"calculator_display":
"42", "windows": [...]}``), the check, and the applications stopped again; ``report(outcome)`` is
called after each task. ``env`` is added to the CLI's environment (the caller's own variables,
e.g. ``STARWEAVE_LLM_THREADS``, are inherited); ``keep`` is a folder where each task's work folder
is kept; ``extra_args`` go to every run (e.g. ``["--multi-action"]``). Every failure names its
cause in ``Outcome.reason``; a desktop that cannot start (no Xvfb, dbus-daemon or xdotool) raises
``DesktopUnavailable`` naming what is missing.

``TASKS`` (``list[BenchTask]``) lists the tasks; ``BenchTask.check(workdir, result)`` reads the
desktop's state from ``result[STATE_KEY]``, so a check is a pure function of the run's outcome.
``DesktopEnvironment`` is the context manager behind the suite (usable on its own: ``launch``,
``stop_apps``, ``env``, ``calculator_display``). Run alone:
``.venv/bin/python benchmarks/embedded_tasks_desktop.py [--timeout S] [--only NAME ...] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from embedded_common import BenchTask, Outcome, chosen_tasks, file_text, newest_result, run_cli, run_each
from helpers.xdisplay import (
    DisplayError,
    kill_tree,
    launch_app,
    process_tree,
    processes_on_display,
    start_bus,
    start_xvfb,
    stop_xvfb,
)

NEEDED = ("Xvfb", "dbus-daemon", "xdotool")
#: Where each application's window is put (there is no window manager: every window maps at 0,0).
POSITIONS = {"gnome-calculator": (600, 30), "mousepad": (20, 420)}
#: The key of ``result`` under which the suite puts the desktop's state after the run.
STATE_KEY = "desktop_state"


class DesktopUnavailable(DisplayError):
    """The private desktop cannot start (a missing program, or Xvfb/dbus not coming up)."""


@dataclass
class DesktopEnvironment:
    """A private Xvfb display and D-Bus session bus, and the applications started on them.

    Use as a context manager (``with DesktopEnvironment() as desk:``); leaving it kills every
    process it started and any process still running on its display (apps the agents launched).
    The benchmark's own process never connects to AT-SPI (it binds to the first bus it sees), so
    reading the desktop's state runs in a short child process.
    """

    display: str = ""
    bus_address: str = ""
    home: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="starweave-bench-desk-")))
    _xvfb: subprocess.Popen[bytes] | None = None
    _bus: subprocess.Popen[bytes] | None = None
    _apps: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def __enter__(self) -> DesktopEnvironment:
        missing = [tool for tool in NEEDED if shutil.which(tool) is None]
        if missing:
            raise DesktopUnavailable(f"missing {', '.join(missing)}: run `make system-deps` as root")
        try:
            self._xvfb, self.display = start_xvfb()
            self._bus, self.bus_address = start_bus({**os.environ, "DISPLAY": self.display})
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def env(self) -> dict[str, str]:
        """The variables that put a process on this desktop (and private XDG folders)."""
        env = {"DISPLAY": self.display, "DBUS_SESSION_BUS_ADDRESS": self.bus_address}
        env["GSETTINGS_BACKEND"] = "memory"
        for name in ("config", "data", "cache", "state"):
            path = self.home / name
            path.mkdir(parents=True, exist_ok=True)
            env[f"XDG_{name.upper()}_HOME"] = str(path)
        return env

    def launch(self, program: str, timeout: float = 20.0) -> None:
        """Start ``program`` and wait until its window is visible (and moved to its place)."""
        merged = {**os.environ, **self.env()}
        merged.pop("NO_AT_BRIDGE", None)
        deadline = time.monotonic() + timeout
        try:
            launch_app([program], merged, self._apps, POSITIONS.get(program, (0, 0)), timeout)
        except DisplayError as exc:
            raise DesktopUnavailable(str(exc)) from None
        self._wait_accessible(program, deadline)

    def stop_apps(self) -> None:
        """Kill every application on the display (started here or by the agents), but not the
        accessibility services the session bus started (they have the display in their environment
        too, and the next task needs them)."""
        for proc in self._apps:
            kill_tree(proc.pid)
        self._apps.clear()
        services = process_tree(self._bus.pid) if self._bus is not None else set()
        for stray in processes_on_display(self.display):
            if stray.pid not in services:
                kill_tree(stray.pid)

    def calculator_display(self) -> str | None:
        """The calculator's display text read through AT-SPI (None when no calculator is open)."""
        state = self.read_state()
        value = state.get("calculator_display")
        return value if isinstance(value, str) else None

    def read_state(self) -> dict[str, Any]:
        """``{"calculator_display": str | None, "windows": [names]}`` read by a child process."""
        done = subprocess.run(
            [sys.executable, "-c", _READ_STATE],
            env={**os.environ, **self.env()},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        try:
            data = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            return {"error": f"could not read the desktop: {done.stderr.strip()[-300:]}"}
        return data if isinstance(data, dict) else {}

    def close(self) -> None:
        """Stop the applications, the bus and the display; remove the private home."""
        if self.display:
            self.stop_apps()
            strays = processes_on_display(self.display)
        else:
            strays = []
        if self._bus is not None:
            kill_tree(self._bus.pid)  # the a11y bus launcher, registryd and dconf are its children
            self._bus = None
        for proc in strays:
            kill_tree(proc.pid)
        if self._xvfb is not None:
            stop_xvfb(self._xvfb)
            self._xvfb = None
        shutil.rmtree(self.home, ignore_errors=True)

    def _wait_accessible(self, program: str, deadline: float) -> None:
        # The agents find windows through AT-SPI, which lists an application a moment after X does.
        while time.monotonic() < deadline:
            if program in self.read_state().get("applications", []):
                return
            time.sleep(0.2)
        raise DesktopUnavailable(f"{program} never appeared on the AT-SPI desktop")


# Runs in a child process on the desktop: the windows, and the calculator's display (its Edit control).
_READ_STATE = """
import asyncio, json
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

async def main():
    backend = LinuxDesktopBackend()
    try:
        windows = await backend.list_windows()
        state = {"windows": [w.name for w in windows], "applications": [w.app_name for w in windows],
                 "calculator_display": None}
        for window in windows:
            if window.app_name == "gnome-calculator":
                for control in await backend.window_controls(window.id):
                    if control.control_type == "Edit":
                        state["calculator_display"] = await backend.get_text(control.id)
                        break
        print(json.dumps(state))
    finally:
        await backend.aclose()

asyncio.run(main())
"""


# -- the tasks -------------------------------------------------------------------------------------


def _display_is(expected: str) -> Any:
    def check(_workdir: Path, result: dict[str, Any]) -> str | None:
        shown = (result.get(STATE_KEY) or {}).get("calculator_display")
        if shown is None:
            return "the calculator's display could not be read (is the calculator still open?)"
        if _number(shown) != _number(expected):
            return f"the calculator shows {shown!r}, expected {expected}"
        return _finished(result)

    return check


def _file_is(name: str, expected: str) -> Any:
    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        path = workdir / name
        if not path.is_file():
            return f"{name} was not saved in the workspace"
        text = file_text(path)
        if text.strip() != expected:
            return f"{name} holds {text[:80]!r}, expected {expected!r}"
        return _finished(result)

    return check


def _finished(result: dict[str, Any]) -> str | None:
    status = result.get("status")
    return None if status == "FINISH" else f"the run ended with {status or 'no result'}"


def _number(text: str) -> str:
    # The calculator writes the minus sign as U+2212 and may group digits with thin spaces.
    return text.replace("\u2212", "-").replace("\u2009", "").replace(",", "").strip()


TASKS: list[BenchTask] = [
    BenchTask(
        name="calculator_add",
        request="compute 12 + 30 with the calculator that is open",
        check=_display_is("42"),
    ),
    BenchTask(
        name="calculator_subtract",
        request="use the calculator to subtract 37 from 125",
        check=_display_is("88"),
    ),
    BenchTask(
        name="calculator_multiply",
        request="multiply 9 by 8 in the calculator",
        check=_display_is("72"),
    ),
    BenchTask(
        name="mousepad_note",
        request="in mousepad, write the text 'hello desktop' and save it as hello.txt in the workspace",
        check=_file_is("hello.txt", "hello desktop"),
    ),
    BenchTask(
        name="mousepad_list",
        request="with mousepad, save a file named list.txt in the workspace containing the word apples",
        check=_file_is("list.txt", "apples"),
    ),
]

#: The applications each task starts before the run (the request speaks of them as open).
APPS: dict[str, tuple[str, ...]] = {
    "calculator_add": ("gnome-calculator",),
    "calculator_subtract": ("gnome-calculator",),
    "calculator_multiply": ("gnome-calculator",),
    "mousepad_note": ("mousepad",),
    "mousepad_list": ("mousepad",),
}


# -- the suite -------------------------------------------------------------------------------------


def run_task(
    desk: DesktopEnvironment,
    task: BenchTask,
    workdir: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> Outcome:
    """One task on ``desk``: start its applications, run the CLI, read the desktop, check, stop them."""
    workdir.mkdir(parents=True, exist_ok=True)
    task.setup(workdir)
    try:
        for program in APPS.get(task.name, ()):
            desk.launch(program)
    except DesktopUnavailable as exc:
        desk.stop_apps()
        return Outcome(task.name, False, 0.0, reason=f"setup failed: {exc}")
    args = ["run", "--agent", "host", task.request, "--workspace", str(workdir)]
    args += ["--log-dir", str(workdir / "logs"), "--task", task.name, "--json", "--yes", *extra_args]
    try:
        code, output, seconds = run_cli(args, workdir, timeout, {**(env or {}), **desk.env()})
        result = newest_result(workdir / "logs")
        if not result:
            result = {"status": "", "error": output[-500:]}
        result[STATE_KEY] = desk.read_state()
    finally:
        desk.stop_apps()
    reason = task.check(workdir, result)
    if reason is None and code != 0:
        reason = f"the CLI exited with {code}"
    if code == -9:
        reason = f"timed out after {timeout:g} s" + (f" ({reason})" if reason else "")
    extra = {"result": str(result.get("result", ""))[:200], "llm_calls": result.get("llm_calls", 0)}
    extra["state"] = result[STATE_KEY]
    return Outcome(task.name, reason is None, seconds, reason or "", int(result.get("steps") or 0), extra)


def run_desktop_suite(
    timeout: float = 600.0,
    names: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
    keep: Path | None = None,
    extra_args: Sequence[str] = (),
    report: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run ``TASKS`` (or those named) on one private desktop; one Outcome per task, in order."""
    chosen = chosen_tasks(TASKS, names)
    with DesktopEnvironment() as desk:

        def run(task: BenchTask, workdir: Path) -> Outcome:
            return run_task(desk, task, workdir, timeout, env, extra_args)

        return run_each(chosen, run, "sw-desktop", keep, report)


def main() -> None:
    """Run the suite and print one line per task and the success rate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per task")
    parser.add_argument("--only", nargs="*", help="task names to run")
    parser.add_argument("--keep", type=Path, help="keep each task's work folder under this folder")
    args = parser.parse_args()

    def show(o: Outcome) -> None:
        mark = "ok  " if o.ok else "FAIL"
        line = f"{mark} {o.name:22} {o.seconds:7.1f} s  steps {o.steps:3}  {o.reason}"
        print(f"{line}  {json.dumps(o.extra, ensure_ascii=False)[:300]}", flush=True)

    # One thread for the model unless told otherwise: the machine's other core runs the desktop.
    threads = {"STARWEAVE_LLM_THREADS": os.environ.get("STARWEAVE_LLM_THREADS", "1")}
    outcomes = run_desktop_suite(args.timeout, args.only, threads, args.keep, report=show)
    done = sum(o.ok for o in outcomes)
    print(f"{done}/{len(outcomes)} tasks done")


if __name__ == "__main__":
    main()
