"""Desktop agents benchmark: control collection, annotated screenshots, LLM calls with and without
speculative multi-action.

Run: ``.venv/bin/python benchmarks/desktop_bench.py [--repeat N]`` (Linux; needs the packages of
``make system-deps``: Xvfb, dbus, at-spi2-core, xdotool, gnome-calculator, mousepad).

It starts its own Xvfb display and D-Bus session bus (the test fixtures' helpers), launches
gnome-calculator and mousepad, and measures:
- the time to walk a window's controls through AT-SPI (calculator: ~40 controls), median of N;
- the time to take the window's screenshot and draw the set-of-mark annotation on it, median of N;
- the LLM calls of one scripted multi-step request (HostAgent → AppAgent(calculator: 12 + 34 =) →
  HostAgent → AppAgent(mousepad: write the result, read it back) → HostAgent) run by
  ``run_host_task`` with recorded answers, once with one action per answer and once with
  speculative multi-action (several actions per answer, each validated against the live window).
  Both runs must leave the calculator showing 46 and the text in mousepad; the calls are counted by
  the agents (``llm_calls`` of the result). The reference claims up to 51% fewer calls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import helpers.desktop_env as desktop_env
from helpers.desktop_script import (
    app,
    calculator_answers,
    calculator_display,
    call,
    control_labels,
    host,
    select,
    window_ids,
    write_answers,
)
from helpers.xdisplay import kill_tree, processes_on_display, start_bus, start_xvfb, stop_xvfb
from rich.console import Console

from starweave.session.console import ConsoleView
from starweave.session.desktop_runner import DesktopOptions, run_host_task
from starweave.session.runner import RunOptions
from starweave.tools.desktop.annotate import annotate
from starweave.tools.desktop.linux.backend import LinuxDesktopBackend
from starweave.tools.desktop.settle import apoll_until

KEYS = ["1", "2", "+", "3", "4", "="]
NOTE = "12 + 34 = 46"


class Desktop:
    """Xvfb + session bus + the two applications, torn down in :meth:`close`."""

    def __init__(self) -> None:
        self.xvfb, self.display = start_xvfb()
        env = dict(os.environ, DISPLAY=self.display, GSETTINGS_BACKEND="memory")
        self.bus, address = start_bus(env)
        os.environ.update(DISPLAY=self.display, DBUS_SESSION_BUS_ADDRESS=address, GSETTINGS_BACKEND="memory")
        self.home = Path(tempfile.mkdtemp(prefix="starweave-bench-"))
        self.session = desktop_env.DesktopSession(display=self.display, bus_address=address, home=self.home)

    def close(self) -> None:
        strays = processes_on_display(self.display)
        for proc in self.session.procs:
            kill_tree(proc.pid)
        kill_tree(self.bus.pid)
        for stray in strays:
            kill_tree(stray.pid)
        stop_xvfb(self.xvfb)
        shutil.rmtree(self.home, ignore_errors=True)


async def window_of(backend: LinuxDesktopBackend, app_name: str) -> tuple[str, str, str]:
    """(annotation id, name, window id) once AT-SPI lists the application."""

    async def find() -> tuple[str, str, str] | None:
        entry = (await window_ids(backend)).get(app_name)
        return (entry[0], entry[1].name, entry[1].id) if entry else None

    found = await apoll_until(find, timeout=20)
    if found is None:
        raise RuntimeError(f"{app_name} did not appear on the AT-SPI desktop")
    return found


async def timings(backend: LinuxDesktopBackend, window: str, repeat: int) -> dict[str, Any]:
    """Median seconds of a control walk and of screenshot + annotation of ``window``."""
    walks, shots = [], []
    controls = []
    for _ in range(repeat):
        started = time.perf_counter()
        controls = await backend.window_controls(window)
        walks.append(time.perf_counter() - started)
        started = time.perf_counter()
        png = await backend.screenshot(window)
        origin = next(w.rectangle for w in await backend.list_windows() if w.id == window)
        await asyncio.to_thread(annotate, png, controls, origin)
        shots.append(time.perf_counter() - started)
    return {
        "controls": len(controls),
        "collect_controls_s": round(statistics.median(walks), 4),
        "annotated_screenshot_s": round(statistics.median(shots), 4),
    }


def script(
    calc: tuple[str, str],
    pad: tuple[str, str],
    calc_labels: dict[tuple[str, str], str],
    edit: str,
    multi: bool,
) -> list[dict[str, Any]]:
    """The recorded answers of the scripted request (one action per answer unless ``multi``)."""
    write = call("set_edit_text", id=edit, name="", text=NOTE)
    read = call("texts", id=edit, name="")
    pad_answers = (
        [app("FINISH", [write, read], result="written")]
        if multi
        else [app("CONTINUE", write), app("FINISH", read, result="written")]
    )
    return [
        select(calc[0], calc[1], "compute 12 + 34"),
        *calculator_answers(calc_labels, KEYS, multi_action=multi, result="46"),
        select(pad[0], pad[1], "write the result in mousepad"),
        *pad_answers,
        host("FINISH", result=NOTE),
    ]


async def scripted_run(desktop: Desktop, backend: LinuxDesktopBackend, multi: bool, folder: Path) -> int:
    """Run the scripted request on fresh applications; returns the LLM calls."""
    calc_app = desktop.session.launch("gnome-calculator", position=(600, 30))
    pad_app = desktop.session.launch("mousepad", position=(20, 420))
    try:
        calc = await window_of(backend, "gnome-calculator")
        pad = await window_of(backend, "mousepad")
        labels = await control_labels(backend, calc[2])
        edit = (await control_labels(backend, pad[2]))[("Edit", "")]
        answers = script(calc[:2], pad[:2], labels, edit, multi)
        name = "multi" if multi else "single"
        options = RunOptions(
            request="add 12 and 34 with the calculator and write the sum in mousepad",
            workspace=folder / "ws",
            provider="replay",
            replay_file=write_answers(folder / f"{name}.jsonl", answers),
            log_dir=folder / "logs",
            task=name,
            quiet=True,
        )
        view = ConsoleView(console=Console(quiet=True), quiet=True)
        result = await run_host_task(options, view, DesktopOptions(multi_action=multi))
        display = await calculator_display(backend, calc[2])
        if result["status"] != "FINISH" or display != "46":
            raise RuntimeError(f"the {name} run did not finish right: display {display!r}, {result}")
        return int(result["llm_calls"])
    finally:
        desktop.session.stop(calc_app)
        desktop.session.stop(pad_app)


async def main(repeat: int) -> dict[str, Any]:
    desktop = Desktop()
    backend = LinuxDesktopBackend()
    folder = Path(tempfile.mkdtemp(prefix="starweave-bench-run-"))
    try:
        calc_app = desktop.session.launch("gnome-calculator", position=(600, 30))
        pad_app = desktop.session.launch("mousepad", position=(20, 420))
        calc = await window_of(backend, "gnome-calculator")
        pad = await window_of(backend, "mousepad")
        figures: dict[str, Any] = {
            "calculator": await timings(backend, calc[2], repeat),
            "mousepad": await timings(backend, pad[2], repeat),
        }
        desktop.session.stop(calc_app)
        desktop.session.stop(pad_app)
        single = await scripted_run(desktop, backend, False, folder)
        multi = await scripted_run(desktop, backend, True, folder)
        figures["llm_calls"] = {
            "one_action_per_answer": single,
            "speculative_multi_action": multi,
            "fewer_calls_percent": round(100 * (single - multi) / single, 1),
        }
        return figures
    finally:
        await backend.aclose()
        desktop.close()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="Measurements per timing (median).")
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        sys.exit("the desktop benchmark runs on Linux (Xvfb + AT-SPI)")
    print(json.dumps(asyncio.run(main(args.repeat)), indent=2))
