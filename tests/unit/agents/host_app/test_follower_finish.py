"""The AppAgent's FINISH and FAIL hand back to the HostAgent: to its CONTINUE state normally, to its
terminal FINISH/FAIL state in follower mode (spec D §15, the AppAgent state table)."""

from __future__ import annotations

import pytest

from starweave.agents.app import AppAgent
from starweave.agents.app.states import (
    FOLLOWER_MODE,
    ErrorAppAgentState,
    FailAppAgentState,
    FinishAppAgentState,
)
from starweave.agents.host import HostAgent
from starweave.agents.host.states import (
    ContinueHostAgentState,
    ErrorHostAgentState,
    FailHostAgentState,
    FinishHostAgentState,
)


def pair(mode: str) -> tuple[AppAgent, HostAgent]:
    host = HostAgent()
    app = host.get_or_create_appagent("mousepad", "mousepad")
    app.mode = mode
    return app, host


@pytest.mark.parametrize(
    ("state", "normal", "follower"),
    [
        (FinishAppAgentState(), ContinueHostAgentState, FinishHostAgentState),
        (FailAppAgentState(), ContinueHostAgentState, FailHostAgentState),
        (ErrorAppAgentState(), ErrorHostAgentState, ErrorHostAgentState),
    ],
)
def test_the_host_state_after_the_app_agent_ends_its_subtask(
    state: FinishAppAgentState, normal: type, follower: type
) -> None:
    for mode, expected in (("normal", normal), (FOLLOWER_MODE, follower)):
        app, host = pair(mode)
        nxt = state.next_state(app)
        assert type(nxt) is expected, mode
        assert state.next_agent(app) is host
        assert host.status == expected.name()
        # Terminal in follower mode for FINISH and FAIL: the round (the plan) ends there.
        assert nxt.is_round_end() == (expected is not ContinueHostAgentState)
