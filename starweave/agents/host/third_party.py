"""Running a third-party agent (e.g. the LinuxAgent) as the target of a HostAgent subtask.

Third-party agents never hand off (their FINISH ends their round), so the HostAgent runs one to its
end inside its ASSIGN state, on a child context that shares the session's logs and Blackboard and
routes the agent's commands to its own tool set; then the HostAgent continues.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starweave.agent import AgentFactory, BasicAgent, Context, ContextNames
from starweave.agents.app.dispatch import RoutedDispatcher, list_action_tools
from starweave.errors import AgentError
from starweave.knowledge.retrieval import KnowledgeSlots

if TYPE_CHECKING:
    from starweave.agents.host.agent import HostAgent

_SHARED = (ContextNames.LOG_PATH, ContextNames.LOGGER, ContextNames.REQUEST_LOGGER, ContextNames.SESSION_STEP)


def third_party_agent(host: HostAgent, name: str) -> BasicAgent:
    """The cached third-party agent ``name`` (created on first use), sharing the host's Blackboard."""
    agent = host.appagent_dict.get(name)
    if agent is None:
        agent = AgentFactory.create_agent(name, name=name)
        host.appagent_dict[name] = agent
    agent.host = host
    agent.blackboard = host.blackboard
    if agent.llm is None:
        agent.llm = host.llm
    # The asker and offer_questions too: an agent made after the session installed the asker still
    # asks its PENDING questions (ASK_QUESTION) under --agent host.
    for option in ("confirmer", "auto_approve", "view", "asker", "offer_questions"):
        if hasattr(agent, option):
            setattr(agent, option, getattr(host, option))
    knowledge = getattr(agent, "knowledge", None)
    if isinstance(knowledge, KnowledgeSlots):  # it retrieves for its subtask, as the host's AppAgents do
        knowledge.retriever = host.knowledge.retriever
    return agent


async def run_third_party(host: HostAgent, name: str, subtask: str, context: Context) -> tuple[str, str]:
    """Run agent ``name`` on ``subtask`` until its round ends (or the host's step budget); returns
    its final status and result."""
    agent = third_party_agent(host, name)
    child = Context()
    for key in _SHARED:
        child.set(key, context.get(key))
    child.set(ContextNames.REQUEST, subtask or str(context.get(ContextNames.REQUEST) or ""))
    if context.command_dispatcher is None:
        raise AgentError(f"cannot run {name}: the session attached no command dispatcher")
    dispatcher = RoutedDispatcher(context.command_dispatcher, name)
    child.attach_command_dispatcher(dispatcher)
    child.set(ContextNames.TOOL_INFO, await list_action_tools(dispatcher))
    agent.status = "CONTINUE"
    agent.set_state(agent.default_state)
    memory_before = len(agent.memory.content)
    steps = 0
    while not agent.state.is_round_end() and steps < host.third_party_max_steps:
        steps += 1
        child.set(ContextNames.SESSION_STEP, int(child.get(ContextNames.SESSION_STEP) or 0) + 1)
        await agent.handle(child)
        agent.set_state(agent.state.next_state(agent))
    status = agent.status if agent.state.is_round_end() else "FAIL"
    result = str(child.get(ContextNames.ROUND_RESULT) or "")
    if not agent.state.is_round_end():
        result = f"{name} stopped after {steps} steps without finishing"
    # Step numbers stay unique across the session; cost, tokens and model calls are the session's.
    context.set(ContextNames.SESSION_STEP, child.get(ContextNames.SESSION_STEP))
    for key in (ContextNames.SESSION_COST, ContextNames.TOTAL_TOKENS):
        context.set(key, (context.get(key) or 0) + (child.get(key) or 0))
    calls = len(agent.memory.content) - memory_before
    host.llm_calls += calls
    context.set(ContextNames.LLM_CALLS, int(context.get(ContextNames.LLM_CALLS) or 0) + calls)
    return status, result
