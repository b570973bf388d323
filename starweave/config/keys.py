"""Which configuration keys Starweave reads, and a warning for every other key a user's file sets.

The reference's files load unchanged (its keys are kept, see ``extra="allow"`` in the models), but a
key that loads and then does nothing is a silent lie: a user who sets ``SAFE_GUARD: true`` believes
something guards them. So every key that a configuration file (or a ``STARWEAVE_*`` variable) sets is
checked once per load:

- a key of the typed models that the code reads: silent;
- a key listed below as accepted but not used: ``file: KEY is accepted but not used by Starweave yet;
  it has no effect``;
- anything else: ``file: KEY is not a Starweave setting (did you mean ...?); it is ignored``.

Warnings are :class:`ConfigWarning`s through :mod:`warnings`, so a process shows each one once and
tests can catch them; the CLI prints them as one ``warning:`` line each.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import AliasChoices, BaseModel

from starweave.config.models import (
    AgentLLMConfig,
    McpServerConfig,
    McpServerSet,
    Price,
    ShellConfig,
    SystemConfig,
    ThirdPartyAgentConfig,
)

# The one list of keys that load but have no effect yet. When a key gets implemented, remove it here
# in the same change (tests/unit/config/test_keys.py checks that each is still unread by the code).
UNUSED_SYSTEM_KEYS = frozenset(
    {
        # typed in SystemConfig, read by nothing yet
        "TOP_P",
        "LOG_LEVEL",
        "PRINT_LOG",
        "SCREENSHOT_TO_MEMORY",
        "USE_MCP",
        # the reference's system.yaml: Windows UI automation, control filtering, safety list
        "RECTANGLE_TIME",
        "CONTROL_BACKEND",
        "IOU_THRESHOLD_FOR_MERGE",
        "ACTION_SEQUENCE",
        "SHOW_VISUAL_OUTLINE_ON_SCREEN",
        "MAXIMIZE_WINDOW",
        "CLICK_API",
        "AFTER_CLICK_WAIT",
        "INPUT_TEXT_API",
        "INPUT_TEXT_ENTER",
        "INPUT_TEXT_INTER_KEY_PAUSE",
        "LOG_XML",
        "REQUEST_TIMEOUT",
        "SAFE_GUARD",
        "CONTROL_LIST",
        "CONTROL_FILTER_TYPE",
        "CONTROL_FILTER_TOP_K_PLAN",
        "CONTROL_FILTER_TOP_K_SEMANTIC",
        "CONTROL_FILTER_TOP_K_ICON",
        "CONTROL_FILTER_MODEL_SEMANTIC_NAME",
        "CONTROL_FILTER_MODEL_ICON_NAME",
        "USE_APIS",
        "API_PROMPT",
        "APP_API_PROMPT_ADDRESS",
        # the reference's MCP switches (Starweave always uses mcp.yaml from the config folder)
        "MCP_SERVERS_CONFIG",
        "MCP_PREFERRED_APPS",
        "MCP_FALLBACK_TO_UI",
        "MCP_INSTRUCTIONS_PATH",
        "MCP_LOG_EXECUTION",
        # rag.yaml keys not read: the summarizers' prompts and the demonstration completion count
        "EXPERIENCE_PROMPT",
        "RAG_DEMONSTRATION_COMPLETION_N",
        "DEMONSTRATION_PROMPT",
    }
)
# Agent blocks of agents.yaml that no agent of Starweave uses yet.
UNUSED_AGENT_BLOCKS = frozenset({"BACKUP_AGENT", "OPERATOR"})
# Keys of an agent block (HOST_AGENT, APP_AGENT): our agents use the packaged prompt templates.
UNUSED_AGENT_KEYS = frozenset({"PROMPT", "EXAMPLE_PROMPT", "API_PROMPT"})
# Keys of a THIRD_PARTY_AGENT_CONFIG entry: the entry's name is the agent's name.
UNUSED_THIRD_PARTY_KEYS = frozenset({"AGENT_NAME", "API_PROMPT", "VISUAL_MODE"})

# Keys of the reference's galaxy agent.yaml (CONSTELLATION_AGENT): Starweave's prompts are packaged.
UNUSED_CONSTELLATION_AGENT_KEYS = frozenset(
    {
        "PROMPT",
        "EXAMPLE_PROMPT",
        "API_PROMPT",
        "CONSTELLATION_CREATION_PROMPT",
        "CONSTELLATION_EDITING_PROMPT",
        "CONSTELLATION_CREATION_EXAMPLE_PROMPT",
        "CONSTELLATION_EDITING_EXAMPLE_PROMPT",
    }
)

AGENT_BLOCKS = ("HOST_AGENT", "APP_AGENT", "BACKUP_AGENT", "EVALUATION_AGENT", "OPERATOR")
THIRD_PARTY_LISTS = ("ENABLED_THIRD_PARTY_AGENTS", "enabled_third_party_agents")
THIRD_PARTY_TABLES = ("THIRD_PARTY_AGENT_CONFIG", "third_party_agent_config")


SYSTEM_NESTED = {"SHELL": ShellConfig, "shell": ShellConfig}


class ConfigWarning(UserWarning):
    """A configuration key that loads but has no effect (unused yet, or not a setting at all)."""


def field_names(model: type[BaseModel]) -> frozenset[str]:
    """Every name a model's fields answer to: the field name and each validation alias."""
    names: set[str] = set()
    for name, info in model.model_fields.items():
        names.add(name)
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names.update(choice for choice in alias.choices if isinstance(choice, str))
        elif isinstance(alias, str):
            names.add(alias)
    return frozenset(names)


