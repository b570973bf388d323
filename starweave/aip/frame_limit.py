"""The AIP frame limit: its one default, the size of a message on the wire, and fitting results under it.

The agent server refuses a frame over its limit (:data:`DEFAULT_MAX_FRAME_BYTES` unless configured),
so both client sides check their TASK messages against it before sending; and a device replaces the
largest of its COMMAND_RESULTS by FAILURE results that say why, until the frame fits (otherwise the
server's session would wait forever for the answer).
"""

from __future__ import annotations

import logging

from pydantic import BaseModel

from starweave.aip.messages import ClientMessage, Result, ResultStatus

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "fit_results", "frame_size", "over_limit"]

log = logging.getLogger("starweave.client")

# The agent server's default frame limit (ServerSettings.max_message_bytes), and what clients assume.
# 1 MiB: AIP frames are JSON commands and their (text) results; a shell output or a UI tree fits
# easily. The bound keeps one peer from making the server buffer and parse huge JSON documents
# (upstream allowed 100 MB). Raise it if devices send screenshots inline.
DEFAULT_MAX_FRAME_BYTES = 1024 * 1024


def frame_size(message: ClientMessage) -> int:
    """Bytes of ``message`` on the wire."""
    return _wire_size(message)


def over_limit(message: ClientMessage, max_frame_bytes: int) -> str | None:
    """Why ``message`` cannot be sent ("a N-byte message, over the server's frame limit of M bytes").

    None when it fits.
    """
    size = frame_size(message)
    if size <= max_frame_bytes:
        return None
    return f"a {size}-byte message, over the server's frame limit of {max_frame_bytes} bytes"


def _wire_size(model: BaseModel) -> int:
    return len(model.model_dump_json(exclude_none=True).encode("utf-8"))


def _too_large(result: Result, size: int, max_frame_bytes: int) -> Result:
    return Result(
        status=ResultStatus.FAILURE,
        error=(
            f"the output of this command was too large to send ({size} bytes; the server accepts "
            f"frames up to {max_frame_bytes} bytes); narrow the command so it returns less output"
        ),
        namespace=result.namespace,
        call_id=result.call_id,
    )


def fit_results(envelope: ClientMessage, results: list[Result], max_frame_bytes: int) -> list[Result]:
    """``results``, with the largest replaced by FAILURE results until ``envelope`` carrying them fits.

    ``envelope`` is the COMMAND_RESULTS message to send (its ``action_results`` are ignored).
    Call ids and order are kept.
    """
    fitted = list(results)
    if _fits(envelope, fitted, max_frame_bytes):
        return fitted
    sizes = [_size(r) for r in fitted]
    # The list's JSON is its items joined by commas, so the frame size can be tracked by arithmetic;
    # one exact check at the end guards the estimate.
    total = frame_size(envelope.model_copy(update={"action_results": []})) + sum(sizes) + len(sizes)
    for index in sorted(range(len(fitted)), key=lambda i: sizes[i], reverse=True):
        if total <= max_frame_bytes and _fits(envelope, fitted, max_frame_bytes):
            break
        replacement = _too_large(fitted[index], sizes[index], max_frame_bytes)
        log.warning(
            "[WS] The result of %s is too large to send (%d bytes); sending a failure instead",
            fitted[index].call_id,
            sizes[index],
        )
        fitted[index] = replacement
        total += _size(replacement) - sizes[index]
    return fitted


def _size(result: Result) -> int:
    return _wire_size(result)


def _fits(envelope: ClientMessage, results: list[Result], max_frame_bytes: int) -> bool:
    return frame_size(envelope.model_copy(update={"action_results": results})) <= max_frame_bytes
