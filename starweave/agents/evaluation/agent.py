"""EvaluationAgent: judges a finished session from its request and trajectory (spec D §21).

Advisory, as in the reference: one model call with the :class:`EvaluationResponse` schema (the
client retries until the answer validates, with constrained decoding where the provider has
it). It has no FSM of its own; a runner calls :meth:`EvaluationAgent.evaluate` once the session
has ended.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from starweave.agent import AgentRegistry, BasicAgent
from starweave.agents.app.vision import Image, file_urls, visual_content
from starweave.agents.evaluation.prompter import EvaluationAgentPrompter
from starweave.agents.evaluation.response import EvaluationResponse
from starweave.agents.evaluation.screenshots import chosen_screenshots
from starweave.agents.evaluation.trajectory import TRAJECTORY_CHARS, trajectory_text
from starweave.agents.linux.world import evidence_text

#: Tokens the verdict may take: the capped reason and sub-scores fit with room to spare.
VERDICT_TOKENS = 512


@AgentRegistry.register(agent_name="EvaluationAgent")
class EvaluationAgent(BasicAgent):
    """Scores a session: sub-goals of the request, each yes/no/unsure, and the whole.

    Whoever creates it passes ``llm`` (an LLMClient); ``trajectory_chars`` bounds the trajectory
    text put in the prompt. ``visual`` (the judging model's VISUAL_MODE) sends the run's
    screenshots too: all of them with ``all_screenshots`` (EVA_ALL_SCREENSHOTS), else the first and
    the last; a text-only model gets none.
    """

    def __init__(
        self,
        name: str = "EvaluationAgent",
        main_prompt: str | Path = "evaluation_agent.yaml",
        *,
        llm: Any = None,
        trajectory_chars: int = TRAJECTORY_CHARS,
        visual: bool = False,
        all_screenshots: bool = True,
    ) -> None:
        super().__init__(name, llm=llm)
        self.prompter = self.get_prompter(main_prompt)
        self.trajectory_chars = trajectory_chars
        self.visual = visual
        self.all_screenshots = all_screenshots

    def get_prompter(self, main_prompt: str | Path) -> EvaluationAgentPrompter:
        """The evaluation prompter over ``main_prompt``."""
        return EvaluationAgentPrompter(main_prompt)

    def message_constructor(
        self,
        request: str,
        trajectory: str,
        outcome: Mapping[str, Any] | None = None,
        images: Sequence[Image] = (),
    ) -> list[dict[str, Any]]:
        """System instructions, then the request, the outcome and the trajectory text; with
        ``images`` (a visual model's screenshots) the user message is the images, then that text."""
        outcome = outcome or {}
        user = self.prompter.user_prompt_construction(
            request,
            trajectory,
            status=str(outcome.get("status") or ""),
            result=str(outcome.get("result") or outcome.get("error") or ""),
            agent=str(outcome.get("agent") or ""),
            workspace=evidence_text(outcome),
        )
        content: str | list[dict[str, Any]] = visual_content(user, list(images)) if images else user
        return self.prompter.prompt_construction(self.prompter.system_prompt_construction(), content)

    async def screenshot_images(
        self, folder: Path | None, steps: Collection[int] | None = None
    ) -> list[Image]:
        """The run's screenshots in ``folder`` (of ``steps`` only, when given) for a visual model;
        none for a text-only one."""
        if not self.visual or folder is None:
            return []
        chosen = chosen_screenshots(folder, self.all_screenshots, steps=steps)
        return await file_urls([(f"after step {step}", str(path)) for step, path in chosen])

    async def evaluate(
        self,
        request: str,
        records: Iterable[Mapping[str, Any]],
        outcome: Mapping[str, Any] | None = None,
        screenshots: Path | None = None,
        screenshot_steps: Collection[int] | None = None,
    ) -> EvaluationResponse:
        """Judge the session from its ``response.log`` records (and, for a visual model, the
        screenshots in the folder ``screenshots``, of ``screenshot_steps`` when given); model and
        schema errors (``LLMError``) propagate to the caller."""
        images = await self.screenshot_images(screenshots, screenshot_steps)
        trajectory = trajectory_text(records, self.trajectory_chars)
        return await self.judge(self.message_constructor(request, trajectory, outcome, images))

    async def evaluate_text(
        self, request: str, trajectory: str, outcome: Mapping[str, Any] | None = None
    ) -> EvaluationResponse:
        """Judge a run described by ``trajectory`` text (a Galaxy constellation's tasks)."""
        return await self.judge(self.message_constructor(request, trajectory, outcome))

    async def judge(self, messages: list[dict[str, Any]]) -> EvaluationResponse:
        """One schema-constrained model call on ``messages``."""
        completion = await self.llm.complete(messages, schema=EvaluationResponse, max_tokens=VERDICT_TOKENS)
        return EvaluationResponse.model_validate(completion.parsed)
