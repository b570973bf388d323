"""Provider selection, missing keys/extras and the doctor report."""

from __future__ import annotations

from pathlib import Path

import pytest

from starweave.config.models import AgentLLMConfig, StarweaveConfig, SystemConfig
from starweave.errors import ProviderUnavailable
from starweave.llm.factory import DEFAULT_MODELS, create_llm, provider_status, secret_values
from starweave.llm.providers.local import LocalClient
from starweave.llm.providers.replay import ReplayClient

KEY_VARS = (
    "OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "DASHSCOPE_API_KEY",
    "QWEN_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "OLLAMA_API_KEY",
    "VLLM_API_KEY",
)


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in KEY_VARS:
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize(
    ("api_type", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("qwen", "DASHSCOPE_API_KEY"),
        ("gemini", "GEMINI_API_KEY"),
        ("claude", "ANTHROPIC_API_KEY"),
        ("aoai", "AZURE_OPENAI_API_KEY"),
    ],
)
def test_missing_key_names_config_key_and_env_var(api_type: str, variable: str) -> None:
    agent = AgentLLMConfig(API_TYPE=api_type, API_BASE="https://x.openai.azure.com", API_DEPLOYMENT_ID="d")
    with pytest.raises(ProviderUnavailable) as info:
        create_llm(agent, SystemConfig())
    assert "API_KEY" in str(info.value) and variable in str(info.value)


async def test_key_from_environment_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-123456")
    client = create_llm(AgentLLMConfig(API_TYPE="openai"), SystemConfig(TIMEOUT=12, MAX_TOKENS=99))
    assert (client.name, client.model) == ("openai", "gpt-4o-mini")
    await client.aclose()


async def test_ollama_needs_no_key() -> None:
    client = create_llm(AgentLLMConfig(API_TYPE="ollama"), SystemConfig())
    assert client.name == "ollama" and client.model == DEFAULT_MODELS["ollama"]
    await client.aclose()


def test_vllm_without_model_asks_for_api_model() -> None:
    with pytest.raises(ProviderUnavailable, match="API_MODEL"):
        create_llm(AgentLLMConfig(API_TYPE="vllm"), SystemConfig())


def test_azure_needs_base_and_deployment() -> None:
    with pytest.raises(ProviderUnavailable, match="API_BASE"):
        create_llm(AgentLLMConfig(API_TYPE="aoai", API_KEY="k"), SystemConfig())
    with pytest.raises(ProviderUnavailable, match="API_DEPLOYMENT_ID"):
        create_llm(
            AgentLLMConfig(API_TYPE="azure", API_KEY="k", API_BASE="https://r.openai.azure.com"),
            SystemConfig(),
        )


async def test_azure_ad_builds_with_a_token_provider() -> None:
    agent = AgentLLMConfig(
        API_TYPE="azure_ad",
        API_BASE="https://r.openai.azure.com",
        API_DEPLOYMENT_ID="gpt4o",
        AAD_API_SCOPE_BASE="abc",
    )
    client = create_llm(agent, SystemConfig())
    assert (client.name, client.model) == ("azure_ad", "gpt4o")
    await client.aclose()


async def test_local_and_replay_selection(tmp_path: Path) -> None:
    local = create_llm(AgentLLMConfig(), SystemConfig(TIMEOUT=42), prices={})
    assert isinstance(local, LocalClient) and local.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert local.timeout == 42 and not local.loaded
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"a": 1}\n')
    replay = create_llm(
        AgentLLMConfig(API_TYPE="replay", REPLAY_FILE=str(answers), TIMEOUT=5), SystemConfig()
    )
    assert isinstance(replay, ReplayClient) and replay.timeout == 5
    with pytest.raises(ProviderUnavailable, match="REPLAY_FILE"):
        create_llm(AgentLLMConfig(API_TYPE="replay"), SystemConfig())


