"""The public-task benchmark (benchmarks/public_tasks/, benchmarks/public_bench.py) without a model.

For every task: its gold solution, run with plain bash in its prepared workspace, passes its check
(with the gold output as the answer), and the untouched workspace with an irrelevant answer fails
it, so every check can pass and can fail. Also: the recorded dev/test split, the answer comparison
of the InterCode check, and the runner's wiring.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import embedded_common
import public_bench
from public_tasks import SPLIT_FILE, TASKS, half_of, load_split, tasks_in
from public_tasks.common import PublicTask, make_writable

BY_NAME = {task.name: task for task in TASKS}


def finished(answer: str) -> dict[str, Any]:
    """A result.json of a run that finished with ``answer``, in the shape the checks read."""
    return {"status": "FINISH", "result": answer, "steps": 1}


def run_gold(task: PublicTask, folder: Path) -> str:
    """Prepare ``folder`` and run the task's gold solution there with bash; what it printed."""
    folder.mkdir()
    task.setup(folder)
    done = subprocess.run(
        ["bash", "-c", task.gold],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
        check=False,
    )
    return done.stdout


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_gold_passes_and_untouched_setup_fails(task: PublicTask, tmp_path: Path) -> None:
    try:
        output = run_gold(task, tmp_path / "gold")
        reason = task.check(tmp_path / "gold", finished(output))
        assert reason is None, f"the gold solution fails the check: {reason}"
        (tmp_path / "untouched").mkdir()
        task.setup(tmp_path / "untouched")
        reason = task.check(tmp_path / "untouched", finished("Sorry, I could not do that."))
        assert reason, "the untouched setup passes the check"
    finally:
        make_writable(tmp_path)


@pytest.mark.parametrize("name", ["intercode-fs1-08", "tbench-hello-world"])
def test_a_run_that_did_not_finish_fails(name: str, tmp_path: Path) -> None:
    task = BY_NAME[name]
    output = run_gold(task, tmp_path / "gold")
    reason = task.check(tmp_path / "gold", {"status": "FAIL", "result": output, "steps": 30})
    assert reason and "status" in reason


def test_the_suite_has_enough_tasks_from_each_source() -> None:
    names = [t.name for t in TASKS]
    assert len(names) == len(set(names))
    intercode = [t for t in TASKS if t.name.startswith("intercode-")]
    tbench = [t for t in TASKS if t.name.startswith("tbench-")]
    assert len(TASKS) >= 60 and len(intercode) >= 40 and len(tbench) >= 15
    assert len(intercode) + len(tbench) == len(TASKS)
    for task in TASKS:
        assert task.gold and task.request
        repo = "princeton-nlp/intercode" if task in intercode else "laude-institute/terminal-bench"
        assert task.source.startswith(repo)
    doc = public_bench.__doc__ or ""
    assert f"{len(intercode)} InterCode-Bash" in doc and f"{len(tbench)} Terminal-Bench" in doc


def test_the_split_file_lists_every_task_by_the_hash() -> None:
    split = load_split()
    assert set(split) == {t.name for t in TASKS}
    for name, half in split.items():
        expected = "dev" if hashlib.sha256(name.encode()).digest()[0] % 2 == 0 else "test"
        assert half == expected == half_of(name)
    assert json.loads(SPLIT_FILE.read_text()) == split
    dev, test = tasks_in("dev"), tasks_in("test")
    assert len(dev) >= 25 and len(test) >= 25
    assert len(dev) + len(test) == len(TASKS) == len(tasks_in("both"))


# ---- the answer comparison ----------------------------------------------------------------------


