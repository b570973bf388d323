"""The shell policy: decide, argv by argv, whether a command line may run.

Modes (``ShellConfig.mode``):

* ``readonly``: nothing may be written: write redirections, writing commands and write options
  are refused; the sandbox binds the workspace read-only too.
* ``workspace`` (default): writes only inside the workspace, every path resolved with symlinks.
* ``unrestricted``: no policy and no sandbox; the command goes to ``bash -c`` (logged as a warning).

Every command is checked twice: once for the whole line before anything runs (so a refusal comes
before any side effect), and once per pipeline right before it runs, with the globs expanded
against the files as they are then (that second check is the one that decides).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError, PolicyViolation
from starweave.tools.servers.shell.catalog import XARGS_SAFE, lookup_rule
from starweave.tools.servers.shell.parser import (
    CommandLine,
    Pipeline,
    Redirect,
    expand_command,
    parse_command_line,
)
from starweave.tools.servers.shell.paths import PathGuard
from starweave.tools.servers.shell.rulebook import RuleContext, refuse

logger = logging.getLogger(__name__)

SYSTEM_BIN_DIRS = frozenset({"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"})


@dataclass
class PreparedCommand:
    """A checked simple command: final argv, redirections with resolved targets, extra env, or a
    ``cd`` (``cd_to`` set, nothing to execute)."""

    argv: list[str]
    redirects: list[Redirect] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cd_to: str | None = None


@dataclass
class PolicyDecision:
    """The verdict on a command line: ``allowed`` with a ``reason``, and the parsed line."""

    allowed: bool
    reason: str
    line: CommandLine | None = None


class ShellPolicy:
    """Per-command argv policy for one :class:`ShellConfig`.

    ``sandboxed`` says whether commands will run inside bubblewrap; a few things (running a script
    of the workspace, xargs with a writing command) are allowed only then, because the kernel then
    confines what they write.
    """

    def __init__(self, config: ShellConfig, *, sandboxed: bool = False) -> None:
        if not config.workspace or not os.path.isabs(config.workspace):
            raise ConfigError(f"SHELL.WORKSPACE must be an absolute directory (got {config.workspace!r})")
        os.makedirs(config.workspace, exist_ok=True)
        self.config = config
        self.mode = config.mode
        self.guard = PathGuard(
            config.workspace, "readonly" if config.mode == "readonly" else "workspace", config.read_roots
        )
        self.workspace = self.guard.workspace
        self.sandboxed = sandboxed and config.mode != "unrestricted"
        if config.mode == "unrestricted":
            logger.warning(
                "SHELL.MODE is unrestricted: shell commands run through bash with no policy and no sandbox"
            )

    # ---- whole command lines ---------------------------------------------------------------------

    def evaluate(self, command: str, cwd: str | None = None) -> PolicyDecision:
        """Check ``command`` without running it; never raises for a refused command."""
        try:
            line = self.enforce(command, cwd)
        except PolicyViolation as exc:
            return PolicyDecision(False, str(exc))
        reason = "unrestricted mode: no policy" if self.mode == "unrestricted" else "allowed by the policy"
        return PolicyDecision(True, reason, line)

    def enforce(self, command: str, cwd: str | None = None) -> CommandLine:
        """Parse and check every pipeline of ``command``; raise PolicyViolation on the first refusal."""
        if not command or not command.strip():
            raise PolicyViolation("the command is empty")
        current = self.resolve_cwd(cwd)
        if self.mode == "unrestricted":
            return CommandLine()
        line = parse_command_line(command)
        for pipeline in line.pipelines:
            _, current = self.prepare_pipeline(pipeline, current, upfront=True)
        return line

    def resolve_cwd(self, cwd: str | None) -> str:
        """The working directory for a command: ``cwd`` (relative to the workspace) or the workspace."""
        if self.mode == "unrestricted":
            real = self.guard.resolve(cwd) if cwd else self.workspace
            if not os.path.isdir(real):
                raise PolicyViolation(f"the working directory {real} does not exist")
            return real
        return self.guard.check_cwd(cwd)

    # ---- one pipeline ----------------------------------------------------------------------------

    def prepare_pipeline(
        self, pipeline: Pipeline, cwd: str, *, upfront: bool = False
    ) -> tuple[list[PreparedCommand], str]:
        """Expand and check the commands of ``pipeline`` in ``cwd``; return them and the working
        directory after it (changed only by ``cd``). ``upfront`` tolerates a ``cd`` into a
        directory an earlier pipeline will create."""
        words0 = [c.words[0].raw if c.words else "" for c in pipeline.commands]
        if "cd" in words0:
            if len(pipeline.commands) > 1:
                raise PolicyViolation("cd inside a pipeline has no effect; use 'cd DIR && command'")
            return self._cd(pipeline, cwd, upfront)
        prepared: list[PreparedCommand] = []
        for raw in pipeline.commands:
            cmd = expand_command(raw, cwd=cwd, workspace=self.workspace)
            redirects = [self._check_redirect(r, cwd) for r in cmd.redirects]
            argv = self.check_argv(cmd.argv, cwd)
            prepared.append(PreparedCommand(argv, redirects, cmd.env))
        return prepared, cwd

    def _cd(self, pipeline: Pipeline, cwd: str, upfront: bool) -> tuple[list[PreparedCommand], str]:
        cmd = expand_command(pipeline.commands[0], cwd=cwd, workspace=self.workspace)
        if cmd.redirects or len(cmd.argv) > 2:
            raise PolicyViolation("cd takes one directory and no redirections")
        target = cmd.argv[1] if len(cmd.argv) == 2 else self.workspace
        if target == "-":
            raise PolicyViolation("cd - is not supported; name the directory")
        real = self.guard.resolve(target, cwd)
        if not self.guard.in_workspace(real):
            raise PolicyViolation(f"cd {target}: {real} is outside the workspace {self.workspace}")
        if not upfront:
            real = self.guard.check_cwd(real)
        return [PreparedCommand(cmd.argv, cd_to=real)], real

    def _check_redirect(self, r: Redirect, cwd: str) -> Redirect:
        if r.kind == "dup":
            return r
        if r.kind == "read":
            return Redirect(r.fd, r.kind, self.guard.check_read(r.target, cwd), r.dup_to)
        return Redirect(r.fd, r.kind, self.guard.check_write(r.target, cwd), r.dup_to)

    # ---- one argv --------------------------------------------------------------------------------

    def check_argv(self, argv: list[str], cwd: str) -> list[str]:
        """Check one expanded argv in ``cwd``; return the argv to execute (possibly rewritten)."""
        ctx = RuleContext(
            guard=self.guard,
            cwd=cwd,
            mode=self.mode,
            allow_network=self.config.allow_network,
            sandboxed=self.sandboxed,
            check_inner=self._check,
        )
        return self._check(argv, ctx)

    def _check(self, argv: list[str], ctx: RuleContext) -> list[str]:
        name = argv[0]
        base = name
        if "/" in name:
            real = self.guard.resolve(name, ctx.cwd)
            if self.guard.in_workspace(real):
                return self._workspace_program(argv, ctx)
            given_dir = os.path.dirname(os.path.normpath(os.path.join(ctx.cwd, name)))
            if given_dir not in SYSTEM_BIN_DIRS and os.path.dirname(real) not in SYSTEM_BIN_DIRS:
                refuse(f"{name}: only programs from {', '.join(sorted(SYSTEM_BIN_DIRS))} may run")
            base = os.path.basename(name)
        if ctx.stdin_args and base not in XARGS_SAFE and not ctx.sandboxed:
            refuse(
                f"xargs {base}: the file names come from stdin and cannot be checked, so only read-only "
                "commands may follow xargs without the bubblewrap sandbox"
            )
        out = lookup_rule(base)([base, *argv[1:]], ctx)
        return [name, *out[1:]]

    def _workspace_program(self, argv: list[str], ctx: RuleContext) -> list[str]:
        if not ctx.sandboxed:
            refuse(
                f"{argv[0]}: running programs from the workspace needs the bubblewrap sandbox "
                "(SHELL.SANDBOX auto/bwrap with bwrap installed)"
            )
        self.guard.check_read(argv[0], ctx.cwd)
        return argv
