"""The EvaluationAgent's response schema and the verdict record written to ``evaluation.log``.

The model answers ``{"reason", "sub_scores": [{"name", "evaluation"}], "complete"}`` as the
reference's EvaluationAgent does (spec D §21): ``evaluation`` and ``complete`` are one of
``yes``, ``no`` or ``unsure``. Strings and the list are capped so that constrained decoding on
the embedded model stays short.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field

#: How many sub-goals the model may score, and the characters of a name and of the reason.
MAX_SUB_SCORES = 6
MAX_NAME_CHARS = 80
MAX_REASON_CHARS = 600


def _verdict(value: Any) -> Any:
    """``Yes``, ``YES``, ``true`` → ``yes``; ``False`` → ``no``: small models vary the spelling."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        word = value.strip().lower()
        return {"true": "yes", "false": "no"}.get(word, word)
    return value


Verdict = Annotated[Literal["yes", "no", "unsure"], BeforeValidator(_verdict)]


class SubScore(BaseModel):
    """One sub-goal of the request and whether the trajectory achieved it."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    name: str = Field(max_length=MAX_NAME_CHARS, validation_alias=AliasChoices("name", "Name"))
    evaluation: Verdict = Field(validation_alias=AliasChoices("evaluation", "Evaluation", "score"))


class EvaluationResponse(BaseModel):
    """The EvaluationAgent's answer: why, the scored sub-goals, and whether the request is complete."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    reason: str = Field(max_length=MAX_REASON_CHARS, validation_alias=AliasChoices("reason", "Reason"))
    sub_scores: list[SubScore] = Field(
        default_factory=list,
        max_length=MAX_SUB_SCORES,
        validation_alias=AliasChoices("sub_scores", "sub_score", "SubScores"),
    )
    complete: Verdict = Field(validation_alias=AliasChoices("complete", "Complete"))


def evaluation_record(response: EvaluationResponse, request: str) -> dict[str, Any]:
    """The ``evaluation.log`` line of a session verdict, in the reference's shape (spec D §22)."""
    return {
        "complete": response.complete,
        "sub_scores": [score.model_dump() for score in response.sub_scores],
        "reason": response.reason,
        "level": "session",
        "request": request,
        "type": "evaluation_result",
    }
