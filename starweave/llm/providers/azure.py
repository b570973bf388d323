"""Azure OpenAI: api_type ``aoai``/``azure`` (API key) and ``azure_ad`` (Azure AD token, no key).

Both use the ``openai`` SDK's ``AsyncAzureOpenAI`` with ``API_BASE`` as the endpoint,
``API_VERSION`` and ``API_DEPLOYMENT_ID`` as the deployment; ``azure_ad`` gets its bearer tokens
from ``azure.identity`` (the ``starweave[azure]`` extra).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from starweave.config.models import AgentLLMConfig, SystemConfig
from starweave.errors import ProviderUnavailable
from starweave.llm.providers.openai_compat import OpenAICompatClient

AZURE_KEY_ENV = "AZURE_OPENAI_API_KEY"
AZURE_INSTALL_HINT = "pip install 'starweave[azure]'"


def aad_scope(scope_base: str, scope: str) -> str:
    """The token scope: ``api://<AAD_API_SCOPE_BASE>/<AAD_API_SCOPE>`` (the base is given without ``api://``)."""
    scope_base = scope_base.strip().removeprefix("api://").strip("/")
    scope = scope.strip().strip("/")
    if not scope_base:
        return "https://cognitiveservices.azure.com/.default"
    return f"api://{scope_base}/{scope or '.default'}"


def resolve_azure_key(api_type: str, configured: str) -> tuple[str, str]:
    """The Azure OpenAI API key and where it came from (``config`` or the env var).

    ``("", "")`` when there is none, and always for ``azure_ad``, which signs in with tokens instead.
    """
    if api_type == "azure_ad":
        return "", ""
    if configured:
        return configured, "config"
    value = os.environ.get(AZURE_KEY_ENV, "")
    return (value, AZURE_KEY_ENV) if value else ("", "")


def _check_common(api_type: str, api_base: str, deployment: str) -> None:
    if not api_base:
        raise ProviderUnavailable(
            f"api_type {api_type!r} needs API_BASE (https://<resource>.openai.azure.com) in agents.yaml"
        )
    if not deployment:
        raise ProviderUnavailable(f"api_type {api_type!r} needs API_DEPLOYMENT_ID in agents.yaml")


def create_azure_client(
    api_type: str, agent: AgentLLMConfig, system: SystemConfig, *, timeout: float, **kwargs: Any
) -> OpenAICompatClient:
    """Build an Azure OpenAI client; ProviderUnavailable names what is missing."""
    deployment = agent.api_deployment_id
    _check_common(api_type, agent.api_base, deployment)
    # Imported here: the SDK takes half a second to import, paid only by a run that uses it.
    import openai

    common: dict[str, Any] = {
        "azure_endpoint": agent.api_base,
        "api_version": agent.api_version,
        "azure_deployment": deployment,
        "max_retries": system.max_retry,
        "timeout": timeout,
    }
    secrets: tuple[str, ...] = ()
    if api_type == "azure_ad":
        try:
            from azure.identity import DefaultAzureCredential, get_bearer_token_provider
        except ImportError as exc:
            raise ProviderUnavailable(
                f"api_type 'azure_ad' needs azure-identity: run {AZURE_INSTALL_HINT}"
            ) from exc
        credential_args: dict[str, Any] = {}
        aad_tenant_id = agent.aad_tenant_id
        if aad_tenant_id:
            # Interactive and shared-cache sign-ins need the tenant; env/CLI credentials find their own.
            credential_args["interactive_browser_tenant_id"] = aad_tenant_id
            credential_args["shared_cache_tenant_id"] = aad_tenant_id
        credential = DefaultAzureCredential(**credential_args)
        sdk = openai.AsyncAzureOpenAI(
            azure_ad_token_provider=_async_provider(
                get_bearer_token_provider(
                    credential, aad_scope(agent.aad_api_scope_base, agent.aad_api_scope)
                )
            ),
            **common,
        )
    else:
        key, _source = resolve_azure_key(api_type, agent.api_key.get_secret_value())
        if not key:
            raise ProviderUnavailable(
                f"api_type {api_type!r} needs an API key: set API_KEY in agents.yaml or {AZURE_KEY_ENV}"
            )
        secrets = (key,)
        sdk = openai.AsyncAzureOpenAI(api_key=key, **common)
    return OpenAICompatClient(
        sdk,
        agent.api_model or deployment,
        provider=api_type,
        reasoning_model=agent.reasoning_model,
        secrets=secrets,
        timeout=timeout,
        **kwargs,
    )


def _async_provider(sync_provider: Any) -> Any:
    """Wrap azure.identity's blocking token provider so fetching a token never blocks the event loop."""

    async def provide() -> str:
        return str(await asyncio.to_thread(sync_provider))

    return provide
