"""Set-of-mark screenshots: numbered boxes on the controls, the selected control highlighted (Pillow)."""

from __future__ import annotations

import io
from typing import Any

from starweave.errors import DesktopError
from starweave.tools.desktop.model import ControlInfo, Rect

DEFAULT_COLOR = "#d62728"
ANNOTATION_COLORS: dict[str, str] = {
    "Button": "#1f77b4",
    "Edit": "#2ca02c",
    "MenuItem": "#9467bd",
    "Text": "#7f7f7f",
    "ListItem": "#ff7f0e",
    "TabItem": "#17becf",
    "CheckBox": "#8c564b",
}
SELECTED_COLOR = "#ff0000"


def annotation_dict(controls: list[ControlInfo]) -> dict[str, ControlInfo]:
    """Controls keyed by their label (the id drawn on the screenshot)."""
    return {c.id: c for c in controls}


def annotate(
    png: bytes,
    controls: list[ControlInfo],
    origin: Rect | None = None,
    selected: str | None = None,
    colors: dict[str, str] | None = None,
    control_types: set[str] | None = None,
) -> bytes:
    """Draw each control's box and label on ``png`` (whose top-left is ``origin`` on screen); the
    ``selected`` id gets a thick highlight. Controls outside the image are left out."""
    image_module, draw_module, font_module = _pillow()
    palette = {**ANNOTATION_COLORS, **(colors or {})}
    image = image_module.open(io.BytesIO(png)).convert("RGB")
    draw = draw_module.Draw(image)
    font = font_module.load_default()
    ox, oy = (origin.x, origin.y) if origin else (0, 0)
    for control in controls:
        if control_types is not None and control.control_type not in control_types:
            continue
        box = (
            control.rect.x - ox,
            control.rect.y - oy,
            control.rect.right - ox - 1,
            control.rect.bottom - oy - 1,
        )
        if (
            box[2] < 0
            or box[3] < 0
            or box[0] >= image.width
            or box[1] >= image.height
            or control.rect.is_empty()
        ):
            continue
        is_selected = control.id == selected
        color = SELECTED_COLOR if is_selected else palette.get(control.control_type, DEFAULT_COLOR)
        draw.rectangle(box, outline=color, width=4 if is_selected else 2)
        left, top, right, bottom = draw.textbbox((0, 0), control.id, font=font)
        tx, ty = max(0, box[0]), max(0, box[1])
        draw.rectangle((tx, ty, tx + right - left + 4, ty + bottom - top + 4), fill=color)
        draw.text((tx + 2 - left, ty + 2 - top), control.id, fill="white", font=font)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def highlight(png: bytes, control: ControlInfo, origin: Rect | None = None) -> bytes:
    """The screenshot with only ``control`` outlined (the reference's selected-control image)."""
    return annotate(png, [control], origin=origin, selected=control.id)


def _pillow() -> tuple[Any, Any, Any]:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as exc:
        raise DesktopError(
            "Pillow is needed to annotate screenshots: pip install 'starweave[desktop]'."
        ) from exc
    return Image, ImageDraw, ImageFont
