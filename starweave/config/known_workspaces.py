"""The workspaces Starweave has given an agent, so that no configuration is loaded from inside one.

Everything in a workspace is writable by the model's commands. A configuration folder there
(``./config`` when a run starts in its own workspace, the default) would let a prompt-injected model
write ``config/ufo/system.yaml`` with ``SHELL: {MODE: unrestricted}`` or an ``mcp.yaml`` that starts
a program of its choice, and the user's next run would load it. The model could also name another
workspace there (``SHELL.WORKSPACE``), so comparing with the next run's own workspace is not enough:
every workspace handed to an agent is remembered in ``<state dir>/workspaces`` (one absolute path a
line, outside every workspace), and a configuration folder inside any of them is refused.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from starweave.config.state import state_home, write_private
from starweave.errors import ConfigError

log = logging.getLogger(__name__)

WORKSPACES_FILE = "workspaces"
# Folders that no longer exist are dropped at every write; past this many the oldest go too.
MAX_REMEMBERED = 5000


def _read(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return [line.rstrip("\n") for line in handle if line.startswith("/")]
    except FileNotFoundError:
        return []


def remembered_workspaces(env: Mapping[str, str] | None = None) -> list[Path]:
    """The workspaces handed to agents so far (unreadable state counts as none, with a warning)."""
    try:
        return [Path(line) for line in _read(state_home(env) / WORKSPACES_FILE)]
    except OSError as exc:
        log.warning("cannot read the known workspaces (%s): %s", state_home(env), exc.strerror or exc)
        return []


def remember_workspace(folder: Path, env: Mapping[str, str] | None = None) -> None:
    """Record ``folder`` (absolute, resolved) as a workspace. Several processes may write at once:
    the file is rewritten under an exclusive lock. A state folder that cannot be written is warned
    about: configuration inside this workspace is then refused only while it is a run's workspace."""
    home = state_home(env)
    path = home / WORKSPACES_FILE
    entry = str(folder)
    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(home / f"{WORKSPACES_FILE}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            lines = _read(path)
            if entry in lines:
                return
            kept = [line for line in lines if os.path.isdir(line)][-(MAX_REMEMBERED - 1) :]
            write_private(path, "".join(f"{line}\n" for line in [*kept, entry]))
    except OSError as exc:
        log.warning(
            "cannot record the workspace %s in %s: %s; a configuration folder placed in it later will "
            "not be recognised as the agent's",
            folder,
            path,
            exc.strerror or exc,
        )


def _overlaps(config_dir: Path, workspace: Path) -> bool:
    """Whether an agent working in ``workspace`` can write files Starweave loads from ``config_dir``."""
    if config_dir == workspace or workspace in config_dir.parents:
        return True
    return any(workspace.is_relative_to(config_dir / sub) for sub in ("ufo", "galaxy"))


def config_dir_conflict(config_dir: Path, workspaces: Iterable[Path]) -> None:
    """Raise ConfigError when an agent working in one of ``workspaces`` can write ``config_dir``."""
    folder = config_dir.expanduser().resolve()
    for known in workspaces:
        if _overlaps(folder, known.expanduser().resolve()):
            raise ConfigError(
                f"{folder}: refusing this configuration folder: it shares files with the workspace {known}, "
                "which the agent's commands can write, so a model could have put settings there (an "
                "unrestricted SHELL, an MCP server of its choice). Keep the configuration outside every "
                "workspace (--config-dir DIR or STARWEAVE_CONFIG_DIR), or pass --workspace with a "
                "folder that does not hold it"
            )
