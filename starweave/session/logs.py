"""The per-run log folder in the reference layout: ``logs/<task>/``.

- ``request.log``: JSON lines ``{step, prompt}``, one per model call;
- ``response.log``: JSON lines, one per agent step (the parsed answer plus step metadata);
- ``llm.log``: JSON lines, one per model call attempt (provider, model, tokens, cost, latency, the
  raw answer and the error, if any), so retries after invalid answers can be read afterwards;
- ``output.md``: the markdown trajectory, written at the end;
- ``result.json``: the final result of the session.

Lines are appended with one small write each and flushed, so a crash loses nothing that was logged.
Secrets are scrubbed before anything is written, and base64 screenshots in prompts are replaced by
their size (the PNG files are saved next to the logs).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from starweave.redaction import redact

# Screenshots sent to a visual model as ``data:`` URLs; the PNG files are in the log folder already.
_DATA_URL = re.compile(r"(data:image/[A-Za-z0-9.+-]+;base64,)[A-Za-z0-9+/=]{64,}")


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove known secret values and anything shaped like an API key from ``text``."""
    return redact(text, secrets)


def shorten_images(text: str) -> str:
    """``text`` with every base64 image replaced by its size (a prompt's screenshots are megabytes)."""
    if ";base64," not in text:
        return text
    return _DATA_URL.sub(
        lambda m: f"{m.group(1)}<{len(m.group(0)) - len(m.group(1))} characters left out>", text
    )


def default_task_name() -> str:
    """A task name from the current UTC time, as the reference does when none is given."""
    return datetime.now(UTC).strftime("task_%Y%m%d_%H%M%S_%f")


class JsonLinesWriter:
    """Appends one JSON object per line to a file; safe to call from several threads.

    Writes happen on the caller's thread, event loop included: a line is at most a few hundred KB
    (a whole prompt) and an append takes microseconds, less than a hop to a worker thread.
    """

    def __init__(self, path: Path, secrets: Iterable[str] = ()) -> None:
        self.path = path
        self._secrets = [s for s in secrets if s]
        self._lock = threading.Lock()

    def write(self, record: Any) -> None:
        """Append ``record`` (a dict or a JSON string) as one line."""
        line = (
            record
            if isinstance(record, str)
            else json.dumps(to_jsonable_python(record, fallback=str), ensure_ascii=False)
        )
        line = shorten_images(line)
        line = scrub(line.replace("\n", " ") if isinstance(record, str) else line, self._secrets)
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


class SessionLogs:
    """The log folder of one session run."""

    def __init__(self, root: str | Path, task: str, secrets: Iterable[str] = ()) -> None:
        self.task = task
        self.path = Path(root) / task
        self.path.mkdir(parents=True, exist_ok=True)
        self.secrets = [s for s in secrets if s]
        self.request_log = JsonLinesWriter(self.path / "request.log", self.secrets)
        self.response_log = JsonLinesWriter(self.path / "response.log", self.secrets)
        self.llm_log = JsonLinesWriter(self.path / "llm.log", self.secrets)

    def record_llm_call(self, record: dict[str, Any]) -> None:
        """Log one model call; the prompt is left out (request.log has it)."""
        self.llm_log.write({key: value for key, value in record.items() if key != "messages"})

    def write_result(self, result: dict[str, Any]) -> Path:
        """Write ``result.json`` atomically and return its path."""
        target = self.path / "result.json"
        tmp = target.with_suffix(".json.tmp")
        text = json.dumps(to_jsonable_python(result, fallback=str), indent=2, ensure_ascii=False)
        tmp.write_text(scrub(text, self.secrets) + "\n", encoding="utf-8")
        tmp.replace(target)
        return target

    def write_markdown(self, text: str) -> Path:
        """Write ``output.md``."""
        target = self.path / "output.md"
        target.write_text(scrub(text, self.secrets), encoding="utf-8")
        return target

    def responses(self) -> list[dict[str, Any]]:
        """The records of ``response.log`` so far."""
        log = self.path / "response.log"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
