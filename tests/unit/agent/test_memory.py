"""MemoryItem and Memory."""

from __future__ import annotations

from starweave.agent import Memory, MemoryItem


def test_memory_item_typed_and_extra_keys() -> None:
    item = MemoryItem()
    item.add_values_from_dict({"step": 1, "action": "click", "Thought": "open it"})
    item.set_value("cost", 0.5)
    assert item.step == 1 and item.cost == 0.5
    assert item.extras == {"Thought": "open it"}
    assert item.get_value("Thought") == "open it" and item.get_value("missing", "d") == "d"
    assert item.to_dict() == {"step": 1, "action": "click", "cost": 0.5, "Thought": "open it"}
    assert item.filter(["Thought", "step", "nothing"]) == {"Thought": "open it", "step": 1}
    assert item.attributes == ["step", "action", "cost", "Thought"]


def test_memory_operations() -> None:
    memory = Memory()
    assert memory.is_empty() and memory.get_latest_item() is None
    for step in (1, 2, 3):
        memory.add_memory_item(MemoryItem(step=step, observation=f"o{step}"))
    assert memory.length == 3 and len(memory) == 3
    latest = memory.get_latest_item()
    assert latest is not None and latest.step == 3
    assert memory.filter_memory_from_keys(["observation"]) == [{"observation": f"o{i}"} for i in (1, 2, 3)]
    assert memory.filter_memory_from_steps([1, 3]) == [
        {"step": 1, "observation": "o1"},
        {"step": 3, "observation": "o3"},
    ]
    memory.delete(2)
    assert [i.step for i in memory.content] == [1, 3]
    memory.content.clear()  # a copy: the memory is untouched
    assert memory.length == 2
    memory.clear()
    assert memory.is_empty()


def test_memory_round_trip() -> None:
    data = [{"step": 1, "Subtask": "a"}, {"step": 2, "results": {"ok": True}}]
    memory = Memory.from_list_of_dicts(data)
    assert memory.to_list_of_dicts() == data
