"""Renderings of a TaskConstellation: the prompt text view, a rich tree, Mermaid and Graphviz DOT.

Every renderer walks the graph with loops over the index (never recursion), so graphs with
hundreds of thousands of tasks render in linear time.
"""

from __future__ import annotations

from rich.text import Text
from rich.tree import Tree

from starweave.errors import InvalidArgumentError

from .constellation import TaskConstellation
from .enums import DependencyType, TaskStatus
from .star_line import TaskStarLine
from .task_star import TaskStar

MODIFIABLE_MARKER = "✏️ [MODIFIABLE]"
READ_ONLY_MARKER = "🔒 [READ-ONLY]"
TASK_HINT = "    💡 Hint: This task can be modified (description, tips, device assignment, etc.)"
DEPENDENCY_HINT = "    💡 Hint: This dependency can be modified (condition, type, etc.)"
NO_CONSTELLATION_TEXT = "No constellation information available."
PROMPT_MODES = ("creation", "editing")

STATUS_STYLES: dict[TaskStatus, str] = {
    TaskStatus.PENDING: "yellow",
    TaskStatus.WAITING_DEPENDENCY: "orange1",
    TaskStatus.RUNNING: "blue",
    TaskStatus.COMPLETED: "green",
    TaskStatus.FAILED: "red",
    TaskStatus.CANCELLED: "dim",
}

DEPENDENCY_SYMBOLS: dict[DependencyType, str] = {
    DependencyType.UNCONDITIONAL: "→",
    DependencyType.SUCCESS_ONLY: "⇒",
    DependencyType.CONDITIONAL: "⇝",
    DependencyType.COMPLETION_ONLY: "⟶",
}

# Fill colours shared by the Mermaid and DOT exports (light tones so black text stays readable).
STATUS_FILLS: dict[TaskStatus, str] = {
    TaskStatus.PENDING: "#fff3b0",
    TaskStatus.WAITING_DEPENDENCY: "#ffd8a8",
    TaskStatus.RUNNING: "#a5d8ff",
    TaskStatus.COMPLETED: "#b2f2bb",
    TaskStatus.FAILED: "#ffc9c9",
    TaskStatus.CANCELLED: "#dee2e6",
}

DOT_EDGE_STYLES: dict[DependencyType, str] = {
    DependencyType.UNCONDITIONAL: "solid",
    DependencyType.SUCCESS_ONLY: "bold",
    DependencyType.COMPLETION_ONLY: "dashed",
    DependencyType.CONDITIONAL: "dotted",
}

TREE_CONDITION_LIMIT = 50


# ----------------------------------------------------------------------------- prompt text
def _task_block(task: TaskStar, marker: str | None) -> list[str]:
    header = f"  [{task.task_id}] {task.name}"
    lines = [f"{header} {marker}" if marker else header]
    lines.append(f"    Status: {task.status.value}")
    lines.append(f"    Device: {task.target_device_id or 'unassigned'}")
    if task.description:
        lines.append(f"    Description: {task.description}")
    if task.tips:
        lines.append("    Tips:")
        lines.extend(f"      - {tip}" for tip in task.tips)
    if task.result is not None:
        # The full result, never truncated: the editing LLM copies it into successors' tips.
        lines.append(f"    Result: {task.result}")
    if task.error is not None and str(task.error):
        lines.append(f"    Error: {task.error}")
    return lines


def _line_text(line: TaskStarLine, marker: str | None) -> str:
    text = f"  [{line.line_id}] {line.from_task_id} → {line.to_task_id}"
    if marker:
        text += f" {marker}"
    if line.condition_description:
        text += f" - {line.condition_description}"
    return text


def to_prompt_text(constellation: TaskConstellation | None, mode: str = "editing") -> str:
    """The text view of a constellation for LLM prompts, in the reference's layout.

    ``mode="editing"`` marks every task and dependency ``✏️ [MODIFIABLE]`` or ``🔒 [READ-ONLY]``
    (invariant I3: only PENDING/WAITING_DEPENDENCY tasks, and dependencies into them, may change),
    adds the modification hints and ends with the modification summary. ``mode="creation"`` gives
    the same layout without markers, hints or summary. ``None`` gives the reference's placeholder.
    """
    if mode not in PROMPT_MODES:
        raise InvalidArgumentError(f"Unknown prompt mode {mode!r}; use 'creation' or 'editing'")
    if constellation is None:
        return NO_CONSTELLATION_TEXT
    editing = mode == "editing"
    tasks = constellation.get_all_tasks()
    deps = constellation.get_all_dependencies()
    out = [
        f"Task Constellation: {constellation.name}",
        f"Status: {constellation.state.value}",
        f"Total Tasks: {len(tasks)}",
        "",
    ]
    modifiable_tasks = 0
    if tasks:
        out.append("Tasks:")
        for task in tasks:
            can_modify = task.is_modifiable
            modifiable_tasks += can_modify
            marker = (MODIFIABLE_MARKER if can_modify else READ_ONLY_MARKER) if editing else None
            out.extend(_task_block(task, marker))
            if editing and can_modify:
                out.append(TASK_HINT)
            out.append("")
    modifiable_deps = 0
    if deps:
        out.append("Task Dependencies:")
        for line in deps:
            can_modify = constellation.is_dependency_modifiable(line.line_id)
            modifiable_deps += can_modify
            marker = (MODIFIABLE_MARKER if can_modify else READ_ONLY_MARKER) if editing else None
            out.append(_line_text(line, marker))
            if editing and can_modify:
                out.append(DEPENDENCY_HINT)
        out.append("")
    if not editing:
        return "\n".join(out).rstrip("\n")
    out.extend(
        [
            "📊 Modification Summary:",
            f"   Tasks: {len(tasks)} total, {modifiable_tasks} modifiable",
            f"   Dependencies: {len(deps)} total, {modifiable_deps} modifiable",
            "",
            "💡 Note: Only PENDING or WAITING_DEPENDENCY items can be modified.",
            "   RUNNING, COMPLETED, or FAILED items are read-only.",
        ]
    )
    return "\n".join(out)


