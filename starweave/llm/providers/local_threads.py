"""How many threads the embedded model uses for prompts and for generation.

Measured on 2 cores (``benchmarks/embedded_bench.py --threads``, issue 12), 693-token prompt and
80 generated tokens, seconds per call:

| prompt / generation threads | idle | one core busy | both cores busy |
|---|---|---|---|
| 1 / 1 (the old default)      | 22.7 | 27.1 | 36.6 |
| 2 / 2, polling off           | 12.3 | 28.7 | 33–55 |
| 2 / 1, polling off (default) | 16.1 | 22.3 | 30.8 |

Prompt processing gains from every core even under load; generation on all cores collapses as
soon as another process takes one (ggml's barriers wait on the slowest thread). So prompts use
every usable core and generation half of them; the environment overrides both.
"""

from __future__ import annotations

import os

from starweave.errors import ProviderUnavailable

# Either variable overrides the configured generation thread count (the first one set wins).
THREAD_ENV_VARS = ("STARWEAVE_LLM_THREADS", "EMBEDDED_LLM_THREADS")
BATCH_THREAD_ENV_VAR = "STARWEAVE_LLM_BATCH_THREADS"
# More prompt threads than this stop paying off for a 1.5B model on CPU.
MAX_AUTO_BATCH_THREADS = 8
MAX_AUTO_THREADS = 4


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _from_env(variables: tuple[str, ...]) -> int | None:
    for variable in variables:
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
    return None


def resolve_threads(configured: int) -> int:
    """Generation threads: the environment, else ``configured``, else (0) half the usable CPUs."""
    value = _from_env(THREAD_ENV_VARS)
    if value is not None:
        return value
    if configured > 0:
        return configured
    return max(1, min(MAX_AUTO_THREADS, usable_cpus() // 2))


def resolve_batch_threads(configured: int) -> int:
    """Prompt-processing threads: the environment, else ``configured``, else (0) every usable CPU."""
    value = _from_env((BATCH_THREAD_ENV_VAR,))
    if value is not None:
        return value
    if configured > 0:
        return configured
    return max(1, min(MAX_AUTO_BATCH_THREADS, usable_cpus()))
