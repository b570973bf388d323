"""What a visual model is shown: the screenshot parts of the prompt, the concatenated image."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from PIL import Image

from starweave.agents.app.vision import VisualOptions, app_step_images, file_urls, visual_content


def png(path: Path, size: tuple[int, int], colour: str) -> str:
    Image.new("RGB", size, colour).save(path)
    return str(path)


def decoded(url: str) -> Image.Image:
    assert url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def test_each_image_is_announced_and_the_text_comes_last() -> None:
    parts = visual_content("the prompt", ["data:image/png;base64,AAA", "data:image/png;base64,BBB"])
    assert parts == [
        {"type": "text", "text": "Screenshot 1:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},
        {"type": "text", "text": "Screenshot 2:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBB"}},
        {"type": "text", "text": "the prompt"},
    ]
    assert visual_content("only text", []) == [{"type": "text", "text": "only text"}]


async def test_missing_files_are_left_out(tmp_path: Path) -> None:
    real = png(tmp_path / "a.png", (3, 2), "red")
    urls = await file_urls(["", str(tmp_path / "gone.png"), real])
    assert len(urls) == 1 and decoded(urls[0]).size == (3, 2)


async def test_step_images_last_selected_then_clean_and_annotated(tmp_path: Path) -> None:
    clean = png(tmp_path / "clean.png", (40, 30), "white")
    annotated = png(tmp_path / "annotated.png", (40, 30), "blue")
    last = png(tmp_path / "selected.png", (40, 30), "green")
    urls, concat = await app_step_images(VisualOptions(), clean, annotated, last, tmp_path / "concat.png")
    assert concat == "" and not (tmp_path / "concat.png").exists()
    assert [decoded(u).getpixel((0, 0)) for u in urls] == [(0, 128, 0), (255, 255, 255), (0, 0, 255)]

    options = VisualOptions(concat_screenshot=True, include_last_screenshot=False)
    urls, concat = await app_step_images(options, clean, annotated, last, tmp_path / "concat.png")
    assert concat == str(tmp_path / "concat.png") and len(urls) == 1
    side_by_side = decoded(urls[0])
    assert side_by_side.size == (80, 30)
    assert side_by_side.getpixel((5, 5)) == (255, 255, 255) and side_by_side.getpixel((45, 5)) == (0, 0, 255)
