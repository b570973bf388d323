"""The embedded model (api_type ``local``): Qwen2.5-Coder-1.5B run in-process by ``xllamacpp``.

The model loads lazily on the first call, in a worker thread. Calls run ``handle_chat_completions``
in a worker thread too, one at a time, with JSON-schema-constrained decoding when a schema is given.
The xllamacpp server also opens a loopback OpenAI-compatible HTTP endpoint; it is locked with a
random API key and exposed as :attr:`LocalClient.base_url` / :attr:`LocalClient.api_key`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from starweave.errors import LLMError, ProviderUnavailable
from starweave.llm.base import Message, RawAnswer, Usage
from starweave.llm.client import BaseLLMClient
from starweave.llm.providers.local_model import INSTALL_HINT, MODEL_NAME, ensure_model, model_status
from starweave.threads import in_daemon_thread

log = logging.getLogger("starweave.llm.local")
# How long closing waits for a generation in progress before leaving it to the process exit.
CLOSE_WAIT = 5.0

__all__ = ["THREAD_ENV_VARS", "LocalClient", "model_status", "resolve_threads"]

# Either variable overrides the configured thread count (the first one set wins).
THREAD_ENV_VARS = ("STARWEAVE_LLM_THREADS", "EMBEDDED_LLM_THREADS")


def resolve_threads(configured: int) -> int:
    """The thread count to use: an environment override, else ``configured`` (1 by default, §3.3)."""
    for variable in THREAD_ENV_VARS:
        raw = os.environ.get(variable, "").strip()
        if not raw:
            continue
        try:
            value = int(raw)
        except ValueError as exc:
            raise ProviderUnavailable(f"{variable}={raw!r} is not a whole number of threads") from exc
        if value < 1:
            raise ProviderUnavailable(f"{variable}={raw!r} must be at least 1")
        return value
    return configured


class LocalClient(BaseLLMClient):
    """The embedded llama.cpp model. ``model_path`` overrides the packaged model with any GGUF file."""

    name = "local"
    # Calls with a schema use JSON-schema-constrained decoding (the grammar enforces it).
    schema_constrained = True

    def __init__(self, *, model_path: str = "", n_ctx: int = 4096, n_threads: int = 1, **kwargs: Any) -> None:
        model = Path(model_path).stem if model_path else MODEL_NAME
        super().__init__(model, **kwargs)
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = resolve_threads(n_threads)
        self._api_key = secrets.token_urlsafe(24)
        self._server: Any = None
        self._load_lock = asyncio.Lock()
        # A threading lock, not an asyncio one: a timed-out call keeps running in its thread, and the
        # next call must still wait for it.
        self._call_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded."""
        return self._server is not None

    @property
    def base_url(self) -> str:
        """The loaded server's OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:40123/v1``."""
        if self._server is None:
            raise LLMError("the embedded model is not loaded yet; call `await client.load()` first")
        return f"{self._server.listening_address.rstrip('/')}/v1"

    @property
    def api_key(self) -> str:
        """The random key that guards the loopback endpoint (never logged)."""
        return self._api_key

    async def load(self) -> None:
        """Load the model (joining the packaged chunks on first use) without blocking the event loop."""
        async with self._load_lock:
            if self._server is None:
                self._server = await asyncio.to_thread(self._load_blocking)

    def _load_blocking(self) -> Any:
        try:
            import xllamacpp
        except ImportError as exc:
            raise ProviderUnavailable(
                f"the embedded model runtime xllamacpp is not installed; run {INSTALL_HINT}"
            ) from exc
        if self.model_path:
            path = Path(self.model_path).expanduser()
            if not path.is_file():
                raise ProviderUnavailable(
                    f"MODEL_PATH {self.model_path!r} is not a file; point it at a GGUF model or leave it "
                    "empty to use the packaged model"
                )
        else:
            path = ensure_model()
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = self.n_ctx
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads
        params.verbosity = 0
        params.api_keys = [self._api_key]
        try:
            return xllamacpp.Server(params)
        except (RuntimeError, ValueError) as exc:
            raise ProviderUnavailable(f"the model {path} could not be loaded: {exc}") from exc

    async def _raw_complete(
        self,
        messages: list[Message],
        json_schema: dict[str, Any] | None,
        schema_name: str,
        max_tokens: int,
        temperature: float,
    ) -> RawAnswer:
        await self.load()
        request: dict[str, Any] = {"messages": messages, "max_tokens": max_tokens, "temperature": temperature}
        if json_schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema},
            }
        # A daemon thread: Ctrl+C during a long generation must not wait for it to finish.
        result = await in_daemon_thread(self._call_blocking, request, name="starweave-llm")
        return _answer_of(result, self.model)

    def _call_blocking(self, request: dict[str, Any]) -> Any:
        with self._call_lock:
            server = self._server
            if server is None:
                raise LLMError("the embedded model was closed while a call was waiting")
            try:
                return server.handle_chat_completions(request)
            except (RuntimeError, ValueError) as exc:
                raise LLMError(f"local/{self.model}: the embedded model rejected the request: {exc}") from exc

    async def aclose(self) -> None:
        """Unload the model (its destructor stops the loopback server)."""
        if self._server is None:
            return
        # Only the list holds the server, so its (blocking) destructor runs in the worker thread.
        holder = [self._server]
        self._server = None
        try:
            await asyncio.wait_for(in_daemon_thread(self._release, holder), CLOSE_WAIT)
        except TimeoutError:
            # A generation is still running (e.g. interrupted at exit): it ends with the process.
            log.warning("The embedded model is still generating; not waiting for it to unload")

    def _release(self, holder: list[Any]) -> None:
        # Wait for a running call to finish before the native server is destroyed.
        with self._call_lock:
            holder.clear()


def _answer_of(result: Any, model: str) -> RawAnswer:
    """Turn xllamacpp's OpenAI-format result dict into a RawAnswer."""
    if not isinstance(result, dict):
        raise LLMError(f"local/{model}: unexpected answer type {type(result).__name__}")
    if "error" in result:
        raise LLMError(f"local/{model}: the embedded model returned an error: {result['error']}")
    try:
        text = result["choices"][0]["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise LLMError(f"local/{model}: answer without choices[0].message: {str(result)[:300]}") from exc
    usage = result.get("usage") or {}
    return RawAnswer(
        text=text,
        usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
        model=model,
    )
