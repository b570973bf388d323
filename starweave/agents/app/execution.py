"""Run a step's actions: each one validated against the live control list, sensitive ones held back.

Speculative multi-action (spec D §19): the model may plan several actions from one look at the
window. Before an action on a control runs, the control list is read again (the first action of a
step uses the list the step just collected) and the control must still be there under the same
label with the same name and type. When it is not, the rest of the sequence is skipped and the
agent falls back to one action per step for a while. A failing action also ends the sequence,
since the later actions depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starweave.agents.app.actions import ActionCommandInfo, ListActionCommandInfo
from starweave.agents.app.controls import (
    CONTROL_FIELDS,
    VALUE_FIELD,
    Control,
    annotation_dict,
    name_problem,
    parse_controls,
)
from starweave.agents.app.controls import validation_problem as check_control
from starweave.agents.app.detection import is_detected, visual_action
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.response import AppAction
from starweave.agents.app.safety import sensitive_reason
from starweave.commands import Result, ResultStatus
from starweave.errors import ToolError

MODEL_ASKED = "the model asked for the user's confirmation"


@dataclass
class ExecutionOutcome:
    """What happened to a step's actions."""

    info: ListActionCommandInfo = field(default_factory=ListActionCommandInfo)
    #: Actions held back for the user's approval (the sensitive one first), and why.
    pending: list[AppAction] = field(default_factory=list)
    pending_reason: str = ""
    #: Why a speculative sequence stopped because the UI changed ("" when it did not).
    fallback: str = ""
    #: True when an action failed or was skipped.
    stopped: bool = False
    #: How many times the control list was read again to validate actions.
    validations: int = 0


async def fetch_controls(dispatcher: Any, with_values: bool = False) -> list[Control]:
    """The selected window's controls, read now; ToolError when the collector fails.

    ``with_values`` also asks for the text each control holds; a collector without that field (the
    reference's refuses unknown fields) is asked again for the reference's fields.
    """
    fields = [*CONTROL_FIELDS, VALUE_FIELD] if with_values else CONTROL_FIELDS
    tool = "get_app_window_controls_info"
    result = await run_one(dispatcher, tool, {"field_list": fields}, "data_collection")
    if not result.ok and with_values:
        result = await run_one(dispatcher, tool, {"field_list": CONTROL_FIELDS}, "data_collection")
    if not result.ok:
        raise ToolError(f"cannot read the window's controls: {result.error or result.result}")
    return parse_controls(result.result)


def _skipped(action: AppAction, why: str, target: Control | None) -> ActionCommandInfo:
    return ActionCommandInfo(
        function=action.function,
        arguments=action.arguments,
        target=target.to_dict() if target else None,
        result=Result(status=ResultStatus.SKIPPED, error=why),
    )


# Controls whose name is their (changing) content: typing or a result changes it, not the window.
_CONTENT_TYPES = frozenset({"Edit", "Text", "Document", "ComboBox", "Spinner", "ProgressBar", "Slider"})


def _shape(control: Control) -> tuple[str, str]:
    return (control.control_type, "" if control.control_type in _CONTENT_TYPES else control.name)


def window_changed(planned: dict[str, Control], live: dict[str, Control]) -> str | None:
    """Why the window no longer looks as the model saw it (controls added, gone or changed), or None.

    The text of content controls (an edit field, a display) may change: that is what actions do.
    """
    gone = sorted(set(planned) - set(live), key=_label_order)
    added = sorted(set(live) - set(planned), key=_label_order)
    changed = sorted(
        (k for k in set(planned) & set(live) if _shape(planned[k]) != _shape(live[k])), key=_label_order
    )
    if not (gone or added or changed):
        return None
    parts = [
        f"{what} {ids[:5]}" for what, ids in (("gone", gone), ("new", added), ("changed", changed)) if ids
    ]
    return "the window changed since the model saw it: " + "; ".join(parts)


def _label_order(label: str) -> tuple[int, str]:
    return (int(label), "") if label.isdigit() else (1 << 30, label)


async def execute_actions(
    dispatcher: Any,
    actions: list[AppAction],
    planned: dict[str, Control],
    *,
    planned_is_live: bool,
    hold_sensitive: bool,
    model_asked_confirmation: bool = False,
    window_rect: dict[str, Any] | None = None,
    approved: int = 0,
    application: str = "",
    check_names: bool = False,
) -> ExecutionOutcome:
    """Run ``actions`` in order against the controls the model saw (``planned``).

    ``planned_is_live`` says the first action may be checked against ``planned`` itself;
    ``hold_sensitive`` keeps sensitive actions (and what follows them) for the user, except the
    first ``approved`` ones (the user already said yes to them). Every action after the first is
    checked against a fresh control list, whether or not it names a control: a coordinate click or
    a key press planned for a window that has changed since is not run either. A click on a
    visually detected control is sent as a coordinate click inside ``window_rect``. With
    ``check_names`` (a text-only model) an action whose ``name`` is not the name of the control its
    ``id`` labels is refused (see :func:`name_problem`) and the rest skipped.
    """
    outcome = ExecutionOutcome()
    live = planned if planned_is_live else None
    for index, action in enumerate(actions):
        control_id = action.control_id
        target = planned.get(control_id) if control_id else None
        wrong = ""
        if check_names and control_id is not None:
            wrong = name_problem(control_id, str(action.arguments.get("name") or ""), planned)
        if wrong:
            outcome.stopped = True
            outcome.info.add_action(_skipped(action, f"Not run: {wrong}", target))
            for rest in actions[index + 1 :]:
                outcome.info.add_action(_skipped(rest, "Not run: an earlier action was not run", None))
            return outcome
        if control_id is not None or index > 0:
            if live is None:
                live = annotation_dict(await fetch_controls(dispatcher))
                outcome.validations += 1
            problem = check_control(control_id, planned, live) if control_id is not None else None
            if problem is None and control_id is None:
                problem = window_changed(planned, live)
            if problem:
                outcome.fallback = problem if index > 0 else ""
                outcome.stopped = True
                why = f"Not run: {problem}"
                outcome.info.add_action(_skipped(action, why, target))
                for rest in actions[index + 1 :]:
                    outcome.info.add_action(_skipped(rest, "Not run: an earlier action was not run", None))
                return outcome
        reason = sensitive_reason(
            action.function, action.arguments, target.name if target else "", application
        )
        if reason is None and model_asked_confirmation and index == 0:
            reason = MODEL_ASKED
        if reason and hold_sensitive and index >= approved:
            outcome.pending = list(actions[index:])
            outcome.pending_reason = reason
            return outcome
        sent = action
        if is_detected(target):
            assert target is not None
            converted = visual_action(action, target, window_rect)
            if isinstance(converted, str):
                outcome.stopped = True
                outcome.info.add_action(_skipped(action, f"Not run: {converted}", target))
                for rest in actions[index + 1 :]:
                    outcome.info.add_action(_skipped(rest, "Not run: an earlier action was not run", None))
                return outcome
            sent = converted
        result = await run_one(dispatcher, sent.function, sent.arguments, "action")
        outcome.info.add_action(
            ActionCommandInfo(
                function=action.function,
                arguments=action.arguments,
                target=target.to_dict() if target else None,
                result=result,
            )
        )
        # The action may have changed the window: the next action is checked against a new list.
        live = None
        if not result.ok:
            outcome.stopped = True
            for rest in actions[index + 1 :]:
                outcome.info.add_action(_skipped(rest, "Not run: an earlier action failed", None))
            return outcome
    return outcome
