"""Tests of the constellation renderings (prompt text, rich tree, Mermaid, DOT)."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from starweave.galaxy.constellation import (
    DependencyType,
    TaskConstellation,
    TaskStar,
    TaskStarLine,
    to_dot,
    to_mermaid,
    to_prompt_text,
    to_rich_tree,
)
from starweave.galaxy.constellation.render import dot_quote, mermaid_escape


def _demo() -> TaskConstellation:
    c = TaskConstellation(constellation_id="c1", name="Demo")
    c.add_task(
        TaskStar(
            task_id="a", name="Fetch", description="Get data", tips=["use curl"], target_device_id="dev1"
        )
    )
    c.add_task(TaskStar(task_id="b", name="Parse"))
    c.add_task(TaskStar(task_id="c", name="Report"))
    c.add_dependency(TaskStarLine("a", "b", DependencyType.SUCCESS_ONLY, line_id="l1"))
    c.add_dependency(
        TaskStarLine("b", "c", DependencyType.CONDITIONAL, condition_description="if parsed", line_id="l2")
    )
    return c


def _demo_running() -> TaskConstellation:
    c = _demo()
    c.start_task("a")
    c.mark_task_completed("a", success=True, result="rows=3")
    c.start_task("b")
    return c


EDITING_TEXT = """\
Task Constellation: Demo
Status: executing
Total Tasks: 3

Tasks:
  [a] Fetch 🔒 [READ-ONLY]
    Status: completed
    Device: dev1
    Description: Get data
    Tips:
      - use curl
    Result: rows=3

  [b] Parse 🔒 [READ-ONLY]
    Status: running
    Device: unassigned

  [c] Report ✏️ [MODIFIABLE]
    Status: waiting_dependency
    Device: unassigned
    💡 Hint: This task can be modified (description, tips, device assignment, etc.)

Task Dependencies:
  [l1] a → b 🔒 [READ-ONLY]
  [l2] b → c ✏️ [MODIFIABLE] - if parsed
    💡 Hint: This dependency can be modified (condition, type, etc.)

📊 Modification Summary:
   Tasks: 3 total, 1 modifiable
   Dependencies: 2 total, 1 modifiable

💡 Note: Only PENDING or WAITING_DEPENDENCY items can be modified.
   RUNNING, COMPLETED, or FAILED items are read-only."""

CREATION_TEXT = """\
Task Constellation: Demo
Status: ready
Total Tasks: 3

Tasks:
  [a] Fetch
    Status: pending
    Device: dev1
    Description: Get data
    Tips:
      - use curl

  [b] Parse
    Status: waiting_dependency
    Device: unassigned

  [c] Report
    Status: waiting_dependency
    Device: unassigned

Task Dependencies:
  [l1] a → b
  [l2] b → c - if parsed"""


def test_editing_text_marks_modifiable_and_read_only() -> None:
    assert to_prompt_text(_demo_running(), mode="editing") == EDITING_TEXT


def test_creation_text_has_no_markers() -> None:
    assert to_prompt_text(_demo(), mode="creation") == CREATION_TEXT


def test_failed_task_shows_error_and_is_read_only() -> None:
    c = TaskConstellation(constellation_id="c2", name="F")
    c.add_task(TaskStar(task_id="x", name="X"))
    c.start_task("x")
    c.mark_task_completed("x", success=False, error=RuntimeError("disk full"))
    text = to_prompt_text(c)
    assert (
        "  [x] X 🔒 [READ-ONLY]\n    Status: failed\n    Device: unassigned\n    Error: disk full\n" in text
    )
    assert "   Tasks: 1 total, 0 modifiable" in text


def test_prompt_text_none_and_bad_mode() -> None:
    assert to_prompt_text(None) == "No constellation information available."
    with pytest.raises(ValueError, match="use 'creation' or 'editing'"):
        to_prompt_text(_demo(), mode="drafting")


def test_empty_constellation_text() -> None:
    text = to_prompt_text(TaskConstellation(constellation_id="e", name="Empty"))
    assert text.startswith(
        "Task Constellation: Empty\nStatus: created\nTotal Tasks: 0\n\n📊 Modification Summary:"
    )
    assert "Tasks:\n" not in text


MERMAID = """\
flowchart TD
    classDef pending fill:#fff3b0,stroke:#333,color:#000
    classDef waiting_dependency fill:#ffd8a8,stroke:#333,color:#000
    classDef running fill:#a5d8ff,stroke:#333,color:#000
    classDef completed fill:#b2f2bb,stroke:#333,color:#000
    classDef failed fill:#ffc9c9,stroke:#333,color:#000
    classDef cancelled fill:#dee2e6,stroke:#333,color:#000
    n0["Fetch<br/>a (completed)"]:::completed
    n1["Parse<br/>b (running)"]:::running
    n2["Report<br/>c (waiting_dependency)"]:::waiting_dependency
    n0 -->|"success_only"| n1
    n1 -->|"conditional: if parsed"| n2
