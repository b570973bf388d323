"""The EvaluationAgent: an advisory judge of a finished session (spec D §21)."""

from starweave.agents.evaluation.agent import EvaluationAgent
from starweave.agents.evaluation.response import EvaluationResponse, SubScore, evaluation_record
from starweave.agents.evaluation.trajectory import trajectory_text

__all__ = ["EvaluationAgent", "EvaluationResponse", "SubScore", "evaluation_record", "trajectory_text"]
