"""Build the LLM client an agent's configuration asks for, and report which providers work here."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from starweave.config.models import AgentLLMConfig, StarweaveConfig, SystemConfig
from starweave.errors import ProviderUnavailable
from starweave.llm.base import LLMClient
from starweave.llm.client import OnCall
from starweave.llm.providers.anthropic import DEFAULT_CLAUDE_MODEL, resolve_anthropic_key
from starweave.llm.providers.azure import resolve_azure_key
from starweave.llm.providers.local_model import MODEL_NAME, model_status
from starweave.llm.providers.openai_compat import ENDPOINTS, resolve_key

OPENAI_COMPATIBLE = frozenset(ENDPOINTS)
AZURE_TYPES = frozenset({"aoai", "azure", "azure_ad"})
ANTHROPIC_TYPES = frozenset({"claude", "anthropic"})

DEFAULT_MODELS: dict[str, str] = {
    "local": MODEL_NAME,
    "replay": "replay",
    **{api_type: endpoint.default_model for api_type, endpoint in ENDPOINTS.items()},
    "claude": DEFAULT_CLAUDE_MODEL,
    "anthropic": DEFAULT_CLAUDE_MODEL,
}


def _call_settings(agent: AgentLLMConfig, system: SystemConfig) -> dict[str, Any]:
    """The shared-client settings: the agent's overrides, else system.yaml's."""
    return {
        "timeout": agent.timeout if agent.timeout is not None else system.timeout,
        "json_retries": system.json_parsing_retry,
        "max_tokens": agent.max_tokens if agent.max_tokens is not None else system.max_tokens,
        "temperature": agent.temperature if agent.temperature is not None else system.temperature,
    }


def create_llm(
    agent: AgentLLMConfig,
    system: SystemConfig,
    prices: Mapping[str, Any] | None = None,
    on_call: OnCall | None = None,
) -> LLMClient:
    """The client for ``agent.api_type``; raises ProviderUnavailable naming what to install or set."""
    api_type = agent.api_type
    settings = _call_settings(agent, system)
    common: dict[str, Any] = {**settings, "prices": prices, "on_call": on_call}
    key = agent.api_key.get_secret_value()
    if api_type == "local":
        from starweave.llm.providers.local import LocalClient

        return LocalClient(
            model_path=agent.model_path,
            n_ctx=agent.n_ctx,
            n_threads=agent.n_threads,
            n_batch_threads=agent.n_batch_threads,
            n_slots=agent.n_slots,
            kv_store=agent.kv_cache,
            **common,
        )
    if api_type == "replay":
        from starweave.llm.providers.replay import ReplayClient

        if not agent.replay_file:
            raise ProviderUnavailable("api_type 'replay' needs REPLAY_FILE (a JSON-lines file of answers)")
        return ReplayClient(agent.replay_file, model=agent.api_model or "replay", **common)
    if api_type in OPENAI_COMPATIBLE:
        from starweave.llm.providers.openai_compat import create_openai_client

        return create_openai_client(
            api_type,
            api_key=key,
            api_base=agent.api_base,
            api_model=agent.api_model,
            max_retries=system.max_retry,
            reasoning_model=agent.reasoning_model,
            **common,
        )
    if api_type in AZURE_TYPES:
        from starweave.llm.providers.azure import create_azure_client

        return create_azure_client(
            api_type,
            api_key=key,
            api_base=agent.api_base,
            api_version=agent.api_version,
            deployment=agent.api_deployment_id,
            api_model=agent.api_model,
            max_retries=system.max_retry,
            aad_tenant_id=agent.aad_tenant_id,
            aad_api_scope=agent.aad_api_scope,
            aad_api_scope_base=agent.aad_api_scope_base,
            reasoning_model=agent.reasoning_model,
            **common,
        )
    if api_type in ANTHROPIC_TYPES:
        from starweave.llm.providers.anthropic import create_anthropic_client

        return create_anthropic_client(
            api_type,
            api_key=key,
            api_base=agent.api_base,
            api_model=agent.api_model,
            max_retries=system.max_retry,
            **common,
        )
    # The config validator rejects unknown types; this guards a hand-built config.
    raise ProviderUnavailable(f"unknown api_type {api_type!r}")


def _agents(config: StarweaveConfig) -> dict[str, AgentLLMConfig]:
    return {
        "HOST_AGENT": config.host_agent,
        "APP_AGENT": config.app_agent,
        "BACKUP_AGENT": config.backup_agent,
        "EVALUATION_AGENT": config.evaluation_agent,
    }


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def secret_values(agent: AgentLLMConfig) -> list[str]:
    """The API key(s) the provider for ``agent`` would use, from its config or the environment.

    For the session to redact from logs and errors. Empty for providers without a key (local,
    replay, azure_ad) and when no key is set; placeholder keys (Ollama's, vLLM's) are not secrets
    and would mask ordinary words, so they are left out.
    """
    api_type = agent.api_type
    configured = agent.api_key.get_secret_value()
    if api_type in OPENAI_COMPATIBLE:
        key, source = resolve_key(api_type, configured)
        if source == "placeholder":
            return []
    elif api_type in AZURE_TYPES:
        key, _source = resolve_azure_key(api_type, configured)
    elif api_type in ANTHROPIC_TYPES:
        key, _source = resolve_anthropic_key(configured)
    else:
        return []
    return [key] if key else []


def _status_of(api_type: str, agents: list[AgentLLMConfig]) -> dict[str, Any]:
    """Usability of one api_type given the agents that use it (keys are reported as set/unset only)."""
    configured_key = next((a.api_key.get_secret_value() for a in agents if a.api_key.get_secret_value()), "")
    status: dict[str, Any] = {
        "provider": api_type,
        "key_set": None,
        "key_source": None,
        "usable": True,
        "detail": "",
    }
    if api_type == "local":
        model = model_status()
        custom = next((a.model_path for a in agents if a.model_path), "")
        status["usable"] = model["runtime_installed"] and (
            (bool(custom) and Path(custom).is_file()) or model["parts_installed"]
        )
        status["detail"] = "embedded model ready" if status["usable"] else f"run {model['install_hint']}"
        status["model"] = model
    elif api_type == "replay":
        files = [a.replay_file for a in agents if a.replay_file]
        status["usable"] = bool(files) and all(Path(f).is_file() for f in files)
        status["detail"] = "" if status["usable"] else "set REPLAY_FILE to an existing JSON-lines file"
    elif api_type in OPENAI_COMPATIBLE:
        key, source = resolve_key(api_type, configured_key)
        status.update(key_set=bool(key), key_source=source or None, usable=bool(key))
        if not key:
            status["detail"] = f"set API_KEY or {' or '.join(ENDPOINTS[api_type].env_vars)}"
    elif api_type in ANTHROPIC_TYPES:
        _key, anthropic_source = resolve_anthropic_key(configured_key)
        sdk = _installed("anthropic")
        status.update(
            key_set=bool(anthropic_source),
            key_source=anthropic_source or None,
            usable=sdk and bool(anthropic_source),
        )
        status["detail"] = "" if sdk else "pip install 'starweave[anthropic]'"
    elif api_type == "azure_ad":
        status["usable"] = _installed("azure.identity")
        status["detail"] = "" if status["usable"] else "pip install 'starweave[azure]'"
    elif api_type in AZURE_TYPES:
        _key, azure_source = resolve_azure_key(api_type, configured_key)
        status.update(key_set=bool(azure_source), key_source=azure_source or None, usable=bool(azure_source))
    return status


def provider_status(config: StarweaveConfig) -> list[dict[str, Any]]:
    """One entry per provider for ``starweave doctor``.

    Each entry says which agents use it, whether it is usable here and whether its key is set
    (and where from); the key itself is never included.
    """
    agents = _agents(config)
    order = [
        "local",
        "replay",
        *sorted(OPENAI_COMPATIBLE),
        "aoai",
        "azure",
        "azure_ad",
        "claude",
        "anthropic",
    ]
    report: list[dict[str, Any]] = []
    for api_type in order:
        users = [name for name, agent in agents.items() if agent.api_type == api_type]
        entry = _status_of(api_type, [agents[name] for name in users])
        entry["used_by"] = users
        entry["default_model"] = DEFAULT_MODELS.get(api_type, "")
        report.append(entry)
    return report