"""

DOT = """\
digraph "c1" {
    label="Demo";
    rankdir=TB;
    node [shape=box, style="rounded,filled", fontname="Helvetica"];
    "a" [label="Fetch\\ncompleted", fillcolor="#b2f2bb"];
    "b" [label="Parse\\nrunning", fillcolor="#a5d8ff"];
    "c" [label="Report\\nwaiting_dependency", fillcolor="#ffd8a8"];
    "a" -> "b" [label="success_only", style=bold];
    "b" -> "c" [label="conditional: if parsed", style=dotted];
}
"""

TREE = """\
🌌 Task Constellation: Demo
├── Layer 0
│   └── [a] Fetch (completed)
├── Layer 1
│   └── [b] Parse (running)
│       └── ⬅️ ⇒ a
└── Layer 2
    └── [c] Report (waiting_dependency)
        └── ⬅️ ⇝ b: if parsed
"""


def _plain(renderable: object) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, color_system=None, legacy_windows=False)
    console.print(renderable)
    return buffer.getvalue()


def test_mermaid_exact() -> None:
    assert to_mermaid(_demo_running()) == MERMAID


def test_dot_exact() -> None:
    assert to_dot(_demo_running()) == DOT


def test_rich_tree_exact_and_coloured() -> None:
    tree = to_rich_tree(_demo_running())
    assert _plain(tree) == TREE
    task_label = tree.children[0].children[0].label
    assert getattr(task_label, "style", None) == "green"


def test_rich_tree_empty() -> None:
    assert _plain(to_rich_tree(TaskConstellation(name="E"))) == "🌌 Task Constellation: E\n└── No tasks\n"


NASTY = 'Say "hi" [x] {y} | <b> #1; a&b\nline2\\end'


def _nasty() -> TaskConstellation:
    c = TaskConstellation(constellation_id='id "q"', name=NASTY)
    c.add_task(TaskStar(task_id='t"1', name=NASTY))
    c.add_task(TaskStar(task_id="t[2]", name="[bold]not markup[/bold]"))
    c.add_dependency(
        TaskStarLine(
            't"1', "t[2]", DependencyType.CONDITIONAL, condition_description='ok "yes"\n]', line_id="d"
        )
    )
    return c


def test_mermaid_escaping() -> None:
    assert mermaid_escape(NASTY) == (
        "Say #quot;hi#quot; #91;x#93; #123;y#125; #124; #lt;b#gt; #35;1#59; a#38;b<br/>line2\\end"
    )
    out = to_mermaid(_nasty())
    node_line = out.splitlines()[7]
    assert node_line == f'    n0["{mermaid_escape(NASTY)}<br/>t#quot;1 (pending)"]:::pending'
    assert out.splitlines()[-1] == '    n0 -->|"conditional: ok #quot;yes#quot;<br/>#93;"| n1'
    # Only the structural quotes/brackets remain; none come from the names.
    assert out.count("[") == out.count("]") == 2


def test_dot_escaping() -> None:
    assert dot_quote('a"b\\c\nd\r') == '"a\\"b\\\\c\\nd"'
    out = to_dot(_nasty())
    assert out.startswith('digraph "id \\"q\\"" {\n')
    assert '    "t\\"1" -> "t[2]" [label="conditional: ok \\"yes\\"\\n]", style=dotted];' in out
    assert '"t\\"1" [label="Say \\"hi\\" [x] {y} | <b> #1; a&b\\nline2\\\\end\\npending"' in out


def test_text_and_tree_show_names_literally() -> None:
    c = _nasty()
    assert "  [t[2]] [bold]not markup[/bold] ✏️ [MODIFIABLE]" in to_prompt_text(c)
    assert "[t[2]] [bold]not markup[/bold] (waiting_dependency)" in _plain(to_rich_tree(c))


def test_large_chain_renders_without_recursion() -> None:
    n = 50_000
    c = TaskConstellation(constellation_id="big", name="big")
    c.add_tasks(TaskStar(task_id=f"t{i}", name=f"task {i}") for i in range(n))
    # Built back to front: the worst case for recursive walkers.
    c.add_dependencies(TaskStarLine(f"t{i}", f"t{i + 1}", line_id=f"l{i}") for i in reversed(range(n - 1)))
    start = time.perf_counter()
    mermaid = to_mermaid(c)
    dot = to_dot(c)
    text = to_prompt_text(c)
    tree = to_rich_tree(c)
    elapsed = time.perf_counter() - start
    assert mermaid.count(" -->|") == n - 1
    assert dot.count(" -> ") == n - 1
    assert text.count("✏️ [MODIFIABLE]") == 2 * n - 1
    assert len(tree.children) == n
    assert str(tree.children[-1].label) == f"Layer {n - 1}"
    assert elapsed < 20
