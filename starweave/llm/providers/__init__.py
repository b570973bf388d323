"""LLM providers: local (embedded), OpenAI-compatible, Azure, Anthropic and replay."""
