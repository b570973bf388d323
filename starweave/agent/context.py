"""The global context shared by a session, its rounds and every agent.

:class:`ContextNames` lists the known keys, each with a type and a default; :class:`Context`
stores the values. Mutable defaults are created afresh for every Context.
"""

from __future__ import annotations

import copy
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, overload

from pydantic_core import PydanticSerializationError, to_jsonable_python

logger = logging.getLogger(__name__)


def _structural_logs() -> defaultdict[Any, defaultdict[Any, list[Any]]]:
    return defaultdict(lambda: defaultdict(list))


class ContextNames(Enum):
    """Names of the global context values; see :attr:`default_value` and :attr:`value_type`."""

    # Identifiers
    ID = "ID"
    MODE = "MODE"
    CURRENT_ROUND_ID = "CURRENT_ROUND_ID"
    # Request
    REQUEST = "REQUEST"
    SUBTASK = "SUBTASK"
    PREVIOUS_SUBTASKS = "PREVIOUS_SUBTASKS"
    HOST_MESSAGE = "HOST_MESSAGE"
    ROUND_RESULT = "ROUND_RESULT"
    # Cost
    SESSION_COST = "SESSION_COST"
    ROUND_COST = "ROUND_COST"
    CURRENT_ROUND_COST = "CURRENT_ROUND_COST"
    TOTAL_COST = "TOTAL_COST"
    TOTAL_TOKENS = "TOTAL_TOKENS"
    LLM_CALLS = "LLM_CALLS"
    # Steps
    SESSION_STEP = "SESSION_STEP"
    ROUND_STEP = "ROUND_STEP"
    CURRENT_ROUND_STEP = "CURRENT_ROUND_STEP"
    ROUND_SUBTASK_AMOUNT = "ROUND_SUBTASK_AMOUNT"
    CURRENT_ROUND_SUBTASK_AMOUNT = "CURRENT_ROUND_SUBTASK_AMOUNT"
    SUBTASK_AMOUNT = "SUBTASK_AMOUNT"
    # Session outcome
    SESSION_FINISH = "SESSION_FINISH"
    ERROR = "ERROR"
    ERROR_MESSAGE = "ERROR_MESSAGE"
    LAST_ACTION_SUCCESS = "LAST_ACTION_SUCCESS"
    TRAJECTORY = "TRAJECTORY"
    # Application (Windows)
    APPLICATION_WINDOW = "APPLICATION_WINDOW"
    APPLICATION_WINDOW_INFO = "APPLICATION_WINDOW_INFO"
    APPLICATION_PROCESS_NAME = "APPLICATION_PROCESS_NAME"
    APPLICATION_ROOT_NAME = "APPLICATION_ROOT_NAME"
    CONTROL_REANNOTATION = "CONTROL_REANNOTATION"
    # Logging
    LOG_PATH = "LOG_PATH"
    LOGGER = "LOGGER"
    REQUEST_LOGGER = "REQUEST_LOGGER"
    EVALUATION_LOGGER = "EVALUATION_LOGGER"
    STRUCTURAL_LOGS = "STRUCTURAL_LOGS"
    # Tools / Galaxy
    TOOL_INFO = "TOOL_INFO"
    DEVICE_INFO = "DEVICE_INFO"
    CONSTELLATION = "CONSTELLATION"
    WEAVING_MODE = "WEAVING_MODE"

    @property
    def value_type(self) -> Any:
        """The type of this value (documentation; not enforced)."""
        return _SPEC[self][0]

    @property
    def default_value(self) -> Any:
        """A fresh copy of this value's default."""
        return _SPEC[self][1]()


def _const(value: Any) -> Callable[[], Any]:
    return lambda: copy.deepcopy(value)


