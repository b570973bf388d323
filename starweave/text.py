"""Small text helpers shared by the prompts, the logs' summaries and the evaluators."""

from __future__ import annotations


def flat_clip(value: object, limit: int) -> str:
    """``value`` as one line (every run of whitespace made one space), cut to ``limit`` characters
    with a closing ``…`` when longer."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
