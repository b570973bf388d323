"""Single-device tasks for the embedded-model benchmark: the LinuxAgent on everyday shell chores.

Each task is run as a user runs it: ``starweave run "<request>" --workspace . --yes --json`` in a
fresh work folder (the workspace) that ``setup`` filled first. The check reads the real outcome: the
files the run left in the workspace, and the answer in the run's ``result.json`` (the newest one
under the work folder: ``logs/<task>/result.json``), e.g. that it states the right count.

How ``embedded_bench.py`` calls it::

    from embedded_tasks_linux import run_linux_suite
    outcomes = run_linux_suite(timeout=300.0, env={"STARWEAVE_LLM_THREADS": "1"})

``run_linux_suite(timeout, names=None, env=None, keep=None, extra_args=(), report=None)`` runs every task (or
those in ``names``) one after the other: a fresh work folder, ``setup``, the CLI with at most
``timeout`` seconds, the check. ``extra_args`` go to ``starweave run`` (the tests pass
``--provider replay --replay-file F``); ``keep`` is a folder where each task's work folder (files and
logs) is kept; ``report`` is called with each outcome as it comes. ``TASKS`` (``list[BenchTask]``)
lists the tasks; ``cli_args`` builds a task's CLI arguments. Run alone:
``.venv/bin/python benchmarks/embedded_tasks_linux.py [--timeout S] [--only NAME ...] [--keep DIR]``.
"""

from __future__ import annotations

import os
import re
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded_common import (
    BenchTask,
    Outcome,
    checked_run,
    file_text,
    make_suite,
    show_outcome,
    suite_arguments,
)

Check = Callable[[Path, dict[str, Any]], str | None]


def cli_args(task: BenchTask, extra: Sequence[str] = ()) -> list[str]:
    """The ``starweave`` arguments that run ``task`` with the current folder as the workspace."""
    return ["run", task.request, "--workspace", ".", "--yes", "--json", *extra]


# ---- setups -------------------------------------------------------------------------------------


def place(files: dict[str, str]) -> Callable[[Path], None]:
    """A setup that writes ``files`` (relative path → text) into the work folder."""

    def setup(workdir: Path) -> None:
        for name, text in files.items():
            path = workdir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    return setup


NAMES = "".join(f"person{i:02d}\n" for i in range(37))
LOG = "".join(
    f"2026-11-{day:02d} {'ERROR disk full' if day % 4 == 0 else 'INFO all good'}\n" for day in range(1, 23)
)
WORDS = "pear\napple\nfig\nbanana\ncherry\n"
COLORS = "red\nblue\nred\ngreen\nblue\nred\n"
SALES = "item,amount\nbook,12\npen,3\nlamp,40\ncup,7\n"
POEM = "the quick brown fox\njumps over\nthe lazy dog today\n"
SIZES = {
    "data/small.bin": "x" * 10,
    "data/medium.bin": "x" * 700,
    "data/huge.bin": "x" * 5000,
    "data/tiny.bin": "x",
}


# ---- checks -------------------------------------------------------------------------------------


def states_number(number: int | str) -> Check:
    """The answer (``result``) states ``number`` as a number of its own."""

    def check(_workdir: Path, result: dict[str, Any]) -> str | None:
        answer = str(result.get("result") or "")
        if not re.search(rf"(?<![\d.]){re.escape(str(number))}(?![\d])", answer):
            return f"the answer does not state {number}: {answer!r}"
        return None

    return check


def names_only(right: str, wrong: Sequence[str]) -> Check:
    """The answer names ``right`` and none of ``wrong``."""

    def check(_workdir: Path, result: dict[str, Any]) -> str | None:
        answer = str(result.get("result") or "")
        if right not in answer:
            return f"the answer does not name {right}: {answer!r}"
        named = [w for w in wrong if w in answer]
        return f"the answer also names {', '.join(named)}: {answer!r}" if named else None

    return check


def file_is(path: str, expected: str, strip: bool = True) -> Check:
    """``path`` exists with the text ``expected`` (compared without surrounding whitespace)."""

    def check(workdir: Path, _result: dict[str, Any]) -> str | None:
        target = workdir / path
        if not target.is_file():
            return f"{path} was not created"
        text = file_text(target)
        same = text.strip() == expected.strip() if strip else text == expected
        return None if same else f"{path} holds {text[:200]!r}, expected {expected[:200]!r}"

    return check


def finished(check: Check) -> Check:
    """The run ended with status FINISH (a user sees any other status as a failure), and ``check``."""

    def checked(workdir: Path, result: dict[str, Any]) -> str | None:
        if result.get("status") != "FINISH":
            answer = str(result.get("result") or "")[:200]
            return f"status {result.get('status')!r} (error: {result.get('error') or '-'}); answer {answer!r}"
        return check(workdir, result)

    return checked


