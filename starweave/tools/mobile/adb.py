"""A thin async layer over the ``adb`` binary: exactly the commands the mobile MCP servers need.

Every command is an argument list given to ``asyncio.create_subprocess_exec`` (never a local shell).
``adb shell`` joins its arguments with spaces into ONE command line for the device's shell, so each
argument after ``shell`` is also quoted for that remote shell (:func:`shlex.quote`), after being
validated: integers in range, key codes from :data:`ALLOWED_KEYCODES`, package names matching
:data:`PACKAGE_RE`, typed text without control characters. No method takes a command line, so no
free-form shell is reachable through this module.

The same code drives a real phone and the simulated device of the tests (a program given as the
adb path), so a run against a real phone exercises exactly this layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shlex
import shutil
import tempfile
import unicodedata
import uuid
from dataclasses import dataclass
from pathlib import Path

from starweave.errors import ToolError

logger = logging.getLogger(__name__)

ALLOWED_KEYCODES = (
    "KEYCODE_HOME",
    "KEYCODE_BACK",
    "KEYCODE_MENU",
    "KEYCODE_ENTER",
    "KEYCODE_DEL",
    "KEYCODE_APP_SWITCH",
    "KEYCODE_POWER",
    "KEYCODE_VOLUME_UP",
    "KEYCODE_VOLUME_DOWN",
)
PACKAGE_RE = re.compile(r"^[A-Za-z]\w*(\.[A-Za-z]\w*)+$", re.ASCII)
LISTED_PACKAGE_RE = re.compile(r"^[A-Za-z]\w*(\.[A-Za-z]\w*)*$", re.ASCII)  # "android" has one segment
SERIAL_RE = re.compile(r"^[\w.:\-]{1,128}$", re.ASCII)
MAX_COORDINATE = 100_000  # pixels; larger values are a mistake, not a screen
MAX_SWIPE_MS = 60_000
MAX_TEXT_LENGTH = 2_000
MAX_OUTPUT_BYTES = 32 * 1024 * 1024  # a screenshot of a 4K screen stays well below this
MAX_ERROR_BYTES = 1024 * 1024  # adb's error text is a line or two
READ_CHUNK = 64 * 1024
REAP_SECONDS = 5.0  # how long a killed adb may take to close its pipes
SCREEN_TEMP = "/sdcard/screen_temp.png"
UI_DUMP_PREFIX = "/sdcard/starweave_ui_"  # + a fresh hex token + ".xml" per dump
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Categories refused in typed text: controls (newline, ESC, NUL...), surrogates, private use,
# unassigned, and line/paragraph separators. They could end the remote command line or type garbage.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Co", "Cn", "Zl", "Zp"})
ADB_MISSING_HINT = "install the Debian 'adb' package or pass --adb-path"


#: ``AdbError.kind`` of an adb program that cannot be started (absent or not executable).
ADB_MISSING = "missing"
#: ``Adb.device_state()`` values besides the states ``adb devices`` lists (device, offline,
#: unauthorized...): the phone is not listed; several are and none was named; adb cannot start.
ABSENT, SEVERAL, NO_ADB = "absent", "several", "no_adb"


class AdbError(ToolError):
    """An adb command that failed (non-zero exit), was not found, timed out or got bad arguments.

    ``kind`` is :data:`ADB_MISSING` when the adb program itself cannot be started, else "failed"."""

    def __init__(self, message: str, kind: str = "failed") -> None:
        super().__init__(message)
        self.kind = kind


class _TooMuchOutput(Exception):
    """A stream went past its cap (turned into an AdbError naming the command)."""


async def _read_capped(stream: asyncio.StreamReader | None, cap: int) -> bytes:
    """Everything ``stream`` gives until EOF; _TooMuchOutput as soon as it passes ``cap`` bytes
    (read in chunks, so a runaway command never fills memory before the check)."""
    chunks: list[bytes] = []
    size = 0
    while stream is not None and (chunk := await stream.read(READ_CHUNK)):
        size += len(chunk)
        if size > cap:
            raise _TooMuchOutput
        chunks.append(chunk)
    return b"".join(chunks)


async def _collect(proc: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
    """stdout and stderr of ``proc`` (both capped, read together so neither pipe fills), then its exit."""
    readers = [
        asyncio.ensure_future(_read_capped(proc.stdout, MAX_OUTPUT_BYTES)),
        asyncio.ensure_future(_read_capped(proc.stderr, MAX_ERROR_BYTES)),
    ]
    try:
        done, _pending = await asyncio.wait(readers, return_when=asyncio.FIRST_EXCEPTION)
        for reader in done:
            reader.result()  # the first failure (too much output) goes up at once
        await proc.wait()
        return readers[0].result(), readers[1].result()
    finally:
        for reader in readers:
            reader.cancel()


async def _drain(stream: asyncio.StreamReader | None) -> None:
    """Read ``stream`` to EOF, dropping what it gives."""
    while stream is not None and await stream.read(READ_CHUNK):
        pass


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Kill ``proc`` if it still runs and wait for it. Shielded: when the caller is being cancelled,
    the wait still completes, so the child is reaped before the cancellation goes on. Bounded: the
    wait also needs the output pipes closed, which a grandchild may hold; the killed child itself is
    reaped by the event loop's child watcher either way."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    # Output left unread after a cap or a cancel would keep the pipes open (reading paused on a
    # full buffer), and the wait never ends: drain it to EOF with the wait.
    waiting = asyncio.ensure_future(asyncio.gather(_drain(proc.stdout), _drain(proc.stderr), proc.wait()))
    try:
        await asyncio.wait_for(asyncio.shield(waiting), REAP_SECONDS)
    except TimeoutError:
        logger.warning("adb (pid %s) was killed but a process it started still holds its output", proc.pid)
    except asyncio.CancelledError:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiting, REAP_SECONDS)  # cancelled again while reaping: finish it
        raise


def _candidates() -> list[str]:
    found = []
    local_app_data = os.environ.get("LOCALAPPDATA")
    if local_app_data:
        found.append(str(Path(local_app_data) / "Android" / "Sdk" / "platform-tools" / "adb.exe"))
    found += ["/usr/bin/adb", "/usr/local/bin/adb"]
    return found


def find_adb(configured: str | None = None) -> str:
    """The adb binary: ``configured`` when given, else the Windows SDK path, /usr/bin/adb,
    /usr/local/bin/adb, then ``adb`` on PATH; plain ``"adb"`` when none exists (it then fails at
    the first command with an :class:`AdbError` saying how to install it)."""
    if configured:
        return str(Path(configured).expanduser())
    for candidate in _candidates():
        if Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("adb") or "adb"


def check_int(value: object, what: str, low: int = 0, high: int = MAX_COORDINATE) -> int:
    """``value`` as an int in ``[low, high]`` (bools and non-integral floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise AdbError(f"{what} must be an integer, got {value!r}")
    number = int(value)
    if not low <= number <= high:
        raise AdbError(f"{what} must be between {low} and {high}, got {number}")
    return number


def check_package(name: str) -> str:
    """A package name such as ``com.example.notes`` (letters, digits, _; at least two segments)."""
    if not isinstance(name, str) or not PACKAGE_RE.match(name):
        raise AdbError(f"invalid package name {name!r}; expected something like com.example.app")
    return name


def check_keycode(key_code: str) -> str:
    """``KEYCODE_HOME`` (or ``HOME``) normalised; only :data:`ALLOWED_KEYCODES` are accepted."""
    code = str(key_code).strip().upper()
    if not code.startswith("KEYCODE_"):
        code = f"KEYCODE_{code}"
    if code not in ALLOWED_KEYCODES:
        raise AdbError(f"key code {key_code!r} is not allowed; use one of: {', '.join(ALLOWED_KEYCODES)}")
    return code


def check_serial(serial: str | None) -> str | None:
    """A device serial (letters, digits, ``. : _ -``) or None."""
    if serial is not None and not SERIAL_RE.match(serial):
        raise AdbError(f"invalid device serial {serial!r}; `adb devices` lists the serials")
    return serial


def escape_input_text(text: str) -> str:
    """``text`` as ``input text`` expects it: spaces become ``%s`` (input's own escape).

    The result still goes through :func:`shlex.quote` for the remote shell (in :meth:`Adb.shell`), so
    quotes, ``;``, ``&``, ``$()`` and backticks reach ``input`` literally. Control characters and
    line breaks are refused: ``input text`` cannot type them, and they could end the command line.
    """
    if not isinstance(text, str) or not text:
        raise AdbError("text to type must be a non-empty string")
    if len(text) > MAX_TEXT_LENGTH:
        raise AdbError(f"text to type is {len(text)} characters; at most {MAX_TEXT_LENGTH} per call")
    bad = next((ch for ch in text if unicodedata.category(ch) in _REFUSED_CATEGORIES), None)
    if bad is not None:
        raise AdbError(
            f"text to type contains the control character U+{ord(bad):04X}; "
            "send line breaks with press_key KEYCODE_ENTER"
        )
    return text.replace(" ", "%s")


@dataclass(frozen=True)
class Adb:
    """One Android device reached through the adb binary at ``path`` (``-s serial`` when given)."""

    path: str = "adb"
    serial: str | None = None
    timeout: float = 30.0

    def __post_init__(self) -> None:
        check_serial(self.serial)

    def argv(self, *args: str) -> list[str]:
        """The full argument list of ``adb [-s SERIAL] args...``."""
        prefix = [self.path] + (["-s", self.serial] if self.serial else [])
        return prefix + list(args)

    async def run(self, *args: str, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        """Run ``adb args...``; its stdout (at most :data:`MAX_OUTPUT_BYTES`). AdbError naming the
        command on failure, timeout or too much output. The child is killed and reaped on every way
        out (a timeout, a cancelled caller, Ctrl+C), so no adb process outlives the call."""
        argv = self.argv(*args)
        shown = " ".join(shlex.quote(a) for a in ["adb", *argv[1:]])
        limit = self.timeout if timeout is None else timeout
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except FileNotFoundError:
            message = f"`{shown}`: adb not found at {self.path!r}; {ADB_MISSING_HINT}"
            raise AdbError(message, ADB_MISSING) from None
        except PermissionError:
            message = f"`{shown}`: {self.path!r} is not executable; {ADB_MISSING_HINT}"
            raise AdbError(message, ADB_MISSING) from None
        try:
            out, errs = await asyncio.wait_for(_collect(proc), limit)
        except TimeoutError:
            raise AdbError(f"`{shown}` timed out after {limit:g} s (is the device connected?)") from None
        except _TooMuchOutput:
            raise AdbError(f"`{shown}` printed more than {MAX_OUTPUT_BYTES} bytes") from None
        finally:
            await _reap(proc)
        if proc.returncode != 0:
            detail = (errs or out).decode("utf-8", "replace").strip().splitlines()
            reason = detail[-1] if detail else "no output"
            raise AdbError(f"`{shown}` failed (exit {proc.returncode}): {reason}")
        return out

    async def shell(self, *args: str | int, timeout: float | None = None) -> str:  # noqa: ASYNC109
        """``adb shell`` with each argument quoted for the device's shell; stdout as text."""
        quoted = [shlex.quote(str(a)) for a in args]
        out = await self.run("shell", *quoted, timeout=timeout)
        return out.decode("utf-8", "replace")

    async def devices(self) -> list[tuple[str, str]]:
        """``adb devices``: ``[(serial, state)]`` (state ``device`` when usable)."""
        out = (await Adb(self.path, None, self.timeout).run("devices")).decode("utf-8", "replace")
        found = []
        for line in out.splitlines()[1:]:
            parts = line.split()
            if len(parts) >= 2:
                found.append((parts[0], parts[1]))
        return found

    async def device_state(self) -> str:
        """This device's state as ``adb devices`` lists it (``device`` when usable, ``offline``,
        ``unauthorized``...), :data:`ABSENT` when it is not listed, :data:`SEVERAL` when no serial
        was given and several are, :data:`NO_ADB` when adb cannot start. Read from adb's device
        list, never from the wording of a failed command's error."""
        try:
            attached = await self.devices()
        except AdbError as exc:
            if exc.kind == ADB_MISSING:
                return NO_ADB
            raise
        states = [state for serial, state in attached if serial == self.serial or not self.serial]
        if not states:
            return ABSENT
        return states[0] if len(states) == 1 else SEVERAL

    async def screencap_png(self) -> bytes:
        """The screen as PNG bytes: ``exec-out screencap -p``; when that gives no PNG (old adb),
        ``screencap -p /sdcard/screen_temp.png`` + ``pull`` + ``rm`` as the reference does."""
        with contextlib.suppress(AdbError):
            data = await self.run("exec-out", "screencap", "-p")
            if data.startswith(PNG_MAGIC):
                return data
        await self.shell("screencap", "-p", SCREEN_TEMP)
        # mkdtemp / rmtree touch the disk: off the event loop (a device client also serves heartbeats).
        folder = await asyncio.to_thread(tempfile.mkdtemp, prefix="starweave-adb-")
        try:
            local = Path(folder) / "screen.png"
            await self.run("pull", SCREEN_TEMP, str(local))
            data = await asyncio.to_thread(local.read_bytes)
        finally:
            await asyncio.to_thread(shutil.rmtree, folder, True)
            with contextlib.suppress(AdbError):
                await self.shell("rm", "-f", SCREEN_TEMP)
        if not data.startswith(PNG_MAGIC):
            raise AdbError("`adb shell screencap -p` did not produce a PNG image")
        return data

    async def dump_ui_xml(self) -> str:
        """``uiautomator dump`` to a file of its own, ``cat`` it, remove it: the screen's UI hierarchy.

        The file name is new for each call, so a dump that fails without saying so finds no file (an
        AdbError) instead of the previous screen's, and two programs driving one phone never read
        each other's dumps."""
        remote = f"{UI_DUMP_PREFIX}{uuid.uuid4().hex}.xml"
        try:
            said = await self.shell("uiautomator", "dump", remote)
            if "ERROR" in said.upper() and "dumped" not in said.lower():
                raise AdbError(f"`adb shell uiautomator dump` failed: {said.strip()}")
            xml = await self.shell("cat", remote)
        finally:
            with contextlib.suppress(AdbError):
                await self.shell("rm", "-f", remote)
        start = xml.find("<?xml")
        start = xml.find("<hierarchy") if start < 0 else start
        if start < 0:
            raise AdbError(f"`adb shell cat {remote}` returned no UI hierarchy: {xml.strip()[:200]}")
        return xml[start:].strip()

    async def getprop(self, name: str) -> str:
        """``getprop NAME`` (names like ``ro.build.version.sdk``)."""
        if not re.fullmatch(r"[\w.]+", name, re.ASCII):
            raise AdbError(f"invalid property name {name!r}")
        return (await self.shell("getprop", name)).strip()

    async def wm_size(self) -> str:
        """``wm size``: ``Physical size: WxH`` (plus an ``Override size`` line when set)."""
        return (await self.shell("wm", "size")).strip()

    async def wm_density(self) -> str:
        """``wm density``: ``Physical density: N``."""
        return (await self.shell("wm", "density")).strip()

    async def dumpsys_battery(self) -> dict[str, str]:
        """``dumpsys battery`` as ``{key: value}`` (``level``, ``status``, ``AC powered``...)."""
        out = await self.shell("dumpsys", "battery")
        fields: dict[str, str] = {}
        for line in out.splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip():
                fields[key.strip()] = value.strip()
        return fields

    async def list_packages(self, third_party_only: bool = True) -> list[str]:
        """``pm list packages [-3]``: the package names, sorted (``-3``: user-installed only)."""
        args = ["pm", "list", "packages"] + (["-3"] if third_party_only else [])
        out = await self.shell(*args)
        names = {line.strip()[len("package:") :] for line in out.splitlines() if line.startswith("package:")}
        return sorted(n for n in names if LISTED_PACKAGE_RE.match(n))

    async def tap(self, x: int, y: int) -> str:
        """``input tap X Y``."""
        return await self.shell("input", "tap", check_int(x, "x"), check_int(y, "y"))

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> str:
        """``input swipe X1 Y1 X2 Y2 MS``."""
        coords = [
            check_int(v, n) for v, n in ((x1, "start_x"), (y1, "start_y"), (x2, "end_x"), (y2, "end_y"))
        ]
        duration = check_int(duration_ms, "duration", 0, MAX_SWIPE_MS)
        return await self.shell("input", "swipe", *coords, duration)

    async def input_text(self, text: str) -> str:
        """``input text <escaped>`` (see :func:`escape_input_text`)."""
        return await self.shell("input", "text", escape_input_text(text))

    async def keyevent(self, key_code: str, times: int = 1) -> str:
        """``input keyevent KEYCODE_* [KEYCODE_* ...]`` (only :data:`ALLOWED_KEYCODES`; ``times``
        repeats the key in the same command, as ``input`` accepts several codes)."""
        code = check_keycode(key_code)
        return await self.shell("input", "keyevent", *[code] * check_int(times, "times", 1, 100))

    async def launch(self, package: str) -> str:
        """``monkey -p PKG -c android.intent.category.LAUNCHER 1``; AdbError when monkey aborts."""
        out = await self.shell(
            "monkey", "-p", check_package(package), "-c", "android.intent.category.LAUNCHER", "1"
        )
        said = [line.strip() for line in out.splitlines() if line.strip()]
        why = [line for line in said if "monkey aborted" in line.lower() or "no activities" in line.lower()]
        if why:
            # One line: monkey's own words about why, not the rest of what it printed.
            raise AdbError(f"`adb shell monkey -p {package}` could not launch it: {why[-1]}")
        return out
