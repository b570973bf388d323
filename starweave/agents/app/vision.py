"""Screenshots for a visual model (``VISUAL_MODE: true``): which images a step sends, and how.

The text-only embedded model gets the controls as a text list instead; these images are only built
when the agent's prompter is visual. As in the reference, each image is preceded by a
``Screenshot N:`` text part and the prompt text comes last. The AppAgent sends the previous step's
selected-control screenshot (``INCLUDE_LAST_SCREENSHOT``), then the clean and the annotated
screenshots, or both side by side in one image (``CONCAT_SCREENSHOT``, saved as
``action_step{N}_concat.png``).
"""

from __future__ import annotations

import asyncio
import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starweave.errors import ToolError
from starweave.log_folder import read_log_file, write_log_file


@dataclass
class VisualOptions:
    """What the AppAgent shows a visual model (``CONCAT_SCREENSHOT``, ``INCLUDE_LAST_SCREENSHOT``)."""

    concat_screenshot: bool = False
    include_last_screenshot: bool = True


LAST_SELECTED = "the control acted on in the previous step, highlighted"
CLEAN = "the application window now"
ANNOTATED = "the same window with each control's label in a numbered box"
CONCATENATED = "the application window now, left as it is, right with each control's label in a numbered box"
DESKTOP = "the whole desktop now"

#: A screenshot for the model: (what it shows, ``data:`` URL).
Image = tuple[str, str]


def visual_content(text: str, images: list[Image]) -> list[dict[str, Any]]:
    """The user message parts: ``Screenshot N (what it shows):`` and the image, for each, then ``text``.

    The description stays with its image, so the model knows which one carries the labels even
    when the number of images changes from step to step.
    """
    parts: list[dict[str, Any]] = []
    for index, (what, url) in enumerate(images, start=1):
        parts.append({"type": "text", "text": f"Screenshot {index} ({what}):"})
        parts.append({"type": "image_url", "image_url": {"url": url}})
    parts.append({"type": "text", "text": text})
    return parts


async def file_urls(paths: list[tuple[str, str]]) -> list[Image]:
    """(description, ``data:image/png;base64,...``) for each (description, path) whose file exists
    (read off the loop)."""

    def read() -> list[Image]:
        urls = []
        for what, path in paths:
            if not path:
                continue
            try:  # never through a link the model planted under a screenshot's name
                encoded = base64.b64encode(read_log_file(Path(path))).decode("ascii")
            except FileNotFoundError:
                continue
            urls.append((what, f"data:image/png;base64,{encoded}"))
        return urls

    return await asyncio.to_thread(read)


async def concat_side_by_side(left: str, right: str, out: Path) -> str:
    """Save ``left`` and ``right`` side by side as ``out`` (Pillow, off the loop); returns its path."""

    def build() -> str:
        try:
            from PIL import Image
        except ImportError as exc:
            raise ToolError("CONCAT_SCREENSHOT needs Pillow: pip install 'starweave[desktop]'") from exc
        with (
            Image.open(io.BytesIO(read_log_file(Path(left)))) as first,
            Image.open(io.BytesIO(read_log_file(Path(right)))) as second,
        ):
            canvas = Image.new("RGB", (first.width + second.width, max(first.height, second.height)), "white")
            canvas.paste(first.convert("RGB"), (0, 0))
            canvas.paste(second.convert("RGB"), (first.width, 0))
        png = io.BytesIO()
        canvas.save(png, format="PNG")
        return str(write_log_file(out, png.getvalue()))

    return await asyncio.to_thread(build)


async def app_step_images(
    options: VisualOptions, clean: str, annotated: str, last_selected: str, concat_path: Path | None
) -> tuple[list[Image], str]:
    """The screenshots an AppAgent step sends, and the concatenated screenshot's path (or "")."""
    paths = [(LAST_SELECTED, last_selected)] if options.include_last_screenshot and last_selected else []
    concat = ""
    if options.concat_screenshot and clean and annotated and concat_path is not None:
        try:
            concat = await concat_side_by_side(clean, annotated, concat_path)
        except (ToolError, OSError) as exc:
            raise ToolError(f"cannot build the concatenated screenshot: {exc}") from exc
        paths.append((CONCATENATED, concat))
    else:
        paths.extend((what, p) for what, p in ((CLEAN, clean), (ANNOTATED, annotated)) if p)
    return await file_urls(paths), concat
