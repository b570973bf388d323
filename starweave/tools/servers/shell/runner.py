"""Run a checked command line: real pipes between processes, ``&&``/``||``/``;`` by exit code,
redirections opened by us, a clean environment, a timeout that kills every process group and
capped output. No shell is involved (except in unrestricted mode, which hands the line to bash)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from functools import partial
from typing import Any

from starweave.errors import PolicyViolation, ToolError
from starweave.tools.servers.shell.budget import Budget
from starweave.tools.servers.shell.checkpool import CHECKS
from starweave.tools.servers.shell.landlock import landlock_abi
from starweave.tools.servers.shell.launch import CLEAN_PATH, Launch, clean_env, spawn, stop
from starweave.tools.servers.shell.parser import CommandLine
from starweave.tools.servers.shell.paths import open_for_write
from starweave.tools.servers.shell.policy import PreparedCommand, ShellPolicy
from starweave.tools.servers.shell.safeopen import open_checked_read

READ_CHUNK = 65536
DRAIN_AFTER_KILL = 1.0  # seconds the output readers get after a timeout kill


__all__ = ["CLEAN_PATH", "clean_env", "effective_timeout", "run_command"]


def _launch_of(policy: ShellPolicy) -> Launch:
    """How the commands of ``policy`` start (its sandbox, limits and workspace)."""
    kind = "unrestricted" if policy.mode == "unrestricted" else policy.sandbox
    return Launch(
        kind,
        policy.config,
        policy.workspace,
        read_roots=list(policy.guard.read_roots),
        bwrap_exe=shutil.which("bwrap") if kind == "bwrap" else None,
        landlock_abi=landlock_abi() if kind == "landlock" else 0,
    )


def _signal_code(rc: int) -> int:
    return 128 - rc if rc < 0 else rc  # killed by signal n: 128 + n, as bash reports it


class _Collector:
    """Reads one output pipe to EOF, keeping at most ``cap`` bytes and draining the rest."""

    def __init__(self, fd: int, cap: int) -> None:
        self.fd, self.cap = fd, cap
        self.data = bytearray()
        self.truncated = False

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=READ_CHUNK * 4)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(self.fd, "rb", buffering=0)
        )
        try:
            while chunk := await reader.read(READ_CHUNK):
                room = self.cap - len(self.data)
                if len(chunk) > room:
                    self.truncated = True
                if room > 0:
                    self.data += chunk[:room]
        finally:
            transport.close()

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class _Execution:
    """One run of one command line."""

    def __init__(self, policy: ShellPolicy) -> None:
        self.policy = policy
        self.procs: list[asyncio.subprocess.Process] = []
        out_r, self.out_w = os.pipe()
        err_r, self.err_w = os.pipe()
        cap = policy.config.max_output_bytes
        self.out, self.err = _Collector(out_r, cap), _Collector(err_r, cap)
        self.launch = _launch_of(policy)

    async def run_line(self, line: CommandLine, cwd: str, budget: Budget) -> int:
        rc = 0
        for i, pipeline in enumerate(line.pipelines):
            connector = line.connectors[i - 1] if i else ";"
            if (connector == "&&" and rc != 0) or (connector == "||" and rc == 0):
                continue  # skipped: the status stays that of the last pipeline that ran
            # The decisive check (globs expanded against the files as they are now) reads the file
            # system: off the event loop in the check pool, under the command's deadline, with a fresh
            # count of directory entries (the check before anything ran spent the line's first count).
            check = partial(self.policy.prepare_pipeline, budget=Budget(deadline=budget.deadline))
            prepared, cwd = await CHECKS.run(check, pipeline, cwd, owner=self.policy)
            rc = 0 if prepared[0].cd_to else await self._pipeline(prepared, cwd)
        return rc

    async def run_bash(self, command: str, cwd: str) -> int:
        return await self._pipeline([PreparedCommand(["/bin/bash", "-c", command])], cwd)

    def close_writers(self) -> None:
        for fd in (self.out_w, self.err_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def kill_all(self) -> None:
        for proc in self.procs:
            stop(proc)

    async def _pipeline(self, cmds: list[PreparedCommand], cwd: str) -> int:
        stages: list[asyncio.subprocess.Process | int] = []
        prev_read: int | None = None
        for i, cmd in enumerate(cmds):
            to_close: list[int] = []
            where = cmd.argv[0]
            if prev_read is None:
                prev_read = os.open(os.devnull, os.O_RDONLY)
            to_close.append(prev_read)
            next_read: int | None = None
            if i < len(cmds) - 1:
                next_read, pipe_w = os.pipe()
                to_close.append(pipe_w)
                fds = {0: prev_read, 1: pipe_w, 2: self.err_w}
            else:
                fds = {0: prev_read, 1: self.out_w, 2: self.err_w}
            try:
                for r in cmd.redirects:
                    if r.kind == "dup":
                        fds[r.fd] = fds[r.dup_to if r.dup_to is not None else 1]
                    elif r.target in ("/dev/stdout", "/dev/stderr"):
                        fds[r.fd] = fds[1 if r.target == "/dev/stdout" else 2]
                    else:
                        where = r.target
                        fd = self._open(r.target, r.kind)
                        to_close.append(fd)
                        fds[r.fd] = fd
                where = cmd.argv[0]
                stages.append(await self._spawn(cmd, cwd, fds))
            except (OSError, PolicyViolation) as exc:
                msg = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                os.write(self.err_w, f"starweave: {where}: {msg}\n".encode())
                stages.append(1)
            finally:
                for fd in to_close:
                    os.close(fd)
            prev_read = next_read
        codes = [s if isinstance(s, int) else await s.wait() for s in stages]
        return _signal_code(codes[-1])

    def _open(self, target: str, kind: str) -> int:
        if kind == "read":
            # Only the regular file (or /dev/null) the policy checked: never a FIFO or device, never
            # a symlink swapped in by an earlier stage of the same pipeline.
            return open_checked_read(target)
        # Missing folders are created: friendlier than bash for a small model ("echo x > new/dir/f");
        # the policy already placed the target inside the workspace, open_for_write keeps it there.
        workspace = None if self.policy.mode == "unrestricted" else self.policy.workspace
        return open_for_write(target, append=kind == "append", workspace=workspace)

    async def _spawn(
        self, cmd: PreparedCommand, cwd: str, fds: dict[int, int]
    ) -> asyncio.subprocess.Process | int:
        result = await spawn(self.launch, list(cmd.argv), cwd, cmd.env, fds)
        if not isinstance(result, int):
            self.procs.append(result)
        return result


def effective_timeout(timeout: float | None, policy: ShellPolicy) -> float:
    """``timeout`` (the configured default when missing or not positive), capped by MAX_TIMEOUT."""
    value = float(timeout) if timeout and timeout > 0 else float(policy.config.timeout)
    return min(value, float(policy.config.max_timeout))


async def run_command(
    command: str,
    *,
    policy: ShellPolicy,
    timeout: float,  # noqa: ASYNC109 (one limit for many processes, applied with wait_for)
    cwd: str | None = None,
) -> dict[str, Any]:
    """Check and run ``command``. Returns ``{"success", "exit_code", "stdout", "stderr"}`` (plus
    ``"truncated": True`` when an output was capped) or ``{"success": False, "error": ...}``. On a
    timeout the error is ``"Timeout after Ns."``, ``exit_code`` is None and ``stdout``/``stderr`` hold
    what the command printed before it was killed."""
    limit = effective_timeout(timeout, policy)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit  # one deadline for the check and the run
    budget = Budget.for_seconds(limit)

    def check() -> tuple[CommandLine, str]:
        return policy.enforce(command, cwd, budget=budget), policy.resolve_cwd(cwd)

    try:
        # In the check pool, not the loop's default executor: checks that overstay their deadline
        # can hold up only this device's later checks, never the file tools or another device.
        line, start = await asyncio.wait_for(CHECKS.run(check, owner=policy), limit)
    except PolicyViolation as exc:
        return {"success": False, "error": f"Blocked: {exc}"}
    except TimeoutError:  # before OSError: TimeoutError is an OSError
        # The worker thread stops on its own: every walk in the check draws on ``budget``.
        busy = CHECKS.running(policy)
        why = f"; {busy} earlier checks are still running" if busy >= CHECKS.per_owner else ""
        return {
            "success": False,
            "error": f"Timeout after {limit:g}s. (while checking the command{why})",
            "exit_code": None,
            "stdout": "",
            "stderr": "",
        }
    except OSError as exc:
        return {"success": False, "error": f"Failed to check the command: {exc}"}
    run = _Execution(policy)
    readers = [asyncio.create_task(run.out.run()), asyncio.create_task(run.err.run())]

    async def whole() -> int:
        try:
            if policy.mode == "unrestricted":
                rc = await run.run_bash(command, start)
            else:
                rc = await run.run_line(line, start, budget)
        finally:
            run.close_writers()
        await asyncio.gather(*readers)
        return rc

    rc: int | None = None
    try:
        rc = await asyncio.wait_for(whole(), max(deadline - loop.time(), 0.001))
    except TimeoutError:
        pass  # reported below with whatever the command printed before it was killed
    except PolicyViolation as exc:
        return {
            "success": False,
            "error": f"Blocked: {exc}",
            "stdout": run.out.text(),
            "stderr": run.err.text(),
        }
    except (OSError, ToolError) as exc:
        return {"success": False, "error": f"Failed to run the command: {exc}"}
    finally:
        run.kill_all()  # whole() closed our pipe write ends when it finished or was cancelled
        if rc is None:
            # The killed processes' pipe ends are closed now: let the readers take what is still
            # buffered, briefly (a process that left our process group may hold a pipe open).
            pending = [task for task in readers if not task.done()]
            if pending:
                await asyncio.wait(pending, timeout=DRAIN_AFTER_KILL)
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        for proc in run.procs:
            if proc.returncode is None:
                await proc.wait()
    result: dict[str, Any] = {"success": rc == 0, "exit_code": rc}
    if rc is None:
        result["error"] = f"Timeout after {limit:g}s."
    result.update(stdout=run.out.text(), stderr=run.err.text())
    if run.out.truncated or run.err.truncated:
        result["truncated"] = True
    return result
