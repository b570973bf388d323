"""Retrieval in the HostAgent's and AppAgent's prompts, on the fake desktop: the host retrieves for
the request, each AppAgent for its subtask (its application's documents first), once each; the
passages land quoted in the knowledge slot, the examples in the examples slot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from unit.agents.host_app.test_handoff import app, click, host, run_round

from starweave.agent import Context
from starweave.agents.app.prompter import AppAgentPrompter
from starweave.agents.host import HostAgent
from starweave.agents.host.prompter import HostAgentPrompter
from starweave.config.models import SystemConfig
from starweave.knowledge import KnowledgeBase
from starweave.knowledge.examples import Example, ExampleStep, save_example
from starweave.knowledge.retrieval import EXAMPLES_HEADER, KNOWLEDGE_HEADER, Retrieved, Retriever
from starweave.llm.base import RawAnswer, RawRequest
from starweave.llm.providers.replay import ReplayClient

CALC_HELP = "Calculator help: to add numbers press the digits, then the plus key."
EDITOR_HELP = "Editor help: to add numbers to a note type them into the Document."


class RecordingReplay(ReplayClient):
    """A replay client that keeps the text of every prompt it answered."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, json_retries=2)
        self.prompts: list[str] = []

    async def _raw_complete(self, request: RawRequest) -> RawAnswer:
        self.prompts.append("\n".join(str(m.get("content")) for m in request.messages))
        return await super()._raw_complete(request)


class CountingRetriever(Retriever):
    def __init__(self, system: SystemConfig) -> None:
        super().__init__(system)
        self.queries: list[tuple[str, str | None, str]] = []

    async def retrieve(self, query: str, app: str | None = None, agent: str = "") -> Retrieved:
        self.queries.append((query, app, agent))
        return await super().retrieve(query, app, agent)


@pytest.fixture
def knowledge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnowledgeBase:
    monkeypatch.setenv("STARWEAVE_KNOWLEDGE_DIR", str(tmp_path / "kb"))
    base = KnowledgeBase(tmp_path / "kb")
    base.store("docs").add("calc.md", CALC_HELP, "/help/calc.md", "calc")
    base.store("docs").add("editor.md", EDITOR_HELP, "/help/editor.md", "editor")
    example = Example(
        "add numbers in the calculator", [ExampleStep("", "click_input +", "")], "sum shown", "app"
    )
    save_example(base.store("experience"), example)
    return base


async def test_host_and_app_prompts_carry_what_was_retrieved(
    context: Context, desk: Any, knowledge: KnowledgeBase, tmp_path: Path
) -> None:
    answers = [
        host("ASSIGN", "select_application_window", {"id": "1"}, current_subtask="add numbers: press 7"),
        # The AppAgent presses 7 only when its prompt holds the calculator's help, not the editor's.
        {
            "$if_prompt_contains": "press the digits, then the plus key",
            "then": app("CONTINUE", click("9", "7")),
            "else": app("FAIL", [], result="no help"),
        },
        app("FINISH", {"function": "texts", "arguments": {"id": "1", "name": "7"}}, result="display shows 7"),
        host("FINISH", result="7 pressed"),
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    llm = RecordingReplay(path)
    system = SystemConfig.model_validate({"RAG_OFFLINE_DOCS": True, "RAG_EXPERIENCE": True})
    retriever = CountingRetriever(system)
    agent = HostAgent(retriever=retriever)
    agent.llm = llm
    await run_round(context, agent, "add numbers in the calculator")

    assert agent.status == "FINISH", llm.prompts
    assert desk.windows["1"].display == "7"
    # once for the request (host), once for the subtask (app), not at every step
    assert retriever.queries == [
        ("add numbers in the calculator", None, "host"),
        ("add numbers: press 7", "calc", "app"),
    ]
    host_prompt, first_app, second_app, _ = llm.prompts
    assert KNOWLEDGE_HEADER in host_prompt
    assert EXAMPLES_HEADER not in host_prompt  # the saved example is an AppAgent's
    for prompt in (first_app, second_app):
        assert f"{KNOWLEDGE_HEADER}\n[1] calc.md\n> {CALC_HELP}" in prompt
        assert "editor.md" not in prompt
        assert f"{EXAMPLES_HEADER}\n[1]\n> Request: add numbers in the calculator" in prompt


@pytest.mark.parametrize("visual", [True, False])
def test_the_host_prompter_slots_are_empty_without_retrieval(visual: bool) -> None:
    prompter = HostAgentPrompter(visual, "host_agent.yaml", "host_agent_example.yaml")
    args: dict[str, Any] = {
        "user_request": "r",
        "targets": [],
        "previous_subtasks": [],
        "blackboard_prompt": "",
        "previous_steps": "(none yet)",
    }
    plain = prompter.user_prompt_construction(**args)
    assert prompter.user_prompt_construction(**args, knowledge="") == plain
    assert prompter.user_prompt_construction(**args, knowledge="K") == f"{plain}\n\nK"
    system = prompter.system_prompt_construction([], {})
    assert prompter.system_prompt_construction([], {}, []) == system
    with_example = prompter.system_prompt_construction([], {}, [f"{EXAMPLES_HEADER}\n[1]\n> Request: x"])
    assert f"{EXAMPLES_HEADER}\n[1]\n> Request: x" in with_example and len(with_example) > len(system)


@pytest.mark.parametrize("visual", [True, False])
def test_the_app_prompter_slots_are_empty_without_retrieval(visual: bool) -> None:
    prompter = AppAgentPrompter(visual, "app_agent.yaml", "app_agent_example.yaml")
    args: dict[str, Any] = {
        "user_request": "r",
        "subtask": "s",
        "current_application": "calc",
        "host_message": "",
        "control_info": "(none)",
        "blackboard_prompt": "",
        "previous_steps": "(none yet)",
    }
    plain = prompter.user_prompt_construction(**args)
    assert prompter.user_prompt_construction(**args, knowledge="") == plain
    assert prompter.user_prompt_construction(**args, knowledge="K") == f"{plain}\n\nK"
    if not visual:  # the text-only model's first turn
        first = {"user_request": "r", "subtask": "s", "current_application": "calc"}
        messages = prompter.text_messages("sys", first, [], "(none)")
        with_knowledge = prompter.text_messages("sys", {**first, "knowledge": "K"}, [], "(none)")
        assert messages[1]["content"] != with_knowledge[1]["content"]
        assert with_knowledge[1]["content"].replace("\n\nK", "", 1) == messages[1]["content"]
    system = prompter.system_prompt_construction([])
    assert prompter.system_prompt_construction([], False, []) == system
    assert "> Request: x" in prompter.system_prompt_construction([], False, ["> Request: x"])
