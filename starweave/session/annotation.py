"""The AppAgent's annotator over the desktop layer's set-of-mark drawing (``tools/desktop/annotate.py``).

The AppAgent sees controls as :class:`~starweave.agents.app.controls.Control` records whose ``rect``
is the UICollector's ``[left, top, right, bottom]`` in screen pixels; the window screenshot starts at
the window's top-left corner (``origin``). This adapter converts both and draws off the event loop.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from starweave.agents.app.controls import Control
from starweave.log_folder import read_log_file, write_log_file
from starweave.tools.desktop.annotate import annotate
from starweave.tools.desktop.model import ControlInfo, Rect


def _control_rect(rect: Any) -> Rect | None:
    """A :class:`Rect` from ``[l, t, r, b]`` or ``{x, y, width, height}``; None when unreadable."""
    if isinstance(rect, list | tuple) and len(rect) == 4:
        try:
            left, top, right, bottom = (int(v) for v in rect)
        except (TypeError, ValueError):
            return None
        return Rect(x=left, y=top, width=right - left, height=bottom - top)
    if isinstance(rect, dict):
        try:
            return Rect(
                x=int(rect["x"]), y=int(rect["y"]), width=int(rect["width"]), height=int(rect["height"])
            )
        except (KeyError, TypeError, ValueError):
            return None
    return None


def _control_infos(controls: list[Control]) -> list[ControlInfo]:
    """The controls with a readable rectangle, as the desktop layer's records."""
    infos = []
    for control in controls:
        rect = _control_rect(control.rect)
        if rect is not None:
            infos.append(
                ControlInfo(id=control.id, name=control.name, control_type=control.control_type, rect=rect)
            )
    return infos


class SetOfMarkAnnotator:
    """``await annotator(clean_png, controls, out_png, origin=..., selected=...)`` for the AppAgent."""

    async def __call__(
        self,
        clean_png: Path,
        controls: list[Control],
        out_png: Path,
        *,
        origin: dict[str, Any] | None = None,
        selected: str | None = None,
    ) -> Path:
        """Draw the numbered boxes of ``controls`` on ``clean_png`` and write ``out_png``, on a worker
        thread (Pillow work blocks)."""

        def draw() -> Path:
            window = _control_rect(origin) if origin else None
            png = annotate(
                read_log_file(clean_png), _control_infos(controls), origin=window, selected=selected
            )
            return write_log_file(out_png, png)

        return await asyncio.to_thread(draw)
