from __future__ import annotations

from typing import TYPE_CHECKING

from starweave.galaxy.constellation import DependencyType, TaskStar, TaskStarLine
from starweave.galaxy.observers import calculate_constellation_changes, format_change_summary

if TYPE_CHECKING:
    from conftest import Synth


def test_created_when_there_is_no_old_constellation(synth: type[Synth]) -> None:
    changes = calculate_constellation_changes(None, synth.diamond())
    assert changes["modification_type"] == "constellation_created"
    assert changes["added_tasks"] == ["t1", "t2", "t3", "t4"]
    assert sorted(changes["added_dependencies"]) == ["t1->t2", "t1->t3", "t2->t4", "t3->t4"]


def test_identical_constellations_are_only_updated(synth: type[Synth]) -> None:
    changes = calculate_constellation_changes(synth.diamond(), synth.diamond())
    assert changes["modification_type"] == "constellation_updated"
    assert not any(changes[k] for k in changes if k != "modification_type")  # type: ignore[literal-required]


def test_added_task_and_edge(synth: type[Synth]) -> None:
    old, new = synth.diamond(), synth.diamond()
    new.add_task(TaskStar(task_id="t5", name="report"))
    new.add_dependency(TaskStarLine("t4", "t5"))
    changes = calculate_constellation_changes(old, new)
    assert changes["modification_type"] == "tasks_added"
    assert changes["added_tasks"] == ["t5"]
    assert changes["added_dependencies"] == ["t4->t5"]


def test_added_and_removed_tasks(synth: type[Synth]) -> None:
    old, new = synth.diamond(), synth.diamond()
    new.remove_task("t4")
    new.add_task(TaskStar(task_id="t9"))
    changes = calculate_constellation_changes(old, new)
    assert changes["modification_type"] == "tasks_added_and_removed"
    assert changes["removed_tasks"] == ["t4"]
    assert sorted(changes["removed_dependencies"]) == ["t2->t4", "t3->t4"]


def test_removed_dependency_only(synth: type[Synth]) -> None:
    old, new = synth.diamond(), synth.diamond()
    new.remove_dependency("t3_t4")
    assert calculate_constellation_changes(old, new)["modification_type"] == "dependencies_removed"


def test_dependency_property_change_is_detected(synth: type[Synth]) -> None:
    # The reference's detector never reported this (it read attributes that do not exist).
    old, new = synth.diamond(), synth.diamond()
    new.update_dependency("t2_t4", dependency_type=DependencyType.SUCCESS_ONLY)
    changes = calculate_constellation_changes(old, new)
    assert changes["modified_dependencies"] == ["t2->t4"]
    assert changes["modification_type"] == "dependency_properties_updated"
    other = synth.diamond()
    other.update_dependency("t3_t4", condition_description="only if the file exists")
    assert calculate_constellation_changes(old, other)["modified_dependencies"] == ["t3->t4"]


def test_task_property_change_and_status_change(synth: type[Synth]) -> None:
    old, new = synth.diamond(), synth.diamond()
    new.update_task("t4", description="use the results of t2 and t3", tips=["be brief"])
    changes = calculate_constellation_changes(old, new)
    assert changes["modification_type"] == "task_properties_updated"
    assert changes["modified_tasks"] == ["t4"]
    # A status change is a modification too: t1 ran, and t2/t3 left their waiting state.
    new.mark_task_completed("t1", True, "done")
    status_changed = calculate_constellation_changes(old, new)["modified_tasks"]
    statuses = {t.task_id: t.status for t in old.get_all_tasks()}
    expected = [t.task_id for t in new.get_all_tasks() if statuses[t.task_id] != t.status]
    assert "t1" in expected
    assert sorted(status_changed) == sorted({*expected, "t4"})


def test_dicts_and_objects_give_the_same_answer(synth: type[Synth]) -> None:
    old, new = synth.diamond(), synth.diamond()
    new.add_task(TaskStar(task_id="t5"))
    assert calculate_constellation_changes(old.to_dict(), new.to_dict()) == calculate_constellation_changes(
        old, new
    )


def test_format_change_summary(synth: type[Synth]) -> None:
    old, new = synth.diamond(), synth.diamond()
    new.add_task(TaskStar(task_id="t5"))
    new.add_task(TaskStar(task_id="t6"))
    new.add_dependency(TaskStarLine("t4", "t5"))
    text = format_change_summary(calculate_constellation_changes(old, new))
    assert text == "tasks_added: +2 tasks, +1 dependency"
