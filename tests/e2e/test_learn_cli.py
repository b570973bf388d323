"""`starweave learn` as a user runs it: index a folder of help documents, list, show, forget,
with the stores in a temporary data folder. Errors are one line and exit code 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from e2e.test_cli_errors import assert_one_line_usage_error, starweave


def learn(*args: str, cwd: Path, data: Path) -> subprocess.CompletedProcess[str]:
    """`starweave learn ARGS` with its stores under ``data`` (as $XDG_DATA_HOME)."""
    return starweave("learn", *args, cwd=cwd, env={"XDG_DATA_HOME": str(data)})


def one_line_error(proc: subprocess.CompletedProcess[str], text: str) -> None:
    assert_one_line_usage_error(proc, text)
    assert proc.stderr.strip().startswith("error: ")


def test_learn_docs_list_show_forget(tmp_path: Path) -> None:
    docs, data = tmp_path / "help", tmp_path / "data"
    (docs / "html").mkdir(parents=True)
    (docs / "fonts.md").write_text("# Fonts\n\nOpen Edit, Preferences, Font to change the size.\n")
    (docs / "html" / "save.html").write_text("<title>Saving</title><p>Press Control+S to save.</p>")

    proc = learn("docs", str(docs), "--app", "mousepad", cwd=tmp_path, data=data)
    assert proc.returncode == 0, proc.stderr
    assert "learned 2 document(s), 2 passage(s)" in proc.stdout
    store = data / "starweave" / "vectordb" / "docs" / "knowledge.sqlite3"
    assert store.is_file()

    listed = learn("list", "--json", cwd=tmp_path, data=data)
    rows = json.loads(listed.stdout)
    assert {(r["kind"], r["app"], Path(r["source"]).name) for r in rows} == {
        ("docs", "mousepad", "fonts.md"),
        ("docs", "mousepad", "save.html"),
    }
    save_id = next(r["id"] for r in rows if r["source"].endswith("save.html"))
    plain = learn("list", "--kind", "docs", cwd=tmp_path, data=data).stdout
    assert save_id in plain and "Saving" in plain

    shown = learn("show", save_id, cwd=tmp_path, data=data)
    assert shown.returncode == 0 and "Press Control+S to save." in shown.stdout and "<p>" not in shown.stdout

    # Learning the same files again replaces them: still two documents.
    assert learn("docs", str(docs), "--app", "mousepad", cwd=tmp_path, data=data).returncode == 0
    assert len(json.loads(learn("list", "--json", cwd=tmp_path, data=data).stdout)) == 2

    forgot = learn("forget", save_id, cwd=tmp_path, data=data)
    assert forgot.returncode == 0 and "forgot" in forgot.stdout
    one_line_error(learn("show", save_id, cwd=tmp_path, data=data), f"no learned document '{save_id}'")
    assert learn("forget", "--kind", "docs", "--all", cwd=tmp_path, data=data).stdout.startswith("forgot 1 ")
    assert "nothing learned yet" in learn("list", cwd=tmp_path, data=data).stdout


def test_learn_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "manual.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "scan.png").write_bytes(b"\x89PNG")
    data = tmp_path / "data"
    one_line_error(
        learn("docs", str(tmp_path / "missing"), cwd=tmp_path, data=data), "no such file or folder"
    )
    one_line_error(learn("docs", str(tmp_path / "manual.pdf"), cwd=tmp_path, data=data), "not a readable PDF")
    one_line_error(learn("docs", str(tmp_path / "scan.png"), cwd=tmp_path, data=data), "not a help document")
    one_line_error(learn("list", "--kind", "bogus", cwd=tmp_path, data=data), "unknown knowledge kind")
    one_line_error(learn("forget", "--all", cwd=tmp_path, data=data), "--all needs --kind")
    one_line_error(learn("forget", cwd=tmp_path, data=data), "name a document id")
    empty = tmp_path / "empty"
    empty.mkdir()
    one_line_error(learn("docs", str(empty), cwd=tmp_path, data=data), "no help documents found")
    assert ".pdf" in learn("docs", str(empty), cwd=tmp_path, data=data).stderr
    assert not (data / "starweave").exists()


def test_a_corrupt_store_is_one_line_in_every_learn_command(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for kind in ("docs", "experience", "demonstration"):
        folder = data / "starweave" / "vectordb" / kind
        folder.mkdir(parents=True)
        (folder / "knowledge.sqlite3").write_bytes(b"not a database, just garbage " * 200)
    (tmp_path / "fonts.md").write_text("# Fonts\n\nOpen Edit, Preferences, Font.\n")
    demo = tmp_path / "demo.yaml"
    demo.write_text("example1:\n  Request: zip the reports\n  Response: {}\n")
    for args in (
        ["docs", str(tmp_path / "fonts.md")],
        ["demo", str(demo)],
        ["list"],
        ["show", "docs-0123456789"],
        ["forget", "docs-0123456789"],
        ["forget", "--kind", "experience", "--all"],
    ):
        one_line_error(learn(*args, cwd=tmp_path, data=data), "the knowledge store cannot be used")
