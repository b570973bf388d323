"""The desktop platform layer: windows, controls, screenshots and input behind one async interface.

``get_backend()`` picks the Linux backend (AT-SPI + X11) or the Windows one (UI Automation); both
import their platform libraries lazily, so this package imports anywhere.
"""

from __future__ import annotations

import sys

from starweave.errors import DesktopError
from starweave.tools.desktop.backend import DesktopBackend
from starweave.tools.desktop.model import ControlInfo, Drag, Rect, SettlePolicy, WalkLimits, WindowInfo

__all__ = [
    "ControlInfo",
    "DesktopBackend",
    "Drag",
    "Rect",
    "SettlePolicy",
    "WalkLimits",
    "WindowInfo",
    "get_backend",
]


def get_backend(settle: SettlePolicy | None = None) -> DesktopBackend:
    """The backend for this platform; raises :class:`DesktopError` on an unsupported one."""
    if sys.platform.startswith("linux"):
        from starweave.tools.desktop.linux.backend import LinuxDesktopBackend

        return LinuxDesktopBackend(settle=settle)
    if sys.platform == "win32":
        from starweave.tools.desktop.windows.uia import UIABackend

        return UIABackend(settle=settle)
    raise DesktopError(
        f"No desktop backend for platform {sys.platform!r}; Linux (X11) and Windows are supported."
    )
