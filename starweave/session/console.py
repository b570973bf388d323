"""The rich console view of a run: a header, one panel per step, a closing summary."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from starweave.agents.linux.feedback import NOTHING_RUN

STATUS_STYLE = {
    "CONTINUE": "cyan",
    "FINISH": "green",
    "FAIL": "red",
    "CONFIRM": "yellow",
    "PENDING": "yellow",
    "ERROR": "red",
}
MAX_OUTPUT_LINES = 20


def _clip(text: str, lines: int = MAX_OUTPUT_LINES) -> str:
    rows = text.rstrip().splitlines()
    if len(rows) <= lines:
        return "\n".join(rows)
    return "\n".join([*rows[:lines], f"… ({len(rows) - lines} more lines)"])


async def read_terminal_line() -> str | None:
    """One line typed on stdin (a terminal), read without blocking the event loop, so Ctrl+C
    (which cancels the run's task) stops the wait as it stops anything else; None at end of input."""
    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno()
    done: asyncio.Future[str | None] = loop.create_future()
    buffer = bytearray()

    def readable() -> None:
        chunk = os.read(fd, 4096)
        if not chunk or b"\n" in chunk:
            buffer.extend(chunk.split(b"\n", 1)[0])
            if not done.done():
                done.set_result(buffer.decode("utf-8", "replace") if chunk or buffer else None)
            return
        buffer.extend(chunk)

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


class ConsoleView:
    """Prints what the agent does; ``quiet`` prints only the final summary. ``ask=False``
    (``--no-ask``, a batch plan, the agent server's sessions): nothing is asked on the terminal and
    stdin is never read: questions and follow-up requests go unasked, and a dangerous action
    (CONFIRM) is refused unless ``--yes``; ``unasked`` says why (shown with each refusal)."""

    def __init__(
        self, console: Console | None = None, quiet: bool = False, ask: bool = True, unasked: str = "--no-ask"
    ) -> None:
        self.console = console or Console(stderr=False, highlight=False)
        self.quiet = quiet
        self.ask_allowed = ask
        self.unasked = unasked
        #: The actions refused without asking (``ask=False``), in order.
        self.refused: list[str] = []

    def without_asking(self, reason: str) -> ConsoleView:
        """A view printing as this one does (same console, same quietness) that asks nothing."""
        return ConsoleView(self.console, self.quiet, ask=False, unasked=reason)

    def start(self, request: str, details: dict[str, str]) -> None:
        """Announce the run."""
        if self.quiet:
            return
        table = Table.grid(padding=(0, 1))
        for key, value in details.items():
            table.add_row(Text(key, style="dim"), Text(value))
        self.console.print(
            Panel(Group(Text(request, style="bold"), table), title="starweave run", border_style="blue")
        )

    def thinking(self, step: int) -> Any:
        """A spinner shown while the model thinks (a context manager)."""
        if self.quiet or not self.console.is_terminal:
            from contextlib import nullcontext

            return nullcontext()
        return self.console.status(f"step {step}: thinking…", spinner="dots")

    def step(self, record: dict[str, Any], output: str) -> None:
        """One panel for a finished step."""
        if self.quiet:
            return
        status = str(record.get("status", ""))
        body = Table.grid(padding=(0, 1))
        body.add_column(style="bold dim", no_wrap=True)
        body.add_column()
        if record.get("observation"):
            body.add_row("observation", Text(str(record["observation"])))
        body.add_row("thought", Text(str(record.get("thought", ""))))
        body.add_row("action", Text(str(record.get("call", "")), style="bold"))
        if output and output != NOTHING_RUN:
            body.add_row("output", Text(_clip(output)))
        if record.get("note") and record["note"] != output:
            body.add_row("note", Text(str(record["note"]), style="yellow"))
        if status in ("FINISH", "FAIL") and record.get("result"):
            body.add_row("result", Text(str(record["result"]), style="bold"))
        footer = (
            f"{status} · {record.get('tokens', 0)} tokens · llm {float(record.get('llm_time', 0.0)):.1f}s"
            f" · step {float(record.get('total_time', 0.0)):.1f}s"
        )
        self.console.print(
            Panel(
                body,
                title=f"Step {record.get('step')}",
                subtitle=footer,
                border_style=STATUS_STYLE.get(status, "white"),
            )
        )

    def confirm(self, command: str, reason: str) -> bool:
        """Ask the user whether a dangerous command may run; no terminal means no.

        Asked even in quiet mode: the user must see what they are agreeing to. With asking off
        (``ask=False``) the answer is no, said in one line, and stdin is not touched."""
        if not self.ask_allowed:
            self.refused.append(command)
            self.console.print(
                f"[yellow]Not asked ({escape(self.unasked)}): refused[/yellow] {escape(command)} "
                "[yellow]- allow such actions with --yes[/yellow]",
                soft_wrap=True,
            )
            return False
        self.console.print(
            Panel(Text(f"{command}\n\n{reason}"), title="Confirm (CONFIRM)", border_style="yellow")
        )
        if not sys.stdin.isatty():
            self.console.print(
                "[yellow]No terminal to ask on: refused. Re-run with --yes to allow it.[/yellow]"
            )
            return False
        answer = self.console.input("Run it? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    # -- questions (PENDING) and follow-up requests (MAX_ROUND); asked even in quiet mode --------
    def can_ask(self) -> bool:
        """True when the user can be asked: a terminal on stdin and no ``--no-ask``."""
        return self.ask_allowed and sys.stdin.isatty()

    def cannot_ask_reason(self) -> str:
        """Why :meth:`can_ask` is False."""
        return self.unasked if not self.ask_allowed else "no terminal to ask on"

    async def ask(self, question: str) -> str | None:
        """Show the agent's question and read the answer (None: end of input)."""
        self.console.print(Panel(Text(question), title="Question (PENDING)", border_style="yellow"))
        self.console.print("Your answer (empty: no answer): ", end="")
        return await self._read_line()

    async def _read_line(self) -> str | None:
        line = await read_terminal_line()
        if not self.console.is_terminal:
            self.console.print()  # the terminal echoed the user's Enter, but not into this output
        return line

    def question_not_asked(self, question: str, reason: str) -> None:
        """One line: the agent's question went unasked; the run goes on without an answer."""
        self.console.print(
            f"[yellow]Question not asked ({escape(reason)}):[/yellow] {escape(question)} "
            "[yellow]- continuing without an answer[/yellow]",
            soft_wrap=True,
        )

    def no_answer(self) -> None:
        """One line: the user left the answer empty."""
        self.console.print("[yellow]No answer given - continuing without one[/yellow]")

    async def next_request(self, round_num: int, max_round: int) -> str | None:
        """MAX_ROUND: ask for the request of round ``round_num`` (1-based); None or "" ends the session."""
        if not self.can_ask():
            return None
        line = await self.prompt_line(f"Round {round_num} of {max_round}. Next request (empty to stop): ")
        return line.strip() if line else None

    async def prompt_line(self, prompt: str) -> str | None:
        """Print ``prompt`` (plain text) and read one line typed on the terminal (None: end of
        input); the caller checks :meth:`can_ask` first."""
        self.console.print(prompt, end="", markup=False)
        return await self._read_line()

    def warning(self, message: str) -> None:
        """One warning line on stderr."""
        Console(stderr=True, highlight=False).print(
            f"[yellow]warning:[/yellow] {escape(message)}", soft_wrap=True
        )

    def interrupted(self, result: dict[str, Any]) -> None:
        """The summary of a run stopped by Ctrl+C, and (always, on stderr) where its files are."""
        self.finish(result)
        folder = str(result.get("log_path", ""))
        Console(stderr=True, highlight=False).print(
            f"[yellow]interrupted:[/yellow] {escape(folder)}/result.json and output.md hold the steps so far",
            soft_wrap=True,
        )

    def finish(self, result: dict[str, Any]) -> None:
        """The closing summary."""
        if self.quiet:
            return
        status = str(result.get("status", ""))
        style = "green" if status == "FINISH" else "red"
        table = Table.grid(padding=(0, 1))
        table.add_row(Text("status", style="dim"), Text(status, style=f"bold {style}"))
        table.add_row(Text("result", style="dim"), Text(str(result.get("result", ""))))
        table.add_row(
            Text("steps", style="dim"),
            Text(
                f"{result.get('steps', 0)} in {float(result.get('duration', 0.0)):.1f}s, "
                f"{result.get('tokens', 0)} tokens"
            ),
        )
        table.add_row(Text("logs", style="dim"), Text(str(result.get("log_path", ""))))
        self.console.print(Panel(table, title="done", border_style=style))

    def evaluation(self, record: dict[str, Any]) -> None:
        """The EvaluationAgent's verdict, after the run's summary."""
        if self.quiet:
            return
        complete = str(record.get("complete", ""))
        style = {"yes": "green", "no": "red"}.get(complete, "yellow")
        scores = ", ".join(
            f"{s.get('name', '')}: {s.get('evaluation', '')}" for s in record.get("sub_scores", [])
        )
        table = Table.grid(padding=(0, 1))
        table.add_row(Text("complete", style="dim"), Text(complete, style=f"bold {style}"))
        if scores:
            table.add_row(Text("sub-goals", style="dim"), Text(scores))
        table.add_row(Text("reason", style="dim"), Text(str(record.get("reason", ""))))
        self.console.print(Panel(table, title="evaluation", border_style=style))

    def evaluation_failed(self, message: str) -> None:
        """One line (always, on stderr): the evaluation could not be made; the run's result stands."""
        self.warning(f"evaluation skipped: {message}")
