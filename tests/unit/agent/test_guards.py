"""The guard contract: the first verdict that is not allow decides, a refusal is once, stop is final."""

from __future__ import annotations

from dataclasses import dataclass

from starweave.agent.guards import ALLOW, Decision, GuardState, GuardTable, Verdict, finish, refuse, stop


@dataclass
class Fixed:
    """A guard that always gives the same verdict, and counts how often it was asked."""

    name: str
    verdict: Verdict
    principle: str = "a test rule"
    asked: int = 0

    async def check(self, step: str, state: GuardState) -> Verdict:
        self.asked += 1
        return self.verdict


async def test_the_first_verdict_that_is_not_allow_decides_and_names_its_guard() -> None:
    later = Fixed("later", refuse("no"))
    table = GuardTable([Fixed("fine", ALLOW), Fixed("first", refuse("not yet")), later])
    verdict = await table.judge("step", GuardState())
    assert (verdict.decision, verdict.note, verdict.reason) == (Decision.REFUSE, "not yet", "first")
    assert later.asked == 0
    assert table.principles() == ["fine: a test rule", "first: a test rule", "later: a test rule"]


async def test_a_refusal_never_follows_a_refusal_and_a_request_has_few() -> None:
    table = GuardTable([Fixed("nag", refuse("again"))], max_refusals=2)
    state = GuardState()
    state.begin("r")
    decisions = []
    for _ in range(5):
        decisions.append((await table.judge("step", state)).decision)
        state.end_step()
    # refused, the model insists, refused, insists, and then the cap of two is spent
    assert decisions == [Decision.REFUSE, Decision.ALLOW, Decision.REFUSE, Decision.ALLOW, Decision.ALLOW]
    assert state.begin("another request") and state.refusals == 0 and not state.refused_last
    assert (await table.judge("step", state)).decision is Decision.REFUSE


async def test_stop_is_final_and_guards_off_allows_everything() -> None:
    state = GuardState()
    table = GuardTable([Fixed("loop", stop("Stopped."))])
    state.refused_last = True
    assert (await table.judge("step", state)).decision is Decision.STOP  # insisting does not lift it
    off = GuardTable([Fixed("loop", stop("Stopped.")), Fixed("nag", refuse("x"))], enabled=False)
    assert (await off.judge("step", GuardState())) == ALLOW


async def test_finish_is_final_too_and_keeps_its_note_as_the_result() -> None:
    state = GuardState()
    state.refused_last = True
    table = GuardTable([Fixed("done", finish("42 (done already)")), Fixed("nag", refuse("x"))])
    verdict = await table.judge("step", state)
    assert (verdict.decision, verdict.note, verdict.reason) == (Decision.FINISH, "42 (done already)", "done")
    assert not verdict.allowed and state.refusals == 0


def test_the_state_counts_per_request() -> None:
    state = GuardState()
    state.begin("a")
    assert state.bump("k") == 1 and state.bump("k") == 2
    assert not state.begin("a") and state.counts["k"] == 2  # the same request keeps its counts
    state.facts["x"] = 1
    assert state.begin("b") and state.counts["k"] == 0 and state.facts == {}
