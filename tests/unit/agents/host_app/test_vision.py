"""What a visual model is shown: the screenshot parts of the prompt, the concatenated image."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from PIL import Image

from starweave.agents.app.vision import (
    ANNOTATED,
    CLEAN,
    CONCATENATED,
    LAST_SELECTED,
    VisualOptions,
    app_step_images,
    file_urls,
    visual_content,
)


def png(path: Path, size: tuple[int, int], colour: str) -> str:
    Image.new("RGB", size, colour).save(path)
    return str(path)


def decoded(url: str) -> Image.Image:
    assert url.startswith("data:image/png;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def test_each_image_is_announced_with_what_it_shows_and_the_text_comes_last() -> None:
    parts = visual_content("the prompt", [("the desktop", "data:image/png;base64,AAA"), ("x", "data:,B")])
    assert parts == [
        {"type": "text", "text": "Screenshot 1 (the desktop):"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},
        {"type": "text", "text": "Screenshot 2 (x):"},
        {"type": "image_url", "image_url": {"url": "data:,B"}},
        {"type": "text", "text": "the prompt"},
    ]
    assert visual_content("only text", []) == [{"type": "text", "text": "only text"}]


async def test_missing_files_are_left_out_and_descriptions_stay_with_their_images(tmp_path: Path) -> None:
    real = png(tmp_path / "a.png", (3, 2), "red")
    urls = await file_urls([("empty", ""), ("gone", str(tmp_path / "gone.png")), ("real", real)])
    assert [what for what, _ in urls] == ["real"] and decoded(urls[0][1]).size == (3, 2)


async def test_step_images_last_selected_then_clean_and_annotated(tmp_path: Path) -> None:
    clean = png(tmp_path / "clean.png", (40, 30), "white")
    annotated = png(tmp_path / "annotated.png", (40, 30), "blue")
    last = png(tmp_path / "selected.png", (40, 30), "green")
    urls, concat = await app_step_images(VisualOptions(), clean, annotated, last, tmp_path / "concat.png")
    assert concat == "" and not (tmp_path / "concat.png").exists()
    assert [decoded(u).getpixel((0, 0)) for _, u in urls] == [(0, 128, 0), (255, 255, 255), (0, 0, 255)]
    assert [what for what, _ in urls] == [LAST_SELECTED, CLEAN, ANNOTATED]

    options = VisualOptions(concat_screenshot=True, include_last_screenshot=False)
    urls, concat = await app_step_images(options, clean, annotated, last, tmp_path / "concat.png")
    assert concat == str(tmp_path / "concat.png") and len(urls) == 1
    assert urls[0][0] == CONCATENATED
    side_by_side = decoded(urls[0][1])
    assert side_by_side.size == (80, 30)
    assert side_by_side.getpixel((5, 5)) == (255, 255, 255) and side_by_side.getpixel((45, 5)) == (0, 0, 255)
