"""What a run changed, told by two listings of the workspace and the changed files' first bytes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from starweave.agents.linux.orientation import Listing, listing_command, parse_listing
from starweave.agents.linux.world import (
    WORLD_DEPTH,
    change_text,
    changes,
    heads_command,
    needs_a_look,
    parse_heads,
    read_end,
    run_evidence,
    snapshot,
    twins_of,
)
from starweave.commands import Command, Result, ResultStatus


def _bash(line: str, cwd: Path) -> str:
    done = subprocess.run(["bash", "-c", line], cwd=cwd, capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace")


def _listing(folder: Path) -> Listing:
    return parse_listing(_bash(listing_command(WORLD_DEPTH), folder))


def test_new_changed_removed_and_moved_files_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("same\n")
    (tmp_path / "edit.txt").write_text("old\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    (tmp_path / "inbox").mkdir()
    for name in ("a.png", "b.png"):  # same size and time: both must pair with their own source
        (tmp_path / "inbox" / name).write_bytes(b"\x89PNG")
    before = _listing(tmp_path)
    (tmp_path / "edit.txt").write_text("new text\n")
    os.utime(tmp_path / "edit.txt", (1, 1))
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "made.txt").write_text("fresh\n")
    (tmp_path / "images").mkdir()
    for name in ("a.png", "b.png"):
        os.rename(tmp_path / "inbox" / name, tmp_path / "images" / name)
    found = {c.entry.path: c for c in changes(before, _listing(tmp_path))}
    assert {p: c.what for p, c in found.items()} == {
        "edit.txt": "changed",
        "gone.txt": "removed",
        "made.txt": "new",
        "images": "new",
        "images/a.png": "moved",
        "images/b.png": "moved",
    }
    assert {found["images/a.png"].source, found["images/b.png"].source} == {"inbox/a.png", "inbox/b.png"}
    assert change_text(found["images/a.png"], None).endswith("moved here from inbox/a.png") or change_text(
        found["images/a.png"], None
    ).endswith("moved here from inbox/b.png")


def test_a_copy_binary_and_empty_files_are_recognised_from_their_bytes(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    before = _listing(tmp_path)
    (tmp_path / "notes.bak").write_text("remember the milk\n")
    (tmp_path / "other.txt").write_text("remember the silk\n")  # same size, other bytes
    (tmp_path / "blob.gz").write_bytes(b"\x1f\x8b\x00\x00data")
    (tmp_path / "empty.txt").write_text("")
    after = _listing(tmp_path)
    files = [c for c in changes(before, after) if c.entry.kind == "f"]
    paths = [c.entry.path for c in files]
    heads = parse_heads(_bash(heads_command(str(tmp_path), paths, twins_of(after, files)), tmp_path))
    assert heads["notes.bak"].copy_of == "notes.txt" and heads["other.txt"].copy_of == ""
    assert heads["other.txt"].text == "remember the silk\n"
    by_path = {c.entry.path: c for c in files}
    assert change_text(by_path["notes.bak"], heads["notes.bak"]).endswith("a copy of notes.txt")
    assert change_text(by_path["blob.gz"], heads["blob.gz"]).endswith("binary")
    assert change_text(by_path["empty.txt"], heads["empty.txt"]).endswith("empty")
    assert "begins:\nremember the silk" in change_text(by_path["other.txt"], heads["other.txt"])
    # what needs a look: text nobody typed or read, and an empty file; not a copy or a binary
    assert needs_a_look(heads["other.txt"], "sort notes.txt > other.txt")
    assert not needs_a_look(heads["other.txt"], "echo 'remember the silk' > other.txt")
    assert needs_a_look(heads["empty.txt"], "anything")
    assert not needs_a_look(heads["notes.bak"], "") and not needs_a_look(heads["blob.gz"], "")


def test_a_folder_whose_time_changed_is_not_a_change_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_text("x")
    before = _listing(tmp_path)
    (tmp_path / "d" / "x").unlink()
    assert [(c.what, c.entry.path) for c in changes(before, _listing(tmp_path))] == [("removed", "d/x")]


def test_a_file_is_news_when_some_line_of_it_was_never_typed_or_read() -> None:
    from starweave.agents.linux.world import HEAD_BYTES, Head

    assert not needs_a_look(Head("run\nrun\n"), "echo run >> out.txt")  # appended twice
    assert needs_a_look(Head("first\nrun\n"), "echo run >> out.txt")  # the old first line is unseen
    # a head cut in the middle of a line: that partial line is not asked for
    cut = "seen line\n" + "x" * (HEAD_BYTES - 10)
    assert not needs_a_look(Head(cut), "seen line")


def test_the_files_an_answer_names_and_those_that_were_never_there(tmp_path: Path) -> None:
    from starweave.agents.linux.world import absent_names, file_names

    text = "Wrote 42 to out.txt and data/a.csv; see ./r.md, /etc/x.conf, ~/n.txt, v1.2 and old.log"
    assert file_names(text) == ["out.txt", "data/a.csv", "r.md", "old.log"]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.csv").write_text("a\n")
    (tmp_path / "old.log").write_text("x\n")
    before = _listing(tmp_path)
    (tmp_path / "old.log").unlink()  # removed by the run: it was there
    (tmp_path / "r.md").write_text("r\n")
    assert absent_names(text, before, _listing(tmp_path)) == ["out.txt"]


def test_the_evidence_reads_as_one_line_of_what_the_files_hold() -> None:
    from starweave.agents.linux.orientation import Entry
    from starweave.agents.linux.world import Change, Head, changes_report, evidence_text

    found = [
        Change("new", Entry("f", 3, "1", "out.txt")),
        Change("new", Entry("f", 0, "1", "empty.txt")),
        Change("moved", Entry("f", 5, "1", "b/x.png"), "a/x.png"),
        Change("removed", Entry("f", 1, "1", "gone.tmp")),
    ]
    report = changes_report(found, {"out.txt": Head("wc -l a.txt\n"), "empty.txt": Head("")})
    assert report[0] == {"path": "out.txt", "change": "new", "kind": "f", "size": 3, "head": "wc -l a.txt\n"}
    assert report[2]["from"] == "a/x.png" and "head" not in report[3]
    text = evidence_text({"files": report, "absent": ["result.txt"]})
    assert text == (
        'the workspace after the run: out.txt (new, holds "wc -l a.txt"); empty.txt (new, empty); '
        "b/x.png (moved from a/x.png); gone.tmp (removed); named but never there: result.txt"
    )
    assert evidence_text({"result": "no evidence"}) == "" and evidence_text({"files": []}).endswith(
        "no file changed"
    )


class _LocalShell:
    """A dispatcher whose shell is bash in ``folder``, counting the calls it runs."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls = 0

    async def execute_commands(self, commands: list[Command], timeout: float = 0) -> list[Result]:  # noqa: ASYNC109
        self.calls += len(commands)
        return [
            Result(
                status=ResultStatus.SUCCESS,
                result={"stdout": _bash(str(c.parameters["command"]), self.folder)},
            )
            for c in commands
        ]


async def test_one_look_at_the_end_serves_the_finish_check_and_the_evidence(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    shell = _LocalShell(tmp_path)
    before = await snapshot(shell, "", str(tmp_path))
    assert before is not None
    (tmp_path / "made.txt").write_text("made here\n")
    after = await snapshot(shell, "", str(tmp_path))
    assert after is not None
    end = await read_end(shell, before, after)
    assert [c.entry.path for c in end.changed_files()] == ["made.txt"]
    assert end.heads["made.txt"].text == "made here\n"
    looked = shell.calls
    kept = await run_evidence(shell, before, "", "Wrote made.txt and gone.txt.", end)
    assert shell.calls == looked  # the FINISH's look is reused: nothing is listed or read again
    again = await run_evidence(shell, before, "", "Wrote made.txt and gone.txt.")
    assert shell.calls > looked and kept == again
    assert kept is not None and kept["absent"] == ["gone.txt"]
    assert kept["files"] == [
        {"path": "made.txt", "change": "new", "kind": "f", "size": 10, "head": "made here\n"}
    ]