# ----------------------------------------------------------------------------- rich tree
def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def to_rich_tree(constellation: TaskConstellation) -> Tree:
    """A rich Tree of the constellation grouped by topological layer (Kahn depth).

    Each task shows ``[id] name (status)`` in its status colour; its incoming dependencies are
    listed under it as ``⬅️ <symbol> <source id>: <condition>``. Names are plain Text, so rich
    markup inside them is shown literally.
    """
    root = Tree(Text(f"🌌 Task Constellation: {constellation.name}", style="bold"))
    if constellation.task_count == 0:
        root.add(Text("No tasks", style="dim"))
        return root
    tasks = constellation.tasks
    lines = constellation.dependencies
    dag = constellation.dag
    layers: dict[int, Tree] = {}
    depth = dag.levels()
    # Iterate in topological order so layers appear in order and tasks in a stable order.
    for task_id in dag.topological_order():
        level = depth[task_id]
        layer = layers.get(level)
        if layer is None:
            layer = root.add(Text(f"Layer {level}", style="bold cyan"))
            layers[level] = layer
        task = tasks[task_id]
        label = Text(f"[{task_id}] {task.name} ", style=STATUS_STYLES[task.status])
        label.append(f"({task.status.value})", style="italic")
        node = layer.add(label)
        for line_id in dag.in_lines(task_id):
            line = lines[line_id]
            dep = f"⬅️ {DEPENDENCY_SYMBOLS[line.dependency_type]} {line.from_task_id}"
            if line.condition_description:
                dep += f": {_shorten(line.condition_description, TREE_CONDITION_LIMIT)}"
            node.add(Text(dep, style="dim"))
    return root


# ----------------------------------------------------------------------------- Mermaid
# One pass through str.translate, so the entity codes it inserts are never escaped twice.
_MERMAID_ESCAPES = str.maketrans(
    {
        '"': "#quot;",
        "#": "#35;",
        "&": "#38;",
        "<": "#lt;",
        ">": "#gt;",
        "[": "#91;",
        "]": "#93;",
        "{": "#123;",
        "}": "#125;",
        "|": "#124;",
        "`": "#96;",
        ";": "#59;",
        "\r": "",
        "\n": "<br/>",
    }
)


def mermaid_escape(text: str) -> str:
    """Escape text for a double-quoted Mermaid label (entity codes; newlines become ``<br/>``)."""
    return text.translate(_MERMAID_ESCAPES)


def _edge_label(line: TaskStarLine) -> str:
    label = line.dependency_type.value
    if line.condition_description:
        label += f": {line.condition_description}"
    return label


def to_mermaid(constellation: TaskConstellation, direction: str = "TD") -> str:
    """A Mermaid flowchart: one node per task (``n0``, ``n1``... in insertion order, since task ids
    may hold any character), its label ``name`` / ``id (status)``, a class per status, and an
    edge per dependency labelled with its type and condition."""
    if direction not in ("TD", "TB", "BT", "LR", "RL"):
        raise InvalidArgumentError(f"Unknown Mermaid direction {direction!r}; use TD, TB, BT, LR or RL")
    out = [f"flowchart {direction}"]
    for status, fill in STATUS_FILLS.items():
        out.append(f"    classDef {status.value} fill:{fill},stroke:#333,color:#000")
    node_ids: dict[str, str] = {}
    for index, task in enumerate(constellation.get_all_tasks()):
        node = f"n{index}"
        node_ids[task.task_id] = node
        label = mermaid_escape(f"{task.name}\n{task.task_id} ({task.status.value})")
        out.append(f'    {node}["{label}"]:::{task.status.value}')
    for line in constellation.get_all_dependencies():
        label = mermaid_escape(_edge_label(line))
        out.append(f'    {node_ids[line.from_task_id]} -->|"{label}"| {node_ids[line.to_task_id]}')
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- Graphviz DOT
_DOT_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\r": "", "\n": "\\n"})


def dot_quote(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, newlines as ``\\n``."""
    return '"' + text.translate(_DOT_ESCAPES) + '"'


def to_dot(constellation: TaskConstellation) -> str:
    """A Graphviz digraph: quoted task ids, ``name\\nstatus`` labels filled by status, and edges
    labelled with the dependency type (and condition), styled per type."""
    out = [
        f"digraph {dot_quote(constellation.constellation_id)} {{",
        f"    label={dot_quote(constellation.name)};",
        "    rankdir=TB;",
        '    node [shape=box, style="rounded,filled", fontname="Helvetica"];',
    ]
    for task in constellation.get_all_tasks():
        label = dot_quote(f"{task.name}\n{task.status.value}")
        fill = STATUS_FILLS[task.status]
        out.append(f'    {dot_quote(task.task_id)} [label={label}, fillcolor="{fill}"];')
    for line in constellation.get_all_dependencies():
        style = DOT_EDGE_STYLES[line.dependency_type]
        out.append(
            f"    {dot_quote(line.from_task_id)} -> {dot_quote(line.to_task_id)} "
            f"[label={dot_quote(_edge_label(line))}, style={style}];"
        )
    out.append("}")
    return "\n".join(out) + "\n"
