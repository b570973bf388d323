"""Sessions and rounds: run an agent's FSM to a terminal state under step and round caps.

A session holds the global :class:`Context` and runs rounds; a round drives one request through
the agent: ``handle`` → ``next_state`` → ``next_agent`` → ``set_state`` until the state ends the
round or the step cap (MAX_STEP, per round) is reached (spec C §9.2). A :class:`LinuxSession` runs
follow-up rounds (MAX_ROUND) in the same context, with the same agent and memory, while the user
gives another request.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starweave.agent import AgentStatus, BasicAgent, Context, ContextNames

logger = logging.getLogger(__name__)

MAX_STEP_MESSAGE = "Task stopped: Maximum steps ({n}) reached"


@dataclass
class BaseRound:
    """One request carried out by an agent, step by step.

    A dataclass: a round is its inputs (task, shared context, request, acting agent, round number,
    step cap, pause between subtasks) plus whether the step cap stopped it.
    """

    task: str
    context: Context
    request: str
    agent: BasicAgent
    id: int
    max_step: int
    sleep_time: float = 0.0
    stopped_by_cap: bool = field(default=False, init=False)
    #: The session's step count when the round began: the step cap counts this round's steps.
    start_step: int = field(default=0, init=False)

    @property
    def step(self) -> int:
        """Steps taken in this round."""
        return int(self.context.get(ContextNames.ROUND_STEP).get(self.id, 0))

    @property
    def cost(self) -> float:
        """Model cost of this round."""
        return float(self.context.get(ContextNames.ROUND_COST).get(self.id, 0.0))

    @property
    def subtask_amount(self) -> int:
        """Subtasks finished in this round."""
        return int(self.context.get(ContextNames.ROUND_SUBTASK_AMOUNT).get(self.id, 0))

    @subtask_amount.setter
    def subtask_amount(self, value: int) -> None:
        self.context.current_round_subtask_amount = value

    def _step_cap_reached(self) -> bool:
        session_step = int(self.context.get(ContextNames.SESSION_STEP) or 0)
        return self.max_step != -1 and session_step - self.start_step >= self.max_step

    def is_finished(self) -> bool:
        """True when the agent's state ends the round or the step cap is reached."""
        return self.agent.state.is_round_end() or self._step_cap_reached()

    async def run(self) -> None:
        """Drive the agent until the round ends."""
        self.context.set(ContextNames.CURRENT_ROUND_ID, self.id)
        self.context.set(ContextNames.REQUEST, self.request)
        self.start_step = int(self.context.get(ContextNames.SESSION_STEP) or 0)
        while not self.agent.state.is_round_end():
            if self._step_cap_reached():
                self._stop_at_cap()
                break
            self.context.set(
                ContextNames.SESSION_STEP, int(self.context.get(ContextNames.SESSION_STEP) or 0) + 1
            )
            self.context.current_round_step = self.step + 1
            await self.agent.handle(self.context)
            state = self.agent.state.next_state(self.agent)
            self.agent = self.agent.state.next_agent(self.agent)
            self.agent.set_state(state)
            if state.is_subtask_end():
                if self.sleep_time:
                    await asyncio.sleep(self.sleep_time)
                self.subtask_amount = self.subtask_amount + 1
        self.agent.blackboard.add_requests({f"request_{self.id}": self.request})

    def _stop_at_cap(self) -> None:
        self.stopped_by_cap = True
        message = MAX_STEP_MESSAGE.format(n=self.max_step)
        logger.warning(message)
        self.agent.status = "FAIL"
        self.agent.set_state(self.agent.state_manager.get_state("FAIL"))
        self.context.set(ContextNames.ROUND_RESULT, message)
        self.context.set(ContextNames.ERROR_MESSAGE, message)


