"""Run a command line with bash inside the session's sandbox: a clean environment, no profile or rc
files, a deadline that ends every process the command started, and capped output.

bash runs non-interactively (``bash --noprofile --norc -c LINE``) as the sandbox's command, so
everything bash offers works: variables, loops, functions, ``$(...)``, here-documents, subshells,
``find -exec``, ``xargs``, interpreters and jobs started with ``&`` (they end with the command).
The line is given to bash behind one statement on the same line (line numbers stay the user's) that
reports the folder bash ends in, through a pipe of its own, so the next call starts there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
from typing import Any

from starweave.errors import PolicyViolation, ToolError
from starweave.text import unencodable_problem
from starweave.tools.sandbox.launch import CLEAN_PATH, clean_env, spawn, stop
from starweave.tools.servers.shell.session import ShellSession

READ_CHUNK = 65536
DRAIN_AFTER_KILL = 1.0  # seconds the output readers get after a timeout kill
# One argument of execve holds at most 128 KiB; a longer program belongs in a script file.
MAX_COMMAND_CHARS = 100_000
MAX_COMMAND_BYTES = 128 * 1024 - 1024  # in UTF-8, with room for the trap in front of the line
BASH_OPTIONS = ("--noprofile", "--norc")
# bubblewrap's own setup error for a mount point it had to create: the hidden file or folder it
# was to cover was removed between the search for it and the mount (the command never started).
_MOUNT_POINT_GONE = re.compile(r"bwrap: Can't (?:create file|mkdir) at (/[^\n]*?): ")

__all__ = ["CLEAN_PATH", "clean_env", "effective_timeout", "run_command"]


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


def bash_program(command: str, report_fd: int) -> str:
    """``command`` behind the trap that reports the final folder on ``report_fd`` (same line, so
    bash's line numbers in error messages stay those of ``command``)."""
    return f"trap 'builtin pwd -P >&{report_fd} 2>/dev/null' EXIT; {command}"


def command_problem(command: str) -> str | None:
    """Why ``command`` cannot be given to bash at all, or None."""
    if not command or not command.strip():
        return "the command is empty"
    if "\0" in command:
        return "the command contains a NUL character, which no shell can take"
    # A lone surrogate (JSON allows one): execve could not take it.
    problem = unencodable_problem(command, "the command")
    if problem:
        return problem
    size = len(command.encode("utf-8"))
    if len(command) > MAX_COMMAND_CHARS or size > MAX_COMMAND_BYTES:
        return (
            f"the command is {len(command)} characters ({size} bytes) long (at most "
            f"{MAX_COMMAND_CHARS} characters and {MAX_COMMAND_BYTES} bytes); "
            "write the program to a file with write_file and run that file"
        )
    return None


def effective_timeout(timeout: float | None, session: ShellSession) -> float:
    """``timeout`` (the configured default when missing or not positive), capped by MAX_TIMEOUT."""
    value = float(timeout) if timeout and timeout > 0 else float(session.config.timeout)
    return min(value, float(session.config.max_timeout))


def _read_report(fd: int) -> bytes:
    """What the trap wrote (the pipe is never waited on: background jobs may hold it open)."""
    os.set_blocking(fd, False)
    data = bytearray()
    with contextlib.suppress(BlockingIOError):
        while len(data) <= 65536 and (chunk := os.read(fd, 4096)):
            data += chunk
    return bytes(data)


async def run_command(
    command: str,
    *,
    session: ShellSession,
    timeout: float,  # noqa: ASYNC109 (one limit for many processes, applied with wait_for)
    cwd: str | None = None,
) -> dict[str, Any]:
    """Run ``command`` with bash in ``session``'s sandbox. Returns ``{"success", "exit_code",
    "stdout", "stderr"}`` (plus ``"truncated": True`` when an output was capped, and ``"cwd"`` when
    the command ended in another folder, where the next command starts) or ``{"success": False,
    "error": ...}``. On a timeout the error is ``"Timeout after Ns."``, ``exit_code`` is None and
    ``stdout``/``stderr`` hold what the command printed before it was killed."""
    result = await _run_once(command, session=session, timeout=timeout, cwd=cwd)
    if _setup_raced(result):
        result = await _run_once(command, session=session, timeout=timeout, cwd=cwd)
    return result


def _setup_raced(result: dict[str, Any]) -> bool:
    """Whether the sandbox failed to start only because a path it was to hide vanished meanwhile;
    the command did not run, so running it again is safe."""
    if result.get("exit_code") != 1 or result.get("stdout"):
        return False
    found = _MOUNT_POINT_GONE.match(str(result.get("stderr", "")))
    return found is not None and not os.path.lexists(found.group(1))


async def _run_once(
    command: str,
    *,
    session: ShellSession,
    timeout: float,  # noqa: ASYNC109 (as run_command's)
    cwd: str | None,
) -> dict[str, Any]:
    problem = command_problem(command)
    if problem:
        return {"success": False, "error": problem}
    limit = effective_timeout(timeout, session)
    try:
        start = await asyncio.to_thread(session.prepare, cwd)
    except PolicyViolation as exc:
        return {"success": False, "error": str(exc)}
    bash = shutil.which("bash", path=CLEAN_PATH)
    if bash is None:
        return {"success": False, "error": "bash is not installed on this machine"}
    cap = session.config.max_output_bytes
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    report_r, report_w = os.pipe()
    out, err = _Collector(out_r, cap), _Collector(err_r, cap)
    readers = [asyncio.create_task(out.run()), asyncio.create_task(err.run())]
    proc: asyncio.subprocess.Process | None = None
    rc: int | None = None
    try:
        stdin = os.open(os.devnull, os.O_RDONLY)
        try:
            argv = [bash, *BASH_OPTIONS, "-c", bash_program(command, report_w), "bash"]
            fds = {0: stdin, 1: out_w, 2: err_w}
            started = await spawn(session.launch, argv, start, {}, fds, keep=(report_w,))
        finally:
            for fd in (stdin, out_w, err_w, report_w):
                os.close(fd)
        if not isinstance(started, int):
            proc = started

        async def whole() -> int:
            code = started if isinstance(started, int) else _signal_code(await started.wait())
            await asyncio.gather(*readers)
            return code

        rc = await asyncio.wait_for(whole(), limit)
    except TimeoutError:
        pass  # reported below with whatever the command printed before it was killed
    except (OSError, ToolError) as exc:
        return {"success": False, "error": f"Failed to run the command: {exc}"}
    finally:
        if proc is not None:
            stop(proc)
        if rc is None:
            # The killed processes' pipe ends are closed now: let the readers take what is still
            # buffered, briefly (a process that left the sandbox's process group may hold a pipe).
            pending = [task for task in readers if not task.done()]
            if pending:
                await asyncio.wait(pending, timeout=DRAIN_AFTER_KILL)
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        if proc is not None and proc.returncode is None:
            await proc.wait()
        report = _read_report(report_r)
        os.close(report_r)
    result: dict[str, Any] = {"success": rc == 0, "exit_code": rc}
    if rc is None:
        result["error"] = f"Timeout after {limit:g}s."
    # bash quotes the line of a syntax error: the user's line, not the trap in front of it.
    result.update(stdout=out.text(), stderr=err.text().replace(bash_program("", report_w), ""))
    if out.truncated or err.truncated:
        result["truncated"] = True
    if rc is not None:
        ended = await asyncio.to_thread(session.end_folder, report)
        if ended and ended != start:  # the command moved: the next one starts there
            session.cwd = result["cwd"] = ended
        elif ended is None and report.strip():
            result["note"] = (
                "the command ended outside the workspace (or in a folder that cannot be used); the "
                f"next command starts in {session.cwd}, as before"
            )
    return result
