"""The device's shell: the programs `adb shell` / `adb exec-out` reach on the simulated phone.

adb joins the arguments after ``shell`` into ONE command line that the device's sh parses, so the
line is split here with shlex the way sh would (quotes and backslashes undone). Shell operators
(``; & | < >``) are refused instead of run: the simulator runs one command, and an unescaped ``&``
in typed text is a bug in the caller that a real phone would also punish.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import device
from .ui import APPS, HEIGHT, WIDTH, dump_xml

PROPS = {
    "ro.product.model": "Starweave SimPhone",
    "ro.product.manufacturer": "Starweave",
    "ro.product.brand": "starweave",
    "ro.product.name": "simphone",
    "ro.product.device": "simphone",
    "ro.build.version.release": "14",
    "ro.build.version.sdk": "34",
    "ro.build.type": "user",
}
SYSTEM_PACKAGES = (
    "android",
    "com.android.systemui",
    "com.android.launcher3",
    "com.android.settings",
    "com.android.phone",
    "com.android.providers.settings",
    "com.android.shell",
    "com.google.android.packageinstaller",  # no launcher screen: the CONFIRM tests' installer
)
USER_PACKAGES = tuple(pkg for _, pkg, _, _ in APPS if not pkg.startswith("com.android."))
BATTERY = """Current Battery Service state:
  AC powered: false
  USB powered: true
  Wireless powered: false
  Max charging current: 500000
  Max charging voltage: 5000000
  Charge counter: 2550000
  status: 2
  health: 2
  present: true
  level: 85
  scale: 100
  voltage: 4185
  temperature: 250
  technology: Li-ion
"""
_OPERATORS = set("();<>|&")
_INPUT_USAGE = (
    "Usage: input [text <string> | keyevent <key> ... | tap <x> <y> | swipe <x1> <y1> <x2> <y2> [ms]]"
)


class ShellResult:
    """What a shell command printed and its exit status."""

    def __init__(self, out: bytes | str = b"", err: str = "", code: int = 0) -> None:
        self.out = out.encode() if isinstance(out, str) else out
        self.err = err
        self.code = code


def fail(message: str, code: int = 1) -> ShellResult:
    """An error the device prints on stderr."""
    return ShellResult(err=message + "\n", code=code)


def split_command_line(line: str) -> list[str]:
    """The words of a device shell command line; ValueError for what the simulator won't run."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    operators = [w for w in words if set(w) <= _OPERATORS]
    if operators:
        raise ValueError(f"/system/bin/sh: the simulated shell runs one command; unquoted {operators[0]!r}")
    return words


def _screencap(ctx: Context, args: list[str]) -> ShellResult:
    from .render import screenshot_png  # Pillow is only loaded for screenshots

    files = [a for a in args if not a.startswith("-")]
    png = screenshot_png(ctx.state)
    if not files:
        return ShellResult(png)
    return ctx.write_file(files[0], png)


def _uiautomator(ctx: Context, args: list[str]) -> ShellResult:
    if not args or args[0] != "dump":
        return fail("Usage: uiautomator dump [--compressed] [file]")
    files = [a for a in args[1:] if not a.startswith("-")]
    target = files[0] if files else "/sdcard/window_dump.xml"
    if ctx.state["ui_dump_fails"]:
        return ShellResult()
    xml = dump_xml(ctx.state)
    if target == "/dev/tty":
        return ShellResult(xml + "UI hierchary dumped to: /dev/tty\n")
    written = ctx.write_file(target, xml.encode())
    # "hierchary" is the real tool's spelling: callers that match the message see the device's text.
    return written if written.code else ShellResult(f"UI hierchary dumped to: {target}\n")


def _cat(ctx: Context, args: list[str]) -> ShellResult:
    out = b""
    for name in args:
        local = ctx.local(name)
        if local is None or not local.is_file():
            return ShellResult(out, f"cat: {name}: No such file or directory\n", 1)
        out += local.read_bytes()
    return ShellResult(out)


def _rm(ctx: Context, args: list[str]) -> ShellResult:
    force = any(a.startswith("-") and "f" in a for a in args)
    for name in (a for a in args if not a.startswith("-")):
        local = ctx.local(name)
        if local is not None and local.is_file():
            local.unlink()
        elif not force:
            return fail(f"rm: {name}: No such file or directory")
    return ShellResult()


def _getprop(ctx: Context, args: list[str]) -> ShellResult:
    if args:
        return ShellResult(PROPS.get(args[0], "") + "\n")
    return ShellResult("".join(f"[{key}]: [{value}]\n" for key, value in PROPS.items()))


def _wm(ctx: Context, args: list[str]) -> ShellResult:
    if args == ["size"]:
        return ShellResult(f"Physical size: {WIDTH}x{HEIGHT}\n")
    if args == ["density"]:
        return ShellResult("Physical density: 420\n")
    return fail(f"wm: unsupported arguments: {' '.join(args)}")


