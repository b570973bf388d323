"""Recorded model answers (replay format: one JSON object per call) for the agent tests."""

from __future__ import annotations

from typing import Any


def task(task_id: str, device: str, description: str) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "name": f"step {task_id}",
        "description": description,
        "target_device_id": device,
        "tips": ["Expected textual result: a short text."],
    }


def line(line_id: str, src: str, dst: str) -> dict[str, Any]:
    return {
        "line_id": line_id,
        "from_task_id": src,
        "to_task_id": dst,
        "condition_description": f"{src} done",
    }


# t1 (dev_a) and t2 (dev_b) in parallel → t3 (dev_c) → t4 (dev_a): 4 tasks over 3 devices.
CREATE_4 = {
    "thought": "Measure on two machines in parallel, combine on the third, then report.",
    "status": "CONTINUE",
    "constellation": {
        "tasks": [
            task("t1", "dev_a", "Report the disk usage of / with df -h."),
            task("t2", "dev_b", "Report the disk usage of / with df -h."),
            task("t3", "dev_c", "Combine the disk usages of the two machines."),
            task("t4", "dev_a", "Write a one-line summary of the combined usage."),
        ],
        "dependencies": [line("l1", "t1", "t3"), line("l2", "t2", "t3"), line("l3", "t3", "t4")],
    },
    "results": None,
}

CREATE_2 = {
    "thought": "Two independent measurements.",
    "status": "CONTINUE",
    "constellation": {
        "tasks": [task("t1", "dev_a", "Report uptime."), task("t2", "dev_b", "Report uptime.")],
        "dependencies": [],
    },
    "results": None,
}

ENRICH_AND_ADD = {
    "thought": "t1 and t2 finished; copy their results into t3 and add a check after t3.",
    "status": "CONTINUE",
    "action": [
        {
            "function": "update_task",
            "arguments": {"task_id": "t3", "description": "Combine: dev_a uses 40%, dev_b uses 70%."},
        },
        {
            "function": "add_task",
            "arguments": {
                "task_id": "t5",
                "name": "check",
                "description": "Check that the combined figure is below 90%.",
                "target_device_id": "dev_b",
                "tips": ["Expected textual result: yes or no."],
            },
        },
        {
            "function": "add_dependency",
            "arguments": {"dependency_id": "l4", "from_task_id": "t3", "to_task_id": "t5"},
        },
    ],
    "results": None,
}

NO_EDIT: dict[str, Any] = {
    "thought": "Nothing to change.",
    "status": "CONTINUE",
    "action": [],
    "results": None,
}
FINISH: dict[str, Any] = {
    "thought": "All done.",
    "status": "FINISH",
    "action": [],
    "results": "Disk usage is fine everywhere.",
}

CYCLE_EDIT = {
    "thought": "Enrich t3, and (wrongly) make t3 wait for t4.",
    "status": "continue",
    "action": [
        {"function": "update_task", "arguments": {"task_id": "t3", "description": "Combine 40% and 70%."}},
        {
            "function": "add_dependency",
            "arguments": {"dependency_id": "l9", "from_task_id": "t4", "to_task_id": "t3"},
        },
    ],
    "results": None,
}

ADD_AFTER_COMPLETION = {
    "thought": "Both finished; one more task is needed.",
    "status": "CONTINUE",
    "action": [
        {
            "function": "add_task",
            "arguments": {
                "task_id": "t3",
                "name": "compare",
                "description": "Compare the two uptimes.",
                "target_device_id": "dev_c",
                "tips": ["Expected textual result: which machine has been up longer."],
            },
        },
        {
            "function": "add_dependency",
            "arguments": {"dependency_id": "l1", "from_task_id": "t1", "to_task_id": "t3"},
        },
    ],
    "results": None,
}

GIVE_UP: dict[str, Any] = {
    "thought": "A task failed and cannot be fixed.",
    "status": "failed",
    "action": [],
    "results": "t1 failed.",
}
