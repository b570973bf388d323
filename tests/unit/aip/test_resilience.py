"""Reconnection delays, heartbeats and timeouts, driven by a fake clock."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from starweave.aip.resilience import (
    HeartbeatManager,
    ReconnectionPolicy,
    ReconnectionStrategy,
    TimeoutManager,
)


class FakeClock:
    """Time that only moves when someone sleeps; every sleep is recorded."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def no_jitter(**kwargs: Any) -> ReconnectionStrategy:
    return ReconnectionStrategy(jitter=0.0, **kwargs)


def test_exponential_backoff_doubles_up_to_the_cap() -> None:
    strategy = no_jitter(initial_backoff=1.0, max_backoff=10.0)
    assert [strategy.delay(n) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert strategy.delay(10_000) == 10.0  # no overflow for absurd attempt numbers


def test_custom_multiplier_and_initial_backoff() -> None:
    strategy = no_jitter(initial_backoff=2.0, backoff_multiplier=3.0, max_backoff=100.0)
    assert [strategy.delay(n) for n in range(1, 5)] == [2.0, 6.0, 18.0, 54.0]


def test_linear_and_immediate_policies() -> None:
    linear = no_jitter(policy=ReconnectionPolicy.LINEAR_BACKOFF, max_backoff=4.0)
    assert [linear.delay(n) for n in range(1, 7)] == [1.0, 2.0, 3.0, 4.0, 4.0, 4.0]
    immediate = ReconnectionStrategy(policy=ReconnectionPolicy.IMMEDIATE)
    assert [immediate.delay(n) for n in range(1, 4)] == [0.0, 0.0, 0.0]


def test_should_retry_counts_attempts_and_none_never_retries() -> None:
    strategy = ReconnectionStrategy(max_retries=3)
    assert [strategy.should_retry(n) for n in range(1, 5)] == [True, True, True, False]
    assert not ReconnectionStrategy(policy=ReconnectionPolicy.NONE).should_retry(1)


@pytest.mark.parametrize("draw", [0.0, 0.25, 0.5, 0.999])
def test_jitter_stays_within_its_fraction(draw: float) -> None:
    strategy = ReconnectionStrategy(initial_backoff=4.0, max_backoff=60.0, jitter=0.1, rand=lambda: draw)
    delay = strategy.delay(2)  # base 8 s
    assert 7.2 <= delay <= 8.8
    assert delay == pytest.approx(8.0 + 8.0 * 0.1 * (2 * draw - 1))


def test_jitter_spreads_delays_but_never_exceeds_the_cap() -> None:
    strategy = ReconnectionStrategy(initial_backoff=1.0, max_backoff=5.0, jitter=0.2)
    capped = [strategy.delay(10) for _ in range(200)]
    assert all(4.0 <= d <= 5.0 for d in capped)
    early = {round(strategy.delay(3), 6) for _ in range(50)}
    assert len(early) > 1  # really random: clients do not reconnect in lock-step


def test_invalid_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        ReconnectionStrategy(jitter=1.5)
    with pytest.raises(ValueError):
        ReconnectionStrategy(max_retries=-1)
    with pytest.raises(ValueError):
        ReconnectionStrategy().delay(0)


async def test_wait_sleeps_the_computed_delay_on_the_injected_clock() -> None:
    clock = FakeClock()
    strategy = ReconnectionStrategy(initial_backoff=1.0, jitter=0.0, sleep=clock.sleep)
    waited = [await strategy.wait(n) for n in (1, 2, 3, 4)]
    assert waited == [1.0, 2.0, 4.0, 8.0] and clock.sleeps == waited and clock.now == 15.0
    immediate = ReconnectionStrategy(policy=ReconnectionPolicy.IMMEDIATE, sleep=clock.sleep)
    assert await immediate.wait(1) == 0.0 and len(clock.sleeps) == 4  # no zero-length sleep


class RecordingSender:
    """A heartbeat protocol stand-in: records sends, can be disconnected or made to fail."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.connected = True
        self.fail_next = 0
        self.sent_at: list[float] = []
        self.attempts = 0

    def is_connected(self) -> bool:
        return self.connected

    async def send_heartbeat(self, client_id: str, metadata: dict[str, Any] | None = None) -> None:
        self.attempts += 1
        if self.fail_next:
            self.fail_next -= 1
            raise ConnectionError("socket hiccup")
        self.sent_at.append(self.clock.now)


async def _until(predicate: Any, limit: int = 1000) -> None:
    for _ in range(limit):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


async def test_heartbeat_sleeps_before_the_first_send() -> None:
    clock = FakeClock()
    sender = RecordingSender(clock)
    manager = HeartbeatManager(sender, default_interval=30.0, sleep=clock.sleep)
    manager.start_heartbeat("dev-1")
    await _until(lambda: len(sender.sent_at) >= 3)
    manager.stop_heartbeat("dev-1")
    assert sender.sent_at[:3] == [30.0, 60.0, 90.0]
    assert not manager.is_running("dev-1") and manager.get_interval("dev-1") is None


async def test_heartbeat_continues_after_send_errors(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    sender = RecordingSender(clock)
    sender.fail_next = 2
    manager = HeartbeatManager(sender, default_interval=5.0, sleep=clock.sleep)
    with caplog.at_level(logging.WARNING, logger="starweave.aip.resilience"):
        manager.start_heartbeat("dev-1", interval=5.0)
        await _until(lambda: len(sender.sent_at) >= 2)
        manager.stop_all()
    assert manager.failures == 2 and sender.sent_at[:2] == [15.0, 20.0]
    assert "socket hiccup" in caplog.text


async def test_heartbeat_skips_while_disconnected(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    sender = RecordingSender(clock)
    sender.connected = False
    manager = HeartbeatManager(sender, default_interval=10.0, sleep=clock.sleep)
    with caplog.at_level(logging.WARNING, logger="starweave.aip.resilience"):
        manager.start_heartbeat("dev-1")
        await _until(lambda: len(clock.sleeps) >= 3)
        assert sender.attempts == 0 and manager.is_running("dev-1")
        sender.connected = True
        await _until(lambda: len(sender.sent_at) >= 1)
        manager.stop_all()
    assert caplog.text.count("Protocol not connected, skipping heartbeat") >= 2
    assert sender.sent_at[0] >= 30.0  # the skipped beats were not sent late in a burst
    assert len(sender.sent_at) == 1 or sender.sent_at[1] - sender.sent_at[0] == 10.0


async def test_heartbeat_per_client_intervals_and_restart() -> None:
    clock = FakeClock()
    manager = HeartbeatManager(RecordingSender(clock), default_interval=30.0, sleep=clock.sleep)
    manager.start_heartbeat("a")
    manager.start_heartbeat("b", interval=7.5)
    assert manager.get_interval("a") == 30.0 and manager.get_interval("b") == 7.5
    manager.start_heartbeat("a", interval=3.0)
    assert manager.get_interval("a") == 3.0 and manager.is_running("a")
    manager.stop_all()
    await asyncio.sleep(0)
    assert not manager.is_running("a") and not manager.is_running("b")
    with pytest.raises(ValueError):
        manager.start_heartbeat("c", interval=0)


async def test_timeout_manager() -> None:
    manager = TimeoutManager(default_timeout=0.05)
    assert await manager.with_timeout(asyncio.sleep(0, result="done")) == "done"
    with pytest.raises(TimeoutError, match=r"registration timed out after 0\.05s"):
        await manager.with_timeout(asyncio.sleep(5), operation_name="registration")
    with pytest.raises(asyncio.TimeoutError):
        await manager.with_timeout(asyncio.sleep(5), timeout=0.01)


def test_max_retries_none_retries_for_ever() -> None:
    strategy = ReconnectionStrategy(max_retries=None, max_backoff=30.0, jitter=0.0)
    assert strategy.should_retry(1) and strategy.should_retry(10**9)
    assert strategy.delay(10**6) == 30.0
    assert not ReconnectionStrategy(max_retries=None, policy=ReconnectionPolicy.NONE).should_retry(1)
