"""Secret redaction for logs, error messages and anything else that may leave the process.

:func:`redact` replaces the secret values a caller knows (resolved API keys, including Azure keys,
which have no recognisable shape) and anything shaped like a provider API key. It runs on every
logged prompt (often 100 KB), so each regular expression only runs when a plain substring test
says its pattern can match at all.

Deliberately not matched: bare 32-hex strings (they would also hit md5 sums and ids).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Known secrets shorter than this are not replaced: they would mask ordinary words.
MIN_SECRET_LENGTH = 4

# OpenAI (``sk-…``, ``sk-proj-…``) and Anthropic (``sk-ant-…``) keys: the prefix, then 16+ key chars.
_SK_KEY = re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}")
# ``Bearer <token>`` (RFC 6750 token characters); the word and the spacing are kept.
_BEARER = re.compile(r"(\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+)[A-Za-z0-9\-._~+/]{16,}=*")
# Google API keys: ``AIza`` then 35 key chars (30+ accepted).
_GOOGLE_KEY = re.compile(r"\bAIza[A-Za-z0-9_\-]{30,}")


def redact(text: str, secrets: Iterable[str] = (), mask: str = "****") -> str:
    """``text`` with every known secret and every API-key-shaped string replaced by ``mask``.

    ``secrets`` are replaced exactly (values shorter than four characters are ignored; longer values
    first, so a secret that contains another is masked whole). Key shapes: ``sk-…``/``sk-ant-…``/
    ``sk-proj-…`` with 16+ key characters, ``Bearer <token>`` (the word ``Bearer`` stays) and Google
    ``AIza…`` keys.
    """
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, mask)
    # Functions, not template strings, as replacements: a mask may contain backslashes.
    if "sk-" in text:
        text = _SK_KEY.sub(lambda _match: mask, text)
    # The pre-check covers "Bearer", "bearer" and "BEARER", the spellings HTTP libraries print.
    if "earer" in text or "EARER" in text:
        text = _BEARER.sub(lambda match: match.group(1) + mask, text)
    if "AIza" in text:
        text = _GOOGLE_KEY.sub(lambda _match: mask, text)
    return text
