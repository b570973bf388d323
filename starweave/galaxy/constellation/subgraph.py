"""Copying parts of constellations: subgraph extraction and prefixed merges (used by the editor)."""

from __future__ import annotations

from collections.abc import Iterable

from starweave.errors import DuplicateIdError

from .commands import EditCommand, require_task
from .constellation import TaskConstellation
from .serialization import constellation_from_dict, line_from_dict, task_from_dict
from .task_star import utc_now


def subgraph_of(constellation: TaskConstellation, task_ids: Iterable[str]) -> TaskConstellation:
    """A copy of the given tasks and of the lines between them."""
    wanted = list(dict.fromkeys(task_ids))
    for task_id in wanted:
        require_task(constellation, task_id)
    keep = set(wanted)
    data = constellation.to_dict()
    sub = {
        "name": f"{constellation.name}_subgraph",
        "tasks": {tid: data["tasks"][tid] for tid in wanted},
        "dependencies": {
            lid: line
            for lid, line in data["dependencies"].items()
            if line["from_task_id"] in keep and line["to_task_id"] in keep
        },
        "metadata": dict(data["metadata"]),
    }
    return constellation_from_dict(sub)


def merge_command(other_constellation: TaskConstellation, prefix: str) -> EditCommand:
    """The undoable command that copies ``other_constellation`` in, ids prefixed with ``prefix``."""
    other = other_constellation.to_dict()
    renamed_tasks = {prefix + tid: dict(task, task_id=prefix + tid) for tid, task in other["tasks"].items()}
    renamed_lines = {
        prefix + lid: dict(
            line,
            line_id=prefix + lid,
            from_task_id=prefix + line["from_task_id"],
            to_task_id=prefix + line["to_task_id"],
        )
        for lid, line in other["dependencies"].items()
    }

    def check(c: TaskConstellation) -> None:
        clash = [tid for tid in renamed_tasks if c.get_task(tid) is not None]
        clash += [lid for lid in renamed_lines if c.get_dependency(lid) is not None]
        if clash:
            raise DuplicateIdError(
                f"Merge would duplicate ids {sorted(clash)[:5]}; pass a prefix to make them unique"
            )

    def run(c: TaskConstellation) -> TaskConstellation:
        c.add_tasks(task_from_dict(task) for task in renamed_tasks.values())
        # Restored, not edited: a merged line keeps its recorded satisfaction (its source may have ended).
        c.restore_dependencies(line_from_dict(line) for line in renamed_lines.values())
        c.updated_at = utc_now()
        c.update_state()
        return c

    description = f"Merge constellation: {other_constellation.name}"
    return EditCommand("merge_constellation", description, run, check, needs_rollback=True)
