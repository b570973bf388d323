"""LinuxAgent construction: every collaborator is given to the constructor, none set afterwards."""

from __future__ import annotations

from typing import Any

from starweave.agents.linux import LinuxAgent
from starweave.agents.linux.agent import DEFAULT_COMMAND_TIMEOUT, DEFAULT_PROMPT_BUDGET_CHARS
from starweave.config import StarweaveConfig
from starweave.session.console import ConsoleView
from starweave.session.runner import make_linux_agent


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
