"""Help documents as a user uses them: `starweave learn docs`, then `starweave run` with
RAG_OFFLINE_DOCS on in the configuration; the replay answer depends on the retrieved passage."""

from __future__ import annotations

import json
from pathlib import Path

from e2e.test_cli_errors import starweave
from helpers.linux_replay import answer

from starweave.knowledge.retrieval import KNOWLEDGE_HEADER

HELP = "# Backups\n\nThe nightly backup log is kept in the file BACKUPLOG; read it with cat BACKUPLOG.\n"


def run_with_docs(tmp_path: Path, rag_on: bool) -> tuple[dict[str, object], list[dict[str, object]]]:
    """Learn the help folder, run the request on a conditional replay line; the result and request.log."""
    data = tmp_path / "data"
    (tmp_path / "help").mkdir(exist_ok=True)
    (tmp_path / "help" / "backups.md").write_text(HELP)
    env = {"XDG_DATA_HOME": str(data)}
    learned = starweave("learn", "docs", "help", cwd=tmp_path, env=env)
    assert learned.returncode == 0, learned.stderr
    (tmp_path / "conf" / "ufo").mkdir(parents=True, exist_ok=True)
    (tmp_path / "conf" / "ufo" / "rag.yaml").write_text(f"RAG_OFFLINE_DOCS: {str(rag_on).lower()}\n")
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "ws" / "BACKUPLOG").write_text("backup ok at 02:00\n")
    answers = [
        {
            "$if_prompt_contains": "read it with cat BACKUPLOG",
            "then": answer("cat BACKUPLOG"),
            "else": answer(None, "FAIL", result="no log found"),
        },
        answer(None, "FINISH", result="The nightly backup succeeded at 02:00."),
    ]
    replay = tmp_path / "answers.jsonl"
    replay.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    task = "on" if rag_on else "off"
    proc = starweave(
        "run", "Did the nightly backup succeed?", "--provider", "replay", "--replay-file", str(replay),
        "-w", "ws", "--config-dir", "conf", "--log-dir", "logs", "--task", task, "--json",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    log = tmp_path / "logs" / task / "request.log"
    requests = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return json.loads(proc.stdout), requests


def test_a_learned_document_reaches_the_prompt_and_changes_the_answer(tmp_path: Path) -> None:
    result, requests = run_with_docs(tmp_path, rag_on=True)
    assert result["status"] == "FINISH", result
    assert result["result"] == "The nightly backup succeeded at 02:00."
    user = requests[0]["prompt"][1]["content"]
    assert KNOWLEDGE_HEADER in user
    passage = "> # Backups The nightly backup log is kept in the file BACKUPLOG; read it with cat BACKUPLOG."
    assert user.endswith(f"{KNOWLEDGE_HEADER}\n[1] backups.md\n{passage}")


def test_with_rag_offline_docs_off_the_document_stays_out(tmp_path: Path) -> None:
    result, requests = run_with_docs(tmp_path, rag_on=False)
    assert result["status"] == "FAIL"
    assert KNOWLEDGE_HEADER not in json.dumps(requests)
