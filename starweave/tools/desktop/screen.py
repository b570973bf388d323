"""Screenshots with mss (X11 and Windows alike)."""

from __future__ import annotations

from typing import Any

from starweave.errors import DesktopError
from starweave.tools.desktop.model import Rect


def screenshot_png(rect: Rect | None = None) -> bytes:
    """PNG of ``rect`` clipped to the screen, or of the whole screen when ``rect`` is None."""
    mss = _mss()
    with _grabber(mss) as sct:
        screen = sct.monitors[0]
        region = _clip(rect, screen) if rect is not None else screen
        shot = sct.grab(region)
        png = mss.tools.to_png(shot.rgb, shot.size)
    if png is None:
        raise DesktopError("mss returned no PNG data.")
    return png


def grab_raw(rect: Rect | None = None) -> bytes:
    """Raw pixels of ``rect`` (or the screen), cheap enough to poll for changes."""
    mss = _mss()
    with _grabber(mss) as sct:
        screen = sct.monitors[0]
        region = _clip(rect, screen) if rect is not None else screen
        return bytes(sct.grab(region).raw)


def screen_size() -> tuple[int, int]:
    mss = _mss()
    with _grabber(mss) as sct:
        mon = sct.monitors[0]
        return int(mon["width"]), int(mon["height"])


def _grabber(mss: Any) -> Any:
    """A screen grabber: ``mss.MSS`` since mss 10 (``mss.mss`` is deprecated there), ``mss.mss`` before."""
    return (getattr(mss, "MSS", None) or mss.mss)()


def _mss() -> Any:
    try:
        import mss
        import mss.tools
    except ImportError as exc:
        raise DesktopError("mss is needed for screenshots: pip install 'starweave[desktop]'.") from exc
    return mss


def _clip(rect: Rect, screen: dict[str, int]) -> dict[str, int]:
    left = max(rect.x, screen["left"])
    top = max(rect.y, screen["top"])
    right = min(rect.right, screen["left"] + screen["width"])
    bottom = min(rect.bottom, screen["top"] + screen["height"])
    if right <= left or bottom <= top:
        raise DesktopError(f"Region {rect.to_ltrb()} is outside the screen; move the window on screen first.")
    return {"left": left, "top": top, "width": right - left, "height": bottom - top}
