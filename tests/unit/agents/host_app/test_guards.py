"""The pure guards of the desktop agents: control names against ids, FINISH results against the
window, the text-only control list and answer schema, and the HostAgent's repeat verdicts."""

from __future__ import annotations

from decimal import Decimal

from starweave.agents.app.agent import SubtaskOutcome
from starweave.agents.app.controls import Control, annotation_dict, controls_prompt, name_problem
from starweave.agents.app.response import response_json_schema
from starweave.agents.app.verify import (
    Evidence,
    acted,
    action_texts,
    claim_of,
    contradiction,
    file_evidence,
    missing_texts,
    unsaved_files,
    window_texts,
)
from starweave.agents.host.repeats import repeat_verdict, same_subtask, unbacked_finish

# The first controls of gnome-calculator as its walk lists them.
CALCULATOR = [
    Control("1", "Undo", "Button"),
    Control("2", "Undo", "Text"),
    Control("3", "", "Button"),
    Control("11", "", "Edit", value=""),
    Control("12", "", "Text"),
    Control("22", "1", "Button"),
    Control("23", "2", "Button"),
    Control("28", "−", "Button"),
    Control("29", "+", "Button"),
]
CONTROLS = annotation_dict(CALCULATOR)


def test_text_only_list_puts_the_name_first_marks_the_id_and_shows_what_a_control_holds() -> None:
    shown = controls_prompt([*CALCULATOR[:3], Control("11", "", "Edit", value="12+30")], text_only=True)
    assert shown.splitlines() == [
        'Button "Undo" (id 1)',
        'Text "Undo" (id 2)',
        'Edit "" (id 11) text: "12+30"',
    ]
    # The unnamed button (id 3) is left out: a model that does not see it cannot tell what it is.
    assert "id 3)" not in shown
    # A visual model keeps the set-of-mark labels.
    assert controls_prompt(CALCULATOR[:1]) == '[1] Button "Undo"'


def test_a_label_taken_for_the_digit_is_refused_naming_the_real_control_and_the_right_id() -> None:
    problem = name_problem("1", "1", CONTROLS)
    assert 'id 1 is Button "Undo", not "1"' in problem
    assert 'the control named "1" has id 22 (Button)' in problem


def test_no_name_for_a_named_control_is_refused_pointing_at_the_unnamed_text_field() -> None:
    # The model meant the display (name "") and took the id of the "=" key.
    problem = name_problem("29", "", CONTROLS)
    assert (
        problem
        == 'id 29 is Button "+", not a control without a name; the text field without a name is Edit (id 11)'
    )


def test_a_name_no_control_has_is_refused_too() -> None:
    problem = name_problem("12", "12", CONTROLS)
    assert 'id 12 is Text "", not "12"' in problem and 'no control is named "12"' in problem


def test_matching_and_paraphrased_names_pass() -> None:
    assert name_problem("22", "1", CONTROLS) == ""
    assert name_problem("28", "-", CONTROLS) == ""  # the model's minus for the window's −
    assert name_problem("1", " undo ", CONTROLS) == ""
    assert name_problem("11", "display", CONTROLS) == ""  # an unnamed text field may be described
    assert name_problem("11", "", CONTROLS) == ""  # no name: the unnamed display
    saving = annotation_dict([Control("5", "Save As…", "MenuItem")])
    assert name_problem("5", "Save As", saving) == ""
    # An unnamed control called by its type, even where a menu shares that word.
    editor = annotation_dict([Control("2", "Edit", "MenuItem"), Control("8", "", "Edit")])
    assert name_problem("8", "Edit", editor) == ""
    assert 'id 2 is MenuItem "Edit", not "Document"' in name_problem("2", "Document", editor)


def test_claims_are_the_numbers_the_subtask_does_not_give_or_all_of_them_and_quoted_text() -> None:
    assert claim_of("12 + 30 = 42", "Compute 12 + 30").numbers == (Decimal(42),)
    assert claim_of("30 - 12 = 18", "subtract 12 from 30").numbers == (Decimal(18),)
    # Every number given by the subtask: the result still claims them (the display shows 7).
    assert claim_of("7", "type 7").numbers == (Decimal(7),)
    assert claim_of("12 + 30 = 42").numbers == (Decimal(12), Decimal(30), Decimal(42))
    assert claim_of("The result is 1,234.5").numbers == (Decimal("1234.5"),)
    assert claim_of("wrote 'hello desktop' to notes1.txt").texts == ("hello desktop",)
    assert claim_of("wrote 'hello desktop' to notes1.txt").numbers == ()
    assert not claim_of("Done.")