_N = ContextNames
_SPEC: dict[ContextNames, tuple[Any, Callable[[], Any]]] = {
    _N.ID: (int, _const(0)),
    _N.MODE: (str, _const("")),
    _N.CURRENT_ROUND_ID: (int, _const(0)),
    _N.REQUEST: (str, _const("")),
    _N.SUBTASK: (str, _const("")),
    _N.PREVIOUS_SUBTASKS: (list, list),
    _N.HOST_MESSAGE: (list, list),
    _N.ROUND_RESULT: (str, _const("")),
    _N.SESSION_COST: (float, _const(0.0)),
    _N.ROUND_COST: (dict, dict),
    _N.CURRENT_ROUND_COST: (float, _const(0.0)),
    _N.TOTAL_COST: (float, _const(0.0)),
    _N.TOTAL_TOKENS: (int, _const(0)),
    _N.LLM_CALLS: (int, _const(0)),
    _N.SESSION_STEP: (int, _const(0)),
    _N.ROUND_STEP: (dict, dict),
    _N.CURRENT_ROUND_STEP: (int, _const(0)),
    _N.ROUND_SUBTASK_AMOUNT: (dict, dict),
    _N.CURRENT_ROUND_SUBTASK_AMOUNT: (int, _const(0)),
    _N.SUBTASK_AMOUNT: (int, _const(0)),
    _N.SESSION_FINISH: (bool, _const(False)),
    _N.ERROR: (object, _const(None)),
    _N.ERROR_MESSAGE: (str, _const("")),
    # None until a step reports its action's success (the processor's ``action_success``).
    _N.LAST_ACTION_SUCCESS: (bool, _const(None)),
    _N.TRAJECTORY: (list, list),
    _N.APPLICATION_WINDOW: (object, _const(None)),
    _N.APPLICATION_WINDOW_INFO: (object, _const(None)),
    _N.APPLICATION_PROCESS_NAME: (str, _const("")),
    _N.APPLICATION_ROOT_NAME: (str, _const("")),
    _N.CONTROL_REANNOTATION: (list, list),
    _N.LOG_PATH: (str, _const("")),
    _N.LOGGER: (object, _const(None)),
    _N.REQUEST_LOGGER: (object, _const(None)),
    _N.EVALUATION_LOGGER: (object, _const(None)),
    _N.STRUCTURAL_LOGS: (dict, _structural_logs),
    _N.TOOL_INFO: (dict, dict),
    _N.DEVICE_INFO: (list, list),
    _N.CONSTELLATION: (object, _const(None)),
    _N.WEAVING_MODE: (str, _const("CREATION")),
}

#: Values never written by :meth:`Context.to_dict`: live objects, not data.
NON_SERIALISED: frozenset[ContextNames] = frozenset(
    {_N.LOGGER, _N.REQUEST_LOGGER, _N.EVALUATION_LOGGER, _N.APPLICATION_WINDOW}
)
#: Per-round dicts whose integer keys come back as strings from JSON.
_PER_ROUND: frozenset[ContextNames] = frozenset({_N.ROUND_STEP, _N.ROUND_COST, _N.ROUND_SUBTASK_AMOUNT})

Key = ContextNames | str


def _int_key(key: Any) -> Any:
    """JSON turns int dict keys into strings; turn them back."""
    if isinstance(key, str) and key.lstrip("-").isdigit():
        return int(key)
    return key


def normalise_key(name: Key) -> Key:
    """Map a ContextNames member or its exact name to the member; other strings stay strings."""
    if isinstance(name, ContextNames):
        return name
    return ContextNames.__members__.get(name, name)


