"""The bounded best-effort walk over a fake accessibility tree."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from starweave.tools.desktop.model import ControlInfo, Rect, WalkLimits
from starweave.tools.desktop.walk import MAX_CHILDREN_PER_NODE, build_tree, walk_controls


class Broken(RuntimeError):
    pass


@dataclass
class Node:
    name: str
    kids: list[Node] = field(default_factory=list)
    broken: bool = False
    hidden_kids: bool = False


class Adapter:
    errors: tuple[type[BaseException], ...] = (Broken,)

    def children(self, node: Node, max_count: int, deadline: float) -> list[Node]:
        if node.hidden_kids:
            raise Broken("children unreadable")
        return node.kids[:max_count]

    def describe(self, node: Node, depth: int) -> ControlInfo | None:
        if node.broken:
            raise Broken(f"{node.name} vanished")
        if node.name.startswith("pane"):
            return None
        return ControlInfo(
            id="", name=node.name, control_type="Button", rect=Rect(x=0, y=0, width=5, height=5)
        )


def chain(depth: int) -> Node:
    node = Node(f"n{depth}")
    for d in range(depth - 1, 0, -1):
        node = Node(f"n{d}", [node])
    return node


def test_walk_lists_in_preorder_with_ids_and_skips_broken() -> None:
    root = Node(
        "root", [Node("a", [Node("a1")]), Node("x", [Node("x1")], broken=True), Node("pane", [Node("b")])]
    )
    result = walk_controls(root, Adapter(), WalkLimits())
    assert [(c.id, c.name, c.depth) for c in result.controls] == [
        ("1", "a", 1),
        ("2", "a1", 2),
        ("3", "x1", 2),
        ("4", "b", 2),
    ]
    assert result.skipped == 1 and result.elements["3"].name == "x1" and result.truncated == ""


def test_unreadable_children_keep_the_rest() -> None:
    root = Node("root", [Node("a", hidden_kids=True), Node("b")])
    result = walk_controls(root, Adapter(), WalkLimits())
    assert [c.name for c in result.controls] == ["a", "b"] and result.skipped == 1


def test_depth_limit() -> None:
    result = walk_controls(Node("root", [chain(10)]), Adapter(), WalkLimits(max_depth=3))
    assert [c.name for c in result.controls] == ["n1", "n2", "n3"] and result.truncated == "max_depth"


def test_node_limit() -> None:
    root = Node("root", [Node(f"c{i}") for i in range(50)])
    result = walk_controls(root, Adapter(), WalkLimits(max_nodes=7))
    assert len(result.controls) == 7 and result.truncated == "max_nodes"


def test_time_limit_with_a_fake_clock() -> None:
    ticks = iter(range(1000))
    root = Node("root", [Node(f"c{i}") for i in range(50)])
    result = walk_controls(root, Adapter(), WalkLimits(max_seconds=5), clock=lambda: float(next(ticks)))
    assert 0 < len(result.controls) < 50 and result.truncated == "max_seconds"


def test_tree_keeps_shape_with_error_leaves_and_limits() -> None:
    root = Node("root", [Node("a", [Node("a1")]), Node("x", broken=True)])

    def label(node: Node, depth: int) -> dict[str, object]:
        if node.broken:
            raise Broken("gone")
        return {"name": node.name, "level": depth}

    tree = build_tree(root, Adapter(), label, WalkLimits())
    assert tree["name"] == "root" and tree["children"][0]["children"][0] == {
        "name": "a1",
        "level": 2,
        "children": [],
    }
    assert "error" in tree["children"][1]
    shallow = build_tree(root, Adapter(), label, WalkLimits(max_depth=1))
    assert shallow["children"][0]["children"] == []


class WideAdapter(Adapter):
    """Reads children one by one, like AT-SPI (one D-Bus round trip each), each read costing ``cost`` s."""

    def __init__(self, cost: float = 0.0) -> None:
        self.cost = cost
        self.reads = 0

    def children(self, node: Node, max_count: int, deadline: float) -> list[Node]:
        kids = []
        for kid in node.kids[:max_count]:
            if time.monotonic() > deadline:
                break
            if self.cost:
                time.sleep(self.cost)
            self.reads += 1
            kids.append(kid)
        return kids


def wide_root(count: int) -> Node:
    return Node("root", [Node("sheet", [Node(f"cell{i}") for i in range(count)])])


def test_children_reads_are_bounded_by_the_node_budget() -> None:
    adapter = WideAdapter()
    result = walk_controls(wide_root(20_000), adapter, WalkLimits(max_seconds=0.2, max_nodes=50))
    assert len(result.controls) == 50 and result.truncated == "max_nodes"
    assert adapter.reads <= 51  # the sheet, then no more cells than the walk can still visit
    tree_adapter = WideAdapter()
    tree = build_tree(
        wide_root(20_000), tree_adapter, lambda n, d: {"name": n.name}, WalkLimits(max_nodes=50)
    )
    assert tree_adapter.reads <= 51 and len(tree["children"][0]["children"]) <= 50


def test_children_reads_are_capped_per_node() -> None:
    adapter = WideAdapter()
    result = walk_controls(wide_root(5_000), adapter, WalkLimits(max_nodes=100_000))
    assert adapter.reads <= MAX_CHILDREN_PER_NODE + 1
    assert len(result.controls) == MAX_CHILDREN_PER_NODE + 1 and result.truncated == "max_children"


def test_time_limit_covers_reading_children() -> None:
    # 20,000 children at 1 ms each would take 20 s; the walk must stop at its 0.2 s limit (the
    # bound on the clock is loose: a busy machine may be slow, never 20 s slow).
    for run in (
        lambda a: walk_controls(wide_root(20_000), a, WalkLimits(max_seconds=0.2, max_nodes=10**6)),
        lambda a: build_tree(
            wide_root(20_000), a, lambda n, d: {}, WalkLimits(max_seconds=0.2, max_nodes=10**6)
        ),
    ):
        adapter = WideAdapter(cost=0.001)
        started = time.monotonic()
        run(adapter)
        assert time.monotonic() - started < 10.0 and adapter.reads < 1000


def test_cancel_flag_stops_the_walk() -> None:
    calls = iter(range(10**6))
    result = walk_controls(wide_root(500), Adapter(), WalkLimits(), cancelled=lambda: next(calls) >= 10)
    assert result.truncated == "cancelled" and len(result.controls) == 10
    tree = build_tree(wide_root(500), Adapter(), lambda n, d: {}, WalkLimits(), cancelled=lambda: True)
    assert tree["children"] == []
