"""Controls as the AppAgent sees them: normalised records, their text for the prompt, and the checks
of an action against the control list: a speculative action against the live list (spec D §19),
and the name the model gave against the control's real name.

The UICollector answers ``get_app_window_controls_info`` with the reference's field names
(``label``, ``control_text``, ``control_type``, ``control_rect``) or, for the TargetInfo variant,
``id``, ``name``, ``type``, ``rect``; both are read, and ``value`` (the text a control holds, e.g.
a calculator's display) when the collector gives it.

A text-only model sees each control as ``Button "1" (id 22)``: the name first and the id marked as
such, because a small model reading ``[1] Button "Undo"`` took the label 1 for the digit 1. A visual
model keeps ``[22] Button "1"``, which is how the set-of-mark screenshot numbers the controls.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

#: The fields asked of ``get_app_window_controls_info``.
CONTROL_FIELDS = ["label", "control_text", "control_type", "control_rect", "is_enabled", "is_visible"]
#: The extra field asked for when the collector has it (ours does; the reference's may not).
VALUE_FIELD = "value"
#: Controls listed in the prompt at most (the embedded model's window is small).
MAX_PROMPT_CONTROLS = 120
#: Characters of a control's text shown in the prompt.
VALUE_PREVIEW = 120
#: Controls that hold text (their name is often empty: what matters is their text).
TEXT_HOLDERS = frozenset({"Edit", "Document", "ComboBox", "Spinner"})
#: Controls one clicks: their names are labels, not content the window shows.
CLICKABLE = frozenset(
    {
        "Button",
        "SplitButton",
        "MenuItem",
        "Menu",
        "MenuBar",
        "TabItem",
        "CheckBox",
        "RadioButton",
        "Hyperlink",
        "ToggleButton",
        "ScrollBar",
        "TitleBar",
        "ToolBar",
    }
)


@dataclass(frozen=True)
class Control:
    """One control of the selected window, addressed by its label (``id``) within one walk."""

    id: str
    name: str
    control_type: str
    rect: Any = None
    is_enabled: bool = True
    #: The text the control holds ("" when the collector gave none).
    value: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Control:
        """Read either naming of the fields."""
        ident = data.get("id", data.get("label"))
        name = data.get("name", data.get("control_text"))
        kind = data.get("type", data.get("control_type"))
        return cls(
            id=str(ident if ident is not None else ""),
            name=str(name or ""),
            control_type=str(kind or ""),
            rect=data.get("rect", data.get("control_rect")),
            is_enabled=bool(data.get("is_enabled", True)),
            value=str(data.get(VALUE_FIELD) or ""),
            extra={k: v for k, v in data.items() if k not in _KNOWN},
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for logs."""
        return {"id": self.id, "name": self.name, "type": self.control_type, "rect": self.rect}

    def describe(self) -> str:
        """``[3] Button "7"`` (and ``(disabled)`` when it is)."""
        text = f'[{self.id}] {self.control_type} "{self.name}"'
        return text if self.is_enabled else f"{text} (disabled)"

    @property
    def shown_text(self) -> str:
        """The text the control holds when it says more than its name ("" otherwise)."""
        value = " ".join(self.value.split())
        return "" if value == " ".join(self.name.split()) else value

    def describe_for_text(self) -> str:
        """``Button "7" (id 3)``, and for a control holding text ``Edit "" (id 11) text: "12+30"``."""
        text = f'{self.control_type} "{self.name}" (id {self.id})'
        shown = self.shown_text
        if shown or self.control_type in TEXT_HOLDERS:
            text += f' text: "{shown[:VALUE_PREVIEW]}"' + ("..." if len(shown) > VALUE_PREVIEW else "")
        return text if self.is_enabled else f"{text} (disabled)"

    def useful_to_text_model(self) -> bool:
        """Whether a text-only model can tell what the control is (an unnamed icon button it cannot)."""
        return bool(self.name.strip() or self.shown_text or self.control_type in TEXT_HOLDERS)


_KNOWN = {
    "id",
    "label",
    "name",
    "control_text",
    "type",
    "control_type",
    "rect",
    "control_rect",
    "is_enabled",
    VALUE_FIELD,
}


def parse_controls(payload: Any) -> list[Control]:
    """The controls of a tool result (a list of dicts); anything else gives an empty list."""
    if not isinstance(payload, list):
        return []
    return [Control.from_dict(item) for item in payload if isinstance(item, dict)]


def annotation_dict(controls: list[Control]) -> dict[str, Control]:
    """Controls keyed by label (``"1"``, ``"2"``...), as the set-of-mark screenshot numbers them."""
    return {c.id: c for c in controls if c.id}