def check_answer(name: str, answer: str, tmp_path: Path) -> str | None:
    """The check of task ``name`` on an untouched workspace with ``answer`` (WS: its absolute path)."""
    task = BY_NAME[name]
    workspace = tmp_path / name
    workspace.mkdir()
    task.setup(workspace)
    try:
        return task.check(workspace, finished(answer.replace("WS", str(workspace))))
    finally:
        make_writable(workspace)


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("intercode-fs1-52", "The files are Hello.java, Hello1.java and dir1/AnotherHello.java."),
        ("intercode-fs1-33", "There are 31 files."),
        ("intercode-fs3-09", "```\n-rwxrwxrwx 1 me me 0 Dec 1 10:00 WS/dir1/all.txt\n```"),
        ("intercode-fs3-01", "Only `./dir1/file.c` is larger than 1 KB."),
        ("intercode-fs3-35", "Same content: dir1/hello.txt, dir2/hello.txt; dir1/all.txt, dir1/readonly.txt, "
         "old2.txt, recent1.txt; dir1/new1.sh, new.sh"),
        ("intercode-fs2-01", "text3.txt:2: The first line in this file is foo\n"
         "folder2/text1.txt:1:The first foo file in this directory!"),
        ("intercode-fs1-04", "The md5 sum is abd1db025ea1e9dbef827b574c500bdb."),
    ],
)  # fmt: skip
def test_a_right_answer_in_other_words_passes(name: str, answer: str, tmp_path: Path) -> None:
    assert check_answer(name, answer, tmp_path) is None


@pytest.mark.parametrize(
    ("name", "answer", "why"),
    [
        ("intercode-fs1-52", "Hello.java, Hello1.java, AnotherHello.java, NewClass.java", "also names"),
        ("intercode-fs1-33", "There are 131 files.", "lacks"),
        ("intercode-fs3-09", "dir1/all.txt has all permissions", "lacks"),
        ("intercode-fs3-01", "dir1/file.c and dir1/hello.c", "also names"),
        ("intercode-fs3-51", "The first line\nThe second line\nThe third line\nThe fourth line;\n"
         "The fifth line", "order"),
    ],
)  # fmt: skip
def test_a_wrong_or_padded_answer_fails(name: str, answer: str, why: str, tmp_path: Path) -> None:
    reason = check_answer(name, answer, tmp_path)
    assert reason and why in reason


# ---- the runner ---------------------------------------------------------------------------------


def test_the_runner_logs_next_to_the_workspace_and_checks_it(tmp_path: Path, monkeypatch: Any) -> None:
    task = BY_NAME["tbench-hello-world"]
    seen: dict[str, Any] = {}

    def fake_cli(args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> Any:
        seen.update(args=args, cwd=cwd, env=env)
        (cwd / "hello.txt").write_text("Hello, world!\n")
        logs = Path(args[args.index("--log-dir") + 1]) / "task"
        logs.mkdir(parents=True)
        (logs / "result.json").write_text(json.dumps({"status": "FINISH", "result": "done", "steps": 2}))
        return 0, "", 1.5

    monkeypatch.setattr(embedded_common, "run_cli", fake_cli)
    outcome = public_bench.run_task(task, tmp_path, 60.0, {"X": "1"})
    assert outcome.ok and outcome.steps == 2
    assert seen["cwd"] == tmp_path / "workspace" and seen["args"][:2] == ["run", task.request]
    assert Path(seen["args"][seen["args"].index("--log-dir") + 1]) == tmp_path / "logs"
    assert not (tmp_path / "workspace" / "logs").exists()


@pytest.mark.parametrize(("guards", "env"), [("off", {"STARWEAVE_SYSTEM__GUARDS": "off"}), ("on", {})])
def test_the_runner_passes_guards_and_the_chosen_tasks(
    guards: str, env: dict[str, str], monkeypatch: Any, capsys: Any
) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake_suite(
        timeout: float, names: list[str], env: dict[str, str], keep: Any, report: Any
    ) -> list[Any]:
        calls.append((timeout, names, env))
        return []

    monkeypatch.setattr(public_bench, "run_public_suite", fake_suite)
    name = "tbench-hello-world"
    assert public_bench.main(["--half", "both", "--guards", guards, "--only", name, "--timeout", "9"]) == 0
    assert calls == [(9.0, [name], env)]
    assert public_bench.main(["--only", "no-such-task"]) == 2
    other = "test" if half_of(name) == "dev" else "dev"
    assert public_bench.main(["--half", other, "--only", name]) == 2
    capsys.readouterr()