class BaseSession(ABC):
    """A session: a context, its rounds, and the agent that carries them out."""

    def __init__(self, task: str, context: Context, request: str, id: int = 0, mode: str = "normal") -> None:
        self.task = task
        self.id = id
        self.mode = mode
        self.context = context
        self.rounds: dict[int, BaseRound] = {}
        self._round_num = 0
        self.request = request
        self.context.set(ContextNames.ID, id)
        self.context.set(ContextNames.MODE, mode)

    @abstractmethod
    def create_new_round(self) -> BaseRound | None:
        """The next round, or None when there is no more work."""

    def is_finished(self) -> bool:
        """One request per session here: finished once a round has run."""
        return self._round_num > 0

    def is_error(self) -> bool:
        """True when the session ended with an error."""
        return bool(self.context.get(ContextNames.ERROR_MESSAGE))

    async def run(self) -> None:
        """Run rounds until the session is finished."""
        while not self.is_finished():
            round_ = self.create_new_round()
            if round_ is None:
                break
            await round_.run()
        self.context.set(ContextNames.SESSION_FINISH, True)

    def summary(self) -> dict[str, Any]:
        """Counters of the session so far."""
        return {
            "steps": int(self.context.get(ContextNames.SESSION_STEP) or 0),
            "cost": float(self.context.get(ContextNames.SESSION_COST) or 0.0),
            "tokens": int(self.context.get(ContextNames.TOTAL_TOKENS) or 0),
        }


#: Asks for the request of a follow-up round: ``await next_request(round_num, max_round)`` with the
#: 1-based number of the round to come; None or "" ends the session.
NextRequest = Callable[[int, int], Awaitable[str | None]]
#: Called when a round has ended (EVA_ROUND judges it).
RoundEnd = Callable[[BaseRound], Awaitable[None]]


class LinuxSession(BaseSession):
    """A normal-mode session (spec C's LinuxSession; the desktop agents and the service sessions run
    in it too): the request in one round, then, with ``max_round`` > 1 and a ``next_request`` to
    ask, follow-up rounds in the same context with the same agent, its memory and Blackboard."""

    def __init__(
        self,
        round_: BaseRound,
        id: int = 0,
        *,
        max_round: int = 1,
        next_request: NextRequest | None = None,
        round_end: RoundEnd | None = None,
    ) -> None:
        super().__init__(round_.task, round_.context, round_.request, id=id, mode="normal")
        self.agent = round_.agent
        self._round = round_
        self.max_round = max_round
        self.next_request = next_request
        self.round_end = round_end

    def summary(self) -> dict[str, Any]:
        """Counters of the session so far; ``rounds`` once a follow-up round has run."""
        counters = super().summary()
        if self._round_num > 1:
            counters["rounds"] = self._round_num
        return counters

    def create_new_round(self) -> BaseRound | None:
        """The first round of this session (follow-ups come from :meth:`follow_up_round`)."""
        if self._round_num > 0:
            return None
        self.rounds[self._round_num] = self._round
        self._round_num += 1
        return self._round

    async def run(self) -> None:
        """Run the first round, then follow-up rounds while the user gives requests."""
        round_ = self.create_new_round()
        while round_ is not None:
            await round_.run()
            self.agent = round_.agent
            if self.round_end is not None:
                await self.round_end(round_)
            round_ = await self.follow_up_round()
        self.context.set(ContextNames.SESSION_FINISH, True)

    async def follow_up_round(self) -> BaseRound | None:
        """The next round, when MAX_ROUND allows one and the user gives a request; else None."""
        if self.next_request is None or self._round_num >= self.max_round:
            return None
        request = await self.next_request(self._round_num + 1, self.max_round)
        if not request:
            return None
        last = self.rounds[self._round_num - 1]
        agent = self.agent
        agent.status = AgentStatus.CONTINUE.value
        agent.set_state(agent.default_state)
        # The outcome of the session is the last round's.
        self.context.set(ContextNames.ROUND_RESULT, "")
        self.context.set(ContextNames.ERROR_MESSAGE, "")
        round_ = BaseRound(
            self.task, self.context, request, agent, self._round_num, last.max_step, last.sleep_time
        )
        self.rounds[self._round_num] = round_
        self._round_num += 1
        return round_