def test_provider_status_reports_keys_but_never_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-secret-000")
    config = StarweaveConfig(APP_AGENT={"API_TYPE": "openai", "API_KEY": "sk-config-secret-111"})
    report = {entry["provider"]: entry for entry in provider_status(config)}
    assert report["openai"]["used_by"] == ["APP_AGENT"]
    assert report["openai"]["key_set"] is True and report["openai"]["key_source"] == "config"
    assert report["deepseek"]["key_source"] == "DEEPSEEK_API_KEY" and report["deepseek"]["usable"]
    assert report["gemini"]["key_set"] is False and "GEMINI_API_KEY" in report["gemini"]["detail"]
    assert report["local"]["used_by"] == ["HOST_AGENT", "BACKUP_AGENT", "EVALUATION_AGENT"]
    assert "expected_sha256" in report["local"]["model"]
    assert "secret" not in repr(report)


@pytest.mark.parametrize(
    ("api_type", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("qwen", "QWEN_API_KEY"),
        ("gemini", "GOOGLE_API_KEY"),
        ("ollama", "OLLAMA_API_KEY"),
        ("aoai", "AZURE_OPENAI_API_KEY"),
        ("azure", "AZURE_OPENAI_API_KEY"),
        ("claude", "ANTHROPIC_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
    ],
)
def test_secret_values_come_from_the_environment_the_provider_reads(
    monkeypatch: pytest.MonkeyPatch, api_type: str, variable: str
) -> None:
    assert secret_values(AgentLLMConfig(API_TYPE=api_type)) == []
    monkeypatch.setenv(variable, f"env-key-for-{api_type}")
    assert secret_values(AgentLLMConfig(API_TYPE=api_type)) == [f"env-key-for-{api_type}"]
    # A configured key wins over the environment, as it does when the client is built.
    configured = AgentLLMConfig(API_TYPE=api_type, API_KEY="configured-key-1")
    assert secret_values(configured) == ["configured-key-1"]


def test_secret_values_for_keyless_providers_and_placeholders(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-used-by-these-agents-0000")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-not-used-by-ad")
    assert secret_values(AgentLLMConfig()) == []
    assert secret_values(AgentLLMConfig(API_TYPE="replay", REPLAY_FILE=str(tmp_path / "a.jsonl"))) == []
    assert secret_values(AgentLLMConfig(API_TYPE="azure_ad")) == []
    # Ollama's and vLLM's placeholder keys ("ollama", "EMPTY") are not secrets.
    assert secret_values(AgentLLMConfig(API_TYPE="ollama")) == []
    assert secret_values(AgentLLMConfig(API_TYPE="vllm", API_MODEL="m")) == []


def test_qwen_prefers_dashscope_key_like_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QWEN_API_KEY", "qwen-second-choice")
    monkeypatch.setenv("DASHSCOPE_API_KEY", "dashscope-first-choice")
    assert secret_values(AgentLLMConfig(API_TYPE="qwen")) == ["dashscope-first-choice"]


def test_a_provider_added_to_the_table_is_accepted_by_the_config_and_built(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from starweave.llm.factory import PROVIDERS, Provider

    with pytest.raises(ValueError, match="unknown API_TYPE 'echo'"):
        AgentLLMConfig(API_TYPE="echo")
    answers = tmp_path / "answers.jsonl"
    answers.write_text('"hello"\n', encoding="utf-8")

    def build(api_type: str, agent: AgentLLMConfig, system: SystemConfig, **common: object) -> ReplayClient:
        return ReplayClient(str(answers), model=f"{api_type}-model", **common)  # type: ignore[arg-type]

    monkeypatch.setitem(PROVIDERS, "echo", Provider(build, lambda t, a, k: {"detail": "echo here"}, "echo-1"))
    agent = AgentLLMConfig(API_TYPE="ECHO")
    client = create_llm(agent, SystemConfig())
    assert isinstance(client, ReplayClient) and client.model == "echo-model"
    report = {e["provider"]: e for e in provider_status(StarweaveConfig())}
    assert report["echo"]["detail"] == "echo here" and report["echo"]["usable"] is True
    assert report["echo"]["default_model"] == "echo-1"
    assert secret_values(agent) == []
