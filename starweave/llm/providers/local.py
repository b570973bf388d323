"""The embedded model (api_type ``local``): Qwen2.5-Coder-1.5B run in-process by ``xllamacpp``.

The model loads lazily on the first call, in a worker thread. Calls run ``handle_chat_completions``
in a worker thread too, one at a time, with JSON-schema-constrained decoding when a schema is given
(compact JSON: the grammar allows no whitespace between tokens, which the model would otherwise
spend a tenth of its output on). The xllamacpp server also opens a loopback OpenAI-compatible HTTP
endpoint; it is locked with a random API key and exposed as :attr:`LocalClient.base_url` /
:attr:`LocalClient.api_key`.

Speed (spec/embedded-llm.md §3.3, §3.5, measured again for issue 12): prompt processing scales with
threads even when another process holds a core, but generation with 2 threads on 2 cores halves
when a core is busy (ggml's barriers), so prompts use every usable core and generation half of them,
with polling off. Each conversation keeps its own KV-cache slot, and system prompts' KV states are
kept on disk for the next process (see :mod:`local_slots`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from starweave.errors import LLMError, ProviderUnavailable
from starweave.llm.base import Message, RawAnswer, RawRequest, Usage
from starweave.llm.client import BaseLLMClient
from starweave.llm.providers.local_model import (
    INSTALL_HINT,
    MODEL_NAME,
    cache_dir,
    ensure_model,
    model_status,
)
from starweave.llm.providers.local_slots import (
    MIN_COPY_CHARS,
    PrefixStore,
    SlotTable,
    conversation_text,
    message_text,
    model_key,
    opening_text,
    system_text,
    timings_of,
)
from starweave.llm.providers.local_threads import (
    THREAD_ENV_VARS,
    resolve_batch_threads,
    resolve_threads,
)
from starweave.threads import in_daemon_thread

log = logging.getLogger("starweave.llm.local")
PREFETCH_CHUNK = 8 << 20
# How long closing waits for a generation in progress before leaving it to the process exit.
CLOSE_WAIT = 5.0
# A slot save or restore moves ~28 KB per token through the local disk: well under a second.
SLOT_ACTION_TIMEOUT = 30.0

__all__ = ["THREAD_ENV_VARS", "LocalClient", "compact_grammar", "model_status", "resolve_threads"]


def compact_grammar(schema: dict[str, Any]) -> str:
    """An LLGuidance grammar for ``schema`` that allows no whitespace outside strings.

    llama.cpp turns ``response_format`` into the same ``%json`` grammar but with flexible
    whitespace, and the model then pretty-prints: newlines and indentation cost it a tenth of its
    output tokens for nothing.
    """
    compact = {**schema, "x-guidance": {"whitespace_flexible": False}}
    return "%llguidance {}\nstart: %json " + json.dumps(compact, ensure_ascii=False)


class LocalClient(BaseLLMClient):
    """The embedded llama.cpp model. ``model_path`` overrides the packaged model with any GGUF file.

    ``n_threads`` / ``n_batch_threads`` are the generation / prompt threads (0: chosen from the
    usable CPUs); ``n_slots`` conversations keep their own KV cache of ``n_ctx`` tokens each;
    ``kv_store`` keeps system prompts' KV states on disk for later processes; ``poll`` is ggml's
    busy-wait level between operations (0: sleep; the benchmark compares it with llama.cpp's 50).
    """

    name = "local"
    # Calls with a schema use JSON-schema-constrained decoding (the grammar enforces it).
    schema_constrained = True

    def __init__(
        self,
        *,
        model_path: str = "",
        n_ctx: int = 4096,
        n_threads: int = 0,
        n_batch_threads: int = 0,
        n_slots: int = 4,
        kv_store: bool = True,
        poll: int = 0,
        **kwargs: Any,
    ) -> None:
        model = Path(model_path).stem if model_path else MODEL_NAME
        super().__init__(model, **kwargs)
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = resolve_threads(n_threads)
        self.n_batch_threads = resolve_batch_threads(n_batch_threads)
        self.slots = SlotTable(n_slots)
        self.kv_store = kv_store
        self.poll = poll
        self._store: PrefixStore | None = None
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
        prefetch(path)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        # xllamacpp builds the server holding the GIL, so every second of it stalls the event loop
        # (heartbeats included): no warm-up decode here (the first call pays it, in a thread that
        # releases the GIL), and the file is already in the page cache (read by prefetch above).
        params.warmup = False
        # Each slot gets n_ctx tokens of its own (the KV cache is not unified).
        params.n_parallel = self.slots.size
        params.n_ctx = self.n_ctx * self.slots.size
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_batch_threads
        # Sleeping instead of spinning between ops: spinning threads starve each other (and the
        # rest of Starweave) when the machine is busy.
        params.cpuparams.poll = self.poll
        params.cpuparams_batch.poll = self.poll
        # Our slot table keeps prefixes warm; llama.cpp's own RAM prompt cache would hold GBs.
        params.cache_ram_mib = 0
        params.verbosity = 0
        params.api_keys = [self._api_key]
        self._store = self._prepare_store(path)
        if self._store is not None:
            params.endpoint_slots = True
            params.slot_save_path = f"{self._store.folder}/"
        try:
            return xllamacpp.Server(params)
        except (RuntimeError, ValueError) as exc:
            raise ProviderUnavailable(f"the model {path} could not be loaded: {exc}") from exc

    def _prepare_store(self, path: Path) -> PrefixStore | None:
        if not self.kv_store:
            return None
        store = PrefixStore(cache_dir() / "kv", model_key(path, self.n_ctx))
        try:
            store.prepare()
            store.prune()
        except OSError as exc:
            log.warning("The prompt cache folder %s is unusable (%s); running without it", store.folder, exc)
            return None
        return store

    async def _raw_complete(self, request: RawRequest) -> RawAnswer:
        await self.load()
        body: dict[str, Any] = {
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.json_schema is not None:
            body["grammar"] = compact_grammar(request.json_schema)
        # A daemon thread: Ctrl+C during a long generation must not wait for it to finish.
        result = await in_daemon_thread(self._call_blocking, body, name="starweave-llm")
        return _answer_of(result, self.model)

    def _call_blocking(self, request: dict[str, Any]) -> Any:
        with self._call_lock:
            server = self._server
            if server is None:
                raise LLMError("the embedded model was closed while a call was waiting")
            messages: list[Message] = request["messages"]
            text = conversation_text(messages)
            started = time.monotonic()
            slot = self._warm_slot(server, messages, text)
            warm_ms = (time.monotonic() - started) * 1000
            try:
                result = server.handle_chat_completions({**request, "id_slot": slot})
            except (RuntimeError, ValueError) as exc:
                raise LLMError(f"local/{self.model}: the embedded model rejected the request: {exc}") from exc
            if isinstance(result, dict) and isinstance(result.get("timings"), dict):
                result["timings"]["warm_ms"] = warm_ms
            answer = _content_of(result)
            self.slots.record(slot, text + message_text({"role": "assistant", "content": answer}))
            return result

    def _warm_slot(self, server: Any, messages: list[Message], text: str) -> int:
        """The slot for this call, with the best available prefix already in its KV cache."""
        system = system_text(messages)
        choice = self.slots.choose(text, opening_text(messages))
        if choice.continues:
            return choice.slot
        donor = choice.donor
        worth_copying = donor is not None and choice.donor_chars >= len(system)
        if donor is not None and worth_copying and self._copy_slot(server, donor, choice.slot):
            self.slots.copy(donor, choice.slot)
            return choice.slot
        store = self._store
        if store is None or len(system) < MIN_COPY_CHARS:
            return choice.slot
        name = store.name_for(system)
        if store.has(system):
            if self._slot_action(server, choice.slot, "restore", name):
                store.touch(system)
                self.slots.record(choice.slot, system)
            return choice.slot
        # First use of this system prompt anywhere: compute it alone, so the stored state holds
        # nothing of the request, then keep it for later processes.
        try:
            prime = {"messages": messages[:1], "max_tokens": 1, "id_slot": choice.slot}
            server.handle_chat_completions(prime)
        except (RuntimeError, ValueError) as exc:
            log.debug("Priming slot %d failed: %s", choice.slot, exc)
            return choice.slot
        self.slots.record(choice.slot, system)
        self._slot_action(server, choice.slot, "save", name)
        return choice.slot

    def _copy_slot(self, server: Any, source: int, target: int) -> bool:
        """Copy one slot's KV cache into another through a temporary file."""
        if self._store is None:
            return False
        name = f"copy-{secrets.token_hex(8)}.bin"
        try:
            return self._slot_action(server, source, "save", name) and self._slot_action(
                server, target, "restore", name
            )
        finally:
            (self._store.folder / name).unlink(missing_ok=True)

    def _slot_action(self, server: Any, slot: int, action: str, filename: str) -> bool:
        """POST /slots/<slot>?action=save|restore on the loopback endpoint; False when it failed."""
        url = f"{server.listening_address.rstrip('/')}/slots/{slot}?action={action}"
        request = urllib.request.Request(
            url,
            data=json.dumps({"filename": filename}).encode(),
            headers={"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=SLOT_ACTION_TIMEOUT) as response:
                response.read()
        except (OSError, ValueError) as exc:
            # Only a missed speed-up: the call computes the prefix itself.
            log.info("KV cache %s of slot %d failed: %s", action, slot, exc)
            return False
        return True

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


def _content_of(result: Any) -> str:
    try:
        return str(result["choices"][0]["message"].get("content") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


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
        timings=timings_of(result),
    )


def prefetch(path: Path) -> None:
    """Read ``path`` once so that its pages are cached: plain reads release the GIL, while the
    page faults of a cold model file inside xllamacpp's constructor would not."""
    buffer = bytearray(PREFETCH_CHUNK)
    try:
        with open(path, "rb", buffering=0) as handle:
            while handle.readinto(buffer):
                pass
    except OSError as exc:
        log.debug("Prefetching %s failed (%s); loading it directly", path, exc)
