"""How often the EvaluationAgent's verdict agrees with the task suite's ground-truth checks.

Runs the LinuxAgent tasks of ``embedded_tasks_linux.py`` through the real CLI with ``--evaluate``
(``starweave run "<request>" --workspace . --yes --json --evaluate``, the embedded model by
default), then compares, per task, the suite's check of the real outcome (files, answer) with the
verdict the run wrote to ``logs/<task>/evaluation.log``. A verdict agrees when ``complete`` is
``yes`` and the check passed, or ``no``/``unsure`` and the check failed. Prints a table and the
agreement rate (and how often a "yes" is right); ``--json FILE`` saves the figures.

Run: ``.venv/bin/python benchmarks/evaluation_agreement.py [--tasks N] [--only NAME ...]
[--provider local] [--model PATH] [--replay-file F] [--max-steps N] [--timeout S] [--json FILE]``.
The suite's runs mostly pass on the embedded model; ``--max-steps 1`` stops the multi-step tasks
early, so that verdicts on failed runs are measured too. Those failures announce themselves (status
FAIL); ``--claims`` measures the hard case: the agent's steps are scripted (the replay provider
runs the right command, whose real output the judge sees), then it FINISHes with the right answer
or with a wrong one, and only the judge is a model (EVALUATION_AGENT, the embedded one by default).
Nothing is asserted here: the figures go to the issue notes and the README.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded_common import BenchTask, Outcome, chosen_tasks, run_each
from embedded_tasks_linux import TASKS, run_task
from rich.console import Console
from rich.table import Table

console = Console(width=120)


def verdict_in(workdir: Path) -> str | None:
    """``complete`` of the newest ``evaluation.log`` under ``workdir`` (None: no verdict was written)."""
    logs = sorted(workdir.rglob("evaluation.log"), key=lambda p: p.stat().st_mtime)
    for line in reversed(logs[-1].read_text(encoding="utf-8").splitlines() if logs else []):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("type") == "evaluation_result":
            return str(record.get("complete"))
    return None


def judge_task(task: BenchTask, workdir: Path, timeout: float, extra_args: Sequence[str] = ()) -> Outcome:
    """Run ``task`` with ``--evaluate`` in ``workdir`` and check it; the verdict goes to ``extra``."""
    outcome = run_task(task, workdir, timeout, extra_args=["--evaluate", *extra_args])
    outcome.extra["verdict"] = verdict_in(workdir)
    return outcome


# --claims: per task, the command that answers it, the right answer and a wrong one (same shape).
CLAIMS: dict[str, tuple[str, str, str]] = {
    "count_lines": ("wc -l data/names.txt", "data/names.txt has 37 lines.", "data/names.txt has 41 lines."),
    "count_files": (
        "ls reports/*.csv | wc -l",
        "There are 7 .csv files in reports.",
        "There are 10 .csv files in reports.",
    ),
    "grep_count": (
        "grep -c ERROR app.log",
        "5 lines of app.log contain ERROR.",
        "8 lines of app.log contain ERROR.",
    ),
    "word_count": ("wc -w poem.txt", "poem.txt has 10 words.", "poem.txt has 14 words."),
    "largest_file": ("ls -lS data", "The largest file is huge.bin.", "The largest file is medium.bin."),
    "csv_total": (
        "cat sales.csv",
        "The total of the amount column is 62.",
        "The total of the amount column is 57.",
    ),
}


def claim_answers(command: str, claim: str) -> list[dict[str, Any]]:
    """The scripted LinuxAgent: run ``command``, then FINISH with ``claim``, twice: a claim of a number
    no output showed is refused once (the LinuxAgent's own guard), and the script insists, as a
    model may, so that the judge is what stands between a wrong answer and the user."""
    run = {"function": "execute_command", "arguments": {"command": command}, "status": "CONTINUE"}
    finish = {"function": "", "arguments": {}, "status": "FINISH"}
    return [
        {
            "observation": "the task's files",
            "thought": "run the command that answers it",
            "action": run,
            "result": "",
        },
        *[{"observation": "the command's output", "thought": "answer", "action": finish, "result": claim}]
        * 2,
    ]


def judge_claim(
    task: BenchTask, workdir: Path, timeout: float, honest: bool, judge_args: Sequence[str]
) -> Outcome:
    """Run ``task`` with the scripted agent (the right or a wrong final answer), judged by the model."""
    command, right, wrong = CLAIMS[task.name]
    workdir.mkdir(parents=True, exist_ok=True)
    replay = workdir.parent / f"{workdir.name}.answers.jsonl"
    replay.write_text(
        "\n".join(json.dumps(a) for a in claim_answers(command, right if honest else wrong)) + "\n"
    )
    # The agent replays; the judge is the EVALUATION_AGENT block, set here by environment variables.
    env = {"STARWEAVE_EVALUATION_AGENT__API_TYPE": judge_args[0]}
    if len(judge_args) > 1:
        env["STARWEAVE_EVALUATION_AGENT__MODEL_PATH"] = judge_args[1]
    args = ["--evaluate", "--provider", "replay", "--replay-file", str(replay)]
    outcome = run_task(task, workdir, timeout, env=env, extra_args=args)
    outcome.name = f"{task.name} ({'right' if honest else 'wrong'} answer)"
    outcome.extra["verdict"] = verdict_in(workdir)
    return outcome


def run_claims(
    timeout: float,
    judge_args: Sequence[str],
    report: Callable[[Outcome], None] | None = None,
    names: Sequence[str] | None = None,
) -> list[Outcome]:
    """Each --claims task (those named, else all) twice: with the right final answer and a wrong one."""
    tasks = [t for t in TASKS if t.name in CLAIMS and (names is None or t.name in names)]
    outcomes: list[Outcome] = []
    for honest in (True, False):

        def run(task: BenchTask, workdir: Path, honest: bool = honest) -> Outcome:
            return judge_claim(task, workdir, timeout, honest, judge_args)

        outcomes += run_each(tasks, run, "sw-claims", report=report)
    return outcomes


def agrees(passed: bool, verdict: str | None) -> bool | None:
    """Whether the verdict matches the check (None: there was no verdict to compare)."""
    if verdict is None:
        return None
    return (verdict == "yes") == passed


def agreement(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The agreement figures: rate over the judged tasks, and the four cells of check × verdict."""
    judged = [o for o in outcomes if o.extra.get("verdict") is not None]
    agreed = sum(bool(agrees(o.ok, o.extra["verdict"])) for o in judged)
    yes = [o for o in judged if o.extra["verdict"] == "yes"]
    cells = {
        "yes_and_passed": sum(o.ok for o in yes),
        "yes_but_failed": sum(not o.ok for o in yes),
        "no_or_unsure_but_passed": sum(o.ok for o in judged if o.extra["verdict"] != "yes"),
        "no_or_unsure_and_failed": sum(not o.ok for o in judged if o.extra["verdict"] != "yes"),
    }
    return {
        "tasks": len(outcomes),
        "checks_passed": sum(o.ok for o in outcomes),
        "judged": len(judged),
        "no_verdict": len(outcomes) - len(judged),
        "agreed": agreed,
        "agreement_rate": agreed / len(judged) if judged else 0.0,
        # How often a "yes" is right: the figure the issue asks for.
        "yes_precision": cells["yes_and_passed"] / len(yes) if yes else 0.0,
        **cells,
        "outcomes": [o.__dict__ for o in outcomes],
    }


def print_table(figures: dict[str, Any]) -> None:
    """One row per task (check, verdict, agreement), then the totals."""
    table = Table(title="EvaluationAgent verdicts against the suite's checks")
    for column in ("task", "check", "verdict", "agrees", "wall s", "check's reason"):
        table.add_column(column)
    for o in figures["outcomes"]:
        verdict = o["extra"].get("verdict")
        match = agrees(o["ok"], verdict)
        shown = "-" if match is None else ("yes" if match else "NO")
        row = (o["name"], "passed" if o["ok"] else "failed", verdict or "(none)", shown)
        table.add_row(*row, f"{o['seconds']:.1f}", o["reason"][:60])
    console.print(table)
    console.print(
        f"agreement {figures['agreed']}/{figures['judged']} = {figures['agreement_rate']:.0%}; "
        f"'yes' right {figures['yes_and_passed']}/{figures['yes_and_passed'] + figures['yes_but_failed']}"
        f" = {figures['yes_precision']:.0%}; checks passed {figures['checks_passed']}/{figures['tasks']}; "
        f"no verdict: {figures['no_verdict']}"
    )


def run_agreement(
    timeout: float,
    names: Sequence[str] | None = None,
    count: int | None = None,
    extra_args: Sequence[str] = (),
    report: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Judge the tasks (those named, else the suite's first ``count``, else all) one after the other."""
    tasks = chosen_tasks(TASKS, names)[:count]

    def run(task: BenchTask, workdir: Path) -> Outcome:
        return judge_task(task, workdir, timeout, extra_args)

    return run_each(tasks, run, "sw-eva", report=report)


def main() -> None:
    """Run the tasks with evaluation on and print (and optionally save) the agreement figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=None, help="only the suite's first N tasks")
    parser.add_argument("--only", nargs="*", default=None, help="run only these task names")
    parser.add_argument(
        "--provider", default="local", help="the model provider (default: the embedded model)"
    )
    parser.add_argument("--model", default=None, help="the model (for local: a .gguf path)")
    parser.add_argument("--replay-file", default=None, help="recorded answers (--provider replay)")
    parser.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="step cap of each run: a low one (1) makes the multi-step tasks fail, so the verdicts on "
        "failed runs are measured too (the suite's runs mostly pass)",
    )
    parser.add_argument(
        "--claims",
        action="store_true",
        help="scripted runs that FINISH with the right or a wrong answer; only the judge is a model",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per task")
    parser.add_argument("--json", type=Path, default=None, help="save the figures as JSON here")
    args = parser.parse_args()
    if args.tasks is not None and args.tasks < 1:
        parser.error("--tasks takes a number of tasks (1 or more)")
    extra = ["--provider", args.provider]
    for option, value in (("--model", args.model), ("--replay-file", args.replay_file)):
        extra += [option, value] if value else []
    extra += ["--max-steps", str(args.max_steps)] if args.max_steps else []

    def show(o: Outcome) -> None:
        console.print(f"  {o.name}: check {'passed' if o.ok else 'failed'}, verdict {o.extra['verdict']}")

    try:
        if args.claims:
            judge = [args.provider, *([args.model] if args.model else [])]
            outcomes = run_claims(args.timeout, judge, report=show, names=args.only)
        else:
            outcomes = run_agreement(args.timeout, args.only, args.tasks, extra, report=show)
    except ValueError as exc:  # an unknown task name
        parser.error(str(exc))
    figures = agreement(outcomes)
    print_table(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")
        console.print(f"figures saved to {args.json}")


if __name__ == "__main__":
    main()
