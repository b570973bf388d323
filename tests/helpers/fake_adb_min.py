#!/usr/bin/env python3
"""A minimal stand-in for ``adb`` (stdlib only): records its argv and answers canned output.

Used as ``--adb-path`` by the mobile tools tests until the full simulated device exists. Each call
appends ``json.dumps(argv[1:])`` to $FAKE_ADB_LOG. ``adb shell ARGS`` joins ARGS with spaces and
splits them again as the device's shell would (shlex), and records that as ``{"remote": [...]}``.
$FAKE_ADB_FAIL: a word; a command whose text contains it fails with exit 1. $FAKE_ADB_XML: a file
with the uiautomator dump to return. $FAKE_ADB_SLEEP: seconds to hang (to test timeouts).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 17
PACKAGES = ["com.example.notes", "com.example.settings", "org.demo.calculator"]
SYSTEM = ["android", "com.android.systemui"]
XML = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node index="0" text="" class="android.widget.FrameLayout" package="com.example.notes" '
    'content-desc="" clickable="false" bounds="[0,0][1080,2340]">'
    '<node index="0" text="" resource-id="com.example.notes:id/note" class="android.widget.EditText" '
    'package="com.example.notes" content-desc="Note" clickable="true" bounds="[40,200][1040,600]" />'
    '<node index="1" text="Save" class="android.widget.Button" package="com.example.notes" '
    'content-desc="" clickable="true" bounds="[40,700][540,820]" />'
    '<node index="2" text="Delete" class="android.widget.Button" package="com.example.notes" '
    'content-desc="" clickable="true" bounds="[560,700][1040,820]" />'
    "</node></hierarchy>"
)


def answer(remote: list[str]) -> str:
    """The device's output for one remote command."""
    head = remote[:2]
    if head == ["uiautomator", "dump"]:
        return f"UI hierchary dumped to: {remote[2]}\n"
    if head[:1] == ["cat"]:
        path = os.environ.get("FAKE_ADB_XML")
        if path:
            with open(path, encoding="utf-8") as handle:
                return handle.read()
        return XML
    if head[:1] == ["getprop"]:
        return {
            "ro.product.model": "Pixel Sim",
            "ro.build.version.release": "14",
            "ro.build.version.sdk": "34",
        }.get(remote[1], "") + "\n"
    if head == ["wm", "size"]:
        return "Physical size: 1080x2340\n"
    if head == ["wm", "density"]:
        return "Physical density: 420\n"
    if head == ["dumpsys", "battery"]:
        return "Current Battery Service state:\n  AC powered: false\n  status: 2\n  level: 87\n"
    if head == ["pm", "list"]:
        names = PACKAGES if "-3" in remote else PACKAGES + SYSTEM
        return "".join(f"package:{n}\n" for n in names)
    if head[:1] == ["monkey"]:
        if remote[2] not in PACKAGES + SYSTEM:
            return "** No activities found to run, monkey aborted.\n"
        return "Events injected: 1\n"
    return ""


def main() -> int:
    """Record, then answer like adb."""
    args = sys.argv[1:]
    if args[:1] == ["-s"]:
        args = args[2:]
    remote = shlex.split(" ".join(args[1:])) if args[:1] == ["shell"] else None
    log = os.environ.get("FAKE_ADB_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"argv": sys.argv[1:], "remote": remote}) + "\n")
    if os.environ.get("FAKE_ADB_SLEEP"):
        time.sleep(float(os.environ["FAKE_ADB_SLEEP"]))
    fail = os.environ.get("FAKE_ADB_FAIL")
    if fail and fail in " ".join(sys.argv[1:]):
        sys.stderr.write("error: device offline\n")
        return 1
    if args[:1] == ["devices"]:
        sys.stdout.write("List of devices attached\nemulator-5554\tdevice\n\n")
    elif args[:3] == ["exec-out", "screencap", "-p"]:
        sys.stdout.buffer.write(PNG)
    elif remote is not None:
        sys.stdout.write(answer(remote))
    return 0


if __name__ == "__main__":
    sys.exit(main())