def _dumpsys(ctx: Context, args: list[str]) -> ShellResult:
    if args[:1] == ["battery"]:
        return ShellResult(BATTERY)
    return ShellResult(f"Can't find service: {args[0] if args else ''}\n")


def _pm(ctx: Context, args: list[str]) -> ShellResult:
    if args[:2] != ["list", "packages"]:
        return fail("pm: only `pm list packages [-3|-s] [FILTER]` is simulated")
    flags = {a for a in args[2:] if a.startswith("-")}
    words = [a for a in args[2:] if not a.startswith("-")]
    packages = (() if "-3" in flags else SYSTEM_PACKAGES) + (() if "-s" in flags else USER_PACKAGES)
    wanted = [p for p in packages if not words or words[0] in p]
    return ShellResult("".join(f"package:{p}\n" for p in wanted))


def _numbers(args: list[str], count: int, usage: str) -> list[float]:
    try:
        return [float(a) for a in args[:count]]
    except ValueError:
        raise device.DeviceError(f"Error: Invalid arguments for command: {usage}") from None


def decode_input_text(text: str) -> str:
    """What Android's ``input text`` types for ``text``: every ``%s`` (a ``%`` then an ``s``) is a
    space, with no escape for a literal one; a ``%`` before anything else stays (its loop, ported)."""
    out: list[str] = []
    escaped = False
    for char in text:
        if escaped and char == "s":
            out[-1] = " "
            escaped = False
            continue
        out.append(char)
        escaped = char == "%"
    return "".join(out)


def _input(ctx: Context, args: list[str]) -> ShellResult:
    verb, rest = (args[0], args[1:]) if args else ("", [])
    if verb == "tap" and len(rest) == 2:
        device.tap(ctx.state, *_numbers(rest, 2, "tap"))
    elif verb == "swipe" and len(rest) in (4, 5):
        x1, y1, x2, y2 = _numbers(rest, 5, "swipe")[:4]
        device.swipe(ctx.state, x1, y1, x2, y2)
    elif verb == "text" and rest:
        # Several words (unquoted) are taken as one text, then %s decoded as Android does.
        device.type_text(ctx.state, decode_input_text(" ".join(rest)))
    elif verb == "keyevent" and rest:
        for code in (a for a in rest if not a.startswith("--")):
            device.press_key(ctx.state, code)
    else:
        return fail(_INPUT_USAGE)
    return ShellResult()


def _monkey(ctx: Context, args: list[str]) -> ShellResult:
    package = args[args.index("-p") + 1] if "-p" in args[:-1] else ""
    if not package or not device.launch(ctx.state, package):
        return ShellResult("  bash arg: -p\n", "** No activities found to run, monkey aborted.\n", 252)
    return ShellResult(
        f"  bash arg: -p\n  bash arg: {package}\nEvents injected: 1\n## Network stats: elapsed time=12ms\n"
    )


def _am(ctx: Context, args: list[str]) -> ShellResult:
    if args[:1] == ["start"] and "-n" in args[:-1]:
        component = args[args.index("-n") + 1]
        if device.launch(ctx.state, component.split("/")[0]):
            return ShellResult(f"Starting: Intent {{ cmp={component} }}\n")
        return fail(f"Error: Activity not started, unable to resolve Intent {{ cmp={component} }}")
    if args[:1] == ["force-stop"] and len(args) == 2:
        if ctx.state["screen"] != "launcher" and device.package_screen(args[1]) == ctx.state["screen"]:
            device.press_key(ctx.state, "HOME")
        return ShellResult()
    return fail("am: only `am start -n PKG/ACTIVITY` and `am force-stop PKG` are simulated")


_PROGRAMS: dict[str, Callable[[Context, list[str]], ShellResult]] = {
    "screencap": _screencap,
    "uiautomator": _uiautomator,
    "cat": _cat,
    "rm": _rm,
    "getprop": _getprop,
    "wm": _wm,
    "dumpsys": _dumpsys,
    "pm": _pm,
    "input": _input,
    "monkey": _monkey,
    "am": _am,
}


class Context:
    """One shell command's view of the device: its state and its /sdcard folder."""

    def __init__(self, folder: Path, state: dict[str, Any]) -> None:
        self.folder = folder
        self.state = state

    def local(self, remote: str) -> Path | None:
        """The local file standing for a device path (None outside /sdcard)."""
        from .state import sdcard_path

        return sdcard_path(self.folder, remote)

    def write_file(self, remote: str, data: bytes) -> ShellResult:
        """Write a device file; only /sdcard is writable, as for the shell user."""
        local = self.local(remote)
        if local is None:
            return fail(f"Error opening file: {remote} (Permission denied)")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(data)
        return ShellResult()


def run(ctx: Context, words: list[str]) -> ShellResult:
    """Run one parsed shell command line."""
    if not words:
        return fail("adb: the simulator has no interactive shell; give a command")
    program = _PROGRAMS.get(words[0])
    if program is None:
        return fail(f"/system/bin/sh: {words[0]}: inaccessible or not found", 127)
    try:
        return program(ctx, words[1:])
    except device.DeviceError as error:
        return fail(str(error))