def test_a_result_the_window_does_not_show_is_a_contradiction() -> None:
    window = Evidence(window_texts([*CALCULATOR, Control("40", "", "Edit", value="0")]), [])
    assert contradiction("12 + 30 = 42", window, "Compute 12 + 30") == "42"
    # Button names are no evidence: the "2" key does not show that the result is 2.
    assert contradiction("1 + 1 = 2", window, "add 1 and 1") == "2"
    shown = Evidence(window_texts([Control("11", "", "Edit", value="42")], "Calculator"), [])
    assert contradiction("12 + 30 = 42", shown, "Compute 12 + 30") == ""
    # Without the subtask, its operands are claims too, and the window does not show them.
    assert contradiction("12 + 30 = 42", shown) == "12, 30"
    assert contradiction("3.14", Evidence(["3.14159"], [])) == ""  # a rounding of what is shown
    assert contradiction("Done.", window) == ""


def test_the_subtasks_actions_are_evidence_but_echoes_and_failures_are_not() -> None:
    actions = [
        {
            "function": "write_document",
            "arguments": {"path": "a.txt", "content": "hello desktop"},
            "result": {"status": "success", "result": {"success": True, "characters": 13}},
        },
        {
            "function": "summary",
            "arguments": {"text": "it says 42"},
            "result": {"status": "success", "result": "it says 42"},
        },
        {
            "function": "save_file",
            "arguments": {"path": "b.txt"},
            "result": {"status": "success", "result": {"success": False, "error": "b.txt is not open"}},
        },
    ]
    evidence = Evidence([], action_texts(actions))
    assert contradiction("saved 'hello desktop'", evidence) == ""
    assert contradiction("it says 42", evidence) == "42"
    assert acted(actions) and not acted(actions[1:2])


def test_text_only_schema_asks_the_name_before_the_id_and_only_listed_ids() -> None:
    tools = [
        {
            "name": "click_input",
            "input_schema": {"properties": {"id": {"type": "string"}, "name": {"type": "string"}}},
        },
        {"name": "summary", "input_schema": {"properties": {"text": {"type": "string"}}}},
    ]
    schema = response_json_schema(tools, False, text_only=True, control_ids=["1", "22"])
    arguments = schema["properties"]["action"]["properties"]["arguments"]["properties"]
    assert list(arguments)[:2] == ["name", "id"]
    assert arguments["id"]["enum"] == ["1", "22"]
    assert "" in schema["properties"]["action"]["properties"]["function"]["enum"]
    forced = response_json_schema(tools, False, text_only=True, control_ids=["1"], require_action=True)
    assert forced["properties"]["action"]["properties"]["function"]["enum"] == ["click_input", "summary"]
    listed = response_json_schema(tools, True, require_action=True)
    assert listed["properties"]["action"]["minItems"] == 1
    # A visual model's schema is unchanged: the id first, any string.
    visual = response_json_schema(tools, False)["properties"]["action"]["properties"]["arguments"]
    assert list(visual["properties"])[:2] == ["id", "name"] and "enum" not in visual["properties"]["id"]


def outcome(status: str, result: str = "", acted: bool = False, verified: bool = False) -> SubtaskOutcome:
    return SubtaskOutcome("Compute 12 + 30 with the calculator.", status, result, acted, verified)


def test_same_subtask_tolerates_small_rewordings_only() -> None:
    assert same_subtask("Compute 12 + 30 with the calculator.", "compute 12 + 30 with the calculator")
    assert not same_subtask("Compute 12 + 30 with the calculator.", "Compute 12 + 31 with the calculator.")
    assert not same_subtask("Write the result in mousepad", "Compute 12 + 30 with the calculator.")


def test_a_subtask_done_before_is_refused_once_then_ends_the_round_with_its_result() -> None:
    subtask = "compute 12 + 30 with the calculator"
    done = [outcome("FINISH", "42", verified=True)]
    warning = repeat_verdict(done, subtask, "gnome-calculator")
    assert warning is not None and warning.status == "CONTINUE"
    assert warning.result.startswith(
        f"Not assigned: the subtask {subtask!r} is done already on gnome-calculator"
    )
    verdict = repeat_verdict(done, subtask, "gnome-calculator", warned=True)
    assert verdict is not None and verdict.status == "FINISH" and verdict.result.startswith("42 (")
    assert repeat_verdict([outcome("FINISH", "42", acted=True)], "Write 42 in mousepad", "x") is None


