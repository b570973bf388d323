"""Build the LLM client an agent's configuration asks for, and report which providers work here."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from starweave.config.models import AgentLLMConfig, StarweaveConfig, SystemConfig
from starweave.errors import ProviderUnavailable
from starweave.llm.base import LLMClient
from starweave.llm.client import OnCall
from starweave.llm.providers.anthropic import (
    DEFAULT_CLAUDE_MODEL,
    create_anthropic_client,
    resolve_anthropic_key,
)
from starweave.llm.providers.azure import create_azure_client, resolve_azure_key
from starweave.llm.providers.local_model import MODEL_NAME, model_status
from starweave.llm.providers.openai_compat import ENDPOINTS, create_openai_client, resolve_key

Builder = Callable[..., LLMClient]
"""``build(api_type, agent, system, **common)``: the client; ProviderUnavailable naming what is missing."""


def _build_local(api_type: str, agent: AgentLLMConfig, system: SystemConfig, **common: Any) -> LLMClient:
    from starweave.llm.providers.local import LocalClient

    # Slots and threads decide the speed on a small CPU; see the README's "Models".
    threads: dict[str, int] = {"n_threads": agent.n_threads, "n_batch_threads": agent.n_batch_threads}
    return LocalClient(
        model_path=agent.model_path,
        n_ctx=agent.n_ctx,
        n_slots=agent.n_slots,
        kv_store=agent.kv_cache,
        **threads,
        **common,
    )


def _build_replay(api_type: str, agent: AgentLLMConfig, system: SystemConfig, **common: Any) -> LLMClient:
    from starweave.llm.providers.replay import ReplayClient

    if not agent.replay_file:
        raise ProviderUnavailable("api_type 'replay' needs REPLAY_FILE (a JSON-lines file of answers)")
    return ReplayClient(agent.replay_file, model=agent.api_model or "replay", **common)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# Each status function returns the fields of ``starweave doctor``'s entry it decides, given the
# api_type, the agents that use it and the first key they configure.
def _local_status(api_type: str, agents: list[AgentLLMConfig], configured: str) -> dict[str, Any]:
    model = model_status()
    custom = next((a.model_path for a in agents if a.model_path), "")
    usable = model["runtime_installed"] and (
        (bool(custom) and Path(custom).is_file()) or model["parts_installed"]
    )
    detail = "embedded model ready" if usable else f"run {model['install_hint']}"
    return {"usable": usable, "detail": detail, "model": model}


def _replay_status(api_type: str, agents: list[AgentLLMConfig], configured: str) -> dict[str, Any]:
    files = [a.replay_file for a in agents if a.replay_file]
    usable = bool(files) and all(Path(f).is_file() for f in files)
    return {"usable": usable, "detail": "" if usable else "set REPLAY_FILE to an existing JSON-lines file"}


def _openai_status(api_type: str, agents: list[AgentLLMConfig], configured: str) -> dict[str, Any]:
    key, source = resolve_key(api_type, configured)
    detail = "" if key else f"set API_KEY or {' or '.join(ENDPOINTS[api_type].env_vars)}"
    return {"key_set": bool(key), "key_source": source or None, "usable": bool(key), "detail": detail}


def _anthropic_status(api_type: str, agents: list[AgentLLMConfig], configured: str) -> dict[str, Any]:
    _key, source = resolve_anthropic_key(configured)
    sdk = _installed("anthropic")
    return {
        "key_set": bool(source),
        "key_source": source or None,
        "usable": sdk and bool(source),
        "detail": "" if sdk else "pip install 'starweave[anthropic]'",
    }


def _azure_status(api_type: str, agents: list[AgentLLMConfig], configured: str) -> dict[str, Any]:
    if api_type == "azure_ad":
        usable = _installed("azure.identity")
        return {"usable": usable, "detail": "" if usable else "pip install 'starweave[azure]'"}
    _key, source = resolve_azure_key(api_type, configured)
    return {"key_set": bool(source), "key_source": source or None, "usable": bool(source)}


def _openai_secret(api_type: str, configured: str) -> str:
    key, source = resolve_key(api_type, configured)
    # Placeholder keys (Ollama's, vLLM's) are not secrets and would mask ordinary words.
    return "" if source == "placeholder" else key


@dataclass(frozen=True)
class Provider:
    """One api_type: how its client is built, its default model, the key it would use (``secret``,
    for redaction; None for providers without a key) and its ``starweave doctor`` status."""

    build: Builder
    status: Callable[[str, list[AgentLLMConfig], str], dict[str, Any]]
    default_model: str | None = None
    secret: Callable[[str, str], str] | None = None


_OPENAI = Provider(create_openai_client, _openai_status, secret=_openai_secret)
_AZURE = Provider(create_azure_client, _azure_status, secret=lambda t, c: resolve_azure_key(t, c)[0])
_CLAUDE = Provider(
    create_anthropic_client, _anthropic_status, DEFAULT_CLAUDE_MODEL, lambda t, c: resolve_anthropic_key(c)[0]
)

PROVIDERS: dict[str, Provider] = {
    "local": Provider(_build_local, _local_status, MODEL_NAME),
    "replay": Provider(_build_replay, _replay_status, "replay"),
    **{t: replace(_OPENAI, default_model=ENDPOINTS[t].default_model) for t in sorted(ENDPOINTS)},
    "aoai": _AZURE,
    "azure": _AZURE,
    "azure_ad": _AZURE,
    "claude": _CLAUDE,
    "anthropic": _CLAUDE,
}
"""Every api_type, in ``starweave doctor``'s order. Adding a provider is a module under
``providers/`` and one entry here; the config validator accepts the names of this table."""

DEFAULT_MODELS: dict[str, str] = {
    api_type: p.default_model for api_type, p in PROVIDERS.items() if p.default_model is not None
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
    provider = PROVIDERS.get(agent.api_type)
    if provider is None:
        # The config validator rejects unknown types; this guards a hand-built config.
        raise ProviderUnavailable(f"unknown api_type {agent.api_type!r}")
    common = _call_settings(agent, system)
    return provider.build(agent.api_type, agent, system, **common, prices=prices, on_call=on_call)


def _agents(config: StarweaveConfig) -> dict[str, AgentLLMConfig]:
    return {
        "HOST_AGENT": config.host_agent,
        "APP_AGENT": config.app_agent,
        "BACKUP_AGENT": config.backup_agent,
        "EVALUATION_AGENT": config.evaluation_agent,
    }


def secret_values(agent: AgentLLMConfig) -> list[str]:
    """The API key(s) the provider for ``agent`` would use, from its config or the environment.

    For the session to redact from logs and errors. Empty for providers without a key (local,
    replay, azure_ad) and when no key is set; placeholder keys (Ollama's, vLLM's) are not secrets
    and would mask ordinary words, so they are left out.
    """
    provider = PROVIDERS.get(agent.api_type)
    if provider is None or provider.secret is None:
        return []
    key = provider.secret(agent.api_type, agent.api_key.get_secret_value())
    return [key] if key else []


def provider_status(config: StarweaveConfig) -> list[dict[str, Any]]:
    """One entry per provider for ``starweave doctor``.

    Each entry says which agents use it, whether it is usable here and whether its key is set
    (and where from); the key itself is never included.
    """
    agents = _agents(config)
    report: list[dict[str, Any]] = []
    for api_type, provider in PROVIDERS.items():
        users = [name for name, agent in agents.items() if agent.api_type == api_type]
        configured = next((key for name in users if (key := agents[name].api_key.get_secret_value())), "")
        entry: dict[str, Any] = {
            "provider": api_type,
            "key_set": None,
            "key_source": None,
            "usable": True,
            "detail": "",
        }
        entry.update(provider.status(api_type, [agents[name] for name in users], configured))
        entry["used_by"] = users
        entry["default_model"] = provider.default_model or ""
        report.append(entry)
    return report
