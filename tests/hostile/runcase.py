"""Run one hostile case through the real MCP servers (or ``starweave run``) and judge it.

Inside the worker (:mod:`hostile.worker`): each case gets a fresh workspace and its own Linux Bash
and File MCP servers over in-memory MCP sessions, as ``starweave run`` has them. While the calls run,
a monitor measures how long the event loop is blocked, canary services (:mod:`hostile.listeners`)
count every connection, and for denial-of-service cases another device runs a command that must
complete meanwhile. Afterwards the oracles of :mod:`hostile.oracles` decide.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from hostile.archives import archive_base64
from hostile.bare import BareClient
from hostile.casebook import Archive, Call, Case, substitute
from hostile.listeners import Listeners
from hostile.modes import Mode
from hostile.oracles import (
    CanaryScanner,
    diff,
    mount_points,
    own_settings,
    processes,
    settings_changes,
    shallow,
    snapshot,
    workspace_problems,
)
from hostile.worker import Layout, refresh

MARGIN = 10.0  # seconds a call may take beyond the timeout it asked for
GRACE = 15.0  # after the deadline and the margin, stop waiting for the answer
LAG_LIMIT = 10.0  # the event loop blocked this long is a failure
HEARTBEAT_LIMIT = 20.0  # another device's command must finish this fast during a DoS case
RSS_GROWTH_LIMIT = 600 << 10  # KiB Starweave's own process may grow during one case
SETTLE = 10.0  # seconds processes get to disappear after a case
MAX_FILE_BYTES = 512 << 20  # a bigger file in the workspace means no file-size limit
UPPER = "/run/swh-layers/upper"
WATCHED_TMPFS = ("/tmp", "/dev/shm", "/root", "/home", "/run")
BASH_TOOLS = ("execute_command", "get_system_info")


@dataclass
class Record:
    """What one call did, for the report."""

    tool: str
    arg: str
    outcome: str = "not run"
    detail: str = ""
    seconds: float = 0.0
    text: str = field(default="", repr=False)

    def public(self) -> dict[str, Any]:
        """The record without the full text."""
        return {
            "tool": self.tool,
            "arg": self.arg,
            "outcome": self.outcome,
            "detail": self.detail,
            "seconds": round(self.seconds, 3),
        }


class _LogCapture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _classify(tool: str, payload: dict[str, Any], is_error: bool) -> tuple[str, str]:
    error = str(payload.get("error", ""))
    out = str(payload.get("stdout", "")) + str(payload.get("stderr", "")) + str(payload.get("content", ""))
    if is_error:
        return "tool-error", str(payload)[:300]
    if error.startswith("Blocked"):
        return "refused", error[:300]
    if error.startswith("Timeout"):
        return "timeout", (error + " " + out)[:300]
    if payload.get("success"):
        return "ok", out[:300]
    if tool == "execute_command" and "exit_code" in payload:
        return f"exit {payload['exit_code']}", (error + " " + out)[:300]
    return "error", (error or out)[:300]


def _short(call: Call) -> str:
    arg = call.args.get("command") or call.args.get("path") or ""
    return str(arg)[:200]


def _resolve(call: Call, table: dict[str, str]) -> dict[str, Any]:
    args = dict(substitute(dict(call.args), table))
    if isinstance(args.get("content"), Archive):
        args["content"] = archive_base64(args["content"])
    return args


class CaseRunner:
    """Runs cases for one mode and judges them."""

    def __init__(self, mode: Mode, layout: Layout, canaries: dict[str, str], keep: set[int]) -> None:
        self.mode, self.layout, self.canaries = mode, layout, canaries
        self.keep = keep  # the worker's own long-running helpers
        self.scanner = CanaryScanner(canaries)
        self.listeners = Listeners(layout.base)
        self.max_lag = 0.0
        self._lag_since = time.monotonic()
        self._lag_task: asyncio.Task[None] | None = None
        self.port = 0
        self.capture = _LogCapture()

    # ---- set-up --------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the canary listeners, the event-loop monitor and the log capture."""
        await self.listeners.start()
        self.port = self.listeners.port
        self._lag_task = asyncio.create_task(self._watch_lag())
        logging.getLogger().addHandler(self.capture)
        logging.getLogger().setLevel(logging.INFO)

    async def stop(self) -> None:
        """Stop what :meth:`start` started."""
        if self._lag_task is not None:
            self._lag_task.cancel()
        self.listeners.stop()
        logging.getLogger().removeHandler(self.capture)

    def _reset_lag(self) -> None:
        self.max_lag, self._lag_since = 0.0, time.monotonic()

    async def _watch_lag(self) -> None:
        step = 0.25
        while True:
            before = time.monotonic()
            await asyncio.sleep(step)
            # Only the lateness after the last reset counts: the harness's own file scans before a
            # case (synchronous, and slow on a busy machine) are not Starweave blocking its loop.
            due = max(before + step, self._lag_since)
            self.max_lag = max(self.max_lag, time.monotonic() - due)

    def config(self, ws: str) -> Any:
        """The SHELL settings (a ShellConfig) of this mode for workspace ``ws``."""
        from starweave.config.models import ShellConfig

        return ShellConfig.model_validate(
            {
                "workspace": ws,
                "sandbox": self.mode.sandbox,
                "mode": self.mode.shell_mode,
                "timeout": 10,
                "max_timeout": 60,
            }
        )

    def _outside(self, ws: str) -> dict[str, Any]:
        skip = [ws, self.layout.own, "/run/swh-layers"]
        snap = snapshot(UPPER, shown_as="/", exclude=skip) if os.path.isdir(UPPER) else {}
        for root in WATCHED_TMPFS:
            snap.update(snapshot(root, exclude=skip))
        if os.environ.get("SWH_FAKE_ROOT") == "1":  # the top level is a tmpfs of its own there
            snap.update(shallow("/"))
        return snap

    def clients(self, ws: str) -> tuple[Any, Any]:
        """The Linux Bash and File MCP clients of this mode for ``ws`` (the bare mode's stand-ins)."""
        if self.mode.shell_mode == "bare":
            return BareClient(ws), BareClient(ws)
        # Imported here so that the bare mode runs whatever state Starweave's code is in.
        from mcp import Client

        from starweave.tools.servers.files import create_file_server
        from starweave.tools.servers.shell import create_bash_server

        cfg = self.config(ws)
        return Client(create_bash_server(cfg)), Client(create_file_server(cfg))

    async def control(self) -> str:
        """Run one ordinary command and one file call; the reason when this mode cannot work here."""
        ws = os.path.join(self.layout.base, "ws-control")
        os.makedirs(ws, exist_ok=True)
        try:
            bash_client, file_client = self.clients(ws)
        except ValueError as exc:
            return f"the configuration is refused: {' '.join(str(exc).split())[:300]}"
        async with bash_client as bash, file_client as files:
            ran = await bash.call_tool(
                "execute_command", {"command": "echo hi > a.txt && cat a.txt", "timeout": 30}
            )
            data = ran.structured_content if isinstance(ran.structured_content, dict) else {}
            if data.get("stdout") != "hi\n":
                return f"'echo hi > a.txt && cat a.txt' gave {data or ran.content}"
            got = await files.call_tool("read_file", {"path": "a.txt"})
            content = got.structured_content if isinstance(got.structured_content, dict) else {}
            if content.get("content") != "hi\n":
                return f"read_file a.txt gave {content or got.content}"
        self._remove(ws)
        return ""

    # ---- one case ------------------------------------------------------------------------------------

    async def run(self, case: Case, kind: str) -> dict[str, Any]:
        """Run ``case`` (``kind`` mcp or e2e) and return its verdict."""
        clock = [time.monotonic()]
        refresh(self.layout, self.canaries)
        ws = self.layout.workspace(case)
        shutil.rmtree(ws, ignore_errors=True)
        os.makedirs(ws)
        table = self.layout.table(case, ws, self.port)
        exempt = self._prep(case, table, ws)
        before = self._outside(ws)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        settings_before = own_settings()
        conn_before = self.listeners.hits
        self._reset_lag()
        self.capture.lines.clear()
        problems: list[str] = []
        started = time.monotonic()
        clock.append(started)
        if kind == "e2e":
            records, texts, restart = await self._e2e(case, table, ws, problems)
        else:
            records, texts, restart = await self._calls(case, table, ws, problems)
        clock.append(time.monotonic())
        left, stuck = await self._settle()
        clock.append(time.monotonic())
        problems += left
        restart = restart or stuck
        problems += [f"changed outside the workspace: {c}" for c in diff(before, self._outside(ws))]
        problems += workspace_problems(ws, exempt, MAX_FILE_BYTES)
        texts += [("a log record of Starweave", line) for line in self.capture.lines]
        for where, text in texts:
            for desc in self.scanner.scan(text):
                problems.append(f"canary secret leaked: {desc} appeared in {where}")
        if self.listeners.hits != conn_before:
            problems.append(
                "a command reached a canary service outside its sandbox (127.0.0.1 TCP/UDP, an abstract "
                "or a filesystem unix socket)"
            )
        if self.max_lag > LAG_LIMIT:
            problems.append(f"Starweave's event loop was blocked for {self.max_lag:.1f}s")
        for marker in case.forbid:
            if any(marker in t for _, t in texts):
                problems.append(f"the attack got as far as {marker!r} (a limit did not stop it)")
        changed = settings_changes(settings_before, own_settings())
        if changed:
            # (the worker may not be allowed to undo them: a fresh one takes the next cases)
            problems += [f"a command changed Starweave's own process: {c}" for c in changed]
            restart = True
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
        if grown > RSS_GROWTH_LIMIT:
            problems.append(f"Starweave's own memory grew by {grown >> 10} MiB during the case")
            restart = True
        if not self._remove(ws):
            restart = True
        clock.append(time.monotonic())
        return {
            "phases": [round(b - a, 3) for a, b in itertools.pairwise(clock)],
            "case": case.name,
            "kind": kind,
            "mode": self.mode.name,
            "problems": sorted(set(problems)),
            "calls": [r.public() for r in records],
            "seconds": round(time.monotonic() - started, 2),
            "restart": restart,
        }

    def _prep(self, case: Case, table: dict[str, str], ws: str) -> set[str]:
        made = set()
        for prep in case.prep:
            path = os.path.join(ws, substitute(prep.path, table))
            arg = substitute(prep.arg, table)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if prep.kind == "fifo":
                os.mkfifo(path)
            elif prep.kind == "socket":
                sock = socket.socket(socket.AF_UNIX)
                sock.bind(path)
                sock.close()
            elif prep.kind == "file":
                with open(path, "w") as fh:
                    fh.write(arg)
            elif prep.kind == "symlink":
                os.symlink(arg, path)
            elif prep.kind == "dir":
                os.makedirs(path, exist_ok=True)
            else:
                raise ValueError(f"unknown prep kind {prep.kind!r}")
            made.add(path)
        return made

    async def _calls(
        self, case: Case, table: dict[str, str], ws: str, problems: list[str]
    ) -> tuple[list[Record], list[tuple[str, str]], bool]:
        records = [Record(c.tool, _short(c)) for c in case.calls]
        texts: list[tuple[str, str]] = []
        resolved = [_resolve(c, table) for c in case.calls]  # archives are built before the clock starts
        self._reset_lag()
        other_ws = os.path.join(self.layout.own, "other", case.name[:60])
        os.makedirs(other_ws, exist_ok=True)
        try:
            bash_client, file_client = self.clients(ws)
            other_client, _ = self.clients(other_ws)
        except ValueError as exc:
            problems.append(f"the mode's configuration is refused: {str(exc).splitlines()[0]}")
            return records, texts, False
        async with bash_client as bash, file_client as files, other_client as other:
            behind: list[asyncio.Task[bool]] = []
            for call, args, record in zip(case.calls, resolved, records, strict=True):
                beat = (
                    asyncio.create_task(self._heartbeat(other))
                    if case.dos and call.tool == "execute_command"
                    else None
                )
                client = bash if call.tool in BASH_TOOLS else files
                step = self._one(client, call, args, record, texts, problems)
                if call.background:  # runs on while the next calls race against it
                    behind.append(asyncio.create_task(step))
                    continue
                finished = await step
                if beat is not None:
                    problems += await self._beat_result(beat)
                if not finished:
                    return records, texts, True
            if behind and not all(await asyncio.gather(*behind)):
                return records, texts, True
        shutil.rmtree(other_ws, ignore_errors=True)
        return records, texts, False

    async def _one(
        self,
        client: Any,
        call: Call,
        args: dict[str, Any],
        record: Record,
        texts: list[tuple[str, str]],
        problems: list[str],
    ) -> bool:
        deadline = call.timeout + MARGIN
        started = time.monotonic()
        try:
            result = await asyncio.wait_for(client.call_tool(call.tool, args), deadline + GRACE)
        except TimeoutError:
            record.seconds = time.monotonic() - started
            record.outcome = "no answer"
            problems.append(f"{call.tool} {record.arg[:80]!r} gave no answer within {deadline + GRACE:.0f}s")
            return False
        record.seconds = time.monotonic() - started
        payload = result.structured_content if isinstance(result.structured_content, dict) else {}
        if not payload:
            payload = {"text": " ".join(getattr(c, "text", "") for c in result.content)}
        record.outcome, record.detail = _classify(call.tool, payload, bool(result.is_error))
        record.text = json.dumps(payload)
        texts.append((f"the result of {call.tool} {record.arg[:60]!r}", record.text))
        if record.seconds > deadline:
            problems.append(
                f"{call.tool} {record.arg[:80]!r} took {record.seconds:.1f}s, past its deadline "
                f"({call.timeout:g}s timeout + {MARGIN:g}s)"
            )
        return True

    async def _heartbeat(self, other: Any) -> tuple[float, str]:
        started = time.monotonic()
        result = await other.call_tool("execute_command", {"command": "echo alive", "timeout": 10})
        data = result.structured_content if isinstance(result.structured_content, dict) else {}
        failed = (
            "" if data.get("stdout") == "alive\n" else f"another device's command failed meanwhile: {data}"
        )
        return time.monotonic() - started, failed

    async def _beat_result(self, beat: asyncio.Task[tuple[float, str]]) -> list[str]:
        try:
            took, failed = await asyncio.wait_for(beat, HEARTBEAT_LIMIT)
        except TimeoutError:
            return [f"another device's command did not complete within {HEARTBEAT_LIMIT:g}s meanwhile"]
        if failed:
            return [failed[:300]]
        if took > HEARTBEAT_LIMIT:
            return [f"another device's command took {took:.1f}s meanwhile (limit {HEARTBEAT_LIMIT:g}s)"]
        return []

    async def _e2e(
        self, case: Case, table: dict[str, str], ws: str, problems: list[str]
    ) -> tuple[list[Record], list[tuple[str, str]], bool]:
        from hostile.e2e import run_cli

        return await run_cli(self, case, table, ws, problems)

    # ---- after a case -------------------------------------------------------------------------------------

    async def _settle(self) -> tuple[list[str], bool]:
        """Wait for the case's processes to end; report and kill any left. True: some survived."""
        known = {1, os.getpid(), *self.keep}
        left = await self._wait_gone(known, SETTLE)
        if not left:
            return [], False
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
        survivors = await self._wait_gone(known, 5.0)
        return [f"a process was left running after the case: {cmd[:120]!r}" for cmd in left.values()], bool(
            survivors
        )

    @staticmethod
    async def _wait_gone(known: set[int], seconds: float) -> dict[int, str]:
        deadline = time.monotonic() + seconds
        left = processes(known)
        while left and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            left = processes(known)
        return left

    def _remove(self, ws: str) -> bool:
        """Delete the workspace; False when something in it resists (then the worker restarts).
        A mount inside it is detached first, never deleted through."""
        for point in sorted((m for m in mount_points() if m.startswith(ws + "/")), reverse=True):
            subprocess.run(["umount", "-l", point], capture_output=True, check=False)
        if any(m.startswith(ws + "/") for m in mount_points()):
            return False
        for _ in range(2):
            shutil.rmtree(ws, ignore_errors=True)
            if not os.path.lexists(ws):
                return True
            for dirpath, _, _ in os.walk(ws):
                try:
                    os.chmod(dirpath, stat.S_IRWXU)
                except OSError:
                    continue
        return False
