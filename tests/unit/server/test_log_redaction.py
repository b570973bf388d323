"""The API key never reaches the server log (uvicorn logs the /ws query string)."""

from __future__ import annotations

import logging

import httpx
from unit.server.server_kit import peer, running_server

from starweave.server.log_redaction import SecretMaskingFilter, mask_secrets

KEY = "k3y-Secret-123"


def test_mask_secrets_masks_tokens_headers_and_the_key() -> None:
    assert (
        mask_secrets('"WebSocket /ws?token=abc&x=1" [accepted]') == '"WebSocket /ws?token=***&x=1" [accepted]'
    )
    assert mask_secrets("headers: {'x-api-key': 'abc'}") == "headers: {'x-api-key': '***'}"
    assert mask_secrets("X-API-Key: abc") == "X-API-Key: ***"
    assert mask_secrets("plain KEY here", ("KEY",)) == "plain *** here"


def test_filter_masks_args_and_keeps_their_shape() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, "", 0, "%s %s %d", ("a", "/ws?token=zz", 200), None
    )
    assert SecretMaskingFilter().filter(record)
    assert record.args == ("a", "/ws?token=***", 200)


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def test_server_log_has_no_api_key() -> None:
    capture = Capture()
    loggers = [logging.getLogger(name) for name in ("uvicorn.error", "uvicorn.access")]
    async with running_server(api_key=KEY, log_level="info") as server:
        # Attached after start-up: uvicorn's logging config replaces these loggers' handlers.
        for logger in loggers:
            logger.addHandler(capture)
        try:
            async with peer(server, "dev1", token=KEY):
                pass
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
                response = await http.get(f"/api/health?token={KEY}", headers={"X-API-Key": KEY})
                assert response.status_code == 200
        finally:
            for logger in loggers:
                logger.removeHandler(capture)
    text = "\n".join(capture.lines)
    assert "/ws?token=***" in text  # the handshake was logged, masked
    assert "/api/health?token=***" in text
    assert KEY not in text


def test_handler_filter_masks_every_logger_and_tracebacks() -> None:
    import io

    from starweave.server.log_redaction import install_handler_filter

    stream = io.StringIO()
    logger = logging.getLogger("starweave.test.redaction")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    logger.propagate = False
    install_handler_filter([KEY], logger=logger)
    try:
        logger.warning("connect to ws://h/ws?token=%s failed", KEY)
        logger.warning("sk-ant-api03-Qw12Er34Ty56Ui78Op90 at line start")
        try:
            raise RuntimeError(f"refused: {KEY}")
        except RuntimeError:
            logger.exception("client error")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert KEY not in text and "Qw12Er34" not in text
    assert "refused: ***" in text and "Traceback" in text
