"""The MobileAgent's guard table: one test per guard, GUARDS: off, and the phone's reachability read
from a structured device state (never from an error's wording)."""

from __future__ import annotations

from starweave.agent.guards import Decision, GuardState
from starweave.agents.mobile.agent import MobileAgent
from starweave.agents.mobile.guards import MobileStep, mobile_guards
from starweave.agents.mobile.tools import device_state, phone_gone
from starweave.commands import Result, ResultStatus

LAUNCH = "launch_app(package_name='com.example.notes')"


def step(
    function: str = "", call: str = "", status: str = "CONTINUE", done: list[str] | None = None
) -> MobileStep:
    return MobileStep("save a note", status, function, call, done or [])


async def judge_all(steps: list[MobileStep], enabled: bool = True) -> list[Decision]:
    table, state = mobile_guards(enabled), GuardState()
    state.begin("save a note")
    decisions = []
    for each in steps:
        decisions.append((await table.judge(each, state)).decision)
        state.end_step()
    return decisions


def test_every_guard_states_its_principle_in_one_line() -> None:
    lines = mobile_guards().principles()
    assert [line.split(":")[0] for line in lines] == ["act", "repeat"]
    assert all("\n" not in line and len(line) < 120 for line in lines)


async def test_act_refuses_a_step_without_an_action_then_stops_the_second_in_a_row() -> None:
    assert await judge_all([step(), step()]) == [Decision.REFUSE, Decision.STOP]
    # An action in between starts the count afresh; FINISH and FAIL need no action.
    assert await judge_all([step(), step("tap", "tap(x=1, y=1)"), step()]) == [
        Decision.REFUSE,
        Decision.ALLOW,
        Decision.REFUSE,
    ]
    assert await judge_all([step(status="FINISH"), step(status="FAIL")]) == [Decision.ALLOW] * 2


async def test_repeat_refuses_a_launch_or_typing_that_succeeded_then_stops() -> None:
    again = step("launch_app", LAUNCH, done=[LAUNCH])
    assert await judge_all([again, again]) == [Decision.REFUSE, Decision.STOP]
    verdict = await mobile_guards().judge(again, GuardState())
    assert verdict.reason == "repeat" and verdict.note.startswith(
        f"Not run again: {LAUNCH} already succeeded"
    )
    # Taps may be repeated on purpose, and a call that never succeeded is no repeat.
    tap = "tap(x=1, y=1)"
    assert await judge_all([step("tap", tap, done=[tap])] * 3) == [Decision.ALLOW] * 3
    assert await judge_all([step("launch_app", LAUNCH)]) == [Decision.ALLOW]


async def test_guards_off_allow_every_step_and_the_agent_takes_the_setting() -> None:
    steps = [step(), step(), step("launch_app", LAUNCH, done=[LAUNCH])]
    assert await judge_all(steps, enabled=False) == [Decision.ALLOW] * 3
    assert MobileAgent(guards=False).guard_table.enabled is False
    agent = MobileAgent()
    assert agent.guard_table.enabled and not hasattr(agent, "idle_steps") and not hasattr(agent, "repeats")


def test_the_phone_is_gone_only_by_its_structured_state() -> None:
    def state(value: object, ok: bool = True) -> Result:
        status = ResultStatus.SUCCESS if ok else ResultStatus.FAILURE
        return Result(status=status, result=value, error=None if ok else "device 'x' not found")

    assert device_state(state({"success": True, "state": "offline"})) == "offline"
    for gone in ("absent", "offline", "unauthorized", "no_adb"):
        assert phone_gone(gone)
    for usable in ("device", "several", ""):
        assert not phone_gone(usable)
    # A failed or missing state tool is unknown, whatever its error says: not a phone that is gone.
    assert device_state(state(None, ok=False)) == ""
    assert device_state(state({"success": False, "error": "adb: device offline."})) == ""
