"""The Android boundary: fixed adb commands with validated, escaped arguments (no free-form shell).

Public API::

    Adb(path, serial=None, timeout=30.0)      one device; every method runs one fixed adb command
    find_adb(configured=None) -> str          the adb binary (configured path, SDK path, /usr/bin, PATH)
    AdbError                                  a failed, missing or timed-out adb command (names it)
    ALLOWED_KEYCODES, check_package, check_keycode, escape_input_text
"""

from starweave.tools.mobile.adb import (
    ALLOWED_KEYCODES,
    Adb,
    AdbError,
    check_keycode,
    check_package,
    escape_input_text,
    find_adb,
)

__all__ = [
    "ALLOWED_KEYCODES",
    "Adb",
    "AdbError",
    "check_keycode",
    "check_package",
    "escape_input_text",
    "find_adb",
]