def all_of(*checks: Check) -> Check:
    """Every check passes (the first failure is the reason)."""

    def check(workdir: Path, result: dict[str, Any]) -> str | None:
        for one in checks:
            reason = one(workdir, result)
            if reason:
                return reason
        return None

    return check


def renamed_to_jpg(workdir: Path, _result: dict[str, Any]) -> str | None:
    """photos/ holds a.jpg, b.jpg, c.jpg with their old contents and no .jpeg file."""
    folder = workdir / "photos"
    left = sorted(p.name for p in folder.glob("*.jpeg"))
    if left:
        return f"still named .jpeg: {', '.join(left)}"
    for stem in ("a", "b", "c"):
        if file_text(folder / f"{stem}.jpg") != f"image {stem}\n":
            return f"photos/{stem}.jpg is missing or changed"
    return None


def docs_archived(workdir: Path, _result: dict[str, Any]) -> str | None:
    """docs.tar.gz is a gzip tar holding the three files of docs/ with their contents."""
    archive = workdir / "docs.tar.gz"
    if not archive.is_file():
        return "docs.tar.gz was not created"
    try:
        with tarfile.open(archive, "r:gz") as tar:
            texts = {}
            for member in tar.getmembers():
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is not None:
                    texts[member.name.removeprefix("./")] = handle.read().decode(errors="replace")
    except (tarfile.TarError, OSError, EOFError) as exc:
        return f"docs.tar.gz is not a gzip tar archive: {exc}"
    for name in ("docs/intro.md", "docs/usage.md", "docs/faq.md"):
        if texts.get(name) != f"# {Path(name).stem}\n":
            return f"{name} is missing from docs.tar.gz or changed (holds {sorted(texts)})"
    return None


def tmp_cleaned(workdir: Path, _result: dict[str, Any]) -> str | None:
    """cache/ lost its .tmp files and kept the rest."""
    left = sorted(p.name for p in (workdir / "cache").glob("*.tmp"))
    if left:
        return f"not deleted: {', '.join(left)}"
    for keep in ("keep.txt", "notes.md"):
        if not (workdir / "cache" / keep).is_file():
            return f"cache/{keep} was deleted too"
    return None


def pngs_moved(workdir: Path, _result: dict[str, Any]) -> str | None:
    """The two .png files of inbox/ are in images/, the .txt stayed."""
    for name in ("cat.png", "dog.png"):
        if not (workdir / "images" / name).is_file():
            return f"images/{name} is missing"
        if (workdir / "inbox" / name).exists():
            return f"inbox/{name} is still there"
    if not (workdir / "inbox" / "readme.txt").is_file():
        return "inbox/readme.txt was moved or deleted"
    return None


def prefixed(workdir: Path, _result: dict[str, Any]) -> str | None:
    """data/ holds 2025_jan.csv and 2025_feb.csv with their contents; notes.txt is untouched."""
    folder = workdir / "data"
    for stem in ("jan", "feb"):
        if (folder / f"{stem}.csv").exists():
            return f"data/{stem}.csv still has its old name"
        if file_text(folder / f"2025_{stem}.csv") != f"month,{stem}\n":
            return f"data/2025_{stem}.csv is missing or changed"
    return None if file_text(folder / "notes.txt") == "n\n" else "data/notes.txt was renamed or changed"


def dated(files: dict[str, int]) -> Callable[[Path], None]:
    """A setup that writes each file (relative path → age in hours) with that modification time."""

    def setup(workdir: Path) -> None:
        now = time.time()
        for name, hours in files.items():
            path = workdir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{name}\n", encoding="utf-8")
            os.utime(path, (now - hours * 3600, now - hours * 3600))

    return setup


def script_ran(workdir: Path, result: dict[str, Any]) -> str | None:
    """sum.py exists and the answer states 5050."""
    if not (workdir / "sum.py").is_file():
        return "sum.py was not written"
    return states_number(5050)(workdir, result)


def task(
    name: str, request: str, check: Check, setup: Callable[[Path], None] = lambda _workdir: None
) -> BenchTask:
    """A task whose check also requires that the run ended with status FINISH."""
    return BenchTask(name, request, finished(check), setup)


# ---- the tasks ----------------------------------------------------------------------------------

