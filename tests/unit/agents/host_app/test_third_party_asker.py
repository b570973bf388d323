"""A third-party agent the HostAgent makes on first use gets the session's asker and ASK_QUESTION."""

from __future__ import annotations

from rich.console import Console

from starweave.agents.host import HostAgent
from starweave.agents.host.third_party import third_party_agent
from starweave.agents.linux import LinuxAgent
from starweave.session.console import ConsoleView
from starweave.session.customization import QuestionAsker, install_asker


def test_a_third_party_agent_made_after_the_asker_was_installed_can_ask() -> None:
    host = HostAgent()
    asker = QuestionAsker(ConsoleView(console=Console(quiet=True)), ask_question=True)
    install_asker(host, asker)  # the session wires the host before any third-party agent exists
    linux = third_party_agent(host, "LinuxAgent")
    assert isinstance(linux, LinuxAgent)
    assert linux.asker is asker and linux.offer_questions is True


def test_with_ask_question_off_the_third_party_agent_is_not_offered_pending() -> None:
    host = HostAgent()
    install_asker(host, QuestionAsker(ConsoleView(console=Console(quiet=True)), ask_question=False))
    linux = third_party_agent(host, "LinuxAgent")
    assert isinstance(linux, LinuxAgent) and linux.offer_questions is False
