"""One shell of the model: its workspace, its sandbox and its working directory between calls.

The command line itself is bash's business; nothing here reads it. What a :class:`ShellSession`
decides is where a command starts: the ``cwd`` a call names (relative to the workspace; for that
call only), else the folder where the last command that moved ended, as a terminal keeps it. Under
a sandbox a folder outside the workspace is never carried over (the sandbox's private ``/tmp`` is
gone after the command, and the next call should not start where the user did not put it).

Modes (``ShellConfig.mode``):

* ``workspace`` (default): the sandbox lets commands write only in the workspace and their private
  temporary folders;
* ``readonly``: the sandbox binds the workspace read-only too;
* ``unrestricted``: no sandbox; bash runs with the resource limits only (logged as a warning).
"""

from __future__ import annotations

import logging
import os
import shutil
from functools import cached_property

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError, PolicyViolation
from starweave.tools.confine.outside_links import OutsideLinks
from starweave.tools.confine.paths import is_within
from starweave.tools.sandbox.landlock import landlock_abi
from starweave.tools.sandbox.launch import Launch

logger = logging.getLogger(__name__)


class ShellSession:
    """The shell of one workspace under one sandbox (``bwrap``, ``landlock`` or ``none``)."""

    def __init__(self, config: ShellConfig, *, sandbox: str = "none") -> None:
        if not config.workspace or not os.path.isabs(config.workspace):
            raise ConfigError(f"SHELL.WORKSPACE must be an absolute directory (got {config.workspace!r})")
        os.makedirs(config.workspace, exist_ok=True)
        self.config = config
        self.mode = config.mode
        self.workspace = os.path.realpath(config.workspace)
        self.read_roots = [os.path.realpath(r) for r in config.read_roots]
        self.sandbox = "none" if config.mode == "unrestricted" else sandbox
        self.cwd = self.workspace  # where the next command starts when its call names no folder
        if config.mode == "unrestricted":
            logger.warning("SHELL.MODE is unrestricted: shell commands run through bash with no sandbox")

    @property
    def confined(self) -> bool:
        """Whether a sandbox confines the commands."""
        return self.sandbox != "none"

    @cached_property
    def launch(self) -> Launch:
        """How this session's commands start (sandbox, limits, workspace)."""
        kind = "unrestricted" if self.mode == "unrestricted" else self.sandbox
        return Launch(
            kind,
            self.config,
            self.workspace,
            read_roots=list(self.read_roots),
            bwrap_exe=shutil.which("bwrap") if kind == "bwrap" else None,
            landlock_abi=landlock_abi() if kind == "landlock" else 0,
        )

    @cached_property
    def _links(self) -> OutsideLinks:
        return OutsideLinks(self.workspace)

    def prepare(self, cwd: str | None) -> str:
        """Before a command: separate the workspace's files that are hard links of outside files
        (the sandbox would let a write reach them), then :meth:`start_folder`. Blocking. Raises
        PolicyViolation when a folder cannot be used or such a file cannot be separated."""
        if self.confined and self.mode != "readonly":
            try:
                copied = self._links.detach_outside()
            except OSError as exc:
                raise PolicyViolation(
                    f"no command can run: {exc.filename} is a hard link of a file outside the "
                    f"workspace and could not be replaced by a copy ({exc.strerror})"
                ) from exc
            for path in copied:
                logger.warning(
                    "%s was a hard link of a file outside the workspace: it is now a copy of its own, "
                    "so commands cannot change the outside file",
                    path,
                )
        return self.start_folder(cwd)

    def start_folder(self, cwd: str | None) -> str:
        """Where a command starts: ``cwd`` (relative to the workspace) when given, else the folder
        the previous command ended in. Raises PolicyViolation for a folder that cannot be used."""
        if not cwd:
            if os.path.isdir(self.cwd):
                return self.cwd
            self.cwd = self.workspace  # the folder was removed meanwhile
            return self.cwd
        real = os.path.realpath(os.path.join(self.workspace, os.path.expanduser(cwd)))
        if self.mode != "unrestricted" and not is_within(real, self.workspace):
            raise PolicyViolation(
                f"the working directory {cwd} is outside the workspace {self.workspace}; "
                "use 'cd DIR && ...' inside the command instead"
            )
        if not os.path.isdir(real):
            raise PolicyViolation(f"the working directory {cwd} does not exist")
        return real

    def end_folder(self, reported: bytes) -> str | None:
        """The folder the command reported it ended in, when it is one the next command may start
        in (anything else is ignored: the command could write anything there), or None."""
        text = reported.decode("utf-8", "replace").strip().splitlines()
        if not text:
            return None
        where = os.path.realpath(text[-1])
        if not os.path.isabs(text[-1]) or not os.path.isdir(where):
            return None
        if self.mode != "unrestricted" and not is_within(where, self.workspace):
            return None
        return where