@dataclass
class Context:
    """Typed key/value store shared by the session, its rounds and its agents.

    Known keys are :class:`ContextNames`; any other string key is allowed too (extensions).
    ``command_dispatcher`` is a plain attribute set by :meth:`attach_command_dispatcher`.
    """

    attributes: dict[Key, Any] = field(default_factory=dict)
    command_dispatcher: Any = None

    def __post_init__(self) -> None:
        given = {normalise_key(k): v for k, v in self.attributes.items()}
        self.attributes = {name: name.default_value for name in ContextNames}
        self.attributes.update(given)

    # -- access ---------------------------------------------------------------------------
    def get(self, name: Key, default: Any = None) -> Any:
        """Return the value of ``name``; if it is unset or None, ``default``, else the typed default."""
        key = normalise_key(name)
        value = self.attributes.get(key)
        if value is not None:
            return value
        if default is not None:
            return default
        return key.default_value if isinstance(key, ContextNames) else None

    def set(self, name: Key, value: Any) -> None:
        """Set ``name`` to ``value``; switching the round id re-syncs the CURRENT_* values."""
        key = normalise_key(name)
        self.attributes[key] = value
        if key is ContextNames.CURRENT_ROUND_ID:
            self._sync_round_values()

    @overload
    def update_dict(self, updates: dict[Key, Any]) -> None: ...

    @overload
    def update_dict(self, updates: Key, value: dict[Any, Any]) -> None: ...

    def update_dict(self, updates: dict[Key, Any] | Key, value: dict[Any, Any] | None = None) -> None:
        """Set several values at once, or, given ``(name, dict)``, merge the dict into that value."""
        if isinstance(updates, dict):
            for key, val in updates.items():
                self.set(key, val)
            return
        current = self.get(updates)
        if not isinstance(current, dict):
            raise TypeError(f"Context value {updates!s} is {type(current).__name__}, not a dict; use set()")
        current.update(value or {})
        self.set(updates, current)

    def resolve(self, name: Key) -> Any:
        """Look ``name`` up leniently: a member, its name in any case, a string key or an attribute.

        Strategies declare dependencies in lower case (``"session_step"``, ``"command_dispatcher"``);
        this maps them onto the context.
        """
        if isinstance(name, ContextNames):
            return self.get(name)
        upper = name.upper()
        if upper in ContextNames.__members__:
            return self.get(upper)
        if name in self.attributes:
            return self.attributes[name]
        if name in ("command_dispatcher",):
            return self.command_dispatcher
        return None

    def attach_command_dispatcher(self, dispatcher: Any) -> None:
        """Make ``dispatcher`` available as ``context.command_dispatcher``."""
        self.command_dispatcher = dispatcher

    # -- per-round values ---------------------------------------------------------------
    def _round_dict(self, name: ContextNames) -> dict[int, Any]:
        value = self.attributes.get(name)
        if not isinstance(value, dict):
            value = {}
            self.attributes[name] = value
        return value

    def _round_id(self) -> int:
        return int(self.get(ContextNames.CURRENT_ROUND_ID))

    def _sync_round_values(self) -> None:
        """Copy the per-round values of the current round into the CURRENT_* values."""
        rid = self._round_id()
        n = ContextNames
        self.attributes[n.CURRENT_ROUND_STEP] = self._round_dict(n.ROUND_STEP).get(rid, 0)
        self.attributes[n.CURRENT_ROUND_COST] = self._round_dict(n.ROUND_COST).get(rid, 0.0)
        self.attributes[n.CURRENT_ROUND_SUBTASK_AMOUNT] = self._round_dict(n.ROUND_SUBTASK_AMOUNT).get(rid, 0)

    def _set_round_value(self, per_round: ContextNames, current: ContextNames, value: Any) -> None:
        self._round_dict(per_round)[self._round_id()] = value
        self.attributes[current] = value

    @property
    def current_round_step(self) -> int:
        """The step of the current round (``ROUND_STEP[CURRENT_ROUND_ID]``)."""
        return int(self._round_dict(ContextNames.ROUND_STEP).get(self._round_id(), 0))

    @current_round_step.setter
    def current_round_step(self, value: int) -> None:
        self._set_round_value(ContextNames.ROUND_STEP, ContextNames.CURRENT_ROUND_STEP, value)

    @property
    def current_round_cost(self) -> float:
        """The cost of the current round (``ROUND_COST[CURRENT_ROUND_ID]``)."""
        return float(self._round_dict(ContextNames.ROUND_COST).get(self._round_id(), 0.0))

    @current_round_cost.setter
    def current_round_cost(self, value: float) -> None:
        self._set_round_value(ContextNames.ROUND_COST, ContextNames.CURRENT_ROUND_COST, value)

    @property
    def current_round_subtask_amount(self) -> int:
        """How many subtasks the current round has finished."""
        return int(self._round_dict(ContextNames.ROUND_SUBTASK_AMOUNT).get(self._round_id(), 0))

    @current_round_subtask_amount.setter
    def current_round_subtask_amount(self, value: int) -> None:
        self._set_round_value(
            ContextNames.ROUND_SUBTASK_AMOUNT, ContextNames.CURRENT_ROUND_SUBTASK_AMOUNT, value
        )

    # -- logs ---------------------------------------------------------------------------
    def add_to_structural_logs(self, data: dict[str, Any]) -> None:
        """File ``data`` under its ``Round`` and ``Subtask`` keys (default: the current ones)."""
        logs = self.attributes.get(ContextNames.STRUCTURAL_LOGS)
        if not isinstance(logs, defaultdict):
            logs = _structural_logs()
            self.attributes[ContextNames.STRUCTURAL_LOGS] = logs
        entry = dict(data)
        round_key = entry.pop("Round", self._round_id())
        subtask_key = entry.pop("Subtask", self.current_round_subtask_amount)
        logs[round_key][subtask_key].append(entry)

    # -- serialisation ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of the values; loggers, windows and unserialisable values are left out."""
        out: dict[str, Any] = {}
        for key, value in self.attributes.items():
            if key in NON_SERIALISED:
                continue
            name = key.name if isinstance(key, ContextNames) else key
            try:
                out[name] = to_jsonable_python(value)
            except PydanticSerializationError:
                logger.debug("Context.to_dict: leaving out %s (%s is not serialisable)", name, type(value))
        return out

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Context:
        """Rebuild a Context from :meth:`to_dict` output (per-round keys become ints again)."""
        ctx = Context()
        for name, value in data.items():
            key = normalise_key(name)
            if key in _PER_ROUND and isinstance(value, dict):
                value = {_int_key(k): v for k, v in value.items()}
            if key is ContextNames.STRUCTURAL_LOGS and isinstance(value, dict):
                logs = _structural_logs()
                for round_key, subtasks in value.items():
                    for subtask_key, entries in subtasks.items():
                        logs[_int_key(round_key)][_int_key(subtask_key)].extend(entries)
                value = logs
            ctx.attributes[key] = value
        return ctx
