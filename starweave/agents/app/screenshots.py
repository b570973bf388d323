"""Screenshots in the session log: decode the base64 the UICollector returns and save it (off the loop)."""

from __future__ import annotations

import asyncio
import base64
import binascii
from pathlib import Path

from starweave.errors import ToolError
from starweave.log_folder import write_log_file


def decode_image(data: str) -> bytes:
    """The bytes of a base64 image, with or without a ``data:image/png;base64,`` prefix."""
    if data.startswith("Error"):
        raise ToolError(f"the screenshot tool answered: {data}")
    payload = data.split(",", 1)[1] if data.startswith("data:") else data
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ToolError(f"the screenshot is not valid base64: {exc}") from exc


def data_url(data: str) -> str:
    """The image as a ``data:`` URL (what the reference passes to a visual model)."""
    return data if data.startswith("data:") else f"data:image/png;base64,{data}"


async def save_image(data: str | bytes, path: Path) -> Path:
    """Write a screenshot (base64 text or bytes) to ``path``; returns the path."""
    raw = data if isinstance(data, bytes) else decode_image(data)

    await asyncio.to_thread(write_log_file, path, raw)
    return path
