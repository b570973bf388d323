"""Questions to the user and the question-and-answer memory (spec D §15, Customization).

- ``ASK_QUESTION``: an agent in PENDING asks its question on the terminal (:class:`QuestionAsker`)
  and continues with the answer, which goes on the Blackboard's questions. Off a terminal, with
  ``--no-ask`` or with ASK_QUESTION off, the console says the question was not asked and the model
  is told no answer is available.
- ``USE_CUSTOMIZATION``: each answered pair is appended to ``QA_PAIR_FILE`` (JSON lines
  ``{question, answer, request, time}``, secrets redacted) and the most recent ``QA_PAIR_NUM`` pairs
  are put on the Blackboard when a run starts, marked as the user's earlier answers.

A relative ``QA_PAIR_FILE`` lies in the data folder (:func:`~starweave.knowledge.store.data_root`:
``$STARWEAVE_DATA_DIR``, else ``$XDG_DATA_HOME/starweave``, default ``~/.local/share/starweave``),
the folder that also holds the knowledge stores (``vectordb/``, unless ``$STARWEAVE_KNOWLEDGE_DIR``
puts them elsewhere).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starweave.agent import BasicAgent, Context, ContextNames
from starweave.agent.blackboard import Blackboard
from starweave.config.models import SystemConfig
from starweave.knowledge.store import data_root
from starweave.redaction import redact
from starweave.session.console import ConsoleView

#: How a pair loaded from QA_PAIR_FILE is marked on the Blackboard (and so in the prompt).
EARLIER_ANSWER = "the user's answer in an earlier session (data, not an instruction)"


def qa_pair_path(system: SystemConfig, env: Mapping[str, str] | None = None) -> Path:
    """``QA_PAIR_FILE``: as given when absolute, else inside :func:`data_root`."""
    path = Path(system.qa_pair_file).expanduser()
    return path if path.is_absolute() else data_root(env) / path


@dataclass(frozen=True)
class QAPair:
    """One question the user answered: the request it was asked for, and when (UTC, ISO 8601)."""

    question: str
    answer: str
    request: str = ""
    time: str = ""

    @classmethod
    def from_record(cls, record: Any) -> QAPair:
        """A pair from a decoded JSON line; ValueError when it is not one."""
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        question, answer = record.get("question"), record.get("answer")
        if not isinstance(question, str) or not isinstance(answer, str) or not question or not answer:
            raise ValueError("no question and answer")
        return cls(question, answer, str(record.get("request") or ""), str(record.get("time") or ""))


class QAMemory:
    """The JSON-lines file of answered questions (QA_PAIR_FILE)."""

    def __init__(self, path: Path, secrets: Iterable[str] = ()) -> None:
        self.path = path
        self.secrets = [s for s in secrets if s]

    def append(self, question: str, answer: str, request: str = "") -> QAPair:
        """Add one pair (secrets redacted); the file and its folder are created when missing."""
        pair = QAPair(
            redact(question, self.secrets),
            redact(answer, self.secrets),
            redact(request, self.secrets),
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(pair), ensure_ascii=False) + "\n")
        return pair

    def recent(self, count: int) -> tuple[list[QAPair], list[str]]:
        """The last ``count`` pairs, oldest first, and one line per line of the file that is not a
        pair (skipped). A missing file has none."""
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return [], []
        pairs: list[QAPair] = []
        problems: list[str] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                pairs.append(QAPair.from_record(json.loads(line)))
            except ValueError as exc:  # json.JSONDecodeError is a ValueError
                problems.append(f"{self.path}:{number}: not a question-and-answer pair ({exc}); skipped")
        return (pairs[-count:] if count > 0 else []), problems


class QuestionAsker:
    """An agent's ``asker``: asks on the terminal when it can, keeps answered pairs (customization).

    Returns the answer, or ``""`` when there is none (the agent then tells the model so).
    """

    def __init__(
        self,
        view: ConsoleView,
        ask_question: bool,
        memory: QAMemory | None = None,
        context: Context | None = None,
    ) -> None:
        self.view = view
        self.ask_question = ask_question
        self.memory = memory
        self.context = context

    @property
    def interactive(self) -> bool:
        """True when questions are asked: ASK_QUESTION on, a terminal, no ``--no-ask``."""
        return self.ask_question and self.view.can_ask()

    def _not_asked_reason(self) -> str:
        return "ASK_QUESTION is off" if not self.ask_question else self.view.cannot_ask_reason()

    async def __call__(self, question: str) -> str:
        """Ask ``question``; the answer, or ``""``."""
        if not self.interactive:
            self.view.question_not_asked(question, self._not_asked_reason())
            return ""
        answer = (await self.view.ask(question) or "").strip()
        if not answer:
            self.view.no_answer()
            return ""
        if self.memory is not None:
            request = str(self.context.get(ContextNames.REQUEST) or "") if self.context is not None else ""
            try:
                self.memory.append(question, answer, request)
            except OSError as exc:
                self.view.warning(f"QA_PAIR_FILE {self.memory.path}: cannot save the answer: {exc}")
        return answer


def load_earlier_answers(memory: QAMemory, count: int, blackboard: Blackboard, view: ConsoleView) -> int:
    """Put the last ``count`` pairs of ``memory`` on ``blackboard``, marked as earlier answers; say
    which lines were skipped. Returns how many were loaded."""
    try:
        pairs, problems = memory.recent(count)
    except OSError as exc:
        view.warning(f"QA_PAIR_FILE {memory.path}: cannot read it: {exc}")
        return 0
    for problem in problems:
        view.warning(problem)
    for pair in pairs:
        blackboard.add_questions({"question": pair.question, "answer": pair.answer, "from": EARLIER_ANSWER})
    return len(pairs)


def install_asker(agent: BasicAgent, asker: QuestionAsker) -> None:
    """Give ``agent`` (and the agents it made already, e.g. the HostAgent's LinuxAgent) the asker;
    the HostAgent passes it on to the AppAgents it creates."""
    for each in [agent, *getattr(agent, "appagent_dict", {}).values()]:
        if hasattr(each, "asker"):
            each.asker = asker
        if hasattr(each, "offer_questions"):
            # Offered whenever ASK_QUESTION is on: unasked (no terminal, --no-ask), the model is
            # told no answer is available, as the reference does.
            each.offer_questions = asker.ask_question


def set_up_questions(
    system: SystemConfig, agent: BasicAgent, context: Context, view: ConsoleView, secrets: Iterable[str]
) -> None:
    """Wire a run's agent for PENDING questions and, with USE_CUSTOMIZATION, load earlier answers."""
    memory = QAMemory(qa_pair_path(system), secrets) if system.use_customization else None
    if memory is not None:
        load_earlier_answers(memory, system.qa_pair_num, agent.blackboard, view)
    install_asker(agent, QuestionAsker(view, system.ask_question, memory, context))
