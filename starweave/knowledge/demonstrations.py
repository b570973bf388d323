"""Importing demonstrations (``starweave learn demo``): the reference's YAML example files and recorded
Starweave runs, each turned into :class:`~starweave.knowledge.examples.Example` s.

A reference example file holds ``example1``, ``example2``... entries, each
``{Request, Sub-task, Response: {Observation, Thought, ControlLabel, ControlText, Function, Args,
Status, Plan, Comment}, Tips}``. Keys are matched case-insensitively, and the shape of Starweave's
own packaged examples (``action: {function, arguments}``, a ``Then`` list of later answers) is read
too. A recorded run (its ``response.log`` or log folder) goes through the experience summarizer.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from starweave.knowledge.examples import Example, ExampleStep
from starweave.knowledge.experience import RESPONSE_LOG, SummaryError, short_call, summarize_run

YAML_SUFFIXES = (".yaml", ".yml")


def _get(mapping: Mapping[str, Any], *names: str) -> Any:
    """The value of the first of ``names`` present in ``mapping``, matched without case, '-', '_'."""
    wanted = {n.lower().replace("-", "").replace("_", "") for n in names}
    for key, value in mapping.items():
        if str(key).lower().replace("-", "").replace("_", "") in wanted:
            return value
    return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(_text(v) for v in value if v not in (None, ""))
    return str(value).strip()


def _response_step(response: Mapping[str, Any], output: str = "") -> ExampleStep:
    """One answer as a step: its thought, its call (the control it targets, when it names one)."""
    action = _get(response, "action")
    if isinstance(action, Mapping):
        function, arguments = _get(action, "function"), _get(action, "arguments", "args")
    else:
        function, arguments = _get(response, "function"), _get(response, "args", "arguments")
    call = short_call(_text(function), arguments if isinstance(arguments, Mapping) else None)
    control = _text(_get(response, "control_text"))
    if call and control:
        call = f"{call} on {control!r}"
    # A step without a call is the answer: the example's outcome says it once.
    result = (output or _text(_get(response, "comment"))) if call else ""
    return ExampleStep(thought=_text(_get(response, "thought")), action=call, result=result)


def example_from_entry(entry: Mapping[str, Any], source: str) -> Example:
    """One ``exampleN`` entry as an Example; an entry without a Request or a Response is an error."""
    request = _text(_get(entry, "request"))
    response = _get(entry, "response")
    if not request or not isinstance(response, Mapping):
        raise SummaryError("needs a Request and a Response mapping")
    subtask = _text(_get(entry, "sub-task", "subtask"))
    if subtask and subtask != request:
        request = f"{request} (sub-task: {subtask})"
    answers = [response]
    steps = [_response_step(response, _text(_get(entry, "output")))]
    for later in _get(entry, "then") or []:
        if isinstance(later, Mapping) and isinstance(_get(later, "response"), Mapping):
            # A "Then" entry's Output is what the previous answer got.
            steps[-1].result = steps[-1].result or _text(_get(later, "output"))
            answers.append(_get(later, "response"))
            steps.append(_response_step(answers[-1]))
    following = _get(entry, "next")
    if isinstance(following, Mapping):
        answers.append(following)
        steps.append(_response_step(following))
    return Example(
        request=request,
        steps=[s for s in steps if s.thought or s.action],
        outcome=_text(_get(answers[-1], "result")),
        source=source,
        tips=_text(_get(entry, "tips")),
    )


def examples_from_yaml(path: Path) -> list[Example]:
    """Every ``example*`` entry of a reference-format YAML file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SummaryError(f"{path}: not valid YAML ({' '.join(str(exc).split())[:200]})") from None
    if data is None:
        raise SummaryError(f"{path}: the file is empty")
    if not isinstance(data, Mapping):
        raise SummaryError(f"{path}: not a demonstration file (expected example1:, example2:, ... entries)")
    entries = {k: v for k, v in data.items() if str(k).lower().startswith(("example", "text_example"))}
    if not entries:
        raise SummaryError(f"{path}: not a demonstration file (no example1:, example2:, ... entries)")
    examples = []
    for key, entry in entries.items():
        if not isinstance(entry, Mapping):
            raise SummaryError(f"{path}: {key} is not a mapping of Request, Response, Tips")
        try:
            examples.append(example_from_entry(entry, path.name))
        except SummaryError as exc:
            raise SummaryError(f"{path}: {key} {exc}") from None
    return examples


def load_demonstrations(path: Path) -> tuple[list[Example], str | None]:
    """The examples in ``path`` and the application a recorded run worked in (None for YAML).

    ``path`` is a reference-format YAML file, a run's ``response.log`` or its log folder."""
    if not path.exists():
        raise SummaryError(f"{path}: no such file or folder")
    if path.is_dir() and not (path / RESPONSE_LOG).is_file():
        raise SummaryError(f"{path}: a folder without a {RESPONSE_LOG} (give a run's log folder)")
    if path.suffix.lower() in YAML_SUFFIXES:
        return examples_from_yaml(path), None
    try:
        empty = path.is_file() and not path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise SummaryError(
            f"{path}: not a text file (give YAML example files or a run's response.log)"
        ) from None
    if empty:
        raise SummaryError(f"{path}: the file is empty")
    folder = path if path.is_dir() else path.parent
    try:
        summary = summarize_run(path, source=f"{folder.name}/{RESPONSE_LOG}")
    except SummaryError as exc:
        raise SummaryError(
            f"{path}: neither a YAML example file nor a Starweave response.log ({exc})"
        ) from None
    if summary.status != "FINISH":
        raise SummaryError(f"{path}: the recorded run did not finish (status {summary.status or 'unknown'})")
    return [summary.example], summary.app
