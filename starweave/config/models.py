"""Typed configuration: the agent, system, MCP, third-party, price and shell settings.

YAML keys follow the reference (``MAX_STEP``, ``API_TYPE``, ...); every field also answers to its
snake_case name, so ``config.system.max_step`` and the raw key ``MAX_STEP`` agree. Unknown keys are
kept (``extra="allow"``) so custom settings survive a round trip.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_default=True)


class AgentLLMConfig(_Section):
    """One agent's model settings (a block of ``agents.yaml``: HOST_AGENT, APP_AGENT, ...).

    ``api_type`` picks the provider: ``local`` (embedded model, the default), ``openai`` (and any
    OpenAI-compatible endpoint: ``ollama``, ``vllm``, ``deepseek``, ``qwen``, ``gemini``), ``aoai``/``azure``
    (Azure OpenAI with a key), ``azure_ad`` (Azure AD token), ``claude``/``anthropic``, ``replay``.
    """

    visual_mode: bool = Field(False, validation_alias=AliasChoices("VISUAL_MODE", "visual_mode"))
    reasoning_model: bool = Field(False, validation_alias=AliasChoices("REASONING_MODEL", "reasoning_model"))
    api_type: str = Field("local", validation_alias=AliasChoices("API_TYPE", "api_type"))
    api_base: str = Field("", validation_alias=AliasChoices("API_BASE", "api_base"))
    api_key: SecretStr = Field(SecretStr(""), validation_alias=AliasChoices("API_KEY", "api_key"))
    api_model: str = Field("", validation_alias=AliasChoices("API_MODEL", "api_model"))
    api_version: str = Field(
        "2025-02-01-preview", validation_alias=AliasChoices("API_VERSION", "api_version")
    )
    api_deployment_id: str = Field(
        "", validation_alias=AliasChoices("API_DEPLOYMENT_ID", "api_deployment_id")
    )
    aad_tenant_id: str = Field("", validation_alias=AliasChoices("AAD_TENANT_ID", "aad_tenant_id"))
    aad_api_scope: str = Field("", validation_alias=AliasChoices("AAD_API_SCOPE", "aad_api_scope"))
    aad_api_scope_base: str = Field(
        "", validation_alias=AliasChoices("AAD_API_SCOPE_BASE", "aad_api_scope_base")
    )
    # Embedded model (api_type "local"): an explicit GGUF file, else the packaged Qwen2.5-Coder-1.5B.
    model_path: str = Field("", validation_alias=AliasChoices("MODEL_PATH", "model_path"))
    # Generation / prompt-processing threads; 0 chooses from the usable CPUs (local_threads.py).
    n_threads: int = Field(0, ge=0, le=256, validation_alias=AliasChoices("N_THREADS", "n_threads"))
    n_batch_threads: int = Field(
        0, ge=0, le=256, validation_alias=AliasChoices("N_BATCH_THREADS", "n_batch_threads")
    )
    # Tokens of context per conversation, and how many conversations keep their own KV cache.
    n_ctx: int = Field(4096, ge=512, validation_alias=AliasChoices("N_CTX", "n_ctx"))
    n_slots: int = Field(4, ge=1, le=16, validation_alias=AliasChoices("N_SLOTS", "n_slots"))
    # Keep system prompts' KV states in $XDG_CACHE_HOME/starweave/kv for the next process.
    kv_cache: bool = Field(True, validation_alias=AliasChoices("KV_CACHE", "kv_cache"))
    # Replay provider (api_type "replay"): a JSON-lines file of recorded answers or a response.log.
    replay_file: str = Field("", validation_alias=AliasChoices("REPLAY_FILE", "replay_file"))
    # Per-agent overrides of the system-wide call settings; None means "use system.yaml".
    timeout: float | None = Field(None, gt=0, validation_alias=AliasChoices("TIMEOUT", "timeout"))
    max_tokens: int | None = Field(None, gt=0, validation_alias=AliasChoices("MAX_TOKENS", "max_tokens"))
    temperature: float | None = Field(
        None, ge=0, le=2, validation_alias=AliasChoices("TEMPERATURE", "temperature")
    )
    prompt: str = Field("", validation_alias=AliasChoices("PROMPT", "prompt"))
    example_prompt: str = Field("", validation_alias=AliasChoices("EXAMPLE_PROMPT", "example_prompt"))
    api_prompt: str = Field("", validation_alias=AliasChoices("API_PROMPT", "api_prompt"))

    @field_validator("api_type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        # The provider table is the one list of api_types (imported late: llm imports this module).
        from starweave.llm.factory import PROVIDERS

        value = value.strip().lower()
        if value not in PROVIDERS:
            raise ValueError(f"unknown API_TYPE {value!r}; use one of {', '.join(sorted(PROVIDERS))}")
        return value


class ShellConfig(_Section):
    """How shell commands run on this device (key ``SHELL`` of ``system.yaml``).

    ``mode``: ``readonly`` (nothing may be written), ``workspace`` (writes only inside the workspace;
    the default) or ``unrestricted`` (no argv policy, no sandbox; an explicit, warned opt-in).
    ``sandbox``: ``auto`` uses bubblewrap when it works here, else Landlock, else refuses to start;
    ``bwrap`` and ``landlock`` require that one; ``none`` runs commands unconfined (said at start).
    ``max_memory_mb``, ``max_processes``, ``max_file_size_mb`` and ``max_open_files`` limit every
    command in every mode (see the README's "Shell safety").
    """

    mode: Literal["readonly", "workspace", "unrestricted"] = Field(
        "workspace", validation_alias=AliasChoices("MODE", "mode")
    )
    workspace: str = Field("", validation_alias=AliasChoices("WORKSPACE", "workspace"))
    read_roots: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("READ_ROOTS", "read_roots")
    )
    sandbox: Literal["auto", "bwrap", "landlock", "none"] = Field(
        "auto", validation_alias=AliasChoices("SANDBOX", "sandbox")
    )
    max_memory_mb: int = Field(
        1024, ge=64, le=1048576, validation_alias=AliasChoices("MAX_MEMORY_MB", "max_memory_mb")
    )
    max_processes: int = Field(
        128, ge=8, le=65536, validation_alias=AliasChoices("MAX_PROCESSES", "max_processes")
    )
    max_file_size_mb: int = Field(
        256, ge=1, le=1048576, validation_alias=AliasChoices("MAX_FILE_SIZE_MB", "max_file_size_mb")
    )
    max_open_files: int = Field(
        1024, ge=64, le=1048576, validation_alias=AliasChoices("MAX_OPEN_FILES", "max_open_files")
    )
    timeout: int = Field(30, gt=0, validation_alias=AliasChoices("TIMEOUT", "timeout"))
    max_timeout: int = Field(300, gt=0, validation_alias=AliasChoices("MAX_TIMEOUT", "max_timeout"))
    max_output_bytes: int = Field(
        65536, ge=1024, validation_alias=AliasChoices("MAX_OUTPUT_BYTES", "max_output_bytes")
    )
    allow_network: bool = Field(False, validation_alias=AliasChoices("ALLOW_NETWORK", "allow_network"))

    @model_validator(mode="after")
    def _timeouts(self) -> ShellConfig:
        if self.timeout > self.max_timeout:
            raise ValueError(f"TIMEOUT ({self.timeout}) exceeds MAX_TIMEOUT ({self.max_timeout})")
        return self


class SystemConfig(_Section):
    """Session-wide settings (``system.yaml``). Defaults follow the reference except where noted."""

    max_tokens: int = Field(2000, gt=0, validation_alias=AliasChoices("MAX_TOKENS", "max_tokens"))
    # The reference retries transport errors 20 times; with a 60 s timeout that can hang for 20
    # minutes, so we retry 3 times.
    max_retry: int = Field(3, ge=0, validation_alias=AliasChoices("MAX_RETRY", "max_retry"))
    temperature: float = Field(0.0, ge=0, le=2, validation_alias=AliasChoices("TEMPERATURE", "temperature"))
    top_p: float = Field(0.0, ge=0, le=1, validation_alias=AliasChoices("TOP_P", "top_p"))
    # Per LLM call, in seconds. The embedded model on one shared core can need minutes for a step
    # (spec/embedded-llm.md §3.3), so the default is larger than the reference's 60 s.
    timeout: float = Field(180.0, gt=0, validation_alias=AliasChoices("TIMEOUT", "timeout"))
    # Steps per session: the reference uses 50; 20 keeps a confused small model from running for long.
    max_step: int = Field(20, validation_alias=AliasChoices("MAX_STEP", "max_step"))
    max_round: int = Field(1, ge=1, validation_alias=AliasChoices("MAX_ROUND", "max_round"))
    sleep_time: float = Field(0.0, ge=0, validation_alias=AliasChoices("SLEEP_TIME", "sleep_time"))
    json_parsing_retry: int = Field(
        3, ge=1, validation_alias=AliasChoices("JSON_PARSING_RETRY", "json_parsing_retry")
    )
    history_keys: list[str] = Field(
        default_factory=lambda: ["step", "observation", "thought", "action", "status", "result"],
        validation_alias=AliasChoices("HISTORY_KEYS", "history_keys"),
    )
    log_dir: str = Field("logs", validation_alias=AliasChoices("LOG_DIR", "log_dir"))
    log_level: str = Field("WARNING", validation_alias=AliasChoices("LOG_LEVEL", "log_level"))
    log_to_markdown: bool = Field(True, validation_alias=AliasChoices("LOG_TO_MARKDOWN", "log_to_markdown"))
    print_log: bool = Field(False, validation_alias=AliasChoices("PRINT_LOG", "print_log"))
    screenshot_to_memory: bool = Field(
        True, validation_alias=AliasChoices("SCREENSHOT_TO_MEMORY", "screenshot_to_memory")
    )
    # With VISUAL_MODE: send the clean and annotated screenshots as one side-by-side image, and the
    # previous step's selected-control screenshot too (the reference's defaults).
    concat_screenshot: bool = Field(
        False, validation_alias=AliasChoices("CONCAT_SCREENSHOT", "concat_screenshot")
    )
    include_last_screenshot: bool = Field(
        True, validation_alias=AliasChoices("INCLUDE_LAST_SCREENSHOT", "include_last_screenshot")
    )
    use_mcp: bool = Field(True, validation_alias=AliasChoices("USE_MCP", "use_mcp"))
    mcp_tool_timeout: float = Field(
        120.0, gt=0, validation_alias=AliasChoices("MCP_TOOL_TIMEOUT", "mcp_tool_timeout")
    )
    eva_session: bool = Field(False, validation_alias=AliasChoices("EVA_SESSION", "eva_session"))
    # Asked only when RAG_EXPERIENCE is on (starweave.knowledge.saving), so "ask" is a safe default.
    save_experience: Literal["always", "ask", "auto", "always_not"] = Field(
        "ask", validation_alias=AliasChoices("SAVE_EXPERIENCE", "save_experience")
    )
    # EvaluationAgent: judge each round too (EVA_ROUND), with every screenshot or only the first and
    # last (EVA_ALL_SCREENSHOTS) for a vision model.
    eva_round: bool = Field(False, validation_alias=AliasChoices("EVA_ROUND", "eva_round"))
    eva_all_screenshots: bool = Field(
        True, validation_alias=AliasChoices("EVA_ALL_SCREENSHOTS", "eva_all_screenshots")
    )
    # Customization: questions to the user in PENDING, and the question-and-answer memory. A relative
    # QA_PAIR_FILE is under the data folder ($XDG_DATA_HOME/starweave).
    ask_question: bool = Field(False, validation_alias=AliasChoices("ASK_QUESTION", "ask_question"))
    # The agents' guards (starweave.agent.guards): on, or off for a model strong enough without them.
    # "on"/"off" (YAML reads them as booleans), true/false and yes/no are all accepted.
    guards: bool = Field(True, validation_alias=AliasChoices("GUARDS", "guards"))
    use_customization: bool = Field(
        False, validation_alias=AliasChoices("USE_CUSTOMIZATION", "use_customization")
    )
    qa_pair_file: str = Field(
        "customization/global_memory.jsonl", validation_alias=AliasChoices("QA_PAIR_FILE", "qa_pair_file")
    )
    qa_pair_num: int = Field(20, ge=0, validation_alias=AliasChoices("QA_PAIR_NUM", "qa_pair_num"))
    # rag.yaml (merged into the system settings, as the reference does). A saved path left empty
    # is the kind's store under the knowledge folder (starweave.knowledge.default_root).
    rag_offline_docs: bool = Field(
        False, validation_alias=AliasChoices("RAG_OFFLINE_DOCS", "rag_offline_docs")
    )
    rag_offline_docs_retrieved_topk: int = Field(
        1,
        ge=0,
        validation_alias=AliasChoices("RAG_OFFLINE_DOCS_RETRIEVED_TOPK", "rag_offline_docs_retrieved_topk"),
    )
    rag_online_search: bool = Field(
        False, validation_alias=AliasChoices("RAG_ONLINE_SEARCH", "rag_online_search")
    )
    rag_online_search_topk: int = Field(
        5, ge=0, validation_alias=AliasChoices("RAG_ONLINE_SEARCH_TOPK", "rag_online_search_topk")
    )
    rag_online_retrieved_topk: int = Field(
        5, ge=0, validation_alias=AliasChoices("RAG_ONLINE_RETRIEVED_TOPK", "rag_online_retrieved_topk")
    )
    bing_api_key: SecretStr = Field(
        SecretStr(""), validation_alias=AliasChoices("BING_API_KEY", "bing_api_key")
    )
    # Where RAG_ONLINE_SEARCH sends its queries: the Bing Web Search v7 API (or a compatible proxy).
    bing_search_endpoint: str = Field(
        "https://api.bing.microsoft.com/v7.0/search",
        validation_alias=AliasChoices("BING_SEARCH_ENDPOINT", "bing_search_endpoint"),
    )
    rag_experience: bool = Field(False, validation_alias=AliasChoices("RAG_EXPERIENCE", "rag_experience"))
    rag_experience_retrieved_topk: int = Field(
        5,
        ge=0,
        validation_alias=AliasChoices("RAG_EXPERIENCE_RETRIEVED_TOPK", "rag_experience_retrieved_topk"),
    )
    experience_saved_path: str = Field(
        "", validation_alias=AliasChoices("EXPERIENCE_SAVED_PATH", "experience_saved_path")
    )
    rag_demonstration: bool = Field(
        False, validation_alias=AliasChoices("RAG_DEMONSTRATION", "rag_demonstration")
    )
    rag_demonstration_retrieved_topk: int = Field(
        5,
        ge=0,
        validation_alias=AliasChoices("RAG_DEMONSTRATION_RETRIEVED_TOPK", "rag_demonstration_retrieved_topk"),
    )
    rag_demonstration_completion_n: int = Field(
        3,
        ge=1,
        validation_alias=AliasChoices("RAG_DEMONSTRATION_COMPLETION_N", "rag_demonstration_completion_n"),
    )
    demonstration_saved_path: str = Field(
        "", validation_alias=AliasChoices("DEMONSTRATION_SAVED_PATH", "demonstration_saved_path")
    )
    # Starweave's own: semantic retrieval (starweave.knowledge.embeddings). A model name served at
    # RAG_EMBEDDING_API_BASE (OpenAI-compatible), else a GGUF file, or "local" (the packaged model).
    rag_embedding_model: str = Field(
        "", validation_alias=AliasChoices("RAG_EMBEDDING_MODEL", "rag_embedding_model")
    )
    rag_embedding_api_base: str = Field(
        "", validation_alias=AliasChoices("RAG_EMBEDDING_API_BASE", "rag_embedding_api_base")
    )
    rag_embedding_api_key: SecretStr = Field(
        SecretStr(""), validation_alias=AliasChoices("RAG_EMBEDDING_API_KEY", "rag_embedding_api_key")
    )
    shell: ShellConfig = Field(default_factory=ShellConfig, validation_alias=AliasChoices("SHELL", "shell"))

    @field_validator("max_step")
    @classmethod
    def _step_cap(cls, value: int) -> int:
        if value == 0 or value < -1:
            raise ValueError("MAX_STEP must be a positive number of steps, or -1 for no limit")
        return value


class McpServerConfig(_Section):
    """One MCP server of ``mcp.yaml``: in-process (``local``), ``http`` (streamable HTTP) or ``stdio``."""

    namespace: str
    type: Literal["local", "http", "stdio"]
    reset: bool = False
    start_args: list[str] = Field(default_factory=list)
    host: str | None = None
    port: int | None = Field(None, ge=1, le=65535)
    path: str = "/mcp"
    #: ``http``: the environment variable holding the server's key, sent as ``Authorization:
    #: Bearer KEY`` (default: ``STARWEAVE_MCP_KEY``, when set).
    api_key_env: str | None = None
    command: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None

    @model_validator(mode="after")
    def _transport_fields(self) -> McpServerConfig:
        if self.type == "http" and not self.host:
            raise ValueError("Missing host for http server")
        if self.type == "http" and self.port is None:
            raise ValueError("Missing port for http server")
        if self.type == "stdio" and not self.command:
            raise ValueError("Missing command for stdio server")
        return self


class McpServerSet(_Section):
    """The servers of one agent sub-type: data-collection servers and action servers."""

    data_collection: list[McpServerConfig] = Field(default_factory=list)
    action: list[McpServerConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_namespaces(self) -> McpServerSet:
        for kind in ("data_collection", "action"):
            seen: set[str] = set()
            for server in getattr(self, kind):
                if server.namespace in seen:
                    raise ValueError(f"Duplicate namespace {server.namespace!r} in {kind}")
                seen.add(server.namespace)
        return self


def default_mcp() -> dict[str, dict[str, McpServerSet]]:
    """Our shipped ``mcp.yaml``: LinuxAgent gets the in-process shell and file servers; HostAgent and
    AppAgent the desktop UI servers (and, in mousepad, the text editor's file API next to the GUI);
    MobileAgent the phone's MobileDataCollector and MobileExecutor (in-process, over adb)."""

    def ui(*namespaces: str, reset: tuple[str, ...] = ()) -> McpServerSet:
        return McpServerSet(
            data_collection=[McpServerConfig(namespace="UICollector", type="local")],
            action=[McpServerConfig(namespace=n, type="local", reset=n in reset) for n in namespaces],
        )

    return {
        "HostAgent": {"default": ui("HostUIExecutor")},
        "AppAgent": {
            "default": ui("AppUIExecutor"),
            "mousepad": ui("AppUIExecutor", "TextEditorExecutor", reset=("TextEditorExecutor",)),
        },
        "LinuxAgent": {
            "default": McpServerSet(
                action=[
                    McpServerConfig(namespace="BashExecutor", type="local"),
                    McpServerConfig(namespace="FileExecutor", type="local"),
                ]
            )
        },
        "MobileAgent": {
            "default": McpServerSet(
                data_collection=[McpServerConfig(namespace="MobileDataCollector", type="local")],
                action=[McpServerConfig(namespace="MobileExecutor", type="local")],
            )
        },
    }


class ThirdPartyAgentConfig(_Section):
    """One ``THIRD_PARTY_AGENT_CONFIG`` entry."""

    agent_name: str = Field("", validation_alias=AliasChoices("AGENT_NAME", "agent_name"))
    appagent_prompt: str = Field("", validation_alias=AliasChoices("APPAGENT_PROMPT", "appagent_prompt"))
    appagent_example_prompt: str = Field(
        "", validation_alias=AliasChoices("APPAGENT_EXAMPLE_PROMPT", "appagent_example_prompt")
    )
    api_prompt: str = Field("", validation_alias=AliasChoices("API_PROMPT", "api_prompt"))
    introduction: str = Field("", validation_alias=AliasChoices("INTRODUCTION", "introduction"))
    visual_mode: bool = Field(False, validation_alias=AliasChoices("VISUAL_MODE", "visual_mode"))


class ThirdPartyConfig(_Section):
    """``third_party.yaml``: which third-party agents are enabled and their prompts."""

    enabled_third_party_agents: list[str] = Field(
        default_factory=list,
        validation_alias=AliasChoices("ENABLED_THIRD_PARTY_AGENTS", "enabled_third_party_agents"),
    )
    third_party_agent_config: dict[str, ThirdPartyAgentConfig] = Field(
        default_factory=lambda: {
            "LinuxAgent": ThirdPartyAgentConfig(
                agent_name="LinuxAgent",
                appagent_prompt="linux_agent.yaml",
                appagent_example_prompt="linux_agent_example.yaml",
                introduction="For Linux Use Only.",
            )
        },
        validation_alias=AliasChoices("THIRD_PARTY_AGENT_CONFIG", "third_party_agent_config"),
    )


class Price(_Section):
    """USD per 1,000 tokens."""

    prompt: float = Field(0.0, ge=0)
    completion: float = Field(0.0, ge=0)


class StarweaveConfig(_Section):
    """The whole effective configuration."""

    host_agent: AgentLLMConfig = Field(
        default_factory=AgentLLMConfig, validation_alias=AliasChoices("HOST_AGENT", "host_agent")
    )
    app_agent: AgentLLMConfig = Field(
        default_factory=AgentLLMConfig, validation_alias=AliasChoices("APP_AGENT", "app_agent")
    )
    backup_agent: AgentLLMConfig = Field(
        default_factory=AgentLLMConfig, validation_alias=AliasChoices("BACKUP_AGENT", "backup_agent")
    )
    evaluation_agent: AgentLLMConfig = Field(
        default_factory=AgentLLMConfig, validation_alias=AliasChoices("EVALUATION_AGENT", "evaluation_agent")
    )
    system: SystemConfig = Field(default_factory=SystemConfig)
    third_party: ThirdPartyConfig = Field(default_factory=ThirdPartyConfig)
    mcp: dict[str, dict[str, McpServerSet]] = Field(
        default_factory=default_mcp, validation_alias=AliasChoices("MCP", "mcp")
    )
    prices: dict[str, Price] = Field(default_factory=dict, validation_alias=AliasChoices("PRICES", "prices"))

    def agent_llm(self, agent_name: str) -> AgentLLMConfig:
        """The model settings an agent uses: Linux and other third-party agents share APP_AGENT's."""
        if agent_name.lower() in ("hostagent", "host", "host_agent"):
            return self.host_agent
        if agent_name.lower() in ("evaluation", "evaluationagent", "evaluation_agent"):
            return self.evaluation_agent
        return self.app_agent

    def mcp_servers(self, agent_name: str, sub_type: str | None = None) -> McpServerSet | None:
        """The servers for ``agent_name``: its ``sub_type`` entry, else ``default``, else None."""
        entry = self.mcp.get(agent_name)
        if entry is None:
            return None
        if sub_type and sub_type in entry:
            return entry[sub_type]
        return entry.get("default")
