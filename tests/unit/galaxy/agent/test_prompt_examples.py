"""The ConstellationAgent's prompts are general: the creation prompt never depends on the request's
wording, and no prompt example restates a task the agent is benchmarked or tested on (its file
names, its extensions or its phrasing), so that what the small model copies is a structure, not an
answer to a known task."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from unit.galaxy.agent.answers import CREATE_2, CREATE_4

from starweave.galaxy.agent import ConstellationPrompterFactory, WeavingMode
from starweave.galaxy.agent.prompter import FINAL_ANSWER_TEXT

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))

from embedded_tasks_galaxy import TASKS  # the benchmark folder is no package

# The requests of the benchmark and the task descriptions of the tests' recorded plans.
KNOWN = [t.request for t in TASKS] + [
    str(task["description"])
    for answer in (CREATE_2, CREATE_4)
    for task in answer["constellation"]["tasks"]  # type: ignore[index]
]
# Four words in a row: short enough to catch a request restated, long enough to let the rules and
# examples use ordinary words ("the current directory").
PHRASE_WORDS = 4


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+(?:['.][a-z0-9_]+)*", text.lower())


def _phrases(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i : i + PHRASE_WORDS]) for i in range(len(words) - PHRASE_WORDS + 1)}


def shipped_prompts() -> dict[str, str]:
    """Every system text the agent can show, with every example it can pick."""
    creation = ConstellationPrompterFactory.create_prompter("creation")
    editing = ConstellationPrompterFactory.create_prompter(WeavingMode.EDITING)
    return {
        "creation": creation.system_prompt_construction("x"),
        "review": editing.system_prompt_construction("x"),
        "failure": str(editing.prompt_template["system"]).format(
            examples=editing.examples_prompt_helper(shape="failure"), apis=""
        ),
        "answer": editing.system_prompt_construction("x", final=True) + FINAL_ANSWER_TEXT,
    }


def test_the_creation_prompt_is_the_same_for_every_request() -> None:
    prompter = ConstellationPrompterFactory.create_prompter("creation")
    prompts = {prompter.system_prompt_construction(t.request) for t in TASKS}
    assert len(prompts) == 1
    assert prompts == {prompter.system_prompt_construction("")}


@pytest.mark.parametrize("known", KNOWN)
def test_no_prompt_names_a_known_tasks_files(known: str) -> None:
    names = re.findall(r"(?<![\w/-])[\w-]*\.[A-Za-z][A-Za-z0-9]{0,5}\b", known)  # notes.txt, .log
    for where, text in shipped_prompts().items():
        named = [n for n in names if re.search(rf"(?<![\w.-]){re.escape(n)}(?!\w)", text)]
        assert not named, f"the {where} prompt names {named} of {known!r}"


@pytest.mark.parametrize("known", KNOWN)
def test_no_prompt_restates_a_known_tasks_phrasing(known: str) -> None:
    for where, text in shipped_prompts().items():
        shared = _phrases(known) & _phrases(text)
        assert not shared, f"the {where} prompt repeats {sorted(' '.join(p) for p in shared)} of {known!r}"