TASKS: list[BenchTask] = [
    task(
        "demo",
        "Create a folder named demo and write the text hello into the file demo/a.txt.",
        file_is("demo/a.txt", "hello"),
    ),
    task(
        "count_lines",
        "How many lines does the file data/names.txt have?",
        states_number(37),
        place({"data/names.txt": NAMES}),
    ),
    task(
        "count_files",
        "How many .csv files are in the folder reports?",
        states_number(7),
        place(
            {
                **{f"reports/r{i}.csv": "a,b\n" for i in range(7)},
                **{f"reports/n{i}.txt": "x\n" for i in range(3)},
            }
        ),
    ),
    task(
        "grep_count",
        "How many lines of app.log contain the word ERROR?",
        states_number(5),
        place({"app.log": LOG}),
    ),
    task(
        "word_count",
        "Count the words in poem.txt.",
        states_number(10),
        place({"poem.txt": POEM}),
    ),
    task(
        "largest_file",
        "Which file in the folder data is the largest?",
        names_only("huge.bin", ["small.bin", "medium.bin", "tiny.bin"]),
        place(SIZES),
    ),
    task(
        "csv_total",
        "What is the total of the amount column in sales.csv?",
        states_number(62),
        place({"sales.csv": SALES}),
    ),
    task(
        "replace_text",
        "In config.ini, replace every occurrence of localhost with 127.0.0.1.",
        file_is("config.ini", "[db]\nhost=127.0.0.1\n[cache]\nhost=127.0.0.1\nport=6379\n"),
        place({"config.ini": "[db]\nhost=localhost\n[cache]\nhost=localhost\nport=6379\n"}),
    ),
    task(
        "sort_lines",
        "Sort the lines of words.txt alphabetically and save the result as sorted.txt.",
        all_of(file_is("sorted.txt", "apple\nbanana\ncherry\nfig\npear\n"), file_is("words.txt", WORDS)),
        place({"words.txt": WORDS}),
    ),
    task(
        "unique_lines",
        "Write the distinct colors listed in colors.txt, one per line and sorted, into unique.txt.",
        file_is("unique.txt", "blue\ngreen\nred\n"),
        place({"colors.txt": COLORS}),
    ),
    task(
        "append_line",
        "Add the line banana to the end of fruits.txt.",
        file_is("fruits.txt", "apple\ncherry\nbanana\n"),
        place({"fruits.txt": "apple\ncherry\n"}),
    ),
    task(
        "backup_copy",
        "Make a copy of notes.txt named notes.bak.",
        all_of(file_is("notes.bak", "buy milk\ncall bob\n"), file_is("notes.txt", "buy milk\ncall bob\n")),
        place({"notes.txt": "buy milk\ncall bob\n"}),
    ),
    task(
        "archive_folder",
        "Pack the folder docs into a gzip-compressed tar archive named docs.tar.gz.",
        docs_archived,
        place({f"docs/{n}.md": f"# {n}\n" for n in ("intro", "usage", "faq")}),
    ),
    task(
        "rename_ext",
        "Rename every .jpeg file in the folder photos so that it ends in .jpg instead.",
        renamed_to_jpg,
        place({f"photos/{s}.jpeg": f"image {s}\n" for s in ("a", "b", "c")}),
    ),
    task(
        "prefix_names",
        "Put the prefix 2025_ in front of the name of every .csv file in the folder data.",
        prefixed,
        place({"data/jan.csv": "month,jan\n", "data/feb.csv": "month,feb\n", "data/notes.txt": "n\n"}),
    ),
    task(
        "first_line",
        "What does the first line of todo.txt say?",
        names_only("water the plants", ["pay rent", "call mom"]),
        place({"todo.txt": "water the plants\npay rent\ncall mom\n"}),
    ),
    task(
        "newest_file",
        "Which file in the folder inbox was modified most recently?",
        names_only("reply.txt", ["invoice.txt", "agenda.txt"]),
        dated({"inbox/invoice.txt": 50, "inbox/reply.txt": 1, "inbox/agenda.txt": 20}),
    ),
    task(
        "delete_tmp",
        "Delete all .tmp files in the folder cache but keep the other files.",
        tmp_cleaned,
        place({"cache/a.tmp": "1", "cache/b.tmp": "2", "cache/keep.txt": "k", "cache/notes.md": "n"}),
    ),
    task(
        "move_png",
        "Move all .png files from the folder inbox into a new folder named images.",
        pngs_moved,
        place({"inbox/cat.png": "c", "inbox/dog.png": "d", "inbox/readme.txt": "r"}),
    ),
    task(
        "python_script",
        "Write a Python script sum.py that prints the sum of the whole numbers from 1 to 100, run it, "
        "and tell me the number it prints.",
        script_ran,
    ),
]


# ---- running ------------------------------------------------------------------------------------


def run_task(
    task: BenchTask,
    workdir: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> Outcome:
    """Set up ``workdir``, run ``task`` there through the CLI and check the outcome."""
    return checked_run(task, workdir, cli_args(task, extra_args), timeout, env)


run_linux_suite = make_suite(TASKS, run_task, "sw-linux", 300.0)


def main() -> None:
    """Run the suite on the embedded model and print one line per task, then the totals."""
    args = suite_arguments(__doc__.split("\n")[0], 300.0)
    env = {"STARWEAVE_LLM_THREADS": "1"}
    outcomes = run_linux_suite(args.timeout, args.only, env, args.keep, report=show_outcome)
    passed = sum(o.ok for o in outcomes)
    total_time = sum(o.seconds for o in outcomes)
    print(f"{passed}/{len(outcomes)} passed, {total_time / max(1, len(outcomes)):.1f} s per task on average")


if __name__ == "__main__":
    main()
