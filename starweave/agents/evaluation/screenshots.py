"""Which of a run's screenshots a visual EvaluationAgent sees (EVA_ALL_SCREENSHOTS, spec D §21).

A desktop run leaves ``action_step{N}.png`` in its log folder for each step that looked at the
screen (the HostAgent's desktop, the AppAgent's window); the annotated, concatenated and
selected-control variants repeat the same moment and are not sent. All of them are sent with
``EVA_ALL_SCREENSHOTS: true``, else the first and the last (the state before and after the run).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

#: At most this many images go to the judge, even with EVA_ALL_SCREENSHOTS: every image costs a
#: vision model about a thousand prompt tokens or more, providers refuse requests beyond a few dozen
#: images or a few tens of MB, and a long run's middle steps repeat each other. The first and the
#: last are always kept; the rest are spread evenly over the run.
MAX_IMAGES = 10

_STEP_SCREENSHOT = re.compile(r"action_step(\d+)\.png")


def step_screenshots(folder: Path) -> list[tuple[int, Path]]:
    """``(step, path)`` of each clean step screenshot in ``folder``, in step order."""
    found = []
    for path in folder.glob("action_step*.png"):
        match = _STEP_SCREENSHOT.fullmatch(path.name)
        if match is not None:
            found.append((int(match.group(1)), path))
    return sorted(found)


def spread(items: list[tuple[int, Path]], limit: int) -> list[tuple[int, Path]]:
    """At most ``limit`` (>= 2) of ``items``: the first, the last and evenly spaced ones between."""
    if len(items) <= limit:
        return items
    last = len(items) - 1
    picks = sorted({round(i * last / (limit - 1)) for i in range(limit)})
    return [items[i] for i in picks]


def chosen_screenshots(
    folder: Path, all_screenshots: bool = True, limit: int = MAX_IMAGES, steps: Collection[int] | None = None
) -> list[tuple[int, Path]]:
    """The screenshots the judge sees: all (capped at ``limit``) or the first and the last; of
    ``steps`` only when given (one round's)."""
    shots = [shot for shot in step_screenshots(folder) if steps is None or shot[0] in steps]
    return spread(shots, limit if all_screenshots else 2)
