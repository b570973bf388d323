"""Waiting for the UI to settle, on a fake clock."""

from __future__ import annotations

from starweave.tools.desktop.model import SettlePolicy
from starweave.tools.desktop.settle import fingerprint, poll_until, wait_until_settled


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_waits_for_change_then_quiet() -> None:
    clock = Clock()
    frames = {0.0: b"a", 0.25: b"b", 0.3: b"c"}  # the screen changes at 0.25 s and 0.3 s

    def observe() -> bytes:
        return frames[max(t for t in frames if t <= clock.now + 1e-9)]

    policy = SettlePolicy(poll=0.05, quiet=0.15, first_change=0.6, max_wait=3)
    assert wait_until_settled(observe, policy, fingerprint(b"a"), clock=clock, sleep=clock.sleep)
    assert 0.45 <= clock.now <= 0.55


def test_gives_up_without_change() -> None:
    clock = Clock()
    policy = SettlePolicy(poll=0.05, first_change=0.6, max_wait=3)
    assert not wait_until_settled(lambda: b"a", policy, fingerprint(b"a"), clock=clock, sleep=clock.sleep)
    assert 0.6 <= clock.now < 0.7


def test_max_wait_bounds_a_screen_that_never_stops_changing() -> None:
    clock = Clock()
    policy = SettlePolicy(poll=0.05, quiet=0.15, max_wait=1.0)
    assert wait_until_settled(lambda: str(clock.now).encode(), policy, "x", clock=clock, sleep=clock.sleep)
    assert 1.0 <= clock.now < 1.1


def test_poll_until() -> None:
    clock = Clock()
    assert poll_until(lambda: clock.now >= 0.3 and "ok", 1.0, 0.1, clock=clock, sleep=clock.sleep) == "ok"
    assert poll_until(lambda: None, 0.5, 0.1, clock=clock, sleep=clock.sleep) is None
