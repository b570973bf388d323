"""Worked examples for the prompt's examples slot: saved runs (experience) and imported
demonstrations share one shape, :class:`Example`, stored one per document in the kind's store.

The stored document's text is what retrieval matches (the request first, then the steps); its
metadata holds the example itself, so a hit becomes prompt text without a second lookup.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from starweave.knowledge.store import Hit, KnowledgeStore
from starweave.text import flat_clip

#: The metadata key under which a stored document keeps its example.
EXAMPLE_KEY = "example"
#: A step's text in the prompt is cut here: an example teaches the shape, not a whole output.
STEP_TEXT_LIMIT = 300


@dataclass
class ExampleStep:
    """One step of an example: what the agent thought, the action it took, what came of it."""

    thought: str = ""
    action: str = ""
    result: str = ""


@dataclass
class Example:
    """A request and how it was (or should be) done: the steps and the outcome."""

    request: str
    steps: list[ExampleStep] = field(default_factory=list)
    outcome: str = ""
    #: The agent the example is for (``linux``, ``host``, ``app``); empty: any agent.
    agent: str = ""
    #: Where it came from: ``experience`` (a saved run) or the imported file's name.
    source: str = ""
    #: Hints the demonstrator gave (the reference's ``Tips``).
    tips: str = ""

    def search_text(self) -> str:
        """What retrieval matches: the request, the steps' actions and the tips."""
        parts = [self.request, *(s.action for s in self.steps), self.tips]
        return "\n".join(p for p in parts if p)

    def to_metadata(self) -> dict[str, Any]:
        """The stored form (JSON-safe)."""
        return {EXAMPLE_KEY: asdict(self)}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Example | None:
        """The example a stored document holds, or None when it holds none (a help document)."""
        raw = metadata.get(EXAMPLE_KEY)
        if not isinstance(raw, Mapping) or not raw.get("request"):
            return None
        steps = [
            ExampleStep(**{k: str(v) for k, v in step.items() if k in ("thought", "action", "result")})
            for step in raw.get("steps") or []
            if isinstance(step, Mapping)
        ]
        fields = {k: str(raw.get(k) or "") for k in ("outcome", "agent", "source", "tips")}
        return cls(request=str(raw["request"]), steps=steps, **fields)

    def render(self) -> str:
        """The example as the prompt shows it: request, numbered steps, outcome."""
        lines = [f"Request: {self.request}"]
        for number, step in enumerate(self.steps, start=1):
            text = " -> ".join(
                flat_clip(p, STEP_TEXT_LIMIT) for p in (step.thought, step.action, step.result) if p
            )
            lines.append(f"Step {number}: {text}")
        if self.tips:
            lines.append(f"Tips: {flat_clip(self.tips, STEP_TEXT_LIMIT)}")
        if self.outcome:
            lines.append(f"Outcome: {flat_clip(self.outcome, STEP_TEXT_LIMIT)}")
        return "\n".join(lines)

    def document_id(self) -> str:
        """A stable id: the same example saved twice replaces itself."""
        digest = hashlib.sha256(f"{self.source}\n{self.render()}".encode()).hexdigest()[:12]
        return f"{self.source or 'example'}:{digest}"


def save_example(store: KnowledgeStore, example: Example, app: str | None = None) -> str:
    """Store ``example`` as one document (not split into passages); returns its id."""
    doc_id = example.document_id()
    store.add(
        doc_id, example.search_text(), example.source or store.kind, app, example.to_metadata(), split=False
    )
    return doc_id


def examples_of(hits: list[Hit]) -> list[Example]:
    """The examples held by ``hits``, best first; hits without one are skipped."""
    found = (Example.from_metadata(hit.metadata) for hit in hits)
    return [example for example in found if example is not None]
