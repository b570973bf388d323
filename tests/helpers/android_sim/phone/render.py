"""Draws a view tree as the phone's 1080x2400 PNG screenshot (Pillow, imported only here)."""

from __future__ import annotations

import io
from functools import cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from .ui import HEIGHT, STATUS_BAR, WIDTH, Node, build

_FONT_FILES = {False: "DejaVuSans.ttf", True: "DejaVuSans-Bold.ttf"}
_TEXT = "#202124"
_MUTED = "#80868b"


@cache
def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(f"/usr/share/fonts/truetype/dejavu/{_FONT_FILES[bold]}", size)
    except OSError:  # no DejaVu on this machine: Pillow's own scalable font still reads fine
        return ImageFont.load_default(size)


def _text(
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    text: str,
    size: int,
    fill: str,
    bold: bool = False,
    centred: bool = False,
) -> None:
    """Text centred in the box, or left-aligned with a margin and centred vertically."""
    x = (box[0] + box[2]) / 2 if centred else box[0] + 30
    draw.text(
        (x, (box[1] + box[3]) / 2), text, font=_font(size, bold), fill=fill, anchor="mm" if centred else "lm"
    )


def _draw(draw: ImageDraw.ImageDraw, node: Node) -> None:
    box = node.bounds
    style = node.style
    if style == "icon":
        left, top, right, _ = box
        draw.rounded_rectangle((left + 45, top + 20, right - 45, top + 200), radius=40, fill=node.colour)
        _text(
            draw,
            (left + 45, top + 20, right - 45, top + 200),
            node.text[0],
            96,
            "white",
            bold=True,
            centred=True,
        )
        _text(draw, (left, top + 220, right, box[3]), node.text, 40, "white", centred=True)
    elif style == "title":
        draw.rectangle(box, fill="#1a73e8")
        _text(draw, (box[0] + 30, box[1], box[2], box[3]), node.text, 64, "white", bold=True)
    elif style == "button":
        draw.rounded_rectangle(box, radius=24, fill=node.colour)
        _text(draw, box, node.text, 56, "white", bold=True, centred=True)
    elif style == "edit":
        draw.rectangle(
            box, fill="white", outline="#1a73e8" if node.focused else _MUTED, width=6 if node.focused else 3
        )
        _text(draw, box, node.text or node.hint, 52, _TEXT if node.text else _MUTED)
    elif style == "switch":
        draw.rounded_rectangle(box, radius=50, fill="#1a73e8" if node.checked else "#bdc1c6")
        knob = box[2] - 95 if node.checked else box[0] + 5
        draw.ellipse((knob, box[1] + 5, knob + 90, box[3] - 5), fill="white")
    elif style == "row" or style == "item":
        draw.line((box[0], box[3] - 2, box[2], box[3] - 2), fill="#dadce0", width=3)
        if node.text:
            _text(draw, (box[0] + 30, box[1], box[2], box[3]), node.text, 48, _TEXT)
    elif style in ("label", "status", "hint", "display"):
        size, fill = {
            "label": (52, _TEXT),
            "status": (48, "#188038"),
            "hint": (44, _MUTED),
            "display": (120, _TEXT),
        }[style]
        if style == "display":
            draw.text(
                (box[2] - 30, (box[1] + box[3]) / 2), node.text, font=_font(size), fill=fill, anchor="rm"
            )
        else:
            _text(draw, (box[0] - 30, box[1], box[2], box[3]), node.text, size, fill, bold=style == "status")
    for child in node.children:
        _draw(draw, child)


def screenshot_png(state: dict[str, Any]) -> bytes:
    """The current screen as PNG bytes, with a status bar (clock, Wi-Fi, battery) on top."""
    background = "#3c4043" if state["screen"] == "launcher" else "#f8f9fa"
    image = Image.new("RGB", (WIDTH, HEIGHT), background)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, WIDTH, STATUS_BAR), fill="#202124")
    draw.text((40, STATUS_BAR / 2), "12:00", font=_font(40, True), fill="white", anchor="lm")
    wifi = "Wi-Fi  " if state["settings"].get("wifi") else ""
    draw.text((WIDTH - 40, STATUS_BAR / 2), f"{wifi}85%", font=_font(40, True), fill="white", anchor="rm")
    _draw(draw, build(state))
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue()
