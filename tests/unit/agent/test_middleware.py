"""EnhancedLoggingMiddleware: log lines and the per-step JSON record."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from starweave.agent import (
    BaseProcessingStrategy,
    Context,
    ContextNames,
    EnhancedLoggingMiddleware,
    ProcessingContext,
    ProcessingPhase,
    ProcessingResult,
    ProcessorTemplate,
)
from starweave.errors import ProcessingException


class Emit(BaseProcessingStrategy):
    def __init__(self, data: dict[str, Any], fail: bool = False) -> None:
        super().__init__(fail_fast=True)
        self.data, self.fail = data, fail

    async def execute(self, agent: Any, context: ProcessingContext) -> ProcessingResult:
        if self.fail:
            return ProcessingResult(success=False, error="nope")
        return ProcessingResult(success=True, data=self.data)


class Agent:
    step = 1


def build(context: Context, fail: bool = False) -> ProcessorTemplate:
    class Proc(ProcessorTemplate):
        def _setup_strategies(self) -> None:
            self.strategies[ProcessingPhase.LLM_INTERACTION] = Emit({"cost": 0.5, "response_text": "hi"})
            self.strategies[ProcessingPhase.ACTION_EXECUTION] = Emit({"results": "done"}, fail=fail)

        def _setup_middleware(self) -> None:
            self.middleware_chain = [EnhancedLoggingMiddleware(name="Test")]

    return Proc(Agent(), context)


async def test_writes_one_json_line_per_step(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ctx = Context()
    ctx.set(ContextNames.REQUEST, "say hi")
    ctx.set(ContextNames.CURRENT_ROUND_ID, 1)
    ctx.current_round_step = 2
    log_file = tmp_path / "response.log"
    with log_file.open("w", encoding="utf-8") as writer:
        ctx.set(ContextNames.LOGGER, writer)
        with caplog.at_level(logging.INFO, logger="EnhancedLoggingMiddleware.Test"):
            await build(ctx).process()
            await build(ctx).process()
    lines = log_file.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    record = json.loads(lines[0])
    assert record["request"] == "say hi" and record["cost"] == 0.5 and record["results"] == "done"
    assert record["round_num"] == 1 and record["round_step"] == 2 and record["agent_step"] == 1
    assert set(record["execution_times"]) == {"LLM_INTERACTION", "ACTION_EXECUTION"}
    assert record["total_time"] > 0
    assert "response_text" not in record  # a field not marked LOGGED
    assert "Starting processing: Round 2, Step 3, Processor: Proc" in caplog.text


async def test_no_logger_means_no_write() -> None:
    proc = build(Context())
    await proc.process()
    assert proc.processing_context.local_context.total_time > 0


async def test_on_error_logs_processing_exception(caplog: pytest.LogCaptureFixture) -> None:
    buffer = io.StringIO()
    ctx = Context()
    ctx.set(ContextNames.LOGGER, buffer)
    with caplog.at_level(logging.INFO), pytest.raises(ProcessingException):
        await build(ctx, fail=True).process()
    assert "ProcessingException in Proc" in caplog.text and "action_execution" in caplog.text
    assert buffer.getvalue() == ""  # failed runs do not reach after_process
