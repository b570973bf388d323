"""LinuxAgent construction: every collaborator is given to the constructor, none set afterwards."""

from __future__ import annotations

from typing import Any

from starweave.agents.linux import LinuxAgent
from starweave.agents.linux.agent import DEFAULT_COMMAND_TIMEOUT, DEFAULT_PROMPT_BUDGET_CHARS
from starweave.config import StarweaveConfig
from starweave.config.models import SystemConfig
from starweave.knowledge.retrieval import (
    EXAMPLES_HEADER,
    KNOWLEDGE_HEADER,
    RETRIEVAL_SHARE,
    Passage,
    Retrieved,
    Retriever,
)
from starweave.session.console import ConsoleView
from starweave.session.runner import make_linux_agent
from tests.unit.agents.linux.test_prompter import item


async def test_the_constructor_takes_the_collaborators() -> None:
    asked: list[tuple[str, str]] = []

    async def confirmer(command: str, reason: str) -> bool:
        asked.append((command, reason))
        return True

    llm, view = object(), object()
    agent = LinuxAgent(
        llm=llm,
        view=view,
        confirmer=confirmer,
        history_keys=["step"],
        prompt_budget_chars=5000,
        command_timeout=12.0,
    )
    assert agent.llm is llm and agent.view is view and agent.auto_approve is False
    assert agent.history_keys == ["step"] and agent.prompt_budget_chars == 5000
    assert agent.command_timeout == 12.0
    assert await agent.confirm("rm -rf x", "deletes") is True
    assert asked == [("rm -rf x", "deletes")]


async def test_defaults_ask_nobody_and_refuse() -> None:
    agent = LinuxAgent()
    assert agent.llm is None and agent.view is None
    assert agent.prompt_budget_chars == DEFAULT_PROMPT_BUDGET_CHARS
    assert agent.command_timeout == DEFAULT_COMMAND_TIMEOUT
    assert "result" in agent.history_keys
    assert await agent.confirm("rm -rf x", "deletes") is False
    assert await LinuxAgent(auto_approve=True).confirm("rm -rf x", "deletes") is True


def test_the_runner_builds_the_agent_from_the_configuration() -> None:
    config: Any = StarweaveConfig()
    llm, view = object(), ConsoleView(quiet=True)
    agent = make_linux_agent(config, llm, view, auto_approve=True, command_timeout=42.0)
    assert agent.llm is llm and agent.view is view and agent.auto_approve is True
    assert agent.command_timeout == 42.0 and agent.confirmer is not None
    assert agent.history_keys == list(config.system.history_keys)


class HugeRetriever(Retriever):
    """A retriever that finds far more than any prompt can hold."""

    def __init__(self) -> None:
        super().__init__(SystemConfig.model_validate({"RAG_OFFLINE_DOCS": True}))

    async def retrieve(self, query: str, app: str | None = None, agent: str = "") -> Retrieved:
        filler = "y" * 650
        return Retrieved(
            [Passage(f"doc{n}", filler) for n in range(40)], [f"ex{n} {filler}" for n in range(40)]
        )


async def test_retrieval_takes_at_most_its_share_and_the_history_still_fits() -> None:
    budget = 20_000
    agent = LinuxAgent(prompt_budget_chars=budget, retriever=HugeRetriever())
    for step in range(1, 6):
        agent.add_memory(item(step, "z" * 3000))
    await agent.context_provision("count the files")
    messages = agent.message_constructor("count the files", [])
    retrieved = len(agent.knowledge.knowledge_text()) + len("".join(agent.knowledge.additional_examples()))
    assert 0 < retrieved <= budget * RETRIEVAL_SHARE
    # Help passages go before examples: 40 examples alone overflow the share.
    assert EXAMPLES_HEADER in messages[0]["content"] and KNOWLEDGE_HEADER not in messages[1]["content"]
    assert len(messages) > 2 and messages[-1]["role"] == "user"  # the latest step is there
    assert sum(len(str(m["content"])) for m in messages) <= budget
