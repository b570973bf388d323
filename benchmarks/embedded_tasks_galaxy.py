"""Two-device Galaxy requests for the embedded-model benchmark (``embedded_bench.py``).

Each task runs as a user would run it, in a fresh folder::

    starweave galaxy "<request>" --local 2 --yes --task-name <name> --no-live

The two local devices work in ``galaxy_workspace/local_linux_1`` and ``galaxy_workspace/local_linux_2``
(``--workspace`` default, one folder per device), and the run leaves ``logs/galaxy/<name>/result.json``
(``--log-dir`` default). ``setup`` places files in the devices' workspaces; ``check`` looks at the
real outcome: the files the devices made, or the numbers in the run's answer (``final_results``:
the agent's answer and every task's result).

The mix: the same job on both devices; counts on each device then a total; data produced on one
device used on the other; independent different jobs. Each is a few shell steps per device, so a
1.5B model can plausibly do it.

How ``embedded_bench.py`` calls it::

    from embedded_tasks_galaxy import run_galaxy_suite
    outcomes = run_galaxy_suite(timeout=600.0, env={"STARWEAVE_LLM_THREADS": "1"})

``run_galaxy_suite(timeout, names=None, env=None, keep=None, extra_args=(), report=None)`` runs every
task (or those in ``names``) one after the other, each in a fresh folder; ``extra_args`` go to
``starweave galaxy`` (e.g. ``--provider replay --replay-file F --device-replay-file G``); ``keep``
is a folder where each task's folder (workspaces and logs) is kept; ``report`` gets each outcome as
it comes. ``TASKS`` lists the tasks; ``cli_args`` builds a task's CLI arguments. Run alone (one
request at a time, on the embedded model with one thread)::

    .venv/bin/python benchmarks/embedded_tasks_galaxy.py [--timeout S] [--only NAME ...] [--keep DIR]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded_common import (
    BenchTask,
    Outcome,
    file_text,
    make_suite,
    newest_result,
    run_cli,
    suite_arguments,
)

DEVICES = ("local_linux_1", "local_linux_2")
WORKSPACE = "galaxy_workspace"
LOG_DIR = Path("logs") / "galaxy"
TIMEOUT = 600.0
"""Seconds one request may take before it is killed (a run that hangs is a failure too)."""

Check = Callable[[Path, dict[str, Any]], str | None]


def workspace(workdir: Path, device: int) -> Path:
    """The workspace of ``local_linux_<device>`` under ``workdir``."""
    return workdir / WORKSPACE / DEVICES[device - 1]


def place(files: dict[tuple[int, str], str]) -> Callable[[Path], None]:
    """A setup writing ``{(device, name): text}`` into the devices' workspaces."""

    def setup(workdir: Path) -> None:
        for (device, name), text in files.items():
            target = workspace(workdir, device) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    return setup


def answer_text(result: dict[str, Any]) -> str:
    """The run's answer and every task's result and error, as one text."""
    parts: list[str] = []
    for entry in (result.get("session_results") or {}).get("final_results") or []:
        parts.append(str(entry.get("answer") or ""))
        tasks = entry.get("result") if isinstance(entry.get("result"), dict) else {}
        for outcome in tasks.values():
            if isinstance(outcome, dict):
                parts += [str(outcome.get("result") or ""), str(outcome.get("error") or "")]
    return "\n".join(parts)


def completed(result: dict[str, Any]) -> str | None:
    """None when the run completed, else why not."""
    if not result:
        return "no result.json was written"
    if result.get("status") != "completed":
        return f"the run ended {result.get('status')}: {result.get('error') or 'no error given'}"
    return None


def files_contain(expected: dict[tuple[int, str], str], must_complete: bool = True) -> Check:
    """A check that each ``(device, name)`` file exists and contains its word (case-insensitive)."""

    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        for (device, name), word in expected.items():
            path = workspace(workdir, device) / name
            if not path.exists():
                return f"{DEVICES[device - 1]}/{name} was not created"
            if word.lower() not in file_text(path).lower():
                return f"{DEVICES[device - 1]}/{name} does not contain {word!r}: {file_text(path)[:80]!r}"
        return completed(result) if must_complete else None

    return check


def final_answer(result: dict[str, Any]) -> str:
    """The agent's own final answer (``final_results[0].answer``), without the task results."""
    finals = (result.get("session_results") or {}).get("final_results") or [{}]
    return str(finals[0].get("answer") or "")


def mentions(*numbers: int, final_only: bool = False) -> Check:
    """A check that the run completed and its answer names each number (as a whole number);
    ``final_only``: in the agent's final answer itself (a total), not just some task's result."""

    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        problem = completed(result)
        if problem:
            return problem
        text = final_answer(result) if final_only else answer_text(result)
        for number in numbers:
            if not re.search(rf"(?<![\d.]){number}(?!\d|\.\d)", text):
                return f"the answer does not mention {number}: {' '.join(text.split())[:200]!r}"
        return None

    return check


def folders_exist(name: str) -> Check:
    """A check that the run completed and each device's workspace has the folder ``name``."""

    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        for device in (1, 2):
            if not (workspace(workdir, device) / name).is_dir():
                return f"{DEVICES[device - 1]} has no {name} folder"
        return completed(result)

    return check


def answer_names(word: str) -> Check:
    """A check that the run's answer contains ``word``."""

    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        return None if word in answer_text(result) else f"the answer does not name {word}"

    return check


def both(*checks: Check) -> Check:
    """All of ``checks``, the first failure reported."""

    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        for one in checks:
            problem = one(workdir, result)
            if problem:
                return problem
        return None

    return check