def _unused(key: str) -> str:
    return f"{key} is accepted but not used by Starweave yet; it has no effect"


def _unknown(key: str, leaf: str, known: frozenset[str]) -> str:
    # Suggest a key written the same way (MAX_STEP for MAX_STEPS, host for hots).
    same_case = sorted(k for k in known if k.isupper() == leaf.isupper())
    close = difflib.get_close_matches(leaf, same_case, n=1, cutoff=0.75)
    hint = f"did you mean {close[0]}?" if close else "a typo?"
    return f"{key} is not a Starweave setting ({hint}); it is ignored"


def _check(
    data: Any,
    model: type[BaseModel],
    prefix: str,
    unused: frozenset[str] = frozenset(),
    nested: Mapping[str, type[BaseModel]] | None = None,
) -> Iterator[str]:
    """Problems of one mapping of ``model``'s keys; ``nested`` keys hold a mapping of another model."""
    if not isinstance(data, Mapping):
        return
    known = field_names(model)
    for raw_key, value in data.items():
        key = str(raw_key)
        where = f"{prefix}{key}"
        if key in unused:
            yield _unused(where)
        elif key not in known:
            yield _unknown(where, key, known | unused)
        elif nested and key in nested:
            yield from _check(value, nested[key], f"{where}.")


def _mcp(data: Any, prefix: str) -> Iterator[str]:
    """``mcp.yaml``: agent → sub-type → {data_collection, action} → list of servers."""
    if not isinstance(data, Mapping):
        return
    for agent, sub_types in data.items():
        if not isinstance(sub_types, Mapping):
            continue
        for sub_type, server_set in sub_types.items():
            where = f"{prefix}{agent}.{sub_type}."
            yield from _check(server_set, McpServerSet, where)
            if not isinstance(server_set, Mapping):
                continue
            for kind in ("data_collection", "action"):
                servers = server_set.get(kind)
                for index, server in enumerate(servers if isinstance(servers, list) else []):
                    yield from _check(server, McpServerConfig, f"{where}{kind}[{index}].")


def _third_party(data: Any) -> Iterator[str]:
    if not isinstance(data, Mapping):
        return
    for key, value in data.items():
        if key in THIRD_PARTY_LISTS:
            continue
        if key not in THIRD_PARTY_TABLES:
            yield _unknown(str(key), str(key), frozenset(THIRD_PARTY_LISTS + THIRD_PARTY_TABLES))
            continue
        for name, entry in value.items() if isinstance(value, Mapping) else ():
            yield from _check(entry, ThirdPartyAgentConfig, f"{key}.{name}.", UNUSED_THIRD_PARTY_KEYS)


def key_problems(sectioned: Mapping[str, Any]) -> list[str]:
    """Every unused or unknown key in one source's data, as the loader sections it."""
    problems: list[str] = []
    for section, value in sectioned.items():
        if section in ("system", "SYSTEM"):
            problems += _check(value, SystemConfig, "", UNUSED_SYSTEM_KEYS, SYSTEM_NESTED)
        elif section in UNUSED_AGENT_BLOCKS:
            problems.append(_unused(section))
        elif section in AGENT_BLOCKS:
            problems += _check(value, AgentLLMConfig, f"{section}.", UNUSED_AGENT_KEYS)
        elif section in ("third_party", "THIRD_PARTY"):
            problems += _third_party(value)
        elif section in ("MCP", "mcp"):
            problems += _mcp(value, "")
        elif section in ("PRICES", "prices"):
            for model, price in value.items() if isinstance(value, Mapping) else ():
                problems += _check(price, Price, f"{model}.")
        else:
            problems.append(_unknown(section, section, frozenset(AGENT_BLOCKS)))
    return problems


def galaxy_agent_problems(data: Mapping[str, Any]) -> list[str]:
    """Unused or unknown keys of the galaxy ``agent.yaml`` (its CONSTELLATION_AGENT block)."""
    problems: list[str] = []
    for key, value in data.items():
        if key in ("CONSTELLATION_AGENT", "constellation_agent"):
            problems += _check(value, AgentLLMConfig, f"{key}.", UNUSED_CONSTELLATION_AGENT_KEYS)
        else:
            problems.append(_unknown(str(key), str(key), frozenset({"CONSTELLATION_AGENT"})))
    return problems


def warn_about_keys(origin: str, sectioned: Mapping[str, Any]) -> None:
    """Issue one :class:`ConfigWarning` per unused or unknown key of one source (``origin``: its file)."""
    warn(origin, key_problems(sectioned))


def warn(origin: str, problems: list[str]) -> None:
    """One :class:`ConfigWarning` per problem, each naming ``origin`` (a file, or the environment)."""
    for problem in dict.fromkeys(problems):
        warnings.warn(f"{origin}: {problem}", ConfigWarning, stacklevel=3)
