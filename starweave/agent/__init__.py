"""The platform-neutral device-agent kernel.

Three layers: the State layer (:class:`AgentState`, :class:`AgentStateManager`), the Strategy
layer (:class:`ProcessorTemplate` running :class:`BaseProcessingStrategy` phases with
:class:`ProcessorMiddleware`), and the Command layer (in ``starweave.commands``). Agents keep a
:class:`Memory` and share a :class:`Blackboard`; the session shares a :class:`Context`.
"""

from starweave.agent.basic import BasicAgent
from starweave.agent.blackboard import Blackboard
from starweave.agent.context import Context, ContextNames
from starweave.agent.memory import Memory, MemoryItem
from starweave.agent.middleware import EnhancedLoggingMiddleware, ProcessorMiddleware
from starweave.agent.processing import (
    LOGGED,
    BasicProcessorContext,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    present,
)
from starweave.agent.processor import ProcessorTemplate
from starweave.agent.prompter import BasicPrompter, tool_to_llm_prompt, tools_to_llm_prompt
from starweave.agent.registry import AgentFactory, AgentRegistry
from starweave.agent.state import (
    AgentState,
    AgentStateManager,
    SelfContainedAgentState,
    TerminalAgentState,
    record_failure,
    run_guarded,
    run_step,
)
from starweave.agent.status import AgentStatus
from starweave.agent.steps import add_usage, count_llm_call, llm_result, log_request, record_step
from starweave.agent.strategy import BaseProcessingStrategy, ComposedStrategy, ProcessingStrategy
from starweave.agent.strategy_dependency import (
    StrategyDependency,
    StrategyDependencyValidator,
    depends_on,
    provides,
)
from starweave.errors import ProcessingException

__all__ = [
    "LOGGED",
    "AgentFactory",
    "AgentRegistry",
    "AgentState",
    "AgentStateManager",
    "AgentStatus",
    "BaseProcessingStrategy",
    "BasicAgent",
    "BasicProcessorContext",
    "BasicPrompter",
    "Blackboard",
    "ComposedStrategy",
    "Context",
    "ContextNames",
    "EnhancedLoggingMiddleware",
    "Memory",
    "MemoryItem",
    "ProcessingContext",
    "ProcessingException",
    "ProcessingPhase",
    "ProcessingResult",
    "ProcessingStrategy",
    "ProcessorMiddleware",
    "ProcessorTemplate",
    "SelfContainedAgentState",
    "StrategyDependency",
    "StrategyDependencyValidator",
    "TerminalAgentState",
    "add_usage",
    "count_llm_call",
    "depends_on",
    "llm_result",
    "log_request",
    "present",
    "provides",
    "record_failure",
    "record_step",
    "run_guarded",
    "run_step",
    "tool_to_llm_prompt",
    "tools_to_llm_prompt",
]