def controls_prompt(
    controls: list[Control], limit: int = MAX_PROMPT_CONTROLS, text_only: bool = False
) -> str:
    """The control list as text, one per line.

    For a visual model ``[label] Type "name"``, as the set-of-mark screenshot labels them. For a
    text-only model (the list replaces the image) ``Type "name" (id N)`` with the text a control
    holds, leaving out controls it cannot tell apart (unnamed, holding no text).
    """
    if text_only:
        controls = [c for c in controls if c.useful_to_text_model()]
    if not controls:
        return "(no controls were found in the window)"
    describe = Control.describe_for_text if text_only else Control.describe
    lines = [describe(c) for c in controls[:limit]]
    if len(controls) > limit:
        lines.append(f"... and {len(controls) - limit} more controls not shown")
    return "\n".join(lines)


def validation_problem(control_id: str | None, planned: dict[str, Control], live: dict[str, Control]) -> str:
    """Why an action on ``control_id`` must not run now, or ``""`` when it may.

    The control the model saw (``planned``) must still be in the live list under the same label
    with the same name and type; otherwise the UI changed and the label means something else.
    """
    if control_id is None:
        return ""
    seen = planned.get(control_id)
    if seen is None:
        return f"control [{control_id}] is not in the control list of this step"
    now = live.get(control_id)
    if now is None:
        return f'control [{control_id}] {seen.control_type} "{seen.name}" is gone from the window'
    if (now.name, now.control_type) != (seen.name, seen.control_type):
        return (
            f'control [{control_id}] was {seen.control_type} "{seen.name}" and is now '
            f'{now.control_type} "{now.name}": the window changed'
        )
    return ""


#: Typographic forms of ASCII characters that NFKC keeps apart: the minus sign and dashes, the
#: multiplication and division signs, curly quotes. A model writes the ASCII form of what a window
#: shows typographically, and means the same character.
ASCII_FORMS = str.maketrans(
    {"−": "-", "–": "-", "—": "-", "×": "*", "÷": "/", "“": '"', "”": '"', "‘": "'", "’": "'"}
)


def canonical_name(name: str) -> str:
    """A control name for comparison: case, spacing, surrounding quotes and the typographic
    forms of ASCII characters (:data:`ASCII_FORMS`) ignored."""
    text = unicodedata.normalize("NFKC", name).translate(ASCII_FORMS).casefold()
    return " ".join(text.split()).strip("\"'` ")


def _alike(given: str, real: str) -> bool:
    if given == real:
        return True
    short, long_ = sorted((given, real), key=len)
    # "Save" for "Save As..." or "display" for "Display": a paraphrase, not another control.
    return len(short) >= 3 and short in long_


def named(controls: dict[str, Control], name: str) -> list[Control]:
    """The controls whose name is ``name`` (compared as :func:`canonical_name` does)."""
    wanted = canonical_name(name)
    return [c for c in controls.values() if wanted and canonical_name(c.name) == wanted]


def name_problem(control_id: str, given: str, controls: dict[str, Control]) -> str:
    """Why an action on ``control_id`` must not run when the model called that control ``given``, or "".

    A text-only model picks the control by its name and copies the id next to it; when the name it
    gave is not the control's, it took something else (a label, another line) for the id, and the
    click would land on the wrong control. It is refused, naming the control's real name and the id
    of the control that has the given name, if one does. A text-holding control without a name is
    not checked (the model may call a display "display"), unless another control has exactly the
    given name. An empty ``given`` names an unnamed control: a named one is refused, pointing at the
    unnamed text fields (the model reached for the display and took the id of the "=" key).
    """
    control = controls.get(control_id)
    wanted = canonical_name(given)
    if control is None:
        return ""
    if not wanted:
        return _unnamed_problem(control, controls)
    real = canonical_name(control.name)
    if real == wanted or (not real and wanted == canonical_name(control.control_type)):
        return ""  # its name, or (a control without one) its type: "Edit" for the unnamed Edit
    others = [c for c in named(controls, given) if c.id != control_id]
    if not others and (_alike(wanted, real) or _unnamed_holder(control, wanted)):
        return ""
    text = (
        f'id {control_id} is {control.control_type} "{control.name}", not "{given}"'
        ' (an id is the number after "id", not the control\'s text)'
    )
    if others:
        ids = ", ".join(f"{c.id} ({c.control_type})" for c in others[:3])
        return f'{text}; the control named "{given}" has id {ids}'
    return f'{text}; no control is named "{given}"'


def _unnamed_problem(control: Control, controls: dict[str, Control]) -> str:
    if not control.name.strip():
        return ""
    text = f'id {control.id} is {control.control_type} "{control.name}", not a control without a name'
    fields = [c for c in controls.values() if c.control_type in TEXT_HOLDERS and not c.name.strip()]
    if fields:
        return f"{text}; the text field without a name is " + ", ".join(
            f"{c.control_type} (id {c.id})" for c in fields[:3]
        )
    return f"{text}; give the control's name with its id"


def _unnamed_holder(control: Control, wanted: str) -> bool:
    if control.name.strip():
        return False
    return control.control_type in TEXT_HOLDERS or wanted == canonical_name(control.value)
