"""Experience and demonstrations as a user meets them: a replay ``starweave run`` saved as experience
(``--save-experience``, or SAVE_EXPERIENCE: ask on a real pseudo-terminal), found again by a similar
request and not by an unrelated one; ``starweave learn demo`` on reference YAML and on a run's log.
The stores live in a temporary folder ($STARWEAVE_KNOWLEDGE_DIR), never the user's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from e2e.test_cli_errors import STARWEAVE, assert_one_line_usage_error
from e2e.test_desktop_confirm import run_on_a_terminal
from helpers.linux_replay import answer, replay_file

from starweave.knowledge import KnowledgeBase
from starweave.knowledge.examples import examples_of
from starweave.knowledge.retrieval import EXAMPLES_HEADER

DATA = Path(__file__).parents[1] / "unit" / "knowledge" / "data"
REQUEST = "create notes.txt containing hello"
ANSWERS = [
    answer("ls -l", thought="list files first"),
    answer("echo hello > notes.txt", thought="write the notes file"),
    answer(None, "FINISH", result="notes.txt holds hello"),
]


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STARWEAVE_")}
    env["STARWEAVE_KNOWLEDGE_DIR"] = str(tmp_path / "vectordb")
    return env


def run_args(tmp_path: Path, answers: list[object], task: str = "run1", *extra: str) -> list[str]:
    folder = tmp_path / task
    folder.mkdir(exist_ok=True)
    return [
        "run",
        REQUEST,
        "--provider",
        "replay",
        "--replay-file",
        str(replay_file(folder, list(answers))),
        "--workspace",
        str(tmp_path / "ws"),
        "--log-dir",
        str(tmp_path / "logs"),
        "--task",
        task,
        *extra,
    ]


def starweave(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The CLI off a terminal (stdin is /dev/null), its stores under ``tmp_path``."""
    return subprocess.run(
        [*STARWEAVE, *args],
        cwd=tmp_path,
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def experience(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase(tmp_path / "vectordb")


def rag_config(tmp_path: Path, save: str) -> Path:
    """A config folder whose rag.yaml turns experience on and sets SAVE_EXPERIENCE."""
    folder = tmp_path / "config"
    (folder / "ufo").mkdir(parents=True, exist_ok=True)
    (folder / "ufo" / "rag.yaml").write_text(f"RAG_EXPERIENCE: true\nSAVE_EXPERIENCE: {save}\n")
    return folder


@pytest.mark.slow
def test_a_saved_run_is_listed_shown_and_found_by_a_similar_request_only(tmp_path: Path) -> None:
    proc = starweave(run_args(tmp_path, ANSWERS, "run1", "--save-experience"), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    saved = [line for line in proc.stdout.splitlines() if line.startswith("Experience saved: ")]
    assert len(saved) == 1, proc.stdout
    doc_id = saved[0].split()[2]

    listed = json.loads(starweave(["learn", "list", "--kind", "experience", "--json"], tmp_path).stdout)
    assert [(r["id"], r["kind"], r["request"]) for r in listed] == [(doc_id, "experience", REQUEST)]
    assert doc_id in starweave(["learn", "list"], tmp_path).stdout
    shown = starweave(["learn", "show", doc_id], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"Request: {REQUEST}" in shown.stdout
    assert "Step 2: write the notes file -> execute_command echo hello > notes.txt" in shown.stdout
    assert "Outcome: notes.txt holds hello" in shown.stdout

    store = experience(tmp_path).store("experience")
    similar = examples_of(store.search("make a notes.txt file that says hi"))
    assert [e.request for e in similar] == [REQUEST]
    assert store.search("compress the photos folder into a zip archive") == []


def test_ask_on_a_terminal_saves_on_yes(tmp_path: Path) -> None:
    args = [*run_args(tmp_path, ANSWERS), "--config-dir", str(rag_config(tmp_path, "ask"))]
    code, out = run_on_a_terminal(args, "y", tmp_path, environment(tmp_path))
    assert code == 0, out
    assert "Save this run as experience? [y/N]" in out and "Experience saved: experience:" in out
    documents = experience(tmp_path).store("experience").documents()
    assert len(documents) == 1 and documents[0].id in out


def test_ask_on_a_terminal_answered_no_saves_nothing(tmp_path: Path) -> None:
    args = [*run_args(tmp_path, ANSWERS), "--config-dir", str(rag_config(tmp_path, "ask"))]
    code, out = run_on_a_terminal(args, "n", tmp_path, environment(tmp_path))
    assert code == 0 and "Save this run as experience? [y/N]" in out, out
    assert "Experience saved" not in out
    assert experience(tmp_path).store("experience").documents() == []


def test_ask_off_a_terminal_does_not_save_and_says_so(tmp_path: Path) -> None:
    args = [*run_args(tmp_path, ANSWERS), "--config-dir", str(rag_config(tmp_path, "ask"))]
    proc = starweave(args, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Save this run as experience?" not in proc.stdout
    assert "Experience not saved: no terminal to ask on" in proc.stdout
    assert experience(tmp_path).store("experience").documents() == []


def test_a_failed_run_is_never_saved(tmp_path: Path) -> None:
    failing = [answer("ls", thought="look"), answer(None, "FAIL", result="cannot do it")]
    args = [*run_args(tmp_path, failing, "run1", "--save-experience")]
    args += ["--config-dir", str(rag_config(tmp_path, "always"))]
    proc = starweave(args, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Experience not saved: the run did not finish (status FAIL)." in proc.stdout
    assert experience(tmp_path).store("experience").documents() == []


@pytest.mark.slow
def test_learn_demo_imports_reference_yaml_and_a_recorded_run(tmp_path: Path) -> None:
    shutil.copytree(DATA / "host_run", tmp_path / "host_run")
    proc = starweave(["learn", "demo", str(DATA / "reference_examples.yaml"), "--app", "mousepad"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("imported 2 demonstration(s) into ")
    proc = starweave(["learn", "demo", str(tmp_path / "host_run" / "response.log")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("imported 1 demonstration(s) into ")
    run_id = proc.stdout.strip().split(": ")[-1]

    rows = json.loads(starweave(["learn", "list", "--kind", "demonstration", "--json"], tmp_path).stdout)
    assert sorted((r["app"], r["source"]) for r in rows) == [
        ("mousepad", "host_run/response.log"),
        ("mousepad", "reference_examples.yaml"),
        ("mousepad", "reference_examples.yaml"),
    ]
    shown = starweave(["learn", "show", run_id], tmp_path).stdout
    assert "kind: demonstration" in shown and "agent: host" in shown and "Outcome: note saved" in shown

    store = experience(tmp_path).store("demonstration")
    found = examples_of(store.search("change the font to Arial", app="mousepad"))
    assert found and found[0].tips == "- The font list is in the View tab of Preferences."
    assert store.search("change the font to Arial", app="gimp") == []

    # Importing the same file again replaces its examples (now without an app).
    assert starweave(["learn", "demo", str(DATA / "reference_examples.yaml")], tmp_path).returncode == 0
    assert sorted(str(d.app) for d in store.documents()) == ["None", "None", "mousepad"]
    # --all empties one kind only.
    experience(tmp_path).store("docs").add("d1", "Fonts are set in Preferences.", "fonts.md")
    forgot = starweave(["learn", "forget", "--kind", "demonstration", "--all"], tmp_path)
    assert forgot.stdout.startswith("forgot 3 demonstration document(s)")
    assert len(experience(tmp_path).store("docs").documents()) == 1


def test_learn_demo_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("example1: [unclosed\n")
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "notes.txt").write_text("just notes\n")
    (tmp_path / "image.log").write_bytes(b"\xff\xfe\x00binary")
    cases = {
        "missing.yaml": "no such file or folder",
        "bad.yaml": "not valid YAML",
        "empty.yaml": "the file is empty",
        "notes.txt": "neither a YAML example file nor a Starweave response.log",
        "image.log": "not a text file",
    }
    for name, message in cases.items():
        proc = starweave(["learn", "demo", str(tmp_path / name)], tmp_path)
        assert_one_line_usage_error(proc, message)
    assert experience(tmp_path).store("demonstration").documents() == []


@pytest.mark.slow
def test_a_saved_run_reaches_a_later_similar_request_s_prompt_and_not_an_unrelated_one(
    tmp_path: Path,
) -> None:
    saved = starweave(run_args(tmp_path, ANSWERS, "run1", "--save-experience"), tmp_path)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    config = rag_config(tmp_path, "always_not")
    # The replay model "follows" the example only when it is in the prompt it was given.
    follows = {
        "$if_prompt_contains": f"> Request: {REQUEST}",
        "then": answer(None, "FINISH", result="followed the saved run"),
        "else": answer(None, "FAIL", result="no example to follow"),
    }

    def later(request: str, task: str) -> tuple[dict[str, object], str]:
        args = run_args(tmp_path, [follows], task, "--config-dir", str(config), "--json")
        args[1] = request
        proc = starweave(args, tmp_path)
        assert proc.returncode in (0, 1), proc.stderr
        return json.loads(proc.stdout), (tmp_path / "logs" / task / "request.log").read_text()

    result, prompt = later("make a notes.txt file that says hi", "similar")
    assert result["status"] == "FINISH" and result["result"] == "followed the saved run"
    assert EXAMPLES_HEADER in json.loads(prompt.splitlines()[0])["prompt"][0]["content"]
    result, prompt = later("compress the photos folder into a zip archive", "unrelated")
    assert result["status"] == "FAIL"
    assert EXAMPLES_HEADER not in prompt
    # SAVE_EXPERIENCE: always_not: the later runs were not saved.
    assert len(experience(tmp_path).store("experience").documents()) == 1
