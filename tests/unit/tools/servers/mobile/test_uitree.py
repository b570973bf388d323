"""The uiautomator XML parser and control filter, and the CONFIRM labels."""

from __future__ import annotations

import pytest

from starweave.tools.mobile import AdbError
from starweave.tools.servers.mobile import action_risk, danger_word, parse_controls
from starweave.tools.servers.mobile.uitree import parse_bounds

DUMP = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.notes"
        content-desc="" checkable="false" clickable="false" long-clickable="false" scrollable="false"
        enabled="true" bounds="[0,0][1080,2340]">
    <node index="0" text="" resource-id="" class="android.view.ViewGroup" package="com.example.notes"
          content-desc="" clickable="false" bounds="[0,63][1080,2340]">
      <node index="0" text="Notes" resource-id="com.example.notes:id/title" class="android.widget.TextView"
            package="com.example.notes" content-desc="" clickable="false" bounds="[42,100][300,180]" />
      <node index="1" text="" resource-id="com.example.notes:id/body" class="android.widget.EditText"
            package="com.example.notes" content-desc="" clickable="false" bounds="[42,200][1038,900]" />
      <node index="2" text="" resource-id="" class="android.widget.ImageButton" package="com.example.notes"
            content-desc="Send note" clickable="true" bounds="[900,2100][1040,2240]" />
      <node index="3" text="" resource-id="" class="androidx.recyclerview.widget.RecyclerView"
            package="com.example.notes" content-desc="" scrollable="true" bounds="[0,950][1080,2000]" />
      <node index="4" text="Hidden" class="android.widget.TextView" package="com.example.notes"
            content-desc="" bounds="[0,0][0,0]" />
      <node index="5" text="Collapsed" class="android.widget.TextView" package="com.example.notes"
            content-desc="" bounds="[500,300][500,400]" />
      <node index="6" text="" class="android.widget.CheckBox" package="com.example.notes" content-desc=""
            checkable="true" enabled="false" bounds="[42,2100][142,2200]" />
      <node index="7" text="" class="android.widget.Button" package="com.example.notes" content-desc=""
            bounds="[200,2100][400,2200]" />
      <node index="8" text="" class="android.view.View" package="com.example.notes" content-desc=""
            long-clickable="true" bounds="[400,2100][500,2200]" />
      <node index="9" text="" class="android.view.View" package="com.example.notes" content-desc=""
            bounds="[500,2100][600,2200]" />
    </node>
  </node>
</hierarchy>"""


def test_filter_keeps_interactive_or_labelled_nodes_and_numbers_them_in_order() -> None:
    controls = parse_controls(DUMP)
    assert [(c.id, c.name, c.type) for c in controls] == [
        ("1", "Notes", "TextView"),
        ("2", "", "EditText"),
        ("3", "Send note", "ImageButton"),
        ("4", "", "RecyclerView"),
        ("5", "", "CheckBox"),
        ("6", "", "Button"),
        ("7", "", "View"),
    ]
    edit = controls[1]
    assert edit.rect == (42, 200, 1038, 900)
    assert edit.center == (540, 550)
    assert edit.resource_id == "com.example.notes:id/body"
    assert controls[4].enabled is False


def test_text_wins_over_content_desc_and_target_info_shape() -> None:
    xml = (
        '<hierarchy><node text="OK" content-desc="Confirm" class="android.widget.Button" '
        'clickable="true" bounds="[1,2][30,40]"/></hierarchy>'
    )
    (control,) = parse_controls(xml)
    assert control.target_info() == {
        "kind": "control",
        "id": "1",
        "name": "OK",
        "type": "Button",
        "rect": [1, 2, 30, 40],
        "source": "uiautomator",
    }


@pytest.mark.parametrize(
    ("bounds", "expected"),
    [
        ("[0,0][1080,2340]", (0, 0, 1080, 2340)),
        ("[-5,10][20,30]", (-5, 10, 20, 30)),
        ("[1,2]", None),
        ("", None),
    ],
)
def test_bounds(bounds: str, expected: tuple[int, int, int, int] | None) -> None:
    assert parse_bounds(bounds) == expected


def test_broken_xml_is_an_adb_error() -> None:
    with pytest.raises(AdbError, match="not valid XML"):
        parse_controls("<hierarchy><node")


def test_danger_words_mark_controls_and_click_actions() -> None:
    controls = [c.target_info() for c in parse_controls(DUMP)]
    assert controls[2]["dangerous"] == "send"
    assert "dangerous" not in controls[0]
    assert danger_word("Uninstall app") == "uninstall"
    assert danger_word("Pay now") == "pay"
    assert danger_word("Display settings") is None  # "pay" inside a word does not count
    assert action_risk("click_control", {"control_id": "3", "control_name": "Send note"}, controls)
    assert action_risk("click_control", {"control_id": "1", "control_name": "Delete all"}, controls)
    assert action_risk("click_control", {"control_id": "1", "control_name": "Notes"}, controls) is None
    assert action_risk("tap", {"x": 950, "y": 2150}, controls)
    # A float or string point is the same tap to the tool, so it is checked the same way.
    assert action_risk("tap", {"x": 950.0, "y": 2150.0}, controls)
    assert action_risk("tap", {"x": "950", "y": "2150"}, controls)
    assert action_risk("tap", {"x": 50, "y": 150}, controls) is None
    assert action_risk("press_key", {"key_code": "KEYCODE_HOME"}, controls) is None
