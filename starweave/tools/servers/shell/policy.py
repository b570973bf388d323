"""The shell policy: decide, argv by argv, whether a command line may run.

Modes (``ShellConfig.mode``):

* ``readonly``: nothing may be written: write redirections, writing commands and write options
  are refused; the sandbox binds the workspace read-only too.
* ``workspace`` (default): writes only inside the workspace, every path resolved with symlinks.
* ``unrestricted``: no policy and no sandbox; the command goes to ``bash -c`` (logged as a warning).

Every command is checked twice: once for the whole line before anything runs (so a refusal comes
before any side effect), and once per pipeline right before it runs, with the globs expanded
against the files as they are then (that second check is the one that decides). Both checks draw on
a :class:`Budget` (a deadline and a count of directory entries), and the runner calls them in a
worker thread, so no command line can stall the event loop.

The stages of a pipeline run at the same time, so one stage could swap a link under a path another
stage was checked with. Hence: a stage that may create, move or replace links (ln, mv, cp -r,
archive extraction, git checkout, a script) may share a pipeline only with stages that name no path
(``tar xf a.tar | wc -l`` is fine, ``ln -s /etc x | cat x/passwd`` is not). Redirections are opened
by Starweave itself with checks that no swap can defeat, so ``cat a | sort > b`` is always fine.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace

from starweave.config.models import ShellConfig
from starweave.errors import ConfigError, PolicyViolation
from starweave.tools.servers.shell.budget import Budget
from starweave.tools.servers.shell.catalog import XARGS_SAFE, lookup_rule
from starweave.tools.servers.shell.parser import (
    CommandLine,
    Pipeline,
    Redirect,
    expand_command,
    parse_command_line,
)
from starweave.tools.servers.shell.paths import PathGuard
from starweave.tools.servers.shell.rulebook import Effects, RuleContext, refuse
from starweave.tools.servers.shell.targets import resolve_target

logger = logging.getLogger(__name__)


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

    def __init__(self, config: ShellConfig, *, sandboxed: bool = False, sandbox: str | None = None) -> None:
        if not config.workspace or not os.path.isabs(config.workspace):
            raise ConfigError(f"SHELL.WORKSPACE must be an absolute directory (got {config.workspace!r})")
        os.makedirs(config.workspace, exist_ok=True)
        self.config = config
        self.mode = config.mode
        self.guard = PathGuard(
            config.workspace, "readonly" if config.mode == "readonly" else "workspace", config.read_roots
        )
        self.workspace = self.guard.workspace
        # ``sandbox`` (bwrap | landlock | none) is how commands are confined; ``sandboxed`` alone
        # means bubblewrap (as before). Unrestricted mode is never sandboxed.
        kind = sandbox or ("bwrap" if sandboxed else "none")
        self.sandbox = "none" if config.mode == "unrestricted" else kind
        self.sandboxed = self.sandbox != "none"
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

    def enforce(self, command: str, cwd: str | None = None, *, budget: Budget | None = None) -> CommandLine:
        """Parse and check every pipeline of ``command``; raise PolicyViolation on the first refusal.
        Blocking (it reads the file system): the runner calls it in a worker thread."""
        if not command or not command.strip():
            raise PolicyViolation("the command is empty")
        current = self.resolve_cwd(cwd)
        if self.mode == "unrestricted":
            return CommandLine()
        budget = budget or Budget()
        line = parse_command_line(command)
        for pipeline in line.pipelines:
            _, current = self.prepare_pipeline(pipeline, current, upfront=True, budget=budget)
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
        self, pipeline: Pipeline, cwd: str, *, upfront: bool = False, budget: Budget | None = None
    ) -> tuple[list[PreparedCommand], str]:
        """Expand and check the commands of ``pipeline`` in ``cwd``; return them and the working
        directory after it (changed only by ``cd``). ``upfront`` tolerates a ``cd`` into a
        directory an earlier pipeline will create."""
        budget = budget or Budget()
        words0 = [c.words[0].raw if c.words else "" for c in pipeline.commands]
        if "cd" in words0:
            if len(pipeline.commands) > 1:
                raise PolicyViolation("cd inside a pipeline has no effect; use 'cd DIR && command'")
            return self._cd(pipeline, cwd, upfront, budget)
        prepared: list[PreparedCommand] = []
        effects: list[tuple[str, Effects]] = []
        for raw in pipeline.commands:
            cmd = expand_command(raw, cwd=cwd, workspace=self.workspace, budget=budget)
            redirects = [self._check_redirect(r, cwd) for r in cmd.redirects]
            effect = Effects()
            argv = self.check_argv(cmd.argv, cwd, budget=budget, effects=effect, upfront=upfront)
            prepared.append(PreparedCommand(argv, redirects, cmd.env))
            effects.append((cmd.argv[0], effect))
        check_pipeline_races(effects)
        return prepared, cwd

    def _cd(
        self, pipeline: Pipeline, cwd: str, upfront: bool, budget: Budget
    ) -> tuple[list[PreparedCommand], str]:
        cmd = expand_command(pipeline.commands[0], cwd=cwd, workspace=self.workspace, budget=budget)
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
        """Redirections are opened by Starweave itself: regular files (or /dev/null) only."""
        if r.kind == "dup":
            return r
        if r.kind == "read":
            real = self.guard.check_read(r.target, cwd)
            self.guard.check_type(real, r.target, tool_devices=False)
            return Redirect(r.fd, r.kind, real, r.dup_to)
        real = self.guard.check_write(r.target, cwd)
        if real not in ("/dev/null", "/dev/stdout", "/dev/stderr"):
            self.guard.check_type(real, r.target, tool_devices=False)
        return Redirect(r.fd, r.kind, real, r.dup_to)

    # ---- one argv --------------------------------------------------------------------------------

    def check_argv(
        self,
        argv: list[str],
        cwd: str,
        *,
        budget: Budget | None = None,
        effects: Effects | None = None,
        upfront: bool = False,
    ) -> list[str]:
        """Check one expanded argv in ``cwd``; return the argv to execute (possibly rewritten)."""
        ctx = RuleContext(
            guard=self.guard,
            cwd=cwd,
            mode=self.mode,
            allow_network=self.config.allow_network,
            sandboxed=self.sandboxed,
            check_inner=self._check,
            budget=budget or Budget(),
            effects=effects or Effects(),
            upfront=upfront,
        )
        return self._check(argv, ctx)

    def _check(self, argv: list[str], ctx: RuleContext) -> list[str]:
        given = argv[0]
        target = resolve_target(given, ctx.cwd, self.guard)
        if target.in_workspace:
            return self._workspace_program(argv, ctx)
        name = target.name
        if ctx.stdin_args and name not in XARGS_SAFE and not ctx.sandboxed:
            refuse(
                f"xargs {name}: the file names come from stdin and cannot be checked, so without a sandbox "
                "only commands that open no file (echo, ls, stat, du ...) may follow xargs; use "
                "grep -r, find or a loop of separate commands instead"
            )
        rule = lookup_rule(name)
        try:
            out = rule([name, *argv[1:]], replace(ctx, real=target.real, tool=name))
        except PolicyViolation as exc:
            shown = os.path.basename(given)
            if shown != name:
                raise PolicyViolation(f"{given} runs {target.real or name}: {exc}") from exc
            raise
        return [given, *out[1:]]

    def _workspace_program(self, argv: list[str], ctx: RuleContext) -> list[str]:
        if not ctx.sandboxed:
            refuse(
                f"{argv[0]}: running programs from the workspace needs a sandbox "
                "(SHELL.SANDBOX auto, bwrap or landlock)"
            )
        ctx.read(argv[0])
        ctx.relinks(f"the workspace program {argv[0]} can do anything in the workspace")
        return argv


def check_pipeline_races(stages: list[tuple[str, Effects]]) -> None:
    """Refuse a pipeline where a stage that may create, move or replace links runs beside another
    stage that names a path (see the module docstring)."""
    if len(stages) < 2:
        return
    relinkers = [(name, e) for name, e in stages if e.relinks]
    if len(relinkers) > 1:
        names = " and ".join(name for name, _ in relinkers)
        raise PolicyViolation(
            f"{names} both change files and links while running at the same time in one pipeline; "
            "run them one after another with && instead"
        )
    if not relinkers:
        return
    name, effect = relinkers[0]
    for other, e in stages:
        if e is not effect and e.paths:
            raise PolicyViolation(
                f"in this pipeline {name} ({effect.relinks}) runs at the same time as {other}, which names "
                f"{e.paths[0]}: a link made meanwhile could redirect it; run them one after another with && "
                "(redirections like > file are fine)"
            )