def test_a_subtask_that_finished_without_effect_ends_the_round_as_fail_when_repeated() -> None:
    subtask = "Compute 12 + 30 with the calculator"
    warning = repeat_verdict([outcome("FINISH", "done")], subtask, "calc")
    assert warning is not None and warning.status == "CONTINUE"
    verdict = repeat_verdict([outcome("FINISH", "done")], subtask, "calc", warned=True)
    assert verdict is not None and verdict.status == "FAIL"
    assert "without any action taking effect" in verdict.result and "'done'" in verdict.result


def test_a_failed_subtask_gets_one_more_try() -> None:
    subtask = "Compute 12 + 30 with the calculator."
    assert repeat_verdict([outcome("FAIL", "no display")], subtask, "calc") is None
    verdict = repeat_verdict([outcome("FAIL", "a"), outcome("FAIL", "no display")], subtask, "calc")
    assert verdict is not None and verdict.status == "FAIL" and "failed 2 times" in verdict.result
    assert verdict.result.endswith("no display")


def test_a_finish_needs_a_finished_subtask_a_host_action_or_an_answer() -> None:
    assert unbacked_finish([], [], 0)
    assert unbacked_finish(
        [{"status": "FAIL"}], [{"function": "select_application_window", "result": {"status": "success"}}], 0
    )
    assert not unbacked_finish([{"status": "FINISH"}], [], 0)
    assert not unbacked_finish([], [{"function": "close_application", "result": {"status": "success"}}], 0)
    assert not unbacked_finish([], [], 1)


def test_a_text_the_subtask_quotes_must_be_somewhere_and_no_document_unsaved() -> None:
    typed = [
        {
            "function": "set_edit_text",
            "arguments": {"name": "", "id": "8", "text": "Hello Desktop"},
            "result": {"status": "success", "result": "Replaced the text"},
        },
    ]
    evidence = Evidence([], action_texts(typed, every_argument=True))
    assert missing_texts("Write 'hello desktop' and save it", evidence) == ""
    assert missing_texts("Write 'good bye' and save it", evidence) == '"good bye"'
    assert missing_texts("Compute 12 + 30", evidence) == ""
    # A file the subtask names must have been written, saved to or shown (a window title).
    assert missing_texts("Write 'Hello Desktop' to hello.txt", evidence) == "hello.txt"
    assert missing_texts("Save it as hello.txt, e.g. now", Evidence(["hello.txt - Mousepad"], [])) == ""
    # A button the subtask names counts when it was clicked or is in the window.
    clicked = [
        {"function": "click_input", "arguments": {"name": "OK", "id": "3"}, "result": {"status": "success"}}
    ]
    assert missing_texts("Click 'OK'", Evidence([], action_texts(clicked, every_argument=True))) == ""
    listing = {
        "success": True,
        "files": [
            {"path": "/ws/a.txt", "modified": True, "saved": False},
            {"path": "/ws/b.txt", "modified": False, "saved": True},
            {"path": "/ws/c.txt", "modified": False, "saved": False},  # new, never saved
        ],
    }
    assert unsaved_files(listing) == ["/ws/a.txt", "/ws/c.txt"]
    assert unsaved_files({"success": False, "error": "x"}) == []


def test_a_file_name_typed_into_a_document_is_no_saved_file() -> None:
    typed = [
        {
            "function": "set_edit_text",
            "arguments": {"name": "", "id": "8", "text": "list.txt apples"},
            "result": {
                "status": "success",
                "result": "Replaced the text of Edit '' (id 8): 'list.txt apples'.",
            },
        },
    ]
    subtask = "Save a file named list.txt containing the word apples"
    everything = Evidence([], action_texts(typed, every_argument=True))
    assert missing_texts(subtask, everything, file_evidence("*Untitled 1 - Mousepad", typed)) == "list.txt"
    written = [
        {
            "function": "write_document",
            "arguments": {"path": "list.txt", "content": "apples", "save": True},
            "result": {
                "status": "success",
                "result": {"success": True, "path": "/ws/list.txt", "saved": True},
            },
        },
    ]
    assert missing_texts(subtask, everything, file_evidence("", written)) == ""
    assert missing_texts(subtask, everything, file_evidence("list.txt - Mousepad", typed)) == ""


def test_typographic_forms_of_ascii_characters_name_the_same_control() -> None:
    from starweave.agents.app.controls import canonical_name

    assert canonical_name("“A − B × C ÷ D”") == "a - b * c / d"
    assert canonical_name("it’s — done") == "it's - done"
    assert canonical_name("Ｆｕｌｌ　ｗｉｄｔｈ") == "full width"  # NFKC's own folding
