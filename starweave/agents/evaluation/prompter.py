"""EvaluationAgentPrompter: the system prompt and the request, outcome and trajectory to judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starweave.agent import BasicPrompter
from starweave.agents.evaluation.response import MAX_SUB_SCORES


class EvaluationAgentPrompter(BasicPrompter):
    """Renders ``evaluation_agent.yaml``: no tools and no examples, the trajectory as quoted data."""

    def __init__(self, main_prompt: str | Path) -> None:
        super().__init__(False, main_prompt, None)

    def system_prompt_construction(self, *args: Any, **kwargs: Any) -> str:
        """The judging instructions."""
        return str(self.prompt_template["system"]).format(max_sub_scores=MAX_SUB_SCORES)

    def user_prompt_construction(
        self,
        request: str,
        trajectory: str,
        status: str = "",
        result: str = "",
        agent: str = "",
        workspace: str = "",
    ) -> str:
        """The request, the run's final status and result, what its workspace held afterwards
        (read there, not claimed) and its trajectory."""
        return str(self.prompt_template["user"]).format(
            request=request,
            trajectory=trajectory,
            status=status or "(unknown)",
            result=result or "(none)",
            agent=agent or "(unknown)",
            workspace=workspace or "(not read)",
        )

    def user_content_construction(self, *args: Any, **kwargs: Any) -> str:
        """The text part; a visual model's screenshots go before it (EvaluationAgent.message_constructor)."""
        return self.user_prompt_construction(*args, **kwargs)
