"""Keeps credentials out of the server's (and any command's) log.

uvicorn logs every WebSocket handshake with its query string (``"WebSocket /ws?token=KEY"``), so the
key a device authenticates with would land in plain text in the log; a client's connection error
may carry its URL too. A filter masks, in each record's message, its arguments and its traceback,
everything :func:`starweave.redaction.redact` recognises (``token=`` values, ``X-API-Key`` and
``Authorization`` headers, provider key shapes) and the configured keys themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from starweave.redaction import redact

MASK = "***"
UVICORN_LOGGERS = ("uvicorn.error", "uvicorn.access")
# A logged text (message, argument or traceback) longer than this is cut before it is masked: the
# filter runs on the thread that logs, often the event loop, and a request of megabytes (a device's
# error text, a chat message) would hold it while every pattern scans the whole text.
MAX_LOGGED_CHARS = 32_768
# A cut falls back to a blank within this many characters, so no credential is logged in part.
_CUT_MARGIN = 512


def mask_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with credentials (and the literal ``secrets``, whatever their length) replaced by ``***``."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return redact(text, secrets, MASK)


def cut_long_text(text: str, limit: int = MAX_LOGGED_CHARS) -> str:
    """``text``, or its first ``limit`` characters or so followed by how many were cut.

    The cut falls on a blank when there is one near the limit; else the last ``_CUT_MARGIN``
    characters of the kept part go too, so a credential the cut splits is not logged in part."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    blank = max(head.rfind(" ", limit - _CUT_MARGIN), head.rfind("\n", limit - _CUT_MARGIN))
    head = head[:blank] if blank >= 0 else head[: limit - _CUT_MARGIN]
    return f"{head} [... {len(text) - len(head)} characters cut]"


class SecretMaskingFilter(logging.Filter):
    """Rewrites a record's message, string arguments and traceback so no credential is printed.

    Arguments are masked one by one (not merged into the message) because uvicorn's access
    formatter unpacks ``record.args`` itself.
    """

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.secrets = secrets

    def _mask(self, value: Any) -> Any:
        return mask_secrets(cut_long_text(value), self.secrets) if isinstance(value, str) else value

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask in place; never drops a record."""
        record.msg = self._mask(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(self._mask(arg) for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: self._mask(value) for key, value in record.args.items()}
        if record.exc_info and not record.exc_text:
            # Formatters reuse exc_text: an exception's message may hold a URL with its token.
            record.exc_text = self._mask(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = self._mask(record.exc_text)
        return True


def install_secret_filter(api_key: str | None, logger_names: tuple[str, ...] = UVICORN_LOGGERS) -> None:
    """Put one SecretMaskingFilter on each of ``logger_names`` (updating the key if already there)."""
    secrets = (api_key,) if api_key else ()
    for name in logger_names:
        _install(logging.getLogger(name), secrets)


def install_handler_filter(secrets: Iterable[str] = (), logger: logging.Logger | None = None) -> None:
    """Put a SecretMaskingFilter on every handler of ``logger`` (default: the root logger).

    A filter on a handler sees the records of every logger that propagates to it, which a filter on
    one logger does not; adding secrets later (the server's key once known) updates it.
    """
    target = logger or logging.getLogger()
    for handler in target.handlers:
        _install(handler, tuple(s for s in secrets if s))


def _install(owner: logging.Logger | logging.Handler, secrets: tuple[str, ...]) -> None:
    existing = [f for f in owner.filters if isinstance(f, SecretMaskingFilter)]
    if existing:
        existing[0].secrets = tuple(dict.fromkeys((*existing[0].secrets, *secrets)))
    else:
        owner.addFilter(SecretMaskingFilter(secrets))
