"""Secret redaction for logs, error messages and anything else that may leave the process.

:func:`redact` replaces

- the secret values a caller knows (resolved API keys, including Azure keys, which have no
  recognisable shape; the server key; device tokens), also where they appear JSON-escaped,
  URL-encoded, hex- or base64-encoded;
- provider key shapes: ``sk-…`` / ``sk-proj-…`` / ``sk-ant-…`` and Google ``AIza…`` keys;
- credentials by their context: ``Bearer <token>``, ``Authorization: <scheme> <value>``,
  ``api_key=…`` / ``token=…`` / ``password: …`` / ``"secret": "…"`` (also as an env-style
  ``OPENAI_API_KEY=…``), ``?token=…`` / ``&key=…`` in URLs, and ``user:password@`` in URLs.

Anywhere in a line: at its start, inside JSON strings (where a line break before a key is the two
characters ``\\n``), after a colour code, in a URL. A word boundary alone misses those, so a key
shape preceded by a letter or digit is still masked when the key itself looks random (it mixes
upper case, lower case and digits, as real keys do), which ordinary words such as
``task-list-with-many-items`` do not.

It runs on every logged prompt (often 100 KB), so each expression only runs when a plain substring
test says it can match. Deliberately not matched: bare 32-hex strings (md5 sums and ids).
"""

from __future__ import annotations

import base64
import json
import re
import string
from collections.abc import Iterable
from urllib.parse import quote

# Known secrets shorter than this are not replaced: they would mask ordinary words.
MIN_SECRET_LENGTH = 4
# Encoded forms (hex, base64) of a known secret are only looked for when the secret is this long.
MIN_ENCODED_LENGTH = 12

# After a JSON escape (``\n``, ``\t``, ``\r``, ``\uXXXX``) a key starts a new line or field.
_ESCAPE_LEAD = r"(?<=\\[nrtbf])|(?<=\\u[0-9a-fA-F]{4})"
# Provider keys: OpenAI (``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``), Anthropic (``sk-ant-…``), Google.
_KEY_SHAPE = re.compile(r"(?:sk-(?:ant-|proj-)?|AIza)[A-Za-z0-9_\-]{16,}")
# ``Bearer <token>`` (RFC 6750 token characters); the word and the spacing are kept.
_BEARER = re.compile(r"([Bb][Ee][Aa][Rr][Ee][Rr]\s+)[A-Za-z0-9\-._~+/]{16,}=*")
# A credential named by its key, in ``k=v``, ``k: v``, ``"k": "v"`` and ``\"k\": \"v\"`` forms.
_NAMES = (
    r"x-api-key|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token"
    r"|refresh[_-]?token|id[_-]?token|client[_-]?secret|token|secret|password|passwd"
)
_VALUE = r"(?!(?:null|none|true|false)\b)[^\s\"'&,;}\]\\<>]+"
_NAMED = re.compile(
    rf"(?:(?<![A-Za-z0-9_\-])|{_ESCAPE_LEAD})((?i:{_NAMES})\\?[\"']?\s*[:=]\s*\\?[\"']?)({_VALUE})"
)
# Env-style names: OPENAI_API_KEY=…, AWS_SECRET_ACCESS_KEY: …, STARWEAVE_API_KEY=…
_ENV_NAMED = re.compile(
    rf"((?<![A-Za-z0-9_])|{_ESCAPE_LEAD})([A-Z][A-Z0-9_]*_(?:API_?KEY|TOKEN|SECRET|SECRET_ACCESS_KEY|ACCESS_KEY"
    rf"|PASSWORD)\\?[\"']?\s*[:=]\s*\\?[\"']?)({_VALUE})"
)
# ``Authorization: Basic dXNlcjpwYXNz`` (and any scheme); Bearer is _BEARER's.
_AUTHORIZATION = re.compile(
    r"((?i:(?:proxy-)?authorization)\\?[\"']?\s*[:=]\s*\\?[\"']?(?!(?i:bearer)\b)(?:[A-Za-z-]+\s+)?)"
    rf"({_VALUE})"
)
# ``?key=…`` / ``&sig=…`` in a URL query (``token=``, ``api_key=`` and the like are _NAMED's).
_QUERY = re.compile(rf"([?&](?i:key|sig|signature|code|auth)=)({_VALUE})")
# ``scheme://user:password@host``. Anchored on the literal ``://``: a scheme run before it
# (``[A-Za-z][A-Za-z0-9+.-]*://``) would be rescanned from every letter of a long word, which is
# quadratic; _has_scheme checks the scheme instead. Neither the user nor the password may hold ``/``,
# so each ``://`` is scanned at most up to the next one: linear.
_USERINFO = re.compile(r"(?<=[A-Za-z0-9+.\-])(://[^/\s:@\"']+:)([^@\s/\"']+)(@)")
_SCHEME_CHARS = frozenset(string.ascii_letters + string.digits + "+.-")


