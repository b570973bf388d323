"""EvaluationAgent: judges a finished session from its request and trajectory (spec D §21).

Advisory, as in the reference: one model call with the :class:`EvaluationResponse` schema (the
client retries until the answer validates, with constrained decoding where the provider has
it). It has no FSM of its own; a runner calls :meth:`EvaluationAgent.evaluate` once the session
has ended.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from starweave.agent import AgentRegistry, BasicAgent
from starweave.agents.evaluation.prompter import EvaluationAgentPrompter
from starweave.agents.evaluation.response import EvaluationResponse
from starweave.agents.evaluation.trajectory import TRAJECTORY_CHARS, trajectory_text

#: Tokens the verdict may take: the capped reason and sub-scores fit with room to spare.
VERDICT_TOKENS = 512


@AgentRegistry.register(agent_name="EvaluationAgent")
class EvaluationAgent(BasicAgent):
    """Scores a session: sub-goals of the request, each yes/no/unsure, and the whole.

    Whoever creates it passes ``llm`` (an LLMClient); ``trajectory_chars`` bounds the trajectory
    text put in the prompt.
    """

    def __init__(
        self,
        name: str = "EvaluationAgent",
        main_prompt: str | Path = "evaluation_agent.yaml",
        *,
        llm: Any = None,
        trajectory_chars: int = TRAJECTORY_CHARS,
    ) -> None:
        super().__init__(name, llm=llm)
        self.prompter = self.get_prompter(main_prompt)
        self.trajectory_chars = trajectory_chars

    def get_prompter(self, main_prompt: str | Path) -> EvaluationAgentPrompter:
        """The evaluation prompter over ``main_prompt``."""
        return EvaluationAgentPrompter(main_prompt)

    def message_constructor(
        self, request: str, records: Iterable[Mapping[str, Any]], outcome: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """System instructions, then the request, the outcome and the bounded trajectory."""
        outcome = outcome or {}
        user = self.prompter.user_prompt_construction(
            request,
            trajectory_text(records, self.trajectory_chars),
            status=str(outcome.get("status") or ""),
            result=str(outcome.get("result") or outcome.get("error") or ""),
            agent=str(outcome.get("agent") or ""),
        )
        return self.prompter.prompt_construction(self.prompter.system_prompt_construction(), user)

    async def evaluate(
        self, request: str, records: Iterable[Mapping[str, Any]], outcome: Mapping[str, Any] | None = None
    ) -> EvaluationResponse:
        """Judge the session; model and schema errors (``LLMError``) propagate to the caller."""
        messages = self.message_constructor(request, records, outcome)
        completion = await self.llm.complete(messages, schema=EvaluationResponse, max_tokens=VERDICT_TOKENS)
        return EvaluationResponse.model_validate(completion.parsed)
