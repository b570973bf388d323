"""Run logs: JSON lines, result and markdown files, secrets scrubbed."""

from __future__ import annotations

import json
from pathlib import Path

from starweave.session.logs import SessionLogs
from starweave.session.trajectory import trajectory_markdown


def test_logs_write_json_lines_and_scrub_secrets(tmp_path: Path) -> None:
    logs = SessionLogs(tmp_path, "t1", secrets=["hunter2-secret"])
    logs.response_log.write(
        {"step": 1, "thought": "key is hunter2-secret", "note": "sk-abcdefghijklmnopqrstu"}
    )
    logs.request_log.write({"step": 1, "prompt": [{"role": "user", "content": "hi"}]})
    line = (tmp_path / "t1" / "response.log").read_text()
    assert "hunter2-secret" not in line and "sk-abcdefghijklmnopqrstu" not in line
    assert logs.responses()[0]["step"] == 1
    assert json.loads((tmp_path / "t1" / "request.log").read_text())["prompt"][0]["content"] == "hi"
    path = logs.write_result({"status": "FINISH", "error": "hunter2-secret"})
    assert json.loads(path.read_text()) == {"status": "FINISH", "error": "****"}
    logs.record_llm_call({"provider": "replay", "messages": ["big"], "response": "{}"})
    call = json.loads((tmp_path / "t1" / "llm.log").read_text())
    assert "messages" not in call and call["provider"] == "replay"


def test_trajectory_markdown_lists_steps_and_outputs() -> None:
    records = [
        {
            "step": 1,
            "status": "CONTINUE",
            "observation": "none",
            "thought": "count",
            "call": "execute_command(command='wc -l f')",
            "results": [{"result": {"stdout": "3 f\n", "stderr": ""}}],
            "total_time": 1.5,
            "tokens": 10,
        },
        {"step": 2, "status": "FINISH", "call": "(no action)", "results": []},
    ]
    text = trajectory_markdown(
        "count lines", records, {"task": "t", "status": "FINISH", "result": "3 lines", "steps": 2}
    )
    assert "**Request:** count lines" in text
    assert "## Step 1: CONTINUE" in text and "`execute_command(command='wc -l f')`" in text
    assert "3 f" in text and "## Result" in text and "3 lines" in text


def test_screenshots_in_prompts_are_logged_by_size_only(tmp_path: Path) -> None:
    import base64

    png = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 40).decode()
    logs = SessionLogs(tmp_path, "t", secrets=[])
    prompt = [
        {"type": "text", "text": "Screenshot 1:"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        {"type": "text", "text": "short base64 stays: data:image/png;base64,QUJD"},
    ]
    logs.request_log.write({"step": 1, "prompt": prompt})
    record = json.loads((tmp_path / "t" / "request.log").read_text(encoding="utf-8"))
    url = record["prompt"][1]["image_url"]["url"]
    assert url == f"data:image/png;base64,<{len(png)} characters left out>"
    assert png not in (tmp_path / "t" / "request.log").read_text(encoding="utf-8")
    assert record["prompt"][2]["text"].endswith("data:image/png;base64,QUJD")


CANARY = "canary-Secret-0042-value"
SHAPED = "sk-proj-Zq81LmN0pQ7rStUvWxYz1234"


def test_every_log_of_a_run_masks_secrets_anywhere_in_a_line(tmp_path: Path) -> None:
    logs = SessionLogs(tmp_path, "t", secrets=[CANARY])
    leaky = (
        f"{SHAPED}\n{CANARY}\nAuthorization: Bearer {'b' * 30}\nGET /ws?token=tok3n OPENAI_API_KEY={CANARY}x"
    )
    logs.request_log.write({"step": 1, "prompt": [{"role": "user", "content": leaky}]})
    logs.response_log.write({"step": 1, "thought": leaky, "results": [{"result": {"stdout": leaky}}]})
    logs.response_log.write(json.dumps({"step": 2, "note": leaky}))  # a record already serialised
    logs.record_llm_call({"provider": "openai", "response": leaky, "error": leaky})
    result = {"status": "FINISH", "result": leaky, "error": leaky}
    logs.write_result(result)
    logs.write_markdown(trajectory_markdown("req " + leaky, logs.responses(), result))
    for name in ("request.log", "response.log", "llm.log", "result.json", "output.md"):
        text = (tmp_path / "t" / name).read_text(encoding="utf-8")
        for secret in (CANARY, SHAPED, "b" * 30, "tok3n"):
            assert secret not in text, (name, secret)
    # What is left still parses, and the words around the secrets stay.
    assert json.loads((tmp_path / "t" / "result.json").read_text())["status"] == "FINISH"
    assert "Bearer ****" in (tmp_path / "t" / "output.md").read_text()
