"""MobileAgentPrompter: the system prompt (tools, rules, examples) and one user message per step.

The user message is the spec's (C §4.4): for a visual model the clean screenshot, then the
annotated one, then the text; the text has the sections "[Previous Plan]", "[User Request]",
"[Installed Apps]", "[Current Screen Controls]" and "[Last Success Actions]". The embedded 1.5B
model reads text only and slowly, so the controls are one short line each (``[3] Button 'Save'``),
the app list and the action list are capped, and the system prompt reuses the LinuxAgent's terse
tool and example rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starweave.agents.app.controls import Control
from starweave.agents.app.vision import Image, visual_content
from starweave.agents.common import plain_request
from starweave.agents.linux.prompter import LinuxAgentPrompter

#: Controls, apps and earlier actions shown at most (the embedded model's window is 4,096 tokens).
MAX_CONTROLS = 60
MAX_APPS = 40
MAX_ACTIONS = 5
NAME_CHARS = 40
CLEAN = "the phone's screen now"
ANNOTATED = "the same screen with each control's id in a box"


def control_line(control: Control) -> str:
    """``[3] Button 'Save'``: the id the tools take, the short class, the text or description."""
    name = " ".join(control.name.split())[:NAME_CHARS]
    return f"[{control.id}] {control.control_type} '{name}'"


def controls_text(controls: Sequence[Control]) -> str:
    """The numbered control list, capped at :data:`MAX_CONTROLS`."""
    if not controls:
        return "(no controls found; press_key KEYCODE_BACK or swipe to find more)"
    lines = [control_line(c) for c in controls[:MAX_CONTROLS]]
    if len(controls) > MAX_CONTROLS:
        lines.append(f"... {len(controls) - MAX_CONTROLS} more")
    return "\n".join(lines)


def apps_text(apps: Sequence[str]) -> str:
    """The installed apps' package names, comma-separated and capped."""
    shown = ", ".join(apps[:MAX_APPS]) or "(unknown)"
    return shown + (f", ... {len(apps) - MAX_APPS} more" if len(apps) > MAX_APPS else "")


class MobileAgentPrompter(LinuxAgentPrompter):
    """Builds the MobileAgent's messages from ``mobile_agent.yaml`` and its examples."""

    def __init__(
        self, is_visual: bool, prompt_template: str | Path, example_prompt_template: str | Path
    ) -> None:
        super().__init__(prompt_template, example_prompt_template)
        self.is_visual = is_visual

    def user_prompt_construction(  # type: ignore[override]  # the spec's sections, not one request
        self,
        request: str,
        plan: str,
        installed_apps: Sequence[str],
        controls: Sequence[Control],
        last_actions: Sequence[str],
        note: str = "",
    ) -> str:
        """The step's text in the spec's section order; ``note`` (what the last step ran into) last."""
        actions = "\n".join(last_actions[-MAX_ACTIONS:]) or "(none yet)"
        text = str(self.prompt_template["user"]).format(
            plan=plan or "(none)",
            user_request=plain_request(request),
            installed_apps=apps_text(installed_apps),
            controls=controls_text(controls),
            last_actions=actions,
        )
        return f"{text}\n{note}" if note else text

    def user_content_construction(  # type: ignore[override]
        self, text: str, clean_url: str = "", annotated_url: str = ""
    ) -> list[dict[str, Any]] | str:
        """The text alone for a text-only model; else [clean image, annotated image, text]."""
        if not self.is_visual:
            return text
        images: list[Image] = [
            (what, url) for what, url in ((CLEAN, clean_url), (ANNOTATED, annotated_url)) if url
        ]
        return visual_content(text, images)
