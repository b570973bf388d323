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
import logging
import re
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from starweave.log_folder import LogFolder, LogWriteError
from starweave.redaction import redact

logger = logging.getLogger(__name__)

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

    def __init__(self, path: Path, secrets: Iterable[str] = (), folder: LogFolder | None = None) -> None:
        self.path = path
        self._secrets = [s for s in secrets if s]
        self._lock = threading.Lock()
        # Within a held log folder the file is opened relative to it (see starweave.log_folder).
        self._folder = folder
        self._warned = False

    def write(self, record: Any) -> None:
        """Append ``record`` (a dict or a JSON string) as one line."""
        line = (
            record
            if isinstance(record, str)
            else json.dumps(to_jsonable_python(record, fallback=str), ensure_ascii=False)
        )
        line = shorten_images(line)
        line = scrub(line.replace("\n", " ") if isinstance(record, str) else line, self._secrets)
        with self._lock:
            if self._folder is not None:
                try:
                    self._folder.append(self.path.name, (line + "\n").encode("utf-8"))
                except LogWriteError as exc:
                    # The model broke the log folder beyond repair: the step goes on (a log line
                    # must not end a run), with one warning per file rather than one per line.
                    if not self._warned:
                        self._warned = True
                        logger.warning("%s; the lines that cannot be written are left out", exc)
                return
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")


class SessionLogs:
    """The log folder of one session run."""

    def __init__(self, root: str | Path, task: str, secrets: Iterable[str] = ()) -> None:
        self.task = task
        self.path = Path(root) / task
        # Held open: the folder may lie in the workspace, where the model's commands can plant links.
        self.folder = LogFolder(self.path)
        self.secrets = [s for s in secrets if s]
        self.request_log = JsonLinesWriter(self.path / "request.log", self.secrets, self.folder)
        self.response_log = JsonLinesWriter(self.path / "response.log", self.secrets, self.folder)
        self.llm_log = JsonLinesWriter(self.path / "llm.log", self.secrets, self.folder)

    def record_llm_call(self, record: dict[str, Any]) -> None:
        """Log one model call; the prompt is left out (request.log has it)."""
        self.llm_log.write({key: value for key, value in record.items() if key != "messages"})

    def _result_text(self, result: dict[str, Any]) -> str:
        text = json.dumps(to_jsonable_python(result, fallback=str), indent=2, ensure_ascii=False)
        return scrub(text, self.secrets)

    def write_result(self, result: dict[str, Any]) -> Path:
        """Write ``result.json`` atomically and return its path."""
        return self.folder.replace("result.json", (self._result_text(result) + "\n").encode("utf-8"))

    def scrubbed(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` as ``result.json`` holds it: secrets removed (for what keeps it elsewhere)."""
        scrubbed: dict[str, Any] = json.loads(self._result_text(result))
        return scrubbed

    def write_markdown(self, text: str) -> Path:
        """Write ``output.md``."""
        return self.folder.replace("output.md", scrub(text, self.secrets).encode("utf-8"))

    def responses(self) -> list[dict[str, Any]]:
        """The records of ``response.log`` so far."""
        data = self.folder.read("response.log")
        if data is None:
            return []
        return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
