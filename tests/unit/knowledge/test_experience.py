"""The experience summarizer, demonstration imports and the saving decision, on recorded logs.

``data/linux_run`` and ``data/host_run`` are the logs of real replay runs (a LinuxAgent run, and a
HostAgent run in mousepad on the test desktop), with the machine's paths replaced by /home/user.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from starweave.config.models import SystemConfig
from starweave.knowledge import KnowledgeBase
from starweave.knowledge.configured import open_store
from starweave.knowledge.demonstrations import load_demonstrations
from starweave.knowledge.examples import Example
from starweave.knowledge.experience import SummaryError, short_call, summarize_run
from starweave.knowledge.saving import offer_experience

DATA = Path(__file__).parent / "data"


def test_a_linux_run_becomes_its_request_commands_and_outcome() -> None:
    summary = summarize_run(DATA / "linux_run")
    example = summary.example
    assert (summary.status, summary.app) == ("FINISH", None)
    assert example.request == "create notes.txt containing hello"
    assert (example.agent, example.source, example.outcome) == (
        "linux",
        "experience",
        "notes.txt holds hello",
    )
    # The closing step without an action is not a step: the outcome says it.
    assert [(s.thought, s.action) for s in example.steps] == [
        ("list files first", "execute_command ls -l"),
        ("write the notes file", "execute_command echo hello > notes.txt"),
    ]
    assert example.steps[0].result == "exit code 0 stdout: total 0"
    # The file itself or its folder: the same summary.
    assert summarize_run(DATA / "linux_run" / "response.log") == summary


def test_a_host_run_becomes_the_assignment_and_the_app_agents_actions_in_its_application() -> None:
    summary = summarize_run(DATA / "host_run")
    example = summary.example
    assert (summary.status, summary.app, example.agent) == ("FINISH", "mousepad", "host")
    assert example.outcome == "note saved"
    actions = [s.action for s in example.steps]
    assert actions == [
        "select_application_window(id='1', name='Untitled 1 - Mousepad')",
        "set_edit_text(id='8', text='hello from starweave')",
        "keyboard_input(id='8', keys='^s')",
        "keyboard_input(id='8', keys='/home/user/saved.txt')",
        "keyboard_input(id='8', keys='{ENTER}')",
        "texts(id='8')",
    ]
    assert example.steps[0].result == (
        "assigned to mousepad: type 'hello from starweave' into the document and save it"
    )
    assert example.steps[-1].result.endswith("success: hello from starweave")


def test_the_summary_is_deterministic_and_survives_the_store(tmp_path: Path) -> None:
    first, second = summarize_run(DATA / "host_run"), summarize_run(DATA / "host_run")
    assert first.example.render() == second.example.render()
    stored = Example.from_metadata(first.example.to_metadata())
    assert stored == first.example


def test_a_long_output_is_clipped_in_the_step(tmp_path: Path) -> None:
    record = {
        "step": 1,
        "agent_type": "LinuxAgent",
        "request": "print a lot",
        "action": {"function": "execute_command", "arguments": {"command": "seq 1000"}},
        "status": "FINISH",
        "output": "\n".join(str(n) for n in range(1000)),
        "result": "printed",
    }
    (tmp_path / "response.log").write_text(json.dumps(record) + "\n")
    step = summarize_run(tmp_path).example.steps[0]
    assert len(step.result) == 240 and step.result.endswith("…") and step.result.startswith("0 1 2")


@pytest.mark.parametrize(
    ("function", "arguments", "expected"),
    [
        ("execute_command", {"command": "ls -l"}, "execute_command ls -l"),
        ("click_input", {"id": "3", "name": "7"}, "click_input(id='3', name='7')"),
        ("texts", {"id": "8", "name": ""}, "texts(id='8')"),
        ("keyboard_input", {"keys": "x", "control_focus": False}, "keyboard_input x"),
        ("summary", {}, "summary"),
        ("", {"command": "ls"}, ""),
    ],
)
def test_short_call(function: str, arguments: dict[str, Any], expected: str) -> None:
    assert short_call(function, arguments) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json\n", "line 1 is not JSON"),
        ('{"hello": 1}\n', "no agent steps"),
        ("[1, 2]\n", "line 1 is not a step record"),
    ],
)
def test_what_is_not_a_run_log_is_said(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "response.log").write_text(text)
    with pytest.raises(SummaryError, match=message):
        summarize_run(tmp_path)


def test_the_reference_yaml_examples_become_one_example_each() -> None:
    examples, app = load_demonstrations(DATA / "reference_examples.yaml")
    assert app is None and len(examples) == 2
    font, save = examples
    assert font.request == (
        "Change the font of the document to Arial. (sub-task: Open the font settings in mousepad.)"
    )
    assert font.steps[0].thought == "The font is chosen in Preferences; open the Edit menu first."
    assert font.steps[0].action == "click_input(button='left', double=False) on 'Edit'"
    assert font.tips == "- The font list is in the View tab of Preferences."
    assert font.source == "reference_examples.yaml"
    assert save.steps[0].action == "keyboard_input ^s on 'Text'"
    assert save.tips == "Type the name in the dialog, then press Enter."


def test_the_packaged_example_shape_with_later_answers_is_read() -> None:
    examples, _ = load_demonstrations(Path("starweave/prompts/linux_agent_example.yaml"))
    highest = next(e for e in examples if "readings.txt" in e.request)
    assert [s.action for s in highest.steps] == ["execute_command sort -n readings.txt | tail -n 1", ""]
    assert highest.steps[0].result == "exit code 0 stdout: 97"
    assert highest.outcome == "The highest number in readings.txt is 97."


def test_a_recorded_run_is_a_demonstration_of_its_application() -> None:
    examples, app = load_demonstrations(DATA / "host_run" / "response.log")
    assert app == "mousepad" and len(examples) == 1
    assert examples[0].source == "host_run/response.log"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.yaml", "example1: [unclosed\n", "not valid YAML"),
        ("empty.yaml", "", "the file is empty"),
        ("empty.log", "  \n", "the file is empty"),
        ("list.yaml", "- 1\n- 2\n", "not a demonstration file"),
        ("other.yaml", "version: 1.0\nsystem: hi\n", "no example1:"),
        ("norequest.yaml", "example1:\n  Response: {Thought: x}\n", "example1 needs a Request"),
        ("notes.txt", "just some notes\n", "neither a YAML example file nor a Starweave response.log"),
    ],
)
def test_a_file_of_neither_kind_is_refused(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(SummaryError, match=message):
        load_demonstrations(tmp_path / name)


def test_missing_and_unfinished_runs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SummaryError, match="no such file"):
        load_demonstrations(tmp_path / "nope.yaml")
    run = tmp_path / "failed"
    shutil.copytree(DATA / "linux_run", run)
    result = json.loads((run / "result.json").read_text())
    (run / "result.json").write_text(json.dumps({**result, "status": "FAIL"}))
    with pytest.raises(SummaryError, match="did not finish"):
        load_demonstrations(run)


class Answers:
    """An injected view: whether it may ask, the answer typed, the questions it was asked."""

    def __init__(self, answer: bool | None, can_ask: bool | None = None) -> None:
        self.answer = answer
        self.allowed = answer is not None if can_ask is None else can_ask
        self.asked: list[str] = []
        self.console = Console(file=io.StringIO())

    def can_ask(self) -> bool:
        return self.allowed

    def cannot_ask_reason(self) -> str:
        return "no terminal to ask on"

    async def prompt_line(self, prompt: str) -> str | None:
        self.asked.append(prompt)
        return None if self.answer is None else ("y" if self.answer else "n")


def _records_and_result() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    lines = (DATA / "linux_run" / "response.log").read_text().splitlines()
    return [json.loads(line) for line in lines], json.loads((DATA / "linux_run" / "result.json").read_text())


async def offer(
    tmp_path: Path,
    system: SystemConfig,
    ask: Answers,
    forced: bool = False,
    evaluation: dict[str, Any] | None = None,
    status: str = "FINISH",
) -> tuple[str | None, str]:
    records, result = _records_and_result()
    out = tmp_path / "console.txt"
    with out.open("w") as file:
        ask.console = Console(file=file, width=200)
        doc_id = await offer_experience(
            system, records, {**result, "status": status}, ask, forced, evaluation
        )
    return doc_id, out.read_text()


@pytest.fixture
def knowledge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnowledgeBase:
    monkeypatch.setenv("STARWEAVE_KNOWLEDGE_DIR", str(tmp_path / "vectordb"))
    return KnowledgeBase(tmp_path / "vectordb")


@pytest.mark.parametrize(
    ("settings", "answer", "evaluation", "saved", "asked"),
    [
        ({}, True, None, False, False),  # RAG_EXPERIENCE is off by default: nothing happens
        ({"RAG_EXPERIENCE": True}, True, None, True, True),  # SAVE_EXPERIENCE defaults to ask
        ({"RAG_EXPERIENCE": True}, False, None, False, True),
        ({"RAG_EXPERIENCE": True, "SAVE_EXPERIENCE": "always"}, None, None, True, False),
        ({"RAG_EXPERIENCE": True, "SAVE_EXPERIENCE": "always_not"}, True, None, False, False),
        ({"RAG_EXPERIENCE": True, "SAVE_EXPERIENCE": "auto"}, True, {"complete": "yes"}, True, False),
        ({"RAG_EXPERIENCE": True, "SAVE_EXPERIENCE": "auto"}, True, {"complete": "no"}, False, False),
        ({"RAG_EXPERIENCE": True, "SAVE_EXPERIENCE": "auto"}, True, None, False, False),
    ],
)
async def test_the_settings_decide_whether_a_finished_run_is_saved(
    tmp_path: Path,
    knowledge: KnowledgeBase,
    settings: dict[str, Any],
    answer: bool | None,
    evaluation: dict[str, Any] | None,
    saved: bool,
    asked: bool,
) -> None:
    ask = Answers(answer)
    doc_id, said = await offer(tmp_path, SystemConfig.model_validate(settings), ask, evaluation=evaluation)
    assert (doc_id is not None) == saved, said
    assert bool(ask.asked) == asked
    assert len(knowledge.store("experience").documents()) == (1 if saved else 0)
    if saved:
        assert f"Experience saved: {doc_id}" in said and f"starweave learn show {doc_id}" in said
    if settings.get("SAVE_EXPERIENCE") == "auto" and not saved:
        assert "Experience not saved (SAVE_EXPERIENCE auto)" in said


async def test_off_a_terminal_the_question_is_not_asked_and_that_is_said(
    tmp_path: Path, knowledge: KnowledgeBase
) -> None:
    doc_id, said = await offer(tmp_path, SystemConfig.model_validate({"RAG_EXPERIENCE": True}), Answers(None))
    assert doc_id is None and knowledge.store("experience").documents() == []
    assert said.strip() == (
        "Experience not saved: no terminal to ask on (use --save-experience, or SAVE_EXPERIENCE: always)."
    )


async def test_save_experience_saves_without_asking_but_never_a_failed_run(
    tmp_path: Path, knowledge: KnowledgeBase
) -> None:
    ask = Answers(False)
    doc_id, _ = await offer(tmp_path, SystemConfig(), ask, forced=True)
    assert doc_id is not None and not ask.asked
    info = knowledge.store("experience").get(doc_id)
    assert (
        info is not None and Example.from_metadata(info.metadata) == summarize_run(DATA / "linux_run").example
    )
    failed, said = await offer(tmp_path, SystemConfig(), ask, forced=True, status="FAIL")
    assert failed is None and "the run did not finish (status FAIL)" in said
    always = SystemConfig.model_validate({"RAG_EXPERIENCE": True, "SAVE_EXPERIENCE": "always"})
    assert (await offer(tmp_path, always, ask, status="FAIL"))[0] is None
    assert len(knowledge.store("experience").documents()) == 1


async def test_experience_saved_path_puts_the_store_there(tmp_path: Path, knowledge: KnowledgeBase) -> None:
    system = SystemConfig.model_validate({"EXPERIENCE_SAVED_PATH": str(tmp_path / "mine")})
    doc_id, said = await offer(tmp_path, system, Answers(None), forced=True)
    assert doc_id is not None and str(tmp_path / "mine") in said
    assert open_store(system, "experience").get(doc_id) is not None
    assert knowledge.store("experience").documents() == []
    # --store (a root) wins over the configured path.
    assert open_store(system, "experience", tmp_path / "root").folder == tmp_path / "root" / "experience"


async def test_a_store_that_cannot_be_written_is_a_warning(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    system = SystemConfig.model_validate({"EXPERIENCE_SAVED_PATH": str(blocked)})
    doc_id, said = await offer(tmp_path, system, Answers(None), forced=True)
    assert doc_id is None and said.startswith("Experience not saved: ")