def lines(count: int, word: str = "line") -> str:
    """``count`` numbered lines."""
    return "".join(f"{word} {i}\n" for i in range(1, count + 1))


TASKS: list[BenchTask] = [
    # ---- the same job on both devices
    BenchTask(
        "hello_each",
        "On each of the two devices, create a file named hello.txt containing the word hello.",
        files_contain({(1, "hello.txt"): "hello", (2, "hello.txt"): "hello"}),
    ),
    BenchTask(
        "mkdir_each",
        "Create a folder named reports in the workspace of both devices.",
        folders_exist("reports"),
    ),
    BenchTask(
        "append_each",
        "On each device, append a line containing the word end to the file log.txt.",
        files_contain({(1, "log.txt"): "end", (2, "log.txt"): "end"}),
        place({(1, "log.txt"): "start\n", (2, "log.txt"): "start\n"}),
    ),
    BenchTask(
        "lines_each",
        "On each device, count the lines of notes.txt and report the number.",
        mentions(4, 6),
        place({(1, "notes.txt"): lines(4), (2, "notes.txt"): lines(6)}),
    ),
    # ---- counts on each device, then a total
    BenchTask(
        "count_total",
        "Count the .txt files in the workspace of each device and report the total.",
        mentions(8, final_only=True),
        place({**{(1, f"a{i}.txt"): "a" for i in range(3)}, **{(2, f"b{i}.txt"): "b" for i in range(5)}}),
    ),
    BenchTask(
        "words_total",
        "Count the words in words.txt on each device and report the total number of words.",
        mentions(5, final_only=True),
        place({(1, "words.txt"): "one two three\n", (2, "words.txt"): "four five\n"}),
    ),
    BenchTask(
        "sum_numbers",
        "Add the number in a.txt on local_linux_1 and the number in b.txt on local_linux_2, and "
        "report the sum.",
        mentions(42, final_only=True),
        place({(1, "a.txt"): "12\n", (2, "b.txt"): "30\n"}),
    ),
    # ---- data produced on one device, used on the other
    BenchTask(
        "copy_word",
        "Read the word in secret.txt on local_linux_1 and write it into found.txt on local_linux_2.",
        files_contain({(2, "found.txt"): "banana"}),
        place({(1, "secret.txt"): "banana\n"}),
    ),
    BenchTask(
        "double_number",
        "Read the number in number.txt on local_linux_1, then on local_linux_2 create double.txt "
        "containing that number times two.",
        files_contain({(2, "double.txt"): "42"}),
        place({(1, "number.txt"): "21\n"}),
    ),
    BenchTask(
        "word_relay",
        "Create the file made.txt containing the word apple on local_linux_1, then create the file "
        "seen.txt on local_linux_2 containing the same word.",
        files_contain({(1, "made.txt"): "apple", (2, "seen.txt"): "apple"}),
    ),
    # ---- independent, different jobs
    BenchTask(
        "fruit_pair",
        "On local_linux_1 create apple.txt containing apple, and on local_linux_2 create banana.txt "
        "containing banana.",
        files_contain({(1, "apple.txt"): "apple", (2, "banana.txt"): "banana"}),
    ),
    BenchTask(
        "list_and_mark",
        "List the .log files on local_linux_1, and create done.txt containing ok on local_linux_2.",
        both(files_contain({(2, "done.txt"): "ok"}), answer_names("x1.log")),
        place({(1, "x1.log"): "a\n", (1, "x2.log"): "b\n"}),
    ),
]


def cli_args(task: BenchTask, extra: Sequence[str] = ()) -> list[str]:
    """The ``starweave`` arguments of ``task``, run in a fresh folder."""
    return ["galaxy", task.request, "--local", "2", "--yes", "--task-name", task.name, "--no-live", *extra]


def run_task(
    task: BenchTask,
    workdir: Path,
    timeout: float = TIMEOUT,
    env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> Outcome:
    """Set up ``workdir`` (a fresh folder), run the request there and check what it did.

    ``steps`` counts the agent's steps (``response.log`` lines: the plan and each review, those
    answered without the model included).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    task.setup(workdir)
    code, output, seconds = run_cli(cli_args(task, extra_args), workdir, timeout, env)
    result = newest_result(workdir / LOG_DIR)
    reason = task.check(workdir, result) or ""
    if not reason and code != 0:
        reason = f"exit code {code}"
    steps = len(file_text(workdir / LOG_DIR / task.name / "response.log").splitlines())
    extra = {
        "exit_code": code,
        "tasks": (result.get("constellation") or {}).get("task_count"),
        "answer": " ".join(answer_text(result).split())[:300],
        "output_tail": output[-600:],
    }
    return Outcome(task.name, not reason, seconds, reason, steps, extra)


run_galaxy_suite = make_suite(TASKS, run_task, "sw-galaxy", TIMEOUT)


def main() -> None:
    """Run the suite on the embedded model (one thread) and print one line per task, then the totals."""
    args = suite_arguments(__doc__.split("\n")[0], TIMEOUT)

    def show(o: Outcome) -> None:
        mark = "ok  " if o.ok else "FAIL"
        print(f"{mark} {o.name:14} {o.seconds:6.1f} s {o.steps:2d} steps  {o.reason}", flush=True)
        print(f"     answer: {o.extra.get('answer', '')[:200]}", flush=True)

    outcomes = run_galaxy_suite(
        args.timeout, args.only, {"STARWEAVE_LLM_THREADS": "1"}, args.keep, report=show
    )
    passed = sum(o.ok for o in outcomes)
    total = sum(o.seconds for o in outcomes)
    print(f"{passed}/{len(outcomes)} passed, {total / max(1, len(outcomes)):.1f} s per task on average")


if __name__ == "__main__":
    main()
