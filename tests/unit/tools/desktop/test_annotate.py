"""Set-of-mark annotation and rectangle overlap (IoU)."""

from __future__ import annotations

import io

from PIL import Image

from starweave.tools.desktop.annotate import SELECTED_COLOR, annotate, annotation_dict, highlight
from starweave.tools.desktop.model import ControlInfo, Rect


def control(cid: str, x: int, y: int, w: int = 40, h: int = 20, ctype: str = "Button") -> ControlInfo:
    return ControlInfo(id=cid, name=f"c{cid}", control_type=ctype, rect=Rect(x=x, y=y, width=w, height=h))


def blank(width: int = 200, height: int = 100) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, format="PNG")
    return out.getvalue()


def test_annotation_keeps_size_and_draws_labels_relative_to_origin() -> None:
    controls = [control("1", 110, 60), control("2", 150, 100)]
    png = annotate(blank(), controls, origin=Rect(x=100, y=50, width=200, height=100))
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (200, 100)
    # Box 1 starts at (10, 10) in the image: its outline and label badge are coloured.
    assert image.getpixel((10, 25)) != (255, 255, 255)
    assert image.getpixel((12, 12)) != (255, 255, 255)
    assert image.getpixel((5, 5)) == (255, 255, 255)
    assert image.getpixel((100, 80)) == (255, 255, 255)  # nothing drawn outside the boxes


def test_selected_control_is_highlighted() -> None:
    controls = [control("1", 10, 10), control("2", 100, 40)]
    image = Image.open(io.BytesIO(annotate(blank(), controls, selected="2"))).convert("RGB")
    red = Image.new("RGB", (1, 1), SELECTED_COLOR).getpixel((0, 0))
    assert image.getpixel((100 + 1, 40 + 15)) == red
    assert image.getpixel((10, 25)) != red
    only = Image.open(io.BytesIO(highlight(blank(), controls[0]))).convert("RGB")
    assert only.getpixel((11, 25)) == red and only.getpixel((101, 55)) == (255, 255, 255)


def test_annotation_dict_is_keyed_by_label() -> None:
    controls = [control("1", 0, 0), control("2", 50, 0)]
    assert list(annotation_dict(controls)) == ["1", "2"]


def test_iou() -> None:
    a = Rect(x=0, y=0, width=10, height=10)
    assert a.iou(a) == 1.0
    assert a.iou(Rect(x=5, y=0, width=10, height=10)) == 50 / 150
    assert a.iou(Rect(x=20, y=20, width=5, height=5)) == 0.0
