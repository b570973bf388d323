"""Keeps the API key out of the server log.

uvicorn logs every WebSocket handshake with its query string (``"WebSocket /ws?token=KEY"``), so the
key a device authenticates with would land in plain text in the log. A filter on uvicorn's loggers
masks ``token=`` values, ``X-API-Key`` header values and the configured key itself.
"""

from __future__ import annotations

import logging
import re
from typing import Any

MASK = "***"
UVICORN_LOGGERS = ("uvicorn.error", "uvicorn.access")
_PATTERNS = (
    re.compile(r"(?i)(\btoken=)[^&\s\"']+"),
    re.compile(r"(?i)(\bx-api-key[\"']?\s*[:=,]\s*[\"']?)[^\s\"',;}]+"),
)


def mask_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with token/API-key values (and any literal ``secrets``) replaced by ``***``."""
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MASK, text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


class SecretMaskingFilter(logging.Filter):
    """Rewrites a record's message and string arguments so no credential is printed.

    Arguments are masked one by one (not merged into the message) because uvicorn's access
    formatter unpacks ``record.args`` itself.
    """

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.secrets = secrets

    def _mask(self, value: Any) -> Any:
        return mask_secrets(value, self.secrets) if isinstance(value, str) else value

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask in place; never drops a record."""
        record.msg = self._mask(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(self._mask(arg) for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: self._mask(value) for key, value in record.args.items()}
        return True


def install_secret_filter(api_key: str | None, logger_names: tuple[str, ...] = UVICORN_LOGGERS) -> None:
    """Put one SecretMaskingFilter on each of ``logger_names`` (updating the key if already there)."""
    secrets = (api_key,) if api_key else ()
    for name in logger_names:
        logger = logging.getLogger(name)
        existing = [f for f in logger.filters if isinstance(f, SecretMaskingFilter)]
        if existing:
            existing[0].secrets = secrets
        else:
            logger.addFilter(SecretMaskingFilter(secrets))