def _looks_random(body: str) -> bool:
    """A key's body mixes upper case, lower case and digits; words and slugs do not."""
    return (
        any(c.isdigit() for c in body) and any(c.isupper() for c in body) and any(c.islower() for c in body)
    )


def secret_variants(secret: str) -> list[str]:
    """``secret`` and the forms it takes in logs: JSON-escaped, URL-encoded, hex and base64."""
    variants = [secret, json.dumps(secret, ensure_ascii=False)[1:-1], quote(secret, safe="")]
    if len(secret) >= MIN_ENCODED_LENGTH:
        raw = secret.encode()
        variants += [raw.hex(), raw.hex().upper()]
        # Inside a longer encoded text the secret's base64 depends on its offset modulo 3: keep, for
        # each offset, the characters that depend on the secret alone.
        for pad in range(3):
            encoded = base64.b64encode(b"\0" * pad + raw).decode()
            core = encoded[(pad * 4 + 2) // 3 : len(encoded) - 4]
            if len(core) >= MIN_ENCODED_LENGTH:
                variants.append(core)
    return list(dict.fromkeys(v for v in variants if len(v) >= MIN_SECRET_LENGTH))


def _has_scheme(text: str, end: int) -> bool:
    """Whether the scheme characters right before ``end`` (a ``://``) include a letter, so that a
    scheme ``[A-Za-z][A-Za-z0-9+.-]*`` ends there. The walk stops at the previous ``/`` at the
    latest, so all the walks of one text are linear together."""
    index = end - 1
    while index >= 0 and text[index] in _SCHEME_CHARS:
        if text[index].isalpha():
            return True
        index -= 1
    return False


def _mask_userinfo(text: str, mask: str) -> str:
    def replace(match: re.Match[str]) -> str:
        if not _has_scheme(text, match.start()):
            return match.group(0)
        return match.group(1) + mask + match.group(3)

    return _USERINFO.sub(replace, text)


def _mask_key_shape(text: str, mask: str) -> str:
    def replace(match: re.Match[str]) -> str:
        start = match.start()
        before = text[start - 1] if start else ""
        escaped = start >= 2 and text[start - 2] == "\\" and before in "nrtbf"
        if not before.isalnum() or escaped or _looks_random(match.group(0)):
            return mask
        return match.group(0)

    return _KEY_SHAPE.sub(replace, text)


def redact(text: str, secrets: Iterable[str] = (), mask: str = "****") -> str:
    """``text`` with every known secret and every credential-shaped string replaced by ``mask``.

    ``secrets`` are replaced exactly, with their encoded forms (values shorter than four characters
    are ignored; longer values first, so a secret that contains another is masked whole). For the
    shapes and contexts recognised, see the module's docstring; the words around a credential
    (``Bearer``, ``token=``, ``"api_key": "``) stay.
    """
    known = {v for s in secrets if len(s) >= MIN_SECRET_LENGTH for v in secret_variants(s)}
    for secret in sorted(known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, mask)
    # Functions, not template strings, as replacements: a mask may contain backslashes.
    if "sk-" in text or "AIza" in text:
        text = _mask_key_shape(text, mask)
    # The pre-check covers "Bearer", "bearer" and "BEARER", the spellings HTTP libraries print.
    if "earer" in text or "EARER" in text:
        text = _BEARER.sub(lambda m: m.group(1) + mask, text)
    lowered = text.lower()
    if any(word in lowered for word in ("key", "token", "secret", "passw")):
        text = _NAMED.sub(lambda m: m.group(1) + mask, text)
        text = _ENV_NAMED.sub(lambda m: m.group(2) + mask, text)
    if "authorization" in lowered:
        text = _AUTHORIZATION.sub(lambda m: m.group(1) + mask, text)
    if "=" in text and ("?" in text or "&" in text):
        text = _QUERY.sub(lambda m: m.group(1) + mask, text)
    if "://" in text and "@" in text:
        text = _mask_userinfo(text, mask)
    return text
