"""Which runner ``starweave run --agent NAME`` starts, and the checks of the agent-specific options."""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starweave.errors import ConfigError

if TYPE_CHECKING:
    from starweave.session.console import ConsoleView
    from starweave.session.runner import RunOptions

#: The ``--agent`` values.
AGENTS = ("linux", "host", "mobile")


@dataclass
class AgentExtras:
    """The agent-specific options of ``run``: the HostAgent's and the MobileAgent's."""

    multi_action: bool = False
    visual: bool = False
    serial: str = ""
    adb_path: str = ""


def check_agent_options(agent: str, plan: object, serial: str, adb_path: str) -> None:
    """``--agent`` is known and the options given go with it (ConfigError otherwise)."""
    if agent not in AGENTS:
        raise ConfigError(f"unknown --agent {agent!r}; choose {', '.join(AGENTS[:-1])} or {AGENTS[-1]}")
    if agent != "mobile" and (serial or adb_path):
        raise ConfigError("--serial and --adb-path go with --agent mobile")
    if agent == "mobile" and plan is not None:
        raise ConfigError("--plan runs with --agent linux or --agent host")


def agent_task(
    agent: str, options: RunOptions, view: ConsoleView, extras: AgentExtras
) -> Coroutine[Any, Any, dict[str, Any]]:
    """The run of ``options`` with the chosen agent's runner (imported only when chosen)."""
    if agent == "host":
        from starweave.session.desktop_runner import DesktopOptions, run_host_task

        return run_host_task(
            options, view, DesktopOptions(multi_action=extras.multi_action, visual=extras.visual)
        )
    if agent == "mobile":
        from starweave.session.mobile_runner import MobileOptions, run_mobile_task

        return run_mobile_task(options, view, MobileOptions(extras.serial, extras.adb_path, extras.visual))
    from starweave.session.runner import run_linux_task

    return run_linux_task(options, view=view)
